// libFuzzer target: any bytes, fed in arbitrary chunks, must explain without
// crashing, and the JSON report must serialize (valid UTF-8 everywhere).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "oomguard/explain/explainer.h"
#include "oomguard/explain/report_format.h"
#include "report_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace oomguard::explain;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ExplainOptions options;
  options.max_line_bytes = 256;  // exercise the line cap too
  Explainer explainer(options);
  size_t chunk = size > 0 ? 1 + data[0] % 64 : 1;
  for (size_t at = 0; at < text.size(); at += chunk) explainer.AddText(text.substr(at, chunk));
  Report report = explainer.Finish();
  (void)ReportToJson(report, "fuzz").dump();
  (void)FormatReport(report, "fuzz");
  return 0;
}
