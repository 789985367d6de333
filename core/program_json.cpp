#include "core/program_json.hpp"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <utility>

#include "core/json_internal.hpp"
#include "core/program_json_attrs.hpp"
#include "core/tensor_io.hpp"

namespace tenact {

using json_io::Json;

namespace {

constexpr std::string_view kFormat = "tenact.program/1";
/// Programs above this size are refused before parsing (64 MiB of text).
constexpr uint64_t kMaxProgramBytes = uint64_t{64} << 20;

Error schema(std::string msg) { return Error{ErrorCode::Schema, std::move(msg)}; }

Result<std::vector<std::string>> string_list(const Json& j, const std::string& where) {
  if (!j.is_array()) return schema(where + ": expected a list of strings, got " + json_io::json_type_name(j));
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string())
      return schema(where + " element " + std::to_string(i) + ": expected a string, got " +
                    json_io::json_type_name(j[i]));
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

// The name, dtype and shape of an input, weight or state ("input #0");
// `extra` names the keys its kind has besides those three.
Result<InputDecl> read_typed_entry(const Json& j, const std::string& where,
                                   std::initializer_list<std::string_view> extra = {}) {
  if (!j.is_object()) return schema(where + ": expected an object, got " + json_io::json_type_name(j));
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "name" && it.key() != "dtype" && it.key() != "shape" &&
        std::find(extra.begin(), extra.end(), it.key()) == extra.end())
      return schema(where + ": unknown key '" + it.key() + "'");
  InputDecl decl;
  auto name = j.find("name");
  if (name == j.end() || !name->is_string()) return schema(where + ": 'name' must be a string");
  decl.name = name->get<std::string>();
  const std::string named = where + " '" + decl.name + "'";
  auto dtype = j.find("dtype");
  if (dtype == j.end() || !dtype->is_string()) return schema(named + ": 'dtype' must be a string");
  auto t = parse_dtype(dtype->get<std::string>());
  if (!t) return schema(named + ": unknown element type '" + dtype->get<std::string>() + "'");
  decl.dtype = *t;
  auto shape = j.find("shape");
  if (shape == j.end() || !shape->is_array()) return schema(named + ": 'shape' must be a list");
  for (size_t i = 0; i < shape->size(); ++i) {
    TENACT_ASSIGN_OR_RETURN(DimExpr d, json_io::dim_from_json((*shape)[i],
                                                              named + " shape element " + std::to_string(i)));
    decl.shape.push_back(std::move(d));
  }
  return decl;
}

Result<InputDecl> read_input(const Json& j, size_t index) {
  return read_typed_entry(j, "input #" + std::to_string(index));
}

// A weight: name, dtype, shape and, optionally, its data in the JSON
// tensor form (counted against that tensor's own shape before allocation;
// validation compares it with the weight's).
Result<WeightDecl> read_weight(const Json& j, size_t index) {
  const std::string where = "weight #" + std::to_string(index);
  TENACT_ASSIGN_OR_RETURN(InputDecl decl, read_typed_entry(j, where, {"data"}));
  WeightDecl weight{std::move(decl.name), decl.dtype, std::move(decl.shape), std::nullopt};
  if (auto data = j.find("data"); data != j.end()) {
    auto tensor = json_io::tensor_from_json(*data);
    if (!tensor.ok()) return tensor.error().with_context(where + " '" + printable_name(weight.name) + "' 'data'");
    weight.data = std::move(*tensor);
  }
  return weight;
}

// A state's "capacity": {"bytes": N} or {"elements": N}, N a non-negative integer.
Status read_capacity(const Json& j, const std::string& where, StateDecl& state) {
  if (!j.is_object() || j.size() != 1)
    return schema(where + ": 'capacity' must be an object with one key, bytes or elements, got " +
                  (j.is_object() ? std::to_string(j.size()) + " keys" : json_io::json_type_name(j)));
  const std::string& unit = j.begin().key();
  if (unit != "bytes" && unit != "elements")
    return schema(where + ": 'capacity' has the unknown key '" + unit + "' (the keys are bytes, elements)");
  const bool bytes = unit == "bytes";
  const Json& n = j.begin().value();
  const std::string key = "'capacity' '" + unit + "'";
  if (!n.is_number_integer())
    return schema(where + ": " + key + " must be a non-negative integer, got " + json_io::json_type_name(n));
  if (!n.is_number_unsigned())
    return Error{ErrorCode::InvalidAttribute,
                 where + ": " + key + " is " + std::to_string(n.get<int64_t>()) + ", must be non-negative"};
  state.capacity_unit = bytes ? CapacityUnit::Bytes : CapacityUnit::Elements;
  state.capacity = n.get<uint64_t>();
  return ok_status();
}

Result<StateDecl> read_state(const Json& j, size_t index) {
  const std::string where = "state #" + std::to_string(index);
  TENACT_ASSIGN_OR_RETURN(InputDecl decl, read_typed_entry(j, where, {"capacity"}));
  StateDecl state{std::move(decl.name), decl.dtype, std::move(decl.shape), CapacityUnit::Shape, 0};
  if (auto capacity = j.find("capacity"); capacity != j.end())
    TENACT_TRY(read_capacity(*capacity, where + " '" + printable_name(state.name) + "'", state));
  return state;
}

Result<StateUpdateDecl> read_state_update(const Json& j, size_t index) {
  const std::string where = "state update #" + std::to_string(index);
  if (!j.is_object()) return schema(where + ": expected an object, got " + json_io::json_type_name(j));
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "state" && it.key() != "value")
      return schema(where + ": unknown key '" + it.key() + "'");
  StateUpdateDecl update;
  for (auto [key, field] : {std::pair{"state", &update.state}, std::pair{"value", &update.value}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return schema(where + ": '" + key + "' must be a string");
    *field = it->get<std::string>();
  }
  return update;
}

// Reads the optional list `key` of `doc` with `read` into `out`, errors into `errors`.
template <class T, class Read>
void read_optional_list(const Json& doc, const char* key, Read read, std::vector<T>& out,
                        std::vector<Error>& errors) {
  auto list = doc.find(key);
  if (list == doc.end()) return;
  if (!list->is_array()) {
    errors.push_back(schema(std::string{"program: '"} + key + "' must be a list, got " +
                            json_io::json_type_name(*list)));
    return;
  }
  for (size_t i = 0; i < list->size(); ++i) {
    auto item = read((*list)[i], i);
    if (item.ok()) out.push_back(std::move(*item));
    else errors.push_back(std::move(item).error());
  }
}

// Reads one op; `index` names it in errors (with its first output when known).
Result<DraftOp> read_op(const Json& j, size_t index) {
  std::string where = "op #" + std::to_string(index);
  if (!j.is_object()) return schema(where + ": expected an object, got " + json_io::json_type_name(j));
  auto kind_it = j.find("op");
  if (kind_it == j.end() || !kind_it->is_string()) return schema(where + ": 'op' must be a string");
  const std::string kind_name = kind_it->get<std::string>();
  DraftOp op;
  if (auto out = j.find("out"); out != j.end()) {
    if (out->is_string()) op.out.push_back(out->get<std::string>());
    else {
      auto outs = string_list(*out, where + " 'out'");
      if (!outs.ok()) return outs.error();
      op.out = std::move(*outs);
    }
  }
  where += " (" + kind_name + (op.out.empty() ? "" : " -> '" + op.out.front() + "'") + ")";
  auto kind = parse_op_kind(kind_name);
  if (!kind) return Error{ErrorCode::UnknownOp, where + ": unknown op '" + kind_name + "'"};
  op.kind = *kind;
  if (j.find("out") == j.end()) return schema(where + ": missing 'out'");
  if (auto in = j.find("in"); in != j.end()) {
    auto ins = string_list(*in, "'in'");
    if (!ins.ok()) return ins.error().with_context(where);
    op.in = std::move(*ins);
  }
  auto attrs = json_io::read_op_attrs(op.kind, j);
  if (!attrs.ok()) return attrs.error().with_context(where);
  op.attrs = std::move(*attrs);
  return op;
}

}  // namespace

