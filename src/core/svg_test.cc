#include "oomguard/svg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace oomguard::svg {
namespace {

TEST(Escape, EscapesMarkupAndQuotes) { EXPECT_EQ(Escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"); }

TEST(Num, DropsTrailingZerosAndNegativeZero) {
  EXPECT_EQ(Num(12.0), "12");
  EXPECT_EQ(Num(0.25, 2), "0.25");
  EXPECT_EQ(Num(-0.01), "0");
  EXPECT_EQ(Num(NAN), "0");
}

TEST(NiceTicks, CoverTheRangeOnRoundSteps) {
  std::vector<double> t = NiceTicks(0, 523, 6);
  ASSERT_GE(t.size(), 2u);
  EXPECT_LE(t.front(), 0);
  EXPECT_GE(t.back(), 523);
  double step = t[1] - t[0];
  EXPECT_EQ(step, 200);  // 523 / 5 = 104.6: the first 1-2-2.5-5 step at or above it
  for (size_t i = 1; i < t.size(); ++i) EXPECT_DOUBLE_EQ(t[i] - t[i - 1], step);
  EXPECT_LE(t.size(), 8u);
}

TEST(NiceTicks, DegenerateRangeStillGivesTwoTicks) {
  EXPECT_EQ(NiceTicks(5, 5).size(), 2u);
  EXPECT_EQ(NiceTicks(0, INFINITY).size(), 2u);
}

TEST(ByteTicks, UseBinarySteps) {
  const double GiB = 1024.0 * 1024 * 1024;
  std::vector<double> t = ByteTicks(0, 20 * GiB, 5);
  ASSERT_GE(t.size(), 3u);
  EXPECT_GE(t.back(), 20 * GiB);
  EXPECT_DOUBLE_EQ(std::fmod(t[1] - t[0], GiB), 0.0);
}

TEST(SvgPlot, MapsDataIntoThePlotBoxAndClamps) {
  Box box{500, 300, 50, 10, 20, 40};
  SvgPlot p(box, 0, 10, 0, 100);
  EXPECT_DOUBLE_EQ(p.X(0), 50);
  EXPECT_DOUBLE_EQ(p.X(10), 490);
  EXPECT_DOUBLE_EQ(p.X(20), 490);  // clamped
  EXPECT_DOUBLE_EQ(p.Y(0), 260);
  EXPECT_DOUBLE_EQ(p.Y(100), 20);
  EXPECT_TRUE(p.Inside(5, 50));
  EXPECT_FALSE(p.Inside(11, 50));
}

TEST(SvgPlot, EscapesEveryTextItWrites) {
  SvgPlot p(Box{}, 0, 1, 0, 1);
  p.Title("a<b");
  p.LegendEntry("x&y", "red");
  p.HLine(0.5, "blue", "limit", "l>m");
  std::string s = p.Finish();
  EXPECT_EQ(s.find("a<b"), std::string::npos);
  EXPECT_NE(s.find("a&lt;b"), std::string::npos);
  EXPECT_NE(s.find("x&amp;y"), std::string::npos);
  EXPECT_NE(s.find("l&gt;m"), std::string::npos);
  EXPECT_EQ(s.rfind("<svg ", 0), 0u);
  EXPECT_EQ(s.substr(s.size() - 7), "</svg>\n");
}

TEST(SvgPlot, BandGoesAlongTheTopAndBackAlongTheBottom) {
  SvgPlot p(Box{500, 300, 50, 10, 20, 40}, 0, 10, 0, 100);
  p.Band({0, 10}, {0, 50}, {100, 100}, "red", "layer", "a&b");
  std::string s = p.Finish();
  // Top edge left to right (y 100 -> pixel 20), then the bottom right to left (50 -> 140, 0 -> 260).
  EXPECT_NE(s.find("<polygon class=\"layer\" fill=\"red\" stroke=\"none\" points=\"50,20 490,20 490,140 50,260 \">"
                   "<title>a&amp;b</title></polygon>"),
            std::string::npos)
      << s;
}

TEST(SvgPlot, LegendsSitUnderTheTitleAndDoNotOverlap) {
  SvgPlot p(Box{900, 400, 90, 20, 70, 40}, 0, 1, 0, 1);
  p.Title("t");
  p.LegendEntry("activations saved for backward", "red");  // 30 characters: wider than the 170 px slot
  p.LegendEntry("b", "blue");
  std::string s = p.Finish();
  // Under the 14 px title at y 16, and the second entry starts after the first one's text (34 + 7 x 30 px).
  EXPECT_NE(s.find("<text x=\"112\" y=\"36\">activations saved for backward</text>"), std::string::npos) << s;
  EXPECT_NE(s.find("<text x=\"356\" y=\"36\">b</text>"), std::string::npos) << s;
}

TEST(Stack, PutsPanelsOneAboveTheOther) {
  std::string s = Stack({{"<svg a/>", 100, 50}, {"<svg b/>", 80, 30}});
  EXPECT_NE(s.find("height=\"80\""), std::string::npos);
  EXPECT_NE(s.find("translate(0,50)"), std::string::npos);
  EXPECT_EQ(Stack({{"<svg a/>", 1, 1}}), "<svg a/>");
}

}  // namespace
}  // namespace oomguard::svg
