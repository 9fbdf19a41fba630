// Round 12: healthy logs (tests/data/explain/corpus_healthy.jsonl) must get no memory finding. Each rule test
// uses the real line from the development part that the rules read as trouble before round 12 (the rule tests
// fail with the rules of commit cd81c18), and a line of the same kind that still is trouble. Also the scorer's split filter and its
// false-positive count, which explain_score --split / --max-memory-findings and ctest explain_healthy_dev use.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "finding_checks.h"
#include "oomguard/explain/explainer.h"
#include "patterns.h"
#include "scoring.h"

namespace oomguard::explain {
namespace {

TEST(Healthy, AZeroCountOfOomsIsNoOom) {
  // healthy-006 (pytorch/pytorch#91854): torch.cuda.memory_summary()'s header.
  EXPECT_FALSE(HasMemoryFinding(ExplainText(
      "|===========================================================================|\n"
      "|                  PyTorch CUDA memory summary, device ID 0                 |\n"
      "|---------------------------------------------------------------------------|\n"
      "|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |\n"
      "|===========================================================================|\n")));
  // healthy-068 (fairseq#940): the training line's oom=0 field.
  EXPECT_FALSE(HasMemoryFinding(ExplainText(
      "| epoch 001:    450 / 1891 loss=11.521, nll_loss=10.881, ppl=1886.05, wps=52922, ups=0.5, wpb=104928, "
      "bsz=5325, num_updates=445, lr=8.90889e-05, gnorm=1.543, clip=0%, oom=0, loss_scale=2.000, wall=882, "
      "train_wall=756\n")));
  // A count that is not zero still reports OOMs, and an OOM on the same line still speaks.
  EXPECT_TRUE(HasMemoryFinding(ExplainText("|            CUDA OOMs: 3            |        cudaMalloc retries: 7         |\n")));
  EXPECT_TRUE(HasMemoryFinding(ExplainText("epoch 2: oom=0 then RuntimeError: CUDA out of memory.\n")));
}

TEST(Healthy, AStatusFieldsKeyIsNotWords) {
  // healthy-048 (ollama/ollama#12000): "memory.required.full" is a key, not memory that is full.
  EXPECT_FALSE(HasMemoryFinding(ExplainText(
      "Aug 22 17:36:22 amobile ollama[30907]: time=2025-08-22T17:36:22.023-04:00 level=INFO source=server.go:135 "
      "msg=\"system memory\" total=\"62.7 GiB\" free=\"56.0 GiB\" free_swap=\"31.1 GiB\"\n"
      "Aug 22 17:36:22 amobile ollama[30907]: time=2025-08-22T17:36:22.027-04:00 level=INFO source=server.go:175 "
      "msg=offload library=cuda layers.requested=-1 layers.model=49 layers.offload=48 layers.split=\"\" "
      "memory.available=\"[11.1 GiB]\" memory.gpu_overhead=\"0 B\" memory.required.full=\"11.4 GiB\" "
      "memory.required.partial=\"8.9 GiB\" memory.required.kv=\"992.0 MiB\" memory.required.allocations=\"[8.9 GiB]\" "
      "memory.weights.total=\"6.8 GiB\" memory.weights.repeating=\"6.0 GiB\" memory.weights.nonrepeating=\"787.5 MiB\" "
      "memory.graph.full=\"519.5 MiB\" memory.graph.partial=\"1.3 GiB\" projector.weights=\"795.9 MiB\" "
      "projector.graph=\"1.0 GiB\"\n")));
  // The same kind of line whose value says the trouble still does.
  EXPECT_TRUE(HasMemoryFinding(ExplainText(
      "level=ERROR source=server.go:175 msg=\"GPU memory is full\" memory.required.full=\"11.4 GiB\"\n")));
}

TEST(Healthy, AnAdvisingIfIsAHintNotAReport) {
  // healthy-076 (LightGBM#3338): LightGBM's own hint after choosing row-wise multi-threading.
  EXPECT_FALSE(HasMemoryFinding(ExplainText(
      "[LightGBM] [Warning] Auto-choosing row-wise multi-threading, the overhead of testing was 0.563600 seconds.\n"
      "You can set `force_row_wise=true` to remove the overhead.\n"
      "And if memory is not enough, you can set `force_col_wise=true`.\n")));
  // A person's "if" that reports what happened is still a report.
  EXPECT_TRUE(HasMemoryFinding(ExplainText("if I use batch size 64 the GPU runs out of memory and the job dies\n")));
}

TEST(Healthy, EraseHealthyNoiseLeavesOtherLinesAlone) {
  EXPECT_FALSE(EraseHealthyNoise("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB").has_value());
  EXPECT_FALSE(EraseHealthyNoise("OOMs: 0.5 GiB lost").has_value());
  ASSERT_TRUE(EraseHealthyNoise("x oom=0, y").has_value());
  EXPECT_EQ(*EraseHealthyNoise("x oom=0, y"), "x   y");
}

std::filesystem::path WriteCorpus(const std::string& text) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("oomguard_healthy_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".jsonl");
  std::ofstream(path) << text;
  return path;
}

TEST(Healthy, TheScorerCountsMemoryFindingsOnLogsWithoutAMemoryDomainAndFiltersBySplit) {
  const std::filesystem::path path = WriteCorpus(
      R"({"id": "h1", "framework": "keras", "excerpt": "Epoch 1/10\n6072/6072 - loss: 0.6284", "accept": ["not_memory"], "domain": null, "split": "dev"})"
      "\n"
      R"({"id": "h2", "framework": "x", "excerpt": "RuntimeError: CUDA out of memory.", "accept": ["not_memory"], "domain": null, "split": "dev"})"
      "\n"
      R"({"id": "h3", "framework": "x", "excerpt": "RuntimeError: CUDA out of memory.", "accept": ["not_memory"], "domain": null, "split": "heldout"})"
      "\n"
      R"({"id": "m1", "framework": "x", "excerpt": "RuntimeError: CUDA out of memory.", "accept": ["gpu_device_oom"], "domain": "gpu"})"
      "\n");
  Result<CorpusScore> all = ScoreCorpus(path.string());
  ASSERT_TRUE(all.ok()) << all.error();
  EXPECT_EQ(all->all.total, 4);
  EXPECT_EQ(all->all.not_memory_logs, 3);
  EXPECT_EQ(all->all.memory_false, 2);
  EXPECT_EQ(all->all.memory_logs, 1);

  Result<CorpusScore> dev = ScoreCorpus(path.string(), "dev");  // rows without a split are kept
  ASSERT_TRUE(dev.ok()) << dev.error();
  EXPECT_EQ(dev->all.total, 3);
  EXPECT_EQ(dev->all.memory_false, 1);
  const std::string table = FormatScore("t", *dev, true);
  EXPECT_NE(table.find("logs labelled with no memory domain given a memory finding: 1/2"), std::string::npos) << table;
  EXPECT_NE(table.find("miss h2 (x): got gpu_device_oom/gpu"), std::string::npos) << table;
  EXPECT_EQ(table.find("h3"), std::string::npos) << table;

  Result<CorpusScore> heldout = ScoreCorpus(path.string(), "heldout");
  ASSERT_TRUE(heldout.ok()) << heldout.error();
  EXPECT_EQ(heldout->all.total, 2);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace oomguard::explain
