#include "line_cleaner.h"

#include <re2/re2.h>

#include <cctype>

namespace oomguard::explain {

namespace {

const RE2& PrefixRe() {
  static const RE2* re = [] {
    RE2::Options o;
    o.set_encoding(RE2::Options::EncodingLatin1);
    // One prefix: a timestamp, a log level tag, or a rank/worker tag.
    return new RE2(
        R"re(^(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?:?\s*)re"
        R"re(|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?:?\s+)re"
        R"re(|[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+\s+)re"
        R"re(|\[(?:rank|default)\d+\]:\s*|\[\d+,\d+\]<std(?:out|err)>:\s*|\(\w*\s*pid=\d+(?:,\s*ip=[\d.]+)?\)\s*)re"
        R"re(|\d{1,4}: ))re",
        o);
  }();
  return *re;
}

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of a valid UTF-8 sequence starting at s[i], or 0 (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF).
size_t Utf8Length(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  unsigned char second = static_cast<unsigned char>(s[i + 1]);
  if (second < lo || second > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (!IsContinuation(static_cast<unsigned char>(s[i + k]))) return 0;
  }
  return n;
}

}  // namespace

std::string StripAnsi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\x1b') {
      out += line[i];
      continue;
    }
    if (i + 1 < line.size() && line[i + 1] == '[') {
      size_t j = i + 2;
      while (j < line.size() && !(line[j] >= '@' && line[j] <= '~')) ++j;
      i = j;  // skips the final letter too
    } else if (i + 1 < line.size() && line[i + 1] == ']') {
      size_t j = i + 2;
      while (j < line.size() && line[j] != '\a' && line[j] != '\x1b') ++j;
      if (j < line.size() && line[j] == '\x1b') ++j;  // ESC \ terminator
      i = j;
    } else {
      i += 1;
    }
  }
  return out;
}

std::string CleanLine(std::string_view line, size_t max_bytes) {
  std::string text = StripAnsi(line);
  std::string valid;
  valid.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\t') {
      valid += ' ';
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      ++i;
      continue;
    }
    size_t n = Utf8Length(text, i);
    if (n == 0) {
      valid += '?';
      ++i;
      continue;
    }
    valid.append(text, i, n);
    i += n;
  }
  re2::StringPiece rest(valid);
  for (int k = 0; k < 4; ++k) {
    while (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
    if (!RE2::Consume(&rest, PrefixRe())) break;
  }
  std::string out(rest.data(), rest.size());
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > max_bytes) {
    size_t cut = max_bytes;
    while (cut > 0 && IsContinuation(static_cast<unsigned char>(out[cut]))) --cut;
    out.resize(cut);
    out += "...";
  }
  return out;
}

std::optional<int> RankOf(std::string_view line) {
  for (std::string_view tag : {"[rank", "[default"}) {
    size_t at = line.find(tag);
    if (at == std::string_view::npos) continue;
    size_t i = at + tag.size();
    int rank = 0, digits = 0;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) && digits < 7) {
      rank = rank * 10 + (line[i] - '0');
      ++i;
      ++digits;
    }
    if (digits > 0 && i < line.size() && line[i] == ']') return rank;
  }
  if (line.size() > 4 && line[0] == '[' && line[1] == '1' && line[2] == ',') {
    size_t i = 3;
    int rank = 0, digits = 0;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) && digits < 7) {
      rank = rank * 10 + (line[i] - '0');
      ++i;
      ++digits;
    }
    if (digits > 0 && line.substr(i, 5) == "]<std") return rank;
  }
  return std::nullopt;
}

}  // namespace oomguard::explain
