// Validation of a ProgramDraft into a SemanticProgram: names, symbols,
// weights and states, guards, then each op in document order through
// core/infer, then the state updates and the outputs.
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "core/fingerprint.hpp"
#include "core/infer/infer.hpp"
#include "core/program.hpp"
#include "core/tensor.hpp"

namespace tenact {

namespace {

// Calls f(expr, attribute_name) for every dimension expression of `attrs`.
template <class F>
void for_each_dim_expr(const OpAttrs& attrs, F&& f) {
  auto each = [&](const std::vector<DimExpr>& v, const char* name) {
    for (const auto& e : v) f(e, name);
  };
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, ReshapeAttrs>) each(a.shape, "shape");
        else if constexpr (std::is_same_v<A, BroadcastInDimAttrs>) each(a.shape, "shape");
        else if constexpr (std::is_same_v<A, ConstantAttrs>) each(a.shape, "shape");
        else if constexpr (std::is_same_v<A, IotaAttrs>) each(a.shape, "shape");
        else if constexpr (std::is_same_v<A, SliceAttrs>) {
          each(a.start_indices, "start_indices");
          each(a.limit_indices, "limit_indices");
        } else if constexpr (std::is_same_v<A, DynamicSliceAttrs>) each(a.slice_sizes, "slice_sizes");
        else if constexpr (std::is_same_v<A, PadAttrs>) {
          each(a.edge_padding_low, "edge_padding_low");
          each(a.edge_padding_high, "edge_padding_high");
          each(a.interior_padding, "interior_padding");
        } else if constexpr (std::is_same_v<A, GatherAttrs>) each(a.slice_sizes, "slice_sizes");
      },
      attrs);
}

// Checks that a fully constant shape stays within kMaxTensorBytes.
Status check_static_size(const ValueType& t, const std::string& what) {
  std::vector<int64_t> dims;
  for (const auto& e : t.shape) {
    if (e.kind == ExtentKind::Unknown) return ok_status();
    auto v = e.expr.constant_value();
    if (!v) return ok_status();
    dims.push_back(*v);
  }
  auto bytes = checked_byte_size(t.dtype, dims);
  if (!bytes.ok()) return bytes.error().with_context(what);
  return ok_status();
}

}  // namespace

class ProgramValidator {
 public:
  ProgramValidator(const ProgramDraft& draft, const ExtensionRegistry& extensions)
      : draft_(draft), extensions_(extensions) {}

  ValidationReport run() {
    program_.name_ = draft_.name;
    declare_inputs();
    declare_weights();
    declare_states();
    check_guards();
    for (size_t i = 0; i < draft_.ops.size(); ++i) check_op(i);
    check_state_updates();
    check_outputs();
    ValidationReport report;
    report.errors = std::move(errors_);
    if (report.errors.empty()) {
      program_.constraints_ = std::move(guard_constraints_);
      program_.constraints_.insert(program_.constraints_.end(), op_constraints_.begin(),
                                   op_constraints_.end());
      program_.encoding_ = canonical_encoding_of(program_);
      program_.fingerprint_ = fingerprint_of(program_.encoding_);
      report.program = std::move(program_);
    }
    return report;
  }

 private:
  // A name maps to a value id, or to nothing when its producer failed
  // (poisoned: later uses are skipped without a second error).
  struct NameEntry {
    std::optional<ValueId> id;
  };

  void error(Error e) { errors_.push_back(std::move(e)); }

  bool define(const std::string& name, std::optional<ValueId> id, const std::string& where) {
    if (name.empty()) {
      error(Error{ErrorCode::Schema, where + ": a value name must not be empty"});
      return false;
    }
    if (const size_t at = first_control_character(name); at != std::string_view::npos) {
      error(Error{ErrorCode::Schema, where + ": the value name '" + printable_name(name) +
                                         "' holds a control character at byte " + std::to_string(at) +
                                         "; names are any non-empty text without control characters"});
      names_.try_emplace(name, NameEntry{std::nullopt});  // poisoned: later uses add no error
      return false;
    }
    auto [it, inserted] = names_.try_emplace(name, NameEntry{id});
    if (!inserted) {
      error(Error{ErrorCode::DuplicateName, where + ": name '" + name + "' is already defined"});
      return false;
    }
    return true;
  }

