#include "oomguard/doctor/step_counter.h"

#include <cctype>

namespace oomguard::doctor {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::optional<long> Digits(std::string_view s, size_t* pos) {
  size_t start = *pos;
  long v = 0;
  while (*pos < s.size() && std::isdigit(static_cast<unsigned char>(s[*pos])) && *pos - start < 15) {
    v = v * 10 + (s[*pos] - '0');
    ++*pos;
  }
  if (*pos == start) return std::nullopt;
  return v;
}

}  // namespace

std::optional<long> ParseStepNumber(std::string_view line) {
  std::optional<long> found;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '[') {
      size_t p = i + 1;
      while (p < line.size() && line[p] == ' ') ++p;
      std::optional<long> n = Digits(line, &p);
      while (p < line.size() && line[p] == ' ') ++p;
      if (n && p < line.size() && line[p] == '/') found = n;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) ||
        (i > 0 && std::isalpha(static_cast<unsigned char>(line[i - 1])))) {
      continue;
    }
    size_t end = i;
    while (end < line.size() && std::isalpha(static_cast<unsigned char>(line[end]))) ++end;
    std::string_view word = line.substr(i, end - i);
    if (IEquals(word, "step") || IEquals(word, "iter") || IEquals(word, "iteration") || IEquals(word, "batch")) {
      size_t p = end;
      while (p < line.size() && (line[p] == ' ' || line[p] == ':' || line[p] == '=' || line[p] == '#')) ++p;
      if (std::optional<long> n = Digits(line, &p)) found = n;
    }
    i = end - 1;
  }
  return found;
}

void StepCounter::Feed(std::string_view text, double seconds) {
  partial_.append(text);
  size_t start = 0;
  for (size_t nl; (nl = partial_.find_first_of("\n\r", start)) != std::string::npos; start = nl + 1) {
    if (std::optional<long> step = ParseStepNumber(std::string_view(partial_).substr(start, nl - start))) {
      last_ = step;
      points_.push_back({seconds, static_cast<double>(*step)});
      if (points_.size() > 240) points_.erase(points_.begin());
    }
  }
  partial_.erase(0, start);
  if (partial_.size() > 65536) partial_.clear();  // a run that never ends a line
}

double StepCounter::steps_per_second() const { return TheilSenSlope(points_); }

}  // namespace oomguard::doctor