DraftReport parse_program_draft(std::string_view text) {
  DraftReport report;
  auto parsed = json_io::parse_json(text, "program");
  if (!parsed.ok()) {
    report.errors.push_back(std::move(parsed).error());
    return report;
  }
  const Json& doc = *parsed;
  auto fail = [&](Error e) {
    report.errors.push_back(std::move(e));
    return report;
  };
  if (!doc.is_object()) return fail(schema("program: expected a JSON object, got " + json_io::json_type_name(doc)));
  static const std::set<std::string, std::less<>> kKeys = {
      "format", "name", "inputs", "weights", "states", "guards", "ops", "state_updates", "outputs"};
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (!kKeys.count(it.key())) report.errors.push_back(schema("program: unknown key '" + it.key() + "'"));
  auto format = doc.find("format");
  if (format == doc.end()) return fail(schema("program: missing 'format' (expected \"tenact.program/1\")"));
  if (!format->is_string() || format->get<std::string>() != kFormat)
    return fail(schema("program: 'format' is " + format->dump() + ", expected \"tenact.program/1\""));
  ProgramDraft draft;
  if (auto name = doc.find("name"); name != doc.end()) {
    if (!name->is_string()) report.errors.push_back(schema("program: 'name' must be a string"));
    else draft.name = name->get<std::string>();
  }
  for (const char* key : {"inputs", "ops", "outputs"}) {
    auto it = doc.find(key);
    if (it == doc.end()) report.errors.push_back(schema(std::string{"program: missing '"} + key + "'"));
    else if (!it->is_array())
      report.errors.push_back(schema(std::string{"program: '"} + key + "' must be a list, got " +
                                     json_io::json_type_name(*it)));
  }
  if (!report.errors.empty()) return report;
  const Json& inputs = doc["inputs"];
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto in = read_input(inputs[i], i);
    if (in.ok()) draft.inputs.push_back(std::move(*in));
    else report.errors.push_back(std::move(in).error());
  }
  read_optional_list(doc, "weights", read_weight, draft.weights, report.errors);
  read_optional_list(doc, "states", read_state, draft.states, report.errors);
  if (auto guards = doc.find("guards"); guards != doc.end()) {
    auto g = string_list(*guards, "program 'guards'");
    if (g.ok()) draft.guards = std::move(*g);
    else report.errors.push_back(std::move(g).error());
  }
  const Json& ops = doc["ops"];
  for (size_t i = 0; i < ops.size(); ++i) {
    auto op = read_op(ops[i], i);
    if (op.ok()) draft.ops.push_back(std::move(*op));
    else report.errors.push_back(std::move(op).error());
  }
  read_optional_list(doc, "state_updates", read_state_update, draft.state_updates, report.errors);
  auto outputs = string_list(doc["outputs"], "program 'outputs'");
  if (outputs.ok()) draft.outputs = std::move(*outputs);
  else report.errors.push_back(std::move(outputs).error());
  if (report.errors.empty()) report.draft = std::move(draft);
  return report;
}