  ValueId add_value(std::string name, ValueType type, int64_t producer, ValueRole role) {
    program_.values_.push_back(ValueInfo{std::move(name), std::move(type), producer, role});
    return static_cast<ValueId>(program_.values_.size() - 1);
  }

  void declare_inputs() {
    // Pass 1: bind each symbol at the first input dimension naming it alone.
    for (size_t i = 0; i < draft_.inputs.size(); ++i) {
      const InputDecl& in = draft_.inputs[i];
      for (size_t ax = 0; ax < in.shape.size(); ++ax) {
        if (auto sym = in.shape[ax].as_symbol(); sym && !bound_.count(*sym)) {
          bound_.insert(*sym);
          program_.symbols_.push_back(SymbolSource{*sym, i, ax});
        }
      }
    }
    // Pass 2: names, and every symbol of every input dimension bound.
    for (size_t i = 0; i < draft_.inputs.size(); ++i) {
      const InputDecl& in = draft_.inputs[i];
      const std::string where = "input #" + std::to_string(i) + " '" + printable_name(in.name) + "'";
      bool ok = true;
      for (size_t ax = 0; ax < in.shape.size(); ++ax) {
        ok = check_symbols_bound(in.shape[ax], where + " axis " + std::to_string(ax)) && ok;
        ok = check_constants(in.shape[ax], where + " axis " + std::to_string(ax)) && ok;
        if (auto v = in.shape[ax].constant_value(); v && *v < 0) {
          error(Error{ErrorCode::ShapeMismatch,
                      where + " axis " + std::to_string(ax) + " has negative size " +
                          std::to_string(*v)});
          ok = false;
        }
      }
      ValueType type{in.dtype, exact_shape(in.shape)};
      if (ok) {
        if (auto s = check_static_size(type, where); !s.ok()) {
          error(s.error());
          ok = false;
        }
      }
      ValueId id = add_value(in.name, type, -1, ValueRole::Input);
      if (define(in.name, ok ? std::optional<ValueId>{id} : std::nullopt, where))
        program_.inputs_.push_back(id);
    }
  }

  // -- weights and states (docs/program-format.md, "Weights and states") ----

  // The extents of a weight's or state's shape, which must be concrete and
  // within kMaxTensorBytes; nullopt once what is wrong is reported.
  std::optional<std::vector<int64_t>> concrete_shape(const std::vector<DimExpr>& shape, DType dtype,
                                                     const char* kind, const std::string& where) {
    std::vector<int64_t> dims;
    bool ok = true;
    for (size_t ax = 0; ax < shape.size(); ++ax) {
      const std::string axis = where + " axis " + std::to_string(ax);
      if (!check_constants(shape[ax], axis)) {
        ok = false;
      } else if (auto v = shape[ax].constant_value(); !v) {
        error(Error{ErrorCode::ShapeMismatch, axis + ": a " + kind + "'s shape must be an integer, got '" +
                                                  shape[ax].to_string() + "'"});
        ok = false;
      } else if (*v < 0) {
        error(Error{ErrorCode::ShapeMismatch, axis + " has negative size " + std::to_string(*v)});
        ok = false;
      } else {
        dims.push_back(*v);
      }
    }
    if (!ok) return std::nullopt;
    if (auto bytes = checked_byte_size(dtype, dims); !bytes.ok()) {
      error(bytes.error().with_context(where));
      return std::nullopt;
    }
    return dims;
  }

  // Inline data has the weight's dtype and shape and lives in host memory;
  // the dense form the program keeps, or nullopt once reported.
  std::optional<HostTensor> inline_data(const HostTensor& data, DType dtype,
                                        const std::vector<int64_t>& dims, const std::string& where) {
    if (data.dtype() != dtype || data.shape() != dims) {
      error(Error{data.dtype() != dtype ? ErrorCode::TypeMismatch : ErrorCode::ShapeMismatch,
                  where + ": its inline data is " + std::string{to_string(data.dtype())} +
                      to_string(data.shape()) + ", the weight is " + std::string{to_string(dtype)} +
                      to_string(dims)});
      return std::nullopt;
    }
    if (!data.is_host()) {
      error(Error{ErrorCode::InvalidAttribute, where + ": its inline data is not in host memory (" +
                                                   data.endpoint().to_string() + ")"});
      return std::nullopt;
    }
    auto dense = data.contiguous();
    if (!dense.ok()) {
      error(dense.error().with_context(where + ": inline data"));
      return std::nullopt;
    }
    return std::move(*dense);
  }

