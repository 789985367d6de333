// The JSON object of model_plan_json:
//   model, family_fingerprint, weight_materializer,
//   execution_weight_fingerprint, digest   strings
//   symbols                 {name: value}
//   value_alignment_bytes, alignment_passes
//   values      [{name, role ("input", "weight", "state", "result"), tensor,
//                 storage: {kind ("request", "weight", "state",
//                 "activation", "aliased"), places: [{resource, endpoint,
//                 offset_bytes, length_bytes}], aliases (a value name or
//                 null), packed, unpacked_because, first_op, last_op}}]
//   nodes       [{op, node, provider, engine, endpoint, choice: {id,
//                 operand_layouts}, capabilities, result_aliases,
//                 value_alignment_bytes, why}]
//   weight_components [{id, weight, endpoint, tensor, resource,
//                 offset_bytes, length_bytes}]
//   resources   [{id, kind, endpoint, dtype, bytes, alignment, holds}]
//   retained    [value names]
//   order       [[before op, after op]]
//   activations {peak_live_bytes, planned_bytes, total_bytes}
#include "planning/model/model_plan_report.hpp"

#include <nlohmann/json.hpp>

namespace tenact {

namespace {

using Json = nlohmann::ordered_json;

std::string_view role_name(ValueRole role) {
  switch (role) {
    case ValueRole::Input: return "input";
    case ValueRole::Weight: return "weight";
    case ValueRole::State: return "state";
    case ValueRole::Result: return "result";
  }
  return "?";
}

std::string_view storage_kind_name(ValueStorage::Kind kind) {
  switch (kind) {
    case ValueStorage::Kind::Request: return "request";
    case ValueStorage::Kind::Weight: return "weight";
    case ValueStorage::Kind::State: return "state";
    case ValueStorage::Kind::Activation: return "activation";
    case ValueStorage::Kind::Aliased: return "aliased";
  }
  return "?";
}

std::string place_line(const StoragePlace& p) {
  return p.resource + " at " + p.endpoint.to_string() + " +" + std::to_string(p.offset_bytes) + ", " +
         std::to_string(p.length_bytes) + " bytes";
}

std::string storage_line(const ModelPlan& plan, const ValueStorage& s) {
  std::string out{storage_kind_name(s.kind)};
  if (s.aliases) out += " of " + plan.program->value(*s.aliases).name;
  for (const StoragePlace& p : s.places) out += "; " + place_line(p);
  if (s.kind == ValueStorage::Kind::Activation) {
    out += "; ops [" + std::to_string(s.first_op) + ", " + std::to_string(s.last_op) + "]";
    out += s.packed ? ", packed" : ", own resource: " + s.unpacked_because;
  }
  return out;
}

std::string text_header(const ModelPlan& plan) {
  std::string out =
      "model '" + plan.program->name() + "': family " + plan.family_fingerprint + ", digest " + plan.digest + "\n";
  out += "weight materializer " + plan.weight_materializer + " (execution weights " +
         plan.execution_weight_fingerprint + ")\n";
  out += "symbols:";
  for (const auto& [name, value] : plan.symbols) out += " " + name + "=" + std::to_string(value);
  out += plan.symbols.empty() ? " none\n" : "\n";
  out += "value alignment: " + std::to_string(plan.value_alignment_bytes) + " bytes (" +
         std::to_string(plan.alignment_passes) + " pass(es) after the probe)\n";
  return out;
}

Json places_json(const std::vector<StoragePlace>& places) {
  Json out = Json::array();
  for (const StoragePlace& p : places)
    out.push_back({{"resource", p.resource},
                   {"endpoint", p.endpoint.to_string()},
                   {"offset_bytes", p.offset_bytes},
                   {"length_bytes", p.length_bytes}});
  return out;
}

Json value_json(const ModelPlan& plan, ValueId v) {
  const ValueInfo& info = plan.program->value(v);
  const ValueStorage& s = plan.storage[v];
  Json storage = {{"kind", storage_kind_name(s.kind)},
                  {"places", places_json(s.places)},
                  {"aliases", s.aliases ? Json(plan.program->value(*s.aliases).name) : Json(nullptr)},
                  {"packed", s.packed},
                  {"unpacked_because", s.unpacked_because},
                  {"first_op", s.first_op},
                  {"last_op", s.last_op}};
  return {{"name", info.name},
          {"role", role_name(info.role)},
          {"tensor", plan.tensors[v].to_string()},
          {"storage", std::move(storage)}};
}

Json node_json(const NodeResolution& n) {
  Json layouts = Json::array(), aliases = Json::array();
  for (const ResolvedTensorLayout& l : n.choice.operand_layouts) layouts.push_back(l.to_string());
  for (const AliasPolicy& a : n.result_aliases) aliases.push_back(a.to_string());
  return {{"op", n.op},
          {"node", n.node},
          {"provider", n.provider},
          {"engine", n.engine},
          {"endpoint", n.endpoint.to_string()},
          {"choice", {{"id", n.choice.id}, {"operand_layouts", std::move(layouts)}}},
          {"capabilities", n.capabilities},
          {"result_aliases", std::move(aliases)},
          {"value_alignment_bytes", n.value_alignment_bytes},
          {"why", n.why}};
}

}  // namespace

std::string describe_model_plan(const ModelPlan& plan) {
  const SemanticProgram& program = *plan.program;
  std::string out = text_header(plan);
  out += "values:\n";
  for (ValueId v = 0; v < plan.tensors.size(); ++v)
    out += "  " + program.value(v).name + " (" + std::string{role_name(program.value(v).role)} + ") " +
           plan.tensors[v].to_string() + ": " + storage_line(plan, plan.storage[v]) + "\n";
  out += "nodes:\n";
  for (const NodeResolution& n : plan.nodes)
    out += "  " + program.describe_op(n.op) + " -> " + n.provider + " at " + n.endpoint.to_string() + " (alignment " +
           std::to_string(n.value_alignment_bytes) + "): " + n.why + "\n";
  out += "weight components:\n";
  for (const WeightComponent& c : plan.weight_components)
    out += "  " + c.id + " " + c.tensor.to_string() + " in " + c.resource + " +" + std::to_string(c.offset_bytes) +
           ", " + std::to_string(c.length_bytes) + " bytes\n";
  out += "resources:\n";
  for (const StorageResource& r : plan.resources)
    out += "  " + r.id + " " + std::string{to_string(r.kind)} + " at " + r.endpoint.to_string() + ", " +
           std::string{to_string(r.dtype)} + ", " + std::to_string(r.bytes) + " bytes, alignment " +
           std::to_string(r.alignment) + ": " + r.holds + "\n";
  for (ValueId v : plan.retained) out += "retained: " + program.value(v).name + "\n";
  for (const auto& [before, after] : plan.order)
    out += "order: op #" + std::to_string(before) + " before op #" + std::to_string(after) + "\n";
  out += "activations: peak live " + std::to_string(plan.peak_live_activation_bytes) + " bytes, planned " +
         std::to_string(plan.planned_activation_bytes) + " bytes (arenas and unpacked), total " +
         std::to_string(plan.total_activation_bytes) + " bytes without reuse\n";
  return out;
}

std::string model_plan_json(const ModelPlan& plan) {
  const SemanticProgram& program = *plan.program;
  Json j;
  j["model"] = program.name();
  j["family_fingerprint"] = plan.family_fingerprint;
  j["weight_materializer"] = plan.weight_materializer;
  j["execution_weight_fingerprint"] = plan.execution_weight_fingerprint;
  j["digest"] = plan.digest;
  j["symbols"] = Json::object();
  for (const auto& [name, value] : plan.symbols) j["symbols"][name] = value;
  j["value_alignment_bytes"] = plan.value_alignment_bytes;
  j["alignment_passes"] = plan.alignment_passes;
  j["values"] = Json::array();
  for (ValueId v = 0; v < plan.tensors.size(); ++v) j["values"].push_back(value_json(plan, v));
  j["nodes"] = Json::array();
  for (const NodeResolution& n : plan.nodes) j["nodes"].push_back(node_json(n));
  j["weight_components"] = Json::array();
  for (const WeightComponent& c : plan.weight_components)
    j["weight_components"].push_back({{"id", c.id},
                                      {"weight", program.value(c.weight).name},
                                      {"endpoint", c.endpoint.to_string()},
                                      {"tensor", c.tensor.to_string()},
                                      {"resource", c.resource},
                                      {"offset_bytes", c.offset_bytes},
                                      {"length_bytes", c.length_bytes}});
  j["resources"] = Json::array();
  for (const StorageResource& r : plan.resources)
    j["resources"].push_back({{"id", r.id},
                              {"kind", to_string(r.kind)},
                              {"endpoint", r.endpoint.to_string()},
                              {"dtype", to_string(r.dtype)},
                              {"bytes", r.bytes},
                              {"alignment", r.alignment},
                              {"holds", r.holds}});
  j["retained"] = Json::array();
  for (ValueId v : plan.retained) j["retained"].push_back(program.value(v).name);
  j["order"] = Json::array();
  for (const auto& [before, after] : plan.order) j["order"].push_back({before, after});
  j["activations"] = {{"peak_live_bytes", plan.peak_live_activation_bytes},
                      {"planned_bytes", plan.planned_activation_bytes},
                      {"total_bytes", plan.total_activation_bytes}};
  return j.dump(2) + "\n";
}

}  // namespace tenact
