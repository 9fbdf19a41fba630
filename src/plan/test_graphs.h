// Test helper: builds small ONNX models in memory (hand-made graphs whose
// memory the tests compute by hand).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace oomguard::plan::testing {

class GraphBuilder {
 public:
  GraphBuilder() {
    model_.set_ir_version(8);
    auto* opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(14);
    model_.mutable_graph()->set_name("test");
  }

  // A float input whose first dimension is the symbolic "batch" (or fixed when batch > 0).
  GraphBuilder& Input(const std::string& name, std::vector<int64_t> per_sample, int dtype = 1, int64_t batch = -1) {
    auto* in = model_.mutable_graph()->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(dtype);
    auto* shape = tt->mutable_shape();
    auto* d0 = shape->add_dim();
    if (batch > 0) d0->set_dim_value(batch); else d0->set_dim_param("batch");
    for (int64_t d : per_sample) shape->add_dim()->set_dim_value(d);
    return *this;
  }
  // A weight stored as external data in a file that does not exist.
  GraphBuilder& Weight(const std::string& name, std::vector<int64_t> dims, bool external = true) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    int64_t n = 1;
    for (int64_t d : dims) t->add_dims(d), n *= d;
    if (external) {
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      auto* e = t->add_external_data();
      e->set_key("location");
      e->set_value("missing.onnx.data");
    } else {
      t->mutable_float_data()->Resize(static_cast<int>(n), 0.5f);
    }
    return *this;
  }
  GraphBuilder& Constant(const std::string& name, std::vector<int64_t> values, std::vector<int64_t> dims) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type("Constant");
    n->add_output(name);
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(7);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  GraphBuilder& FloatConstant(const std::string& name, float value) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type("Constant");
    n->add_output(name);
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(1);
    a->mutable_t()->add_float_data(value);
    return *this;
  }
  onnx::NodeProto& Node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                        const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(model_.graph().node_size()) : name);
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    return *n;
  }
  static void IntAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void FloatAttr(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  GraphBuilder& Opset(int64_t version) {
    model_.mutable_opset_import(0)->set_version(version);
    return *this;
  }
  static void IntsAttr(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  GraphBuilder& Output(const std::string& name) {
    auto* o = model_.mutable_graph()->add_output();
    o->set_name(name);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(1);
    return *this;
  }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

}  // namespace oomguard::plan::testing
