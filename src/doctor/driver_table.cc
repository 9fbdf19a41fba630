// Minimum Linux x86_64 driver per CUDA release, from NVIDIA's CUDA Toolkit
// release notes, table "CUDA Toolkit and Corresponding Driver Versions"
// (GA release of each minor version), and the minor-version-compatibility
// floors of each major (CUDA 11.x: 450.80.02, 12.x: 525.60.13, 13.x: 580).
#include <cstdio>
#include <vector>

#include "oomguard/doctor/checks.h"

namespace oomguard::doctor {
namespace {

struct Row {
  int cuda;
  const char* ga;
};

constexpr Row kRows[] = {
    {13000, "580.65.06"}, {12090, "575.51.03"}, {12080, "570.26"},    {12060, "560.28.03"},
    {12050, "555.42.02"}, {12040, "550.54.14"}, {12030, "545.23.06"}, {12020, "535.54.03"},
    {12010, "530.30.02"}, {12000, "525.60.13"}, {11080, "520.61.05"}, {11070, "515.43.04"},
    {11060, "510.39.01"}, {11050, "495.29.05"}, {11040, "470.42.01"}, {11030, "465.19.01"},
    {11020, "460.27.03"}, {11010, "455.23"},    {11000, "450.36.06"}, {10020, "440.33"},
    {10010, "418.39"},    {10000, "410.48"},    {9020, "396.26"},     {9010, "390.46"},
    {9000, "384.81"},     {8000, "367.48"},
};

const char* MinorCompatFloor(int major) {
  switch (major) {
    case 11: return "450.80.02";
    case 12: return "525.60.13";
    case 13: return "580.65.06";
    default: return "";
  }
}

std::vector<long> Parts(const std::string& v) {
  std::vector<long> out;
  long cur = 0;
  bool any = false;
  for (char c : v) {
    if (c >= '0' && c <= '9') {
      cur = cur * 10 + (c - '0');
      any = true;
    } else if (c == '.') {
      out.push_back(cur);
      cur = 0;
    } else {
      break;
    }
  }
  if (any) out.push_back(cur);
  return out;
}

}  // namespace

int CompareDriverVersions(const std::string& a, const std::string& b) {
  std::vector<long> x = Parts(a), y = Parts(b);
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    long p = i < x.size() ? x[i] : 0, q = i < y.size() ? y[i] : 0;
    if (p != q) return p < q ? -1 : 1;
  }
  return 0;
}

DriverRequirement MinimumDriverFor(int cuda_version) {
  DriverRequirement r;
  // An exact minor release, or the newest known release below it (a newer
  // minor of a known major needs at least what the last known one needs).
  for (const Row& row : kRows) {
    if (row.cuda <= cuda_version && row.cuda / 1000 == cuda_version / 1000) {
      r.ga = row.ga;
      break;
    }
  }
  r.minor_compat = MinorCompatFloor(cuda_version / 1000);
  return r;
}

}  // namespace oomguard::doctor
