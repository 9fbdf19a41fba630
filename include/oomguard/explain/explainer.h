// Explainer: reads an error log line by line and says which memory ran out,
// why, and what to do.
//
// Streams in constant memory: each line is looked at once (only its first
// ExplainOptions::max_line_bytes are kept) and only a bounded summary per kind
// of problem is retained, so a log of any size costs the same memory.
// Any bytes are accepted (binary garbage, invalid UTF-8, CRLF, ANSI colour
// codes); evidence in the report is cleaned to valid UTF-8.
//
// Thread safety: an Explainer is used by one thread at a time; distinct
// Explainers are independent. The pattern table is built once and shared
// read-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "oomguard/explain/finding.h"
#include "oomguard/result.h"

namespace oomguard::explain {

struct ExplainOptions {
  // Longer lines are cut here (the rest is skipped); error messages are short,
  // so this only bounds memory on binary data or minified output.
  size_t max_line_bytes = 64 * 1024;
  // Facts about this machine (`--here`); when set, advice and verdicts use them.
  std::optional<HereFacts> here;
  // Value of PYTORCH_CUDA_ALLOC_CONF in the environment the log came from, if
  // known: PyTorch's expandable_segments hint is not repeated when it is on.
  std::optional<std::string> pytorch_cuda_alloc_conf;
};

class Explainer {
 public:
  explicit Explainer(ExplainOptions options = {});
  ~Explainer();
  Explainer(const Explainer&) = delete;
  Explainer& operator=(const Explainer&) = delete;

  // Feeds one line without its '\n' (a trailing '\r' is ignored).
  void AddLine(std::string_view line);
  // Feeds a block of text: splits on '\n' and '\r'; a final partial line is
  // held until the next call or Finish().
  void AddText(std::string_view text);
  // The findings so far, most important first. REQUIRES: called once, last.
  Report Finish();

 private:
  struct State;
  State* state_;
};

// Explains everything readable from `fd` until end of file.
Result<Report> ExplainFd(int fd, const ExplainOptions& options = {});
// Explains a file; "-" reads standard input. Errors: the file is missing, is a
// directory or cannot be read ("cannot open 'x': No such file or directory").
Result<Report> ExplainFile(const std::string& path, const ExplainOptions& options = {});
// Explains a string (tests, small inputs).
Report ExplainText(std::string_view text, const ExplainOptions& options = {});

}  // namespace oomguard::explain