  void declare_weights() {
    for (size_t i = 0; i < draft_.weights.size(); ++i) {
      const WeightDecl& w = draft_.weights[i];
      const std::string where = "weight #" + std::to_string(i) + " '" + printable_name(w.name) + "'";
      auto dims = concrete_shape(w.shape, w.dtype, "weight", where);
      std::optional<HostTensor> data;
      bool ok = dims.has_value();
      if (ok && w.data) {
        data = inline_data(*w.data, w.dtype, *dims, where);
        ok = data.has_value();
      }
      ValueId id = add_value(w.name, ValueType{w.dtype, exact_shape(w.shape)}, -1, ValueRole::Weight);
      if (define(w.name, ok ? std::optional<ValueId>{id} : std::nullopt, where))
        program_.weights_.push_back(WeightInfo{id, std::move(data)});
    }
  }

  // A state's capacity in bytes: as written (bytes, or elements times the
  // element size), at least its shape's bytes and at most kMaxTensorBytes,
  // rounded up to whole elements; nullopt once what is wrong is reported.
  std::optional<uint64_t> state_capacity(const StateDecl& s, const std::vector<int64_t>& dims,
                                         const std::string& where) {
    const uint64_t element = size_of(s.dtype);
    const uint64_t shape_bytes = checked_byte_size(s.dtype, dims).value();  // concrete_shape checked it
    std::string written;
    uint64_t bytes = 0;
    switch (s.capacity_unit) {
      case CapacityUnit::Shape: return shape_bytes;
      case CapacityUnit::Bytes:
        written = std::to_string(s.capacity) + " bytes";
        bytes = s.capacity;
        break;
      case CapacityUnit::Elements:
        written = std::to_string(s.capacity) + " elements of " + std::string{to_string(s.dtype)};
        // kMaxTensorBytes is a multiple of every element size: the product
        // is within it exactly when the quotient bound holds.
        bytes = s.capacity <= kMaxTensorBytes / element ? s.capacity * element : kMaxTensorBytes + 1;
        break;
      default:
        error(Error{ErrorCode::Internal, where + ": capacity of an unknown unit"});
        return std::nullopt;
    }
    if (bytes > kMaxTensorBytes) {
      error(Error{ErrorCode::LimitExceeded, where + ": capacity of " + written +
                                                " is over the limit of " +
                                                std::to_string(kMaxTensorBytes) + " bytes"});
      return std::nullopt;
    }
    if (bytes < shape_bytes) {
      error(Error{ErrorCode::InvalidAttribute,
                  where + ": capacity of " + written + " is less than the " +
                      std::to_string(shape_bytes) + " bytes of its shape " +
                      std::string{to_string(s.dtype)} + to_string(dims)});
      return std::nullopt;
    }
    return (bytes + element - 1) / element * element;
  }

  void declare_states() {
    for (size_t i = 0; i < draft_.states.size(); ++i) {
      const StateDecl& s = draft_.states[i];
      const std::string where = "state #" + std::to_string(i) + " '" + printable_name(s.name) + "'";
      auto dims = concrete_shape(s.shape, s.dtype, "state", where);
      std::optional<uint64_t> capacity = dims ? state_capacity(s, *dims, where) : std::nullopt;
      ValueId id = add_value(s.name, ValueType{s.dtype, exact_shape(s.shape)}, -1, ValueRole::State);
      if (define(s.name, capacity ? std::optional<ValueId>{id} : std::nullopt, where)) {
        program_.states_.push_back(StateInfo{id, capacity.value_or(0)});
        program_.state_capacities_written_.emplace_back(s.capacity_unit, s.capacity);
      }
    }
  }

  bool check_symbols_bound(const DimExpr& e, const std::string& where) {
    bool ok = true;
    for (const auto& s : e.symbols()) {
      if (!bound_.count(s)) {
        error(Error{ErrorCode::UnboundSymbol,
                    where + ": symbol '" + s +
                        "' is not bound by any input dimension that names it alone"});
        ok = false;
      }
    }
    return ok;
  }

