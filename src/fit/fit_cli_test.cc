// End-to-end tests of `oomguard fit` and `oomguard split`: the real binary,
// the real planner and the zoo.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "oomguard/fit/fit.h"
#include "oomguard/plan/planner.h"
#include "run_cli_for_test.h"

namespace oomguard {
namespace {

using testing::ReadWholeFile;
using testing::RunCli;
using nlohmann::json;

constexpr uint64_t GiB = 1ull << 30;

json ParseOut(const testing::CliResult& r) {
  json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "oomguard_fit_" + std::to_string(getpid()) + "_" + name;
}

fit::FitOptions Budget(uint64_t budget) {
  fit::FitOptions o;
  o.budget_bytes = budget;
  o.max_batch_limit = 4096;
  return o;
}

// The search on BatchPlanner (required bytes from a recording: the CPU
// target's closed form, the CUDA target's allocator replay) against the search
// on PlanStep, with budgets exactly at a batch's required bytes and one byte
// either side: the same answer, plans and search.
TEST(FindMaxBatch, BatchPlannerAnswersAsPlanStepAtEveryBudgetBoundary) {
  for (const char* name : {"resnet18", "mlp_dropout"}) {
    auto model = plan::LoadModel(name);
    ASSERT_TRUE(model.ok()) << model.error();
    for (plan::Target target : {plan::Target::kCpu, plan::Target::kCuda}) {
      plan::PlanOptions base;
      base.target = target;
      fit::PlanFunction full = [&](const plan::PlanOptions& o) { return plan::PlanStep(**model, o); };
      plan::BatchPlanner batch_planner(**model);
      fit::PlanFunction fast = fit::PlanWith(batch_planner);
      for (int64_t at : {int64_t{7}, int64_t{48}, int64_t{333}}) {
        base.batch = at;
        const uint64_t r = plan::PlanStep(**model, base)->required_bytes;
        for (uint64_t budget : {r - 1, r, r + 1}) {
          const std::string label = std::string(name) + " " + std::string(plan::Name(target)) + " budget " +
                                    std::to_string(budget) + " (batch " + std::to_string(at) + " needs " +
                                    std::to_string(r) + ")";
          Result<fit::FitResult> want = fit::FindMaxBatch(full, base, Budget(budget));
          Result<fit::FitResult> got = fit::FindMaxBatch(fast, base, Budget(budget));
          ASSERT_TRUE(want.ok() && got.ok()) << label;
          EXPECT_EQ(got->max_batch, want->max_batch) << label;
          EXPECT_TRUE(got->plan == want->plan) << label;
          EXPECT_EQ(got->next_plan.has_value(), want->next_plan.has_value()) << label;
          if (got->next_plan && want->next_plan) {
            EXPECT_TRUE(*got->next_plan == *want->next_plan) << label;
          }
          EXPECT_EQ(got->plans_evaluated, want->plans_evaluated) << label;
          EXPECT_EQ(got->exhaustive_fallback, want->exhaustive_fallback) << label;
          // (The CPU curve is monotone; the CUDA one wobbles with the allocator.)
          if (budget == r && target == plan::Target::kCpu) {
            EXPECT_GE(want->max_batch, at) << label;
          }
        }
      }
      EXPECT_GT(batch_planner.stats().replayed_plans, batch_planner.stats().full_plans) << name;
    }
  }
}

TEST(FitCli, EqualsExhaustiveSearchWithTheRealPlanner) {
  auto r = RunCli(OOMGUARD_EXE, {"fit", "resnet18", "--target", "cpu", "--memory", "2GiB", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  json j = ParseOut(r);
  const int64_t max_batch = j["max_batch"].get<int64_t>();
  const uint64_t budget = j["budget_bytes"].get<uint64_t>();
  EXPECT_EQ(budget, 2 * GiB - 2 * GiB / 20);  // the default 5 % margin
  ASSERT_GE(max_batch, 2);

  auto model = plan::LoadModel("resnet18");
  ASSERT_TRUE(model.ok()) << model.error();
  fit::PlanFunction planner = [&](const plan::PlanOptions& o) { return plan::PlanStep(**model, o); };
  plan::PlanOptions base;
  base.target = plan::Target::kCpu;
  Result<int64_t> truth = fit::FindMaxBatchExhaustive(planner, base, budget, 2 * max_batch + 8);
  ASSERT_TRUE(truth.ok()) << truth.error();
  EXPECT_EQ(max_batch, *truth);
  // The plan at max_batch fits, at max_batch + 1 it does not.
  EXPECT_EQ(j["batch"].get<int64_t>(), max_batch);
  EXPECT_LE(j["peak_allocated_bytes"].get<uint64_t>(), budget);
  EXPECT_GT(j["next_batch_required_bytes"].get<uint64_t>(), budget);
  EXPECT_FALSE(j["search"]["exhaustive_fallback"].get<bool>());
  // Advice: every item re-planned, bytes as integers.
  ASSERT_TRUE(j["advice"].is_array());
  ASSERT_FALSE(j["advice"].empty());
  for (const json& a : j["advice"]) {
    EXPECT_TRUE(a["saves_bytes"].is_number_unsigned()) << a.dump();
    EXPECT_TRUE(a["max_batch"].is_number_integer()) << a.dump();
  }
}

TEST(FitCli, HumanOutputNamesTheBatchAndTheBudget) {
  auto r = RunCli(OOMGUARD_EXE, {"fit", "resnet18", "--target", "cpu", "--memory", "2GiB", "--reserve",
                                 "256MiB", "--margin", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("budget 1.75 GiB = capacity 2.00 GiB - reserve 256.00 MiB - margin 0 B (0%)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("largest batch: "), std::string::npos);
  EXPECT_NE(r.out.find("what-ifs (each re-planned at batch "), std::string::npos);
}

// --max-batch bounds every search fit runs, the what-ifs' too: a what-if that fits at the limit answers
// the limit, as the step itself does (they searched up to 1 000 000 whatever the limit).
TEST(FitCli, WhatIfsLargestBatchesStayWithinMaxBatch) {
  auto r = RunCli(OOMGUARD_EXE, {"fit", "resnet18", "--gpu", "rtx-3090", "--max-batch", "100", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["max_batch"], 100);
  ASSERT_FALSE(j["advice"].empty());
  for (const json& a : j["advice"]) {
    ASSERT_TRUE(a["max_batch"].is_number()) << a.dump();
    EXPECT_EQ(a["max_batch"], 100) << a.dump();  // each saves memory at 100, where the step fits
  }
}

// fit and split plan their what-ifs, strategies and in-place range on --threads threads: the JSON
// is the same byte for byte whatever the count.
TEST(FitCli, WorkerCountDoesNotChangeTheAnswer) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"fit", "mobilenet_v2", "--memory", "4GiB", "--json"},
        std::vector<std::string>{"split", "resnet18", "--gpus", "2", "--memory", "4GiB", "--maximize", "--json"}}) {
    std::vector<std::string> one = args, four = args;
    one.insert(one.end(), {"--threads", "1"});
    four.insert(four.end(), {"--threads", "4"});
    auto a = RunCli(OOMGUARD_EXE, one);
    auto b = RunCli(OOMGUARD_EXE, four);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(a.out, b.out) << args[0];
    EXPECT_FALSE(json::parse(a.out)["advice"].empty()) << args[0];
  }
  auto bad = RunCli(OOMGUARD_EXE, {"fit", "resnet18", "--memory", "4GiB", "--threads", "0"});
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(FitCli, NothingFitsExits1WithTheNumbers) {
  auto r = RunCli(OOMGUARD_EXE, {"fit", "vgg16", "--memory", "2GiB", "--optimizer", "adam"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("nothing fits: batch 1 needs "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model states alone need "), std::string::npos) << r.out;
  auto j = RunCli(OOMGUARD_EXE, {"fit", "vgg16", "--memory", "2GiB", "--json"});
  EXPECT_EQ(j.exit_code, 1);
  json parsed = ParseOut(j);
  EXPECT_EQ(parsed["max_batch"], 0);
  EXPECT_EQ(parsed["fits_budget"], false);
}

TEST(FitCli, WritesTheMemoryVsBatchPage) {
  const std::string html = TempPath("fit.html");
  auto r = RunCli(OOMGUARD_EXE, {"fit", "resnet18", "--target", "cpu", "--memory", "2GiB", "--json",
                                 "--html", html});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = ReadWholeFile(html);
  EXPECT_NE(page.find("class=\"capacity\""), std::string::npos);
  EXPECT_NE(page.find("largest batch " + std::to_string(ParseOut(r)["max_batch"].get<int64_t>()) + ": "),
            std::string::npos);
  std::remove(html.c_str());
}

TEST(FitCli, BadInputIsOneLineAndExit2) {
  auto r = RunCli(OOMGUARD_EXE, {"fit", "resnet18"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "oomguard fit: nothing to fit into: give --gpu NAME (oomguard gpus) or --memory BYTES\n");
  EXPECT_TRUE(r.out.empty());
  r = RunCli(OOMGUARD_EXE, {"fit", "resnet18", "--memory", "1GiB", "--reserve", "1GiB"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "oomguard fit: reserve 1.00 GiB and margin 51.20 MiB leave nothing of the capacity 1.00 GiB\n");
  r = RunCli(OOMGUARD_EXE, {"fit", "resnet18", "--memory", "1GiB", "--margin", "100"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "oomguard fit: margin must be at least 0 and below 100 percent, got 100\n");
  r = RunCli(OOMGUARD_EXE, {"fit", "/nonexistent/model.onnx", "--memory", "1GiB"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("oomguard fit: ", 0), 0u);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

// The article's case: 8 cards of 11 GiB, global batch 32 with nn.DataParallel.
// A 4-class segmentation UNet on 960x960 images with Adam: 4 per card fits a
// replica but overflows GPU 0, which also holds the whole input batch and the
// gathered outputs; GPU 0 holds 3, so the largest global batch is 31.
std::vector<std::string> Article(const std::string& global_batch) {
  return {"split", "unet_small", "--global-batch", global_batch, "--gpus", "8", "--gpu", "gtx-1080-ti",
          "--strategy", "dp", "--input", "input=3x960x960", "--json"};
}

TEST(SplitCli, ArticleCaseShowsTheShareGpu0HoldsAndTheLargestGlobalBatch) {
  auto r = RunCli(OOMGUARD_EXE, Article("32"));
  ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
  json j = ParseOut(r);
  ASSERT_TRUE(j["even_split"].is_object());
  EXPECT_EQ(j["even_split"]["batch"], 4);
  EXPECT_EQ(j["even_split"]["fits"][0], false);
  for (int i = 1; i < 8; ++i) EXPECT_EQ(j["even_split"]["fits"][i], true) << i;
  EXPECT_EQ(j["possible"], false);
  EXPECT_EQ(j["max_global_batch"], 31);
  EXPECT_EQ(j["reason"],
            "the 8 GPUs hold at most 31 samples of a global batch of 32 (GPU 0: 3, GPU 1: 4, GPU 2: 4, "
            "GPU 3: 4, GPU 4: 4, GPU 5: 4, GPU 6: 4, GPU 7: 4); the largest global batch is 31");
  // DDP keeps no gathered outputs on one card: 32 fits.
  bool ddp_fits = false;
  for (const json& a : j["advice"]) {
    if (a["action"] == "strategy_ddp") ddp_fits = a["fits"].get<bool>() && a["max_batch"].get<int64_t>() >= 32;
  }
  EXPECT_TRUE(ddp_fits) << j["advice"].dump();

  r = RunCli(OOMGUARD_EXE, Article("31"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = ParseOut(r);
  ASSERT_EQ(j["per_gpu"].size(), 8u);
  EXPECT_EQ(j["per_gpu"][0]["batch"], 3);
  int64_t sum = 0;
  double weights = 0;
  for (const json& g : j["per_gpu"]) {
    sum += g["batch"].get<int64_t>();
    weights += g["loss_weight"].get<double>();
    EXPECT_LE(g["peak_bytes"].get<uint64_t>(), g["budget_bytes"].get<uint64_t>());
    if (g["index"] != 0) {
      EXPECT_EQ(g["batch"], 4);
    }
  }
  EXPECT_EQ(sum, 31);
  EXPECT_NEAR(weights, 1.0, 1e-9);
  EXPECT_NEAR(j["per_gpu"][0]["loss_weight"].get<double>(), 3.0 / 31, 1e-12);
}

TEST(SplitCli, EmitsPerRankSettingsForTorchrun) {
  const std::string env = TempPath("ranks.env");
  const std::string js = TempPath("ranks.json");
  auto r = RunCli(OOMGUARD_EXE, {"split", "resnet18", "--global-batch", "10", "--gpu-memory",
                                 "3GiB,3GiB,3GiB", "--target", "cpu", "--emit", "torchrun", env});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadWholeFile(env);
  EXPECT_NE(text.find("OOMGUARD_WORLD_SIZE=3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("OOMGUARD_GLOBAL_BATCH=10\n"), std::string::npos) << text;
  EXPECT_NE(text.find("OOMGUARD_LOCAL_BATCHES=4,3,3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("OOMGUARD_LOSS_WEIGHTS=0.4,0.3,0.3\n"), std::string::npos) << text;
  r = RunCli(OOMGUARD_EXE, {"split", "resnet18", "--global-batch", "10", "--gpu-memory",
                            "3GiB,3GiB,3GiB", "--target", "cpu", "--emit", "torchrun", js});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(ReadWholeFile(js));
  EXPECT_EQ(j["world_size"], 3);
  ASSERT_EQ(j["ranks"].size(), 3u);
  EXPECT_EQ(j["ranks"][1]["local_batch"], 3);
  EXPECT_DOUBLE_EQ(j["ranks"][0]["loss_scale"].get<double>(), 1.2);
  std::remove(env.c_str());
  std::remove(js.c_str());
}

TEST(SplitCli, ImpossibleSplitExits1WithNumbers) {
  auto r = RunCli(OOMGUARD_EXE, {"split", "resnet18", "--global-batch", "100000", "--gpus", "2",
                                 "--memory", "4GiB", "--target", "cpu"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("no split possible: the 2 GPUs hold at most "), std::string::npos) << r.out;
  // resnet18's ReLUs may have run in place; with no split there is no GPU batch to say what that needs.
  EXPECT_NE(r.out.find("UNSURE: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("would need 0 B"), std::string::npos) << r.out;
}

TEST(SplitCli, BadInputIsOneLineAndExit2) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"split", "resnet18", "--global-batch", "8", "--gpus", "2", "--gpu", "rtx-3090", "--strategy", "fsdp"},
       "oomguard split: unknown strategy 'fsdp' (expected dp, ddp, zero1, zero2 or zero3)\n"},
      {{"split", "resnet18", "--global-batch", "3", "--gpus", "4", "--gpu", "rtx-3090"},
       "oomguard split: global batch 3 is smaller than the number of GPUs (4)\n"},
      {{"split", "resnet18", "--global-batch", "8", "--gpus", "0", "--gpu", "rtx-3090"},
       "oomguard split: --gpus must be at least 1, got 0\n"},
      {{"split", "resnet18", "--global-batch", "8", "--gpu", "rtx-3090"},
       "oomguard split: give --gpus K with --gpu NAME or --memory BYTES, or --gpu-memory LIST\n"},
      {{"split", "resnet18", "--gpus", "2", "--gpu", "rtx-3090"},
       "oomguard split: give --global-batch N or --maximize\n"},
      {{"split", "resnet18", "--global-batch", "8", "--gpus", "2", "--gpu", "rtx-3090", "--emit", "slurm", "x"},
       "oomguard split: --emit: unknown format 'slurm' (expected torchrun)\n"},
  };
  for (const Case& c : cases) {
    auto r = RunCli(OOMGUARD_EXE, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.err;
    EXPECT_EQ(r.err, c.err);
    EXPECT_TRUE(r.out.empty());
  }
  auto r = RunCli(OOMGUARD_EXE, {"split", "resnet18", "--global-batch", "8", "--gpu-memory", "11GiB,eleven"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("oomguard split: --gpu-memory: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace oomguard