ValidationReport load_program_all(std::string_view text, const ExtensionRegistry& extensions) {
  DraftReport draft = parse_program_draft(text);
  if (!draft.errors.empty()) return ValidationReport{std::nullopt, std::move(draft.errors)};
  return validate_all(*draft.draft, extensions);
}

Result<SemanticProgram> load_program(std::string_view text, const ExtensionRegistry& extensions) {
  ValidationReport report = load_program_all(text, extensions);
  if (report.errors.empty()) return std::move(*report.program);
  Error first = std::move(report.errors.front());
  if (report.errors.size() > 1)
    return Error{first.code(), first.message() + " (and " +
                                   std::to_string(report.errors.size() - 1) + " more errors)"};
  return first;
}

Result<std::string> canonical_attributes_json(std::string_view text) {
  if (text.empty()) return std::string{"{}"};
  TENACT_ASSIGN_OR_RETURN(Json attrs, json_io::parse_json(text, "extension attributes"));
  if (!attrs.is_object())
    return Error{ErrorCode::Schema, "extension attributes: expected a JSON object, got " + json_io::json_type_name(attrs)};
  return attrs.dump();
}

Result<SemanticProgram> load_program_file(const std::string& path, const ExtensionRegistry& extensions) {
  TENACT_ASSIGN_OR_RETURN(std::string text, read_file(path, kMaxProgramBytes));
  auto program = load_program(text, extensions);
  if (!program.ok()) return program.error().with_context(path);
  return program;
}

