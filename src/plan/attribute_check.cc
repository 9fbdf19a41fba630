#include "attribute_check.h"

#include <vector>

namespace oomguard::plan {
namespace {

std::string List(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

bool IsWindowOp(const std::string& k) {
  return k == "Conv" || k == "ConvTranspose" || k == "ConvInteger" || k == "QLinearConv" || k == "MaxPool" ||
         k == "AveragePool" || k == "LpPool" || k == "MaxUnpool" || k == "MaxRoiPool" || k == "DeformConv";
}

}  // namespace

Status CheckAttributes(const Model& model, int64_t opset, const std::string& label) {
  if (opset < 1 || opset > kMaxPlausibleOpset) {
    return MakeError(label + ": malformed ONNX model (opset " + std::to_string(opset) +
                     " is not an ONNX opset; expected 1 to " + std::to_string(kMaxPlausibleOpset) + ")");
  }
  for (const NodeInfo& n : model.nodes) {
    auto fail = [&](const std::string& what) {
      return MakeError(label + ": malformed ONNX model (node '" + n.name + "' (" + n.op_type + "): " + what + ")");
    };
    if (auto it = n.int_attrs.find("group"); it != n.int_attrs.end() && it->second < 1) {
      return fail("group must be at least 1, got " + std::to_string(it->second));
    }
    if (IsWindowOp(n.op_type)) {
      size_t rank = 0;  // spatial rank, from the first list attribute present
      for (const char* name : {"kernel_shape", "strides", "dilations"}) {
        auto it = n.ints_attrs.find(name);
        if (it == n.ints_attrs.end()) continue;
        for (int64_t v : it->second) {
          if (v < 1) return fail(std::string(name) + " must be at least 1, got " + List(it->second));
        }
        if (rank == 0) rank = it->second.size();
        if (it->second.size() != rank) {
          return fail(std::string(name) + " has " + std::to_string(it->second.size()) + " values for " +
                      std::to_string(rank) + " spatial dimensions");
        }
      }
      for (const char* name : {"pads", "output_padding", "output_shape"}) {
        auto it = n.ints_attrs.find(name);
        if (it == n.ints_attrs.end()) continue;
        for (int64_t v : it->second) {
          if (v < 0) return fail(std::string(name) + " must not be negative, got " + List(it->second));
        }
      }
      if (auto it = n.ints_attrs.find("pads"); it != n.ints_attrs.end() && rank && it->second.size() != 2 * rank) {
        return fail("pads has " + std::to_string(it->second.size()) + " values for " + std::to_string(rank) +
                    " spatial dimensions (expected " + std::to_string(2 * rank) + ")");
      }
      if (auto it = n.string_attrs.find("auto_pad"); it != n.string_attrs.end()) {
        const std::string& a = it->second;
        if (a != "NOTSET" && a != "SAME_UPPER" && a != "SAME_LOWER" && a != "VALID") {
          return fail("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '" + a + "'");
        }
      }
    }
    if (n.op_type == "Transpose") {
      if (auto it = n.ints_attrs.find("perm"); it != n.ints_attrs.end()) {
        const std::vector<int64_t>& p = it->second;
        std::vector<bool> seen(p.size(), false);
        for (int64_t v : p) {
          if (v < 0 || v >= static_cast<int64_t>(p.size()) || seen[static_cast<size_t>(v)]) {
            return fail("perm must be a permutation of 0.." + std::to_string(p.size() - 1) + ", got " + List(p));
          }
          seen[static_cast<size_t>(v)] = true;
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace oomguard::plan
