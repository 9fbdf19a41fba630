#include "oomguard/doctor/step_counter.h"

#include <gtest/gtest.h>

namespace oomguard::doctor {
namespace {

TEST(ParseStepNumber, CommonTrainingLogFormats) {
  EXPECT_EQ(ParseStepNumber("step 120 loss 0.53"), 120);
  EXPECT_EQ(ParseStepNumber("Step: 7/1000, lr=0.1"), 7);
  EXPECT_EQ(ParseStepNumber("iter=42 time 0.1s"), 42);
  EXPECT_EQ(ParseStepNumber("Iteration #300"), 300);
  EXPECT_EQ(ParseStepNumber("Epoch: [2][ 130/5005]\tTime 0.3"), 130);
  EXPECT_EQ(ParseStepNumber("Train Epoch: 1 [640/60000 (1%)]\tLoss: 2.2"), 640);
  EXPECT_EQ(ParseStepNumber("global_step 9 then step 10"), 10);  // the last one on the line
}

TEST(ParseStepNumber, IgnoresLinesWithoutACounter) {
  EXPECT_FALSE(ParseStepNumber("loss 0.53 accuracy 91").has_value());
  EXPECT_FALSE(ParseStepNumber("stepping up 5").has_value());   // not the word "step"
  EXPECT_FALSE(ParseStepNumber("footstep 5").has_value());
  EXPECT_FALSE(ParseStepNumber("step next").has_value());
  EXPECT_FALSE(ParseStepNumber("[abc/5]").has_value());
  EXPECT_FALSE(ParseStepNumber("").has_value());
}

TEST(StepCounter, LinesAcrossChunksAndRate) {
  StepCounter c;
  c.Feed("warming up\nstep 1", 0.0);
  EXPECT_FALSE(c.last_step().has_value());  // the line is not finished yet
  c.Feed("0\n", 0.5);
  EXPECT_EQ(c.last_step(), 10);
  c.Feed("step 12\r", 1.5);
  c.Feed("step 14\nstep 16\n", 2.5);
  EXPECT_EQ(c.last_step(), 16);
  EXPECT_NEAR(c.steps_per_second(), 2.0, 1e-9);  // 10 at 0.5 s ... 16 at 2.5 s (Theil-Sen median)
}

}  // namespace
}  // namespace oomguard::doctor
