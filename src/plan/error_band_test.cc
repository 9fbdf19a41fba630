// The error band on unseen models (data/unseen_error_band.json): parsing, the bytes it allows, the
// embedded copy, and the plan's JSON and text.
#include "oomguard/plan/error_band.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "run_cli_for_test.h"

namespace oomguard::plan {
namespace {

const std::string kBand = std::string(OOMGUARD_SOURCE_DIR) + "/data/unseen_error_band.json";

std::string Good(const std::string& replace_key = "", const std::string& value = "") {
  nlohmann::json j = {{"sets", {3, 4, 14}}, {"rows", 346}, {"models", 173}, {"coverage", 0.9},
                      {"level", 0.935}, {"forward_chained", {{"inside", 290}, {"rows", 320}, {"share", 0.906}}},
                      {"error_low", -0.1}, {"error_high", 0.025}};
  if (!replace_key.empty()) {
    if (value.empty()) {
      j.erase(replace_key);
    } else {
      j[replace_key] = nlohmann::json::parse(value);
    }
  }
  return j.dump();
}

TEST(ErrorBand, ParsesAndNamesTheSets) {
  Result<ErrorBand> b = ParseErrorBand(Good());
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_EQ(b->sets, "3-4, 14");
  EXPECT_EQ(ParseErrorBand(Good("sets", "[5, 3, 4, 6, 9]"))->sets, "3-6, 9");
  EXPECT_EQ(ParseErrorBand(Good("sets", "[7]"))->sets, "7");
  EXPECT_EQ(b->rows, 346);
  EXPECT_EQ(b->models, 173);
  EXPECT_DOUBLE_EQ(b->error_low, -0.1);
  EXPECT_DOUBLE_EQ(b->level, 0.935);
  EXPECT_DOUBLE_EQ(b->forward_chained, 0.906);
}

TEST(ErrorBand, RefusesMalformedBands) {
  EXPECT_FALSE(ParseErrorBand("not json").ok());
  EXPECT_FALSE(ParseErrorBand("[]").ok());
  EXPECT_FALSE(ParseErrorBand(Good("coverage", "")).ok());
  EXPECT_FALSE(ParseErrorBand(Good("coverage", "1.0")).ok());
  EXPECT_FALSE(ParseErrorBand(Good("error_low", "0.01")).ok());    // the band must contain the plan
  EXPECT_FALSE(ParseErrorBand(Good("error_low", "-1.0")).ok());    // a plan of 0 bytes
  EXPECT_FALSE(ParseErrorBand(Good("error_high", "-0.01")).ok());
  EXPECT_FALSE(ParseErrorBand(Good("models", "400")).ok());        // more models than rows
  EXPECT_FALSE(ParseErrorBand(Good("sets", "[]")).ok());
  EXPECT_FALSE(ParseErrorBand(Good("level", "")).ok());
  EXPECT_FALSE(ParseErrorBand(Good("level", "0.85")).ok());         // cut below the coverage it claims
  EXPECT_FALSE(ParseErrorBand(Good("forward_chained", "")).ok());
  EXPECT_FALSE(ParseErrorBand(Good("forward_chained", "{\"share\": 1.5}")).ok());
  EXPECT_FALSE(ParseErrorBand(Good("rows", "\"346\"")).ok());
  Result<ErrorBand> bad = ParseErrorBand(Good("error_low", "0.01"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().find('\n'), std::string::npos);
}

TEST(ErrorBand, MeasuredRangeDividesByOnePlusTheErrorsRoundingOutwards) {
  ErrorBand b = *ParseErrorBand(Good());
  BandBytes r = MeasuredRange(b, 1000);
  EXPECT_EQ(r.low, 975u);   // floor(1000 / 1.025): a plan 2.5 % high
  EXPECT_EQ(r.high, 1112u);  // ceil(1000 / 0.9): a plan 10 % low
  EXPECT_EQ(MeasuredRange(b, 0).high, 0u);
  EXPECT_EQ(MeasuredRange(b, UINT64_MAX).high, UINT64_MAX);  // saturates, never wraps
}

TEST(ErrorBand, TheEmbeddedBandIsTheDataFile) {
  std::ifstream in(kBand);
  std::stringstream text;
  text << in.rdbuf();
  Result<ErrorBand> file = ParseErrorBand(text.str());
  ASSERT_TRUE(file.ok()) << file.error();
  const std::optional<ErrorBand>& embedded = EmbeddedErrorBand();
  ASSERT_TRUE(embedded.has_value());
  EXPECT_EQ(embedded->rows, file->rows);
  EXPECT_DOUBLE_EQ(embedded->error_low, file->error_low);
  EXPECT_DOUBLE_EQ(embedded->error_high, file->error_high);
  EXPECT_LT(embedded->error_low, 0);  // the blind plans were off both ways
  EXPECT_GT(embedded->error_high, 0);
}

TEST(ErrorBand, ThePlanCarriesTheBandAroundItsPeak) {
  auto r = testing::RunCli(OOMGUARD_EXE, {"plan", "resnet18", "--batch", "2", "--target", "cpu", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& band = j.at("unseen_model_band");
  const uint64_t peak = j.at("peak_allocated_bytes");
  const uint64_t low = band.at("peak_allocated_bytes").at("low"), high = band.at("peak_allocated_bytes").at("high");
  EXPECT_LT(low, peak);
  EXPECT_GT(high, peak);
  EXPECT_EQ(high, MeasuredRange(*EmbeddedErrorBand(), peak).high);
  EXPECT_EQ(band.at("coverage"), EmbeddedErrorBand()->coverage);
  EXPECT_EQ(band.at("forward_chained"), EmbeddedErrorBand()->forward_chained);
  // The band is cut wide enough that, fitted on earlier sets only, it held what it claims on later ones.
  EXPECT_GE(EmbeddedErrorBand()->forward_chained, EmbeddedErrorBand()->coverage);
  const uint64_t required = j.at("required_bytes");
  EXPECT_EQ(band.at("required_bytes").at("high").get<uint64_t>() - required, high - peak);

  auto text = testing::RunCli(OOMGUARD_EXE, {"plan", "resnet18", "--batch", "2", "--target", "cpu"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("if the model is new"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(std::to_string(EmbeddedErrorBand()->models) + " models new to oomguard"),
            std::string::npos);
}

TEST(ErrorBand, TheHtmlPageNamesTheBand) {
  const std::string page = "/tmp/oomguard_error_band_" + std::to_string(getpid()) + ".html";
  auto r = testing::RunCli(OOMGUARD_EXE, {"plan", "resnet18", "--batch", "2", "--target", "cpu", "--html", page});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(page);
  std::stringstream html;
  html << in.rdbuf();
  std::remove(page.c_str());
  EXPECT_NE(html.str().find("<span class=\"band\">If this model is new to oomguard, expect the measured peak between "),
            std::string::npos);
}

}  // namespace
}  // namespace oomguard::plan
