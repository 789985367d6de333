// Fingerprints of a model plan: the execution weight schema's and the
// plan's digest, SHA-256 over canonical texts. Names are written with their
// length ("3:w_q"), so no name can imitate the text around it.
#include "planning/model/plan_stages.hpp"
#include "planning/model/resource_ids.hpp"

namespace tenact {

namespace {

std::string name_text(std::string_view name) { return std::to_string(name.size()) + ":" + std::string{name}; }

std::string place_text(const StoragePlace& p) {
  return p.resource + "@" + p.endpoint.to_string() + "+" + std::to_string(p.offset_bytes) + "/" +
         std::to_string(p.length_bytes);
}

std::string storage_text(const ValueStorage& s) {
  static constexpr const char* kKinds[] = {"request", "weight", "state", "activation", "aliased"};
  std::string out = kKinds[static_cast<size_t>(s.kind)];
  for (const StoragePlace& p : s.places) out += " " + place_text(p);
  if (s.aliases) out += " aliases " + std::to_string(*s.aliases);
  if (s.kind == ValueStorage::Kind::Activation)
    out += (s.packed ? " packed" : " own") + std::string{" ["} + std::to_string(s.first_op) + ", " +
           std::to_string(s.last_op) + "]";
  return out;
}

std::string node_text(const NodeResolution& n) {
  std::string out = "node " + std::to_string(n.op) + " " + name_text(n.provider) + " " + n.endpoint.to_string() +
                    " choice " + name_text(n.choice.id);
  for (const ResolvedTensorLayout& l : n.choice.operand_layouts) out += " " + l.to_string();
  out += " aliases";
  for (const AliasPolicy& a : n.result_aliases) out += " " + a.to_string();
  return out;
}

}  // namespace

std::string execution_weight_fingerprint(const SemanticProgram& program, std::string_view materializer,
                                         const std::vector<ResolvedTensorSpec>& tensors) {
  std::string text = "tenact.execution_weights/1\nmaterializer " + name_text(materializer) + "\n";
  for (const WeightInfo& w : program.weights())
    text += "weight " + name_text(program.value(w.value).name) + " " + tensors[w.value].to_string() + "\n";
  return sha256_hex(text);
}

std::string plan_digest(const ModelPlan& plan) {
  std::string text = "tenact.model_plan/1\nfamily " + plan.family_fingerprint + "\nmaterializer " +
                     name_text(plan.weight_materializer) + "\nweights " + plan.execution_weight_fingerprint + "\n";
  for (const auto& [symbol, value] : plan.symbols)
    text += "symbol " + name_text(symbol) + " " + std::to_string(value) + "\n";
  for (ValueId v = 0; v < plan.tensors.size(); ++v)
    text +=
        "value " + std::to_string(v) + " " + plan.tensors[v].to_string() + " " + storage_text(plan.storage[v]) + "\n";
  for (const NodeResolution& n : plan.nodes) text += node_text(n) + "\n";
  for (const WeightComponent& c : plan.weight_components)
    text += "component " + name_text(c.id) + " " + std::to_string(c.weight) + " " + c.tensor.to_string() + " " +
            c.resource + "+" + std::to_string(c.offset_bytes) + "/" + std::to_string(c.length_bytes) + "\n";
  for (const StorageResource& r : plan.resources)
    text += "resource " + r.id + " " + std::string{to_string(r.kind)} + " " + r.endpoint.to_string() + " " +
            std::string{to_string(r.dtype)} + " " + std::to_string(r.bytes) + " " + std::to_string(r.alignment) + "\n";
  text += "retained";
  for (ValueId v : plan.retained) text += " " + std::to_string(v);
  text += "\norder";
  for (const auto& [before, after] : plan.order) text += " " + std::to_string(before) + "<" + std::to_string(after);
  text += "\ncompiler fuse=" + std::to_string(plan.compiler.fuse_elementwise) +
          " max_region_ops=" + std::to_string(plan.compiler.max_region_ops);
  text += "\nregions";
  for (const auto& region : plan.fused_regions) {
    text += " {";
    for (size_t op : region) text += " " + std::to_string(op);
    text += " }";
  }
  text += "\nalignment " + std::to_string(plan.value_alignment_bytes) + "\n";
  return sha256_hex(text);
}

}  // namespace tenact