  // Constant arithmetic is decided at load: an expression whose constants
  // overflowed (built through the DimExpr operators, or inferred from
  // operands) is an error here. Parsed text never holds one: parse() rejects it.
  bool check_constants(const DimExpr& e, const std::string& where) {
    Status s = e.check_constants();
    if (s.ok()) return true;
    error(s.error().with_context(where));
    return false;
  }

  void check_guards() {
    for (size_t i = 0; i < draft_.guards.size(); ++i) {
      const std::string& text = draft_.guards[i];
      const std::string where = "guard '" + text + "'";
      auto g = parse_guard(text);
      if (!g.ok()) {
        error(g.error().with_context(where));
        continue;
      }
      bool ok = check_symbols_bound(g->lhs, where);
      ok = check_symbols_bound(g->rhs, where) && ok;
      if (!ok) continue;
      program_.guard_texts_.push_back(text);
      switch (decide(g->lhs, g->rel, g->rhs)) {
        case Decision::Holds: break;
        case Decision::Fails:
          error(Error{ErrorCode::GuardViolated, where + " can never hold"});
          break;
        case Decision::Depends:
          guard_constraints_.push_back(Constraint{g->lhs, g->rel, g->rhs, where, "the guard holds"});
          break;
      }
    }
  }

  void check_op(size_t index) {
    const DraftOp& op = draft_.ops[index];
    const std::string where = describe_draft_op(index, op);
    // Outputs are declared first (poisoned) so that a failure below does not
    // make later uses report an undefined name.
    auto poison_outputs = [&] {
      for (const auto& name : op.out) define(name, std::nullopt, where);
    };
    if (!attrs_match_kind(op.kind, op.attrs)) {
      error(Error{ErrorCode::Internal, where + ": attributes of the wrong kind"});
      return poison_outputs();
    }
    if (op.out.empty()) {
      error(Error{ErrorCode::Schema, where + ": no output name"});
      return;
    }
    if (op.kind != OpKind::Extension && op.out.size() != 1) {
      error(Error{ErrorCode::Schema, where + ": has " + std::to_string(op.out.size()) +
                                         " output names, expected 1"});
      return poison_outputs();
    }
    std::vector<ValueId> inputs;
    std::vector<ValueType> operand_types;
    bool poisoned = false;
    for (const auto& name : op.in) {
      auto it = names_.find(name);
      if (it == names_.end()) {
        error(Error{ErrorCode::UndefinedName,
                    where + ": operand '" + printable_name(name) + "' is not defined above this op"});
        poisoned = true;
      } else if (!it->second.id) {
        poisoned = true;  // its producer already reported an error
      } else {
        inputs.push_back(*it->second.id);
        operand_types.push_back(program_.values_[*it->second.id].type);
      }
    }
    bool exprs_ok = true;
    for_each_dim_expr(op.attrs, [&](const DimExpr& e, const char* attr) {
      exprs_ok = check_symbols_bound(e, where + " attribute " + attr) && exprs_ok;
      exprs_ok = check_constants(e, where + " attribute " + attr) && exprs_ok;
    });
    if (poisoned || !exprs_ok) return poison_outputs();

    infer::ShapeChecker checker{&op_constraints_, where};
    auto results = infer::infer_op(
        infer::InferRequest{op.kind, op.attrs, operand_types, checker, extensions_});
    if (!results.ok()) {
      error(results.error().with_context(where));
      return poison_outputs();
    }
    if (results->size() != op.out.size()) {
      error(Error{ErrorCode::Schema, where + ": produces " + std::to_string(results->size()) +
                                         " results but names " + std::to_string(op.out.size())});
      return poison_outputs();
    }
    Op validated{op.kind, inputs, {}, op.attrs};
    const int64_t op_index = static_cast<int64_t>(program_.ops_.size());
    for (size_t r = 0; r < results->size(); ++r) {
      const ValueType& t = (*results)[r];
      const std::string result = where + " result '" + op.out[r] + "'";
      for (size_t ax = 0; ax < t.shape.size(); ++ax) {
        if (t.shape[ax].kind == ExtentKind::Unknown) continue;
        if (!check_constants(t.shape[ax].expr, result + " axis " + std::to_string(ax)))
          return poison_outputs();
      }
      if (auto s = check_static_size(t, result); !s.ok()) {
        error(s.error());
        return poison_outputs();
      }
    }
    for (size_t r = 0; r < results->size(); ++r) {
      ValueId id = add_value(op.out[r], (*results)[r], op_index, ValueRole::Result);
      if (define(op.out[r], id, where)) validated.outputs.push_back(id);
      else return;
    }
    program_.ops_.push_back(std::move(validated));
    op_document_index_.push_back(index);
  }