namespace {

Json shape_to_json(const std::vector<DimExpr>& shape) {
  Json out = Json::array();
  for (const auto& e : shape) out.push_back(json_io::dim_to_json(e));
  return out;
}

// "weights", "states" and "state_updates", each only when not empty (so a
// program without them is written as before).
void write_model_sections(const ProgramDraft& d, Json& doc) {
  Json weights = Json::array();
  for (const auto& w : d.weights) {
    Json j{{"name", w.name}, {"dtype", std::string{to_string(w.dtype)}}, {"shape", shape_to_json(w.shape)}};
    if (w.data)
      j["data"] = Json{{"dtype", std::string{to_string(w.data->dtype())}},
                       {"shape", w.data->shape()},
                       {"data", json_io::tensor_data_to_json(*w.data)}};
    weights.push_back(std::move(j));
  }
  Json states = Json::array();
  for (const auto& st : d.states) {
    Json j{{"name", st.name}, {"dtype", std::string{to_string(st.dtype)}}, {"shape", shape_to_json(st.shape)}};
    if (st.capacity_unit != CapacityUnit::Shape)
      j["capacity"] = Json{{st.capacity_unit == CapacityUnit::Bytes ? "bytes" : "elements", st.capacity}};
    states.push_back(std::move(j));
  }
  Json updates = Json::array();
  for (const auto& u : d.state_updates) updates.push_back(Json{{"state", u.state}, {"value", u.value}});
  if (!weights.empty()) doc["weights"] = std::move(weights);
  if (!states.empty()) doc["states"] = std::move(states);
  if (!updates.empty()) doc["state_updates"] = std::move(updates);
}

Json draft_to_json(const ProgramDraft& d, std::vector<Json>& ops_out) {
  Json doc = Json::object();
  doc["format"] = std::string{kFormat};
  if (!d.name.empty()) doc["name"] = d.name;
  Json inputs = Json::array();
  for (const auto& in : d.inputs)
    inputs.push_back(Json{{"name", in.name}, {"dtype", std::string{to_string(in.dtype)}},
                          {"shape", shape_to_json(in.shape)}});
  doc["inputs"] = std::move(inputs);
  write_model_sections(d, doc);
  if (!d.guards.empty()) doc["guards"] = d.guards;
  for (const auto& op : d.ops) {
    Json j = Json::object();
    j["op"] = std::string{to_string(op.kind)};
    if (!op.in.empty()) j["in"] = op.in;
    if (op.out.size() == 1) j["out"] = op.out.front();
    else j["out"] = op.out;
    json_io::write_op_attrs(op.attrs, j);
    ops_out.push_back(std::move(j));
  }
  doc["outputs"] = d.outputs;
  return doc;
}

}  // namespace

std::string save_draft_json(const ProgramDraft& draft) {
  std::vector<Json> ops;
  Json doc = draft_to_json(draft, ops);
  // Layout: one input, weight, state, guard, op and state update per line;
  // keys in the fixed order below.
  std::string out = "{\n  \"format\": " + doc["format"].dump() + ",\n";
  if (doc.contains("name")) out += "  \"name\": " + doc["name"].dump() + ",\n";
  auto list = [&](const char* key, const Json& items) {
    out += std::string{"  \""} + key + "\": [";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ",\n    " : "\n    ") + items[i].dump();
    out += items.empty() ? "],\n" : "\n  ],\n";
  };
  list("inputs", doc["inputs"]);
  for (const char* key : {"weights", "states", "guards"})
    if (doc.contains(key)) list(key, doc[key]);
  list("ops", Json(ops));
  if (doc.contains("state_updates")) list("state_updates", doc["state_updates"]);
  out += "  \"outputs\": " + doc["outputs"].dump() + "\n}\n";
  return out;
}

std::string save_program_json(const SemanticProgram& program) {
  return save_draft_json(program.to_draft());
}

}  // namespace tenact
