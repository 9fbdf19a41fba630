// Checks on an explain Report shared by the explain tests: the first finding,
// its cause and domain, and whether any finding has a cause or a memory domain.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "oomguard/explain/explainer.h"

namespace oomguard::explain {

// The first finding (a default one, after a failure, when there is none).
inline Finding Top(const Report& r) {
  EXPECT_FALSE(r.findings.empty());
  return r.findings.empty() ? Finding{} : r.findings[0];
}

// The first finding of `text` has this cause and domain.
inline void ExpectTop(const std::string& text, Cause cause, Domain domain) {
  const Finding f = Top(ExplainText(text));
  EXPECT_EQ(f.cause, cause) << text;
  EXPECT_EQ(f.domain, domain) << text;
}

inline bool HasCause(const Report& r, Cause cause) {
  for (const Finding& f : r.findings) {
    if (f.cause == cause) return true;
  }
  return false;
}

inline bool HasMemoryFinding(const Report& r) {
  for (const Finding& f : r.findings) {
    if (f.domain != Domain::kNone) return true;
  }
  return false;
}

}  // namespace oomguard::explain