  // -- state updates -------------------------------------------------------

  static const char* role_phrase(ValueRole role) {
    switch (role) {
      case ValueRole::Input: return "an input";
      case ValueRole::Weight: return "a weight";
      case ValueRole::State: return "a state";
      case ValueRole::Result: return "an op's result";
    }
    return "a value";
  }

  // The value `name` stands for; nullopt when it is undefined (reported)
  // or its declaration failed (already reported).
  std::optional<ValueId> resolve(const std::string& name, const std::string& where) {
    auto it = names_.find(name);
    if (it == names_.end()) {
      error(Error{ErrorCode::UndefinedName, where + " '" + printable_name(name) + "' is not defined"});
      return std::nullopt;
    }
    return it->second.id;
  }

  // True when the value's type is exactly the state's: its dtype, and
  // extents that are exact constants equal to the state's.
  bool same_concrete_type(const ValueType& value, const ValueType& state) const {
    if (value.dtype != state.dtype || value.shape.size() != state.shape.size()) return false;
    for (size_t ax = 0; ax < value.shape.size(); ++ax) {
      const auto v = value.shape[ax].expr.constant_value();
      if (!value.shape[ax].is_exact() || !v || v != state.shape[ax].expr.constant_value()) return false;
    }
    return true;
  }

  void check_state_update(size_t index) {
    const StateUpdateDecl& u = draft_.state_updates[index];
    const std::string where = "state update #" + std::to_string(index);
    auto state = resolve(u.state, where + ": state");
    auto value = resolve(u.value, where + ": value");
    if (!state || !value) return;
    const ValueInfo& s = program_.values_[*state];
    const ValueInfo& v = program_.values_[*value];
    const std::string state_name = "state '" + printable_name(s.name) + "'";
    const std::string value_name = "value '" + printable_name(v.name) + "'";
    bool ok = true;
    if (s.role != ValueRole::State) {
      error(Error{ErrorCode::InvalidAttribute, where + ": '" + printable_name(s.name) + "' is " +
                                                   role_phrase(s.role) + ", not a state"});
      ok = false;
    }
    if (v.role != ValueRole::Result) {
      error(Error{ErrorCode::InvalidAttribute, where + ": the " + value_name + " is " + role_phrase(v.role) +
                                                   "; an update is the result of an op"});
      ok = false;
    }
    if (!ok) return;
    auto [by_state, first_of_state] = update_of_state_.try_emplace(*state, index);
    if (!first_of_state)
      return error(Error{ErrorCode::InvalidAttribute,
                         where + ": " + state_name + " is already updated by state update #" +
                             std::to_string(by_state->second) + "; a state is updated at most once"});
    auto [by_value, first_of_value] = state_of_update_.try_emplace(*value, *state);
    if (!first_of_value)
      return error(Error{ErrorCode::InvalidAttribute,
                         where + ": the " + value_name + " already updates state '" +
                             printable_name(program_.values_[by_value->second].name) +
                             "'; a value updates at most one state"});
    if (!same_concrete_type(v.type, s.type))
      return error(Error{v.type.dtype != s.type.dtype ? ErrorCode::TypeMismatch : ErrorCode::ShapeMismatch,
                         where + ": the " + value_name + " is " + v.type.to_string() + ", the " +
                             state_name + " is " + s.type.to_string() +
                             "; an update has exactly the state's dtype and shape"});
    const auto op = static_cast<size_t>(v.producer);
    const Op& producer = program_.ops_[op];
    const size_t document_op = op_document_index_[op];
    const std::string producer_text = describe_draft_op(document_op, draft_.ops[document_op]);
    auto operand = std::find(producer.inputs.begin(), producer.inputs.end(), *state);
    if (operand == producer.inputs.end())
      return error(Error{ErrorCode::InvalidAttribute,
                         where + ": " + producer_text + ", which computes the " + value_name +
                             ", does not read " + state_name +
                             "; an update is the result of an op that reads the state"});
    const std::vector<size_t>& readers = state_readers_[*state];
    if (auto later = std::upper_bound(readers.begin(), readers.end(), document_op); later != readers.end())
      return error(Error{ErrorCode::InvalidAttribute,
                         where + ": " + state_name + " is read by " +
                             describe_draft_op(*later, draft_.ops[*later]) + " after its update by " +
                             producer_text + ": an update must be the state's last reader"});
    const auto result = std::find(producer.outputs.begin(), producer.outputs.end(), *value);
    program_.state_updates_.push_back(
        StateUpdate{*state, *value, op, static_cast<uint32_t>(result - producer.outputs.begin()),
                    static_cast<uint32_t>(operand - producer.inputs.begin())});
  }

