// The semantic program: what a JSON document or the C++ builder describes,
// before (ProgramDraft) and after (SemanticProgram) validation.
//
// Both doors (program_json.hpp, builder.hpp) produce a ProgramDraft and
// call validate(); there is no other way to obtain a SemanticProgram, so
// every SemanticProgram is valid: names resolved, every value's dtype and
// shape inferred, symbolic constraints decided or recorded for signatures.
//
// Value ids: the inputs first (in document order), then the weights, then
// the states, then the results of the ops in op order. So in a program
// with I inputs, W weights and S states, weight j is value I + j and
// state k is value I + W + k.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/dim_expr.hpp"
#include "core/error.hpp"
#include "core/op_attrs.hpp"
#include "core/op_kind.hpp"
#include "core/shape.hpp"

namespace tenact {

// -- draft (names, as written) ----------------------------------------------

struct InputDecl {
  std::string name;
  DType dtype = DType::F32;
  std::vector<DimExpr> shape;
};

struct DraftOp {
  OpKind kind = OpKind::Add;
  std::vector<std::string> in;
  std::vector<std::string> out;
  OpAttrs attrs;
};

/// A model parameter (docs/program-format.md, "Weights and states"): a
/// named, typed value of concrete shape whose data comes with the model,
/// read-only. `data`, when set, is its inline JSON tensor; otherwise the
/// data is supplied when the model is loaded (one .npy per weight).
struct WeightDecl {
  std::string name;
  DType dtype = DType::F32;
  std::vector<DimExpr> shape;
  std::optional<HostTensor> data;
};

/// How a state's capacity was written: not at all (the shape's bytes),
/// in bytes, or in elements of its dtype.
enum class CapacityUnit : uint8_t { Shape, Bytes, Elements };

/// A value that keeps its contents across runs of a model (a KV cache):
/// dtype, concrete shape and the storage to reserve for it (at least the
/// shape's bytes). Zero-filled when the model is loaded or reset.
struct StateDecl {
  std::string name;
  DType dtype = DType::F32;
  std::vector<DimExpr> shape;
  CapacityUnit capacity_unit = CapacityUnit::Shape;
  /// Bytes or elements as `capacity_unit` says (ignored for Shape).
  uint64_t capacity = 0;
};

/// After a run, state `state` holds value `value`, written in place: the
/// op producing `value` reads the state and its result aliases the
/// state's storage.
struct StateUpdateDecl {
  std::string state;
  std::string value;
};

struct ProgramDraft {
  std::string name;
  std::vector<InputDecl> inputs;
  std::vector<WeightDecl> weights;
  std::vector<StateDecl> states;
  std::vector<std::string> guards;  // "EXPR REL EXPR"
  std::vector<DraftOp> ops;
  std::vector<StateUpdateDecl> state_updates;
  std::vector<std::string> outputs;
};

// -- validated program -------------------------------------------------------

using ValueId = uint32_t;

/// What a value is: a program input, a weight, a state, or an op's result.
enum class ValueRole : uint8_t { Input, Weight, State, Result };

struct ValueInfo {
  std::string name;
  ValueType type;
  /// Index of the producing op, or -1 for a program input, weight or state.
  int64_t producer = -1;
  ValueRole role{ValueRole::Result};
};

/// A validated weight: its value (concrete shape) and its inline data, if
/// the document carried it (dtype and shape equal to the value's).
struct WeightInfo {
  ValueId value = 0;
  std::optional<HostTensor> inline_data;
};

/// A validated state: its value (concrete shape) and the bytes to reserve,
/// at least the shape's and a multiple of the element size.
struct StateInfo {
  ValueId value = 0;
  uint64_t capacity_bytes = 0;
};

/// A validated state update: `op` produces `value` (its result `result`)
/// and reads `state` as its operand `operand` (the first operand naming
/// it), which its result aliases; nothing reads the state after `op`.
struct StateUpdate {
  ValueId state = 0;
  ValueId value = 0;
  size_t op = 0;
  uint32_t result = 0;
  uint32_t operand = 0;
};

struct Op {
  OpKind kind = OpKind::Add;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  OpAttrs attrs;
};

/// A symbolic condition on input dimensions that could not be decided when
/// the program loaded; checked against every concrete signature.
struct Constraint {
  DimExpr lhs;
  Relation rel = Relation::Eq;
  DimExpr rhs;
  /// Who asked: "guard 'B <= 65536'", "op #3 (add -> 'z')".
  std::string origin;
  /// What must hold, for the message: "operand 1 axis 0 equals operand 0 axis 0".
  std::string what;
};

/// Where a symbol gets its value: the first input dimension that is exactly it.
struct SymbolSource {
  std::string symbol;
  size_t input = 0;  // index into SemanticProgram::inputs
  size_t axis = 0;
};

struct Fingerprint {
  uint64_t hi = 0, lo = 0;
  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
  std::string to_hex() const;  // 32 hex digits
};

class SemanticProgram {
 public:
  const std::string& name() const { return name_; }
  const std::vector<ValueInfo>& values() const { return values_; }
  const ValueInfo& value(ValueId id) const { return values_[id]; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  /// Weights and states in document order (values with producer -1 that
  /// are not inputs), and the state updates in document order.
  const std::vector<WeightInfo>& weights() const { return weights_; }
  const std::vector<StateInfo>& states() const { return states_; }
  const std::vector<StateUpdate>& state_updates() const { return state_updates_; }
  /// True when it declares weights or states: such a program runs as a
  /// model (Runtime::load_model), not through prepare/run.
  bool is_model() const { return !weights_.empty() || !states_.empty(); }
  const std::vector<Op>& ops() const { return ops_; }
  /// Guards first (in document order), then the deferred op constraints.
  const std::vector<Constraint>& constraints() const { return constraints_; }
  const std::vector<std::string>& guard_texts() const { return guard_texts_; }
  const std::vector<SymbolSource>& symbols() const { return symbols_; }
  /// 128-bit XXH3 of canonical_encoding(); stable across runs and builds.
  const Fingerprint& fingerprint() const { return fingerprint_; }
  /// The canonical byte encoding the fingerprint hashes: op kinds, value
  /// ids, dtypes, shapes, attributes, input and output names, constraints;
  /// weight and state names, types, capacities and updates (a weight's
  /// inline data by its bytes).
  /// Intermediate value names and the program name are not part of it.
  const std::string& canonical_encoding() const { return encoding_; }

  /// Structural equality: equal canonical encodings.
  friend bool operator==(const SemanticProgram& a, const SemanticProgram& b) {
    return a.fingerprint_ == b.fingerprint_ && a.encoding_ == b.encoding_;
  }

  /// "op #3 (add -> 'z')": how errors name an op.
  std::string describe_op(size_t index) const;

  /// Back to a draft (names as written), e.g. for saving as JSON.
  ProgramDraft to_draft() const;

 private:
  friend class ProgramValidator;
  std::string name_;
  std::vector<ValueInfo> values_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<WeightInfo> weights_;
  std::vector<StateInfo> states_;
  std::vector<StateUpdate> state_updates_;
  /// Each state's capacity as the draft wrote it (unit, number), parallel
  /// to states_: to_draft() gives it back. Not part of the identity (the
  /// encoding holds capacity_bytes).
  std::vector<std::pair<CapacityUnit, uint64_t>> state_capacities_written_;
  std::vector<Op> ops_;
  std::vector<Constraint> constraints_;
  std::vector<std::string> guard_texts_;
  std::vector<SymbolSource> symbols_;
  std::string encoding_;
  Fingerprint fingerprint_;
};

// -- extension families --------------------------------------------------------

/// How a registered extension family infers its results. Called during
/// validation, on the validating thread; must be pure.
using ExtensionInferFn = std::function<Result<std::vector<ValueType>>(
    std::span<const ValueType> operands, const std::string& attributes_json)>;

/// The extension families a program may use. Immutable once shared: build
/// it, then pass it by const reference (safe from many threads).
class ExtensionRegistry {
 public:
  /// Registers `family`; a second registration of the same name replaces it.
  void add(std::string family, ExtensionInferFn infer);
  const ExtensionInferFn* find(std::string_view family) const;
  std::vector<std::string> families() const;

