// Validation of a ProgramDraft into a SemanticProgram: names, symbols,
// guards, then each op in document order through core/infer.
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
    check_guards();
    for (size_t i = 0; i < draft_.ops.size(); ++i) check_op(i);
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

  ValueId add_value(std::string name, ValueType type, int64_t producer) {
    program_.values_.push_back(ValueInfo{std::move(name), std::move(type), producer});
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
      ValueId id = add_value(in.name, type, -1);
      if (define(in.name, ok ? std::optional<ValueId>{id} : std::nullopt, where))
        program_.inputs_.push_back(id);
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
      ValueId id = add_value(op.out[r], (*results)[r], op_index);
      if (define(op.out[r], id, where)) validated.outputs.push_back(id);
      else return;
    }
    program_.ops_.push_back(std::move(validated));
  }

  void check_outputs() {
    for (const auto& name : draft_.outputs) {
      auto it = names_.find(name);
      if (it == names_.end()) {
        error(Error{ErrorCode::UndefinedName, "output '" + printable_name(name) + "' is not defined"});
      } else if (it->second.id) {
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