  void check_state_updates() {
    if (draft_.state_updates.empty()) return;
    // Which ops read each state, in document order (by name, so an op that
    // failed validation counts too): one pass, not one per update.
    for (size_t i = 0; i < draft_.ops.size(); ++i) {
      for (const auto& name : draft_.ops[i].in) {
        auto it = names_.find(name);
        if (it == names_.end() || !it->second.id || program_.values_[*it->second.id].role != ValueRole::State)
          continue;
        auto& readers = state_readers_[*it->second.id];
        if (readers.empty() || readers.back() != i) readers.push_back(i);
      }
    }
    for (size_t i = 0; i < draft_.state_updates.size(); ++i) check_state_update(i);
  }

  void check_outputs() {
    for (const auto& name : draft_.outputs) {
      auto it = names_.find(name);
      if (it == names_.end()) {
        error(Error{ErrorCode::UndefinedName, "output '" + printable_name(name) + "' is not defined"});
      } else if (it->second.id) {
        const std::string where = "output '" + printable_name(name) + "'";
        const ValueInfo& v = program_.values_[*it->second.id];
        if (v.role == ValueRole::Weight)
          error(Error{ErrorCode::InvalidAttribute,
                      where + " is a weight: a model's outputs are copies the caller owns, its "
                              "weights stay with the model"});
        else if (v.role == ValueRole::State)
          error(Error{ErrorCode::InvalidAttribute,
                      where + " is a state: read states with Model::state"});
        else if (auto update = state_of_update_.find(*it->second.id); update != state_of_update_.end())
          error(Error{ErrorCode::InvalidAttribute,
                      where + " is the update of state '" +
                          printable_name(program_.values_[update->second].name) +
                          "': read states with Model::state"});
        else
          program_.outputs_.push_back(*it->second.id);
      }
    }
  }

  const ProgramDraft& draft_;
  const ExtensionRegistry& extensions_;
  SemanticProgram program_;
  std::map<std::string, NameEntry, std::less<>> names_;
  std::set<std::string, std::less<>> bound_;
  std::vector<Constraint> guard_constraints_;
  std::vector<Constraint> op_constraints_;
  std::vector<Error> errors_;
  /// The document index of each validated op (an op that failed is skipped).
  std::vector<size_t> op_document_index_;
  /// State -> the state update naming it; update value -> its state.
  std::map<ValueId, size_t> update_of_state_;
  std::map<ValueId, ValueId> state_of_update_;
  /// State -> the document indices of the ops reading it, increasing.
  std::map<ValueId, std::vector<size_t>> state_readers_;
};

ValidationReport validate_all(const ProgramDraft& draft, const ExtensionRegistry& extensions) {
  return ProgramValidator{draft, extensions}.run();
}

Result<SemanticProgram> validate(const ProgramDraft& draft, const ExtensionRegistry& extensions) {
  ValidationReport report = validate_all(draft, extensions);
  if (report.errors.empty()) return std::move(*report.program);
  Error first = std::move(report.errors.front());
  if (report.errors.size() > 1)
    return Error{first.code(), first.message() + " (and " +
                                   std::to_string(report.errors.size() - 1) + " more errors)"};
  return first;
}

}  // namespace tenact