 private:
  std::map<std::string, ExtensionInferFn, std::less<>> families_;
};

// -- validation ------------------------------------------------------------------

struct ValidationReport {
  /// Set when `errors` is empty.
  std::optional<SemanticProgram> program;
  /// Every error found, in document order; an op whose operand failed is
  /// not reported again (no cascades).
  std::vector<Error> errors;
};

/// Validates a draft: names, arity, attributes, dtypes, shapes (inferred),
/// symbols, guards. Collects every error.
ValidationReport validate_all(const ProgramDraft& draft, const ExtensionRegistry& extensions = {});

/// validate_all, returning the program or the first error (whose message
/// says how many more were found).
Result<SemanticProgram> validate(const ProgramDraft& draft, const ExtensionRegistry& extensions = {});

/// "op #3 (add -> 'z')" from a draft op.
std::string describe_draft_op(size_t index, const DraftOp& op);

/// Value names are any non-empty text without control characters
/// (docs/program-format.md, "Names"). The byte offset of the first control
/// character of `name` (C0, DEL, or a C1 character U+0080..U+009F in
/// UTF-8), or std::string_view::npos.
size_t first_control_character(std::string_view name);
/// `name` with its control characters written `\u00XX`, for messages that
/// quote a name that may be malformed.
std::string printable_name(std::string_view name);

}  // namespace tenact
