#include "core/program.hpp"

#include <cstdio>

namespace tenact {

std::string Fingerprint::to_hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return buf;
}

size_t first_control_character(std::string_view name) {
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7F) return i;
    if (c == 0xC2 && i + 1 < name.size()) {
      const auto next = static_cast<unsigned char>(name[i + 1]);
      if (next >= 0x80 && next <= 0x9F) return i;
    }
  }
  return std::string_view::npos;
}

std::string printable_name(std::string_view name) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    unsigned code = c;
    if (c == 0xC2 && i + 1 < name.size() && static_cast<unsigned char>(name[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(name[i + 1]) <= 0x9F)
      code = static_cast<unsigned char>(name[++i]);
    else if (c >= 0x20 && c != 0x7F) {
      out.push_back(static_cast<char>(c));
      continue;
    }
    out += "\\u00";
    out.push_back(kHex[code >> 4]);
    out.push_back(kHex[code & 0xF]);
  }
  return out;
}


namespace {
std::string describe(size_t index, OpKind kind, const std::string* first_out) {
  std::string s = "op #" + std::to_string(index) + " (" + std::string{to_string(kind)};
  if (first_out) s += " -> '" + printable_name(*first_out) + "'";
  return s + ")";
}
}  // namespace

std::string describe_draft_op(size_t index, const DraftOp& op) {
  return describe(index, op.kind, op.out.empty() ? nullptr : &op.out.front());
}

std::string SemanticProgram::describe_op(size_t index) const {
  const Op& op = ops_.at(index);
  return describe(index, op.kind, op.outputs.empty() ? nullptr : &values_[op.outputs[0]].name);
}

namespace {
std::vector<DimExpr> shape_exprs(const ValueType& type) {
  std::vector<DimExpr> out;
  for (const auto& e : type.shape) out.push_back(e.expr);
  return out;
}
}  // namespace

ProgramDraft SemanticProgram::to_draft() const {
  ProgramDraft d;
  d.name = name_;
  for (ValueId id : inputs_) {
    const ValueInfo& v = values_[id];
    d.inputs.push_back(InputDecl{v.name, v.type.dtype, shape_exprs(v.type)});
  }
  for (const WeightInfo& w : weights_) {
    const ValueInfo& v = values_[w.value];
    d.weights.push_back(WeightDecl{v.name, v.type.dtype, shape_exprs(v.type), w.inline_data});
  }
  for (size_t i = 0; i < states_.size(); ++i) {
    const ValueInfo& v = values_[states_[i].value];
    const auto& [unit, capacity] = state_capacities_written_[i];
    d.states.push_back(StateDecl{v.name, v.type.dtype, shape_exprs(v.type), unit, capacity});
  }
  d.guards = guard_texts_;
  for (const Op& op : ops_) {
    DraftOp dop{op.kind, {}, {}, op.attrs};
    for (ValueId id : op.inputs) dop.in.push_back(values_[id].name);
    for (ValueId id : op.outputs) dop.out.push_back(values_[id].name);
    d.ops.push_back(std::move(dop));
  }
  for (const StateUpdate& u : state_updates_)
    d.state_updates.push_back(StateUpdateDecl{values_[u.state].name, values_[u.value].name});
  for (ValueId id : outputs_) d.outputs.push_back(values_[id].name);
  return d;
}

void ExtensionRegistry::add(std::string family, ExtensionInferFn infer) {
  families_[std::move(family)] = std::move(infer);
}

const ExtensionInferFn* ExtensionRegistry::find(std::string_view family) const {
  auto it = families_.find(family);
  return it == families_.end() ? nullptr : &it->second;
}

std::vector<std::string> ExtensionRegistry::families() const {
  std::vector<std::string> out;
  for (const auto& [name, fn] : families_) out.push_back(name);
  return out;
}

}  // namespace tenact
