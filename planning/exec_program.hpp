// Staging: a validated SemanticProgram becomes an ExecProgram, the form the
// scheduler and the pipeline walk: value slots, instructions reading and
// writing slots in program order, last-use flags that say when a slot's
// buffer may be released, constants, and output shapes as dimension
// expressions with their extents. Ops whose results nothing reads (no
// program output depends on them) are dropped: they get no instruction,
// and `dropped_ops` lists them so reports can say so.
//
// Contract: stage() is pure and deterministic (equal programs stage to
// equal ExecPrograms); an ExecProgram is immutable once built and safe to
// share across threads. Cost: O(values + operand reads).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/op_attrs.hpp"
#include "core/op_kind.hpp"
#include "core/program.hpp"
#include "core/shape.hpp"

namespace tenact {

/// Index of a value slot. Staging gives every program value its own slot,
/// numbered as the program numbers its values (slot == ValueId).
using SlotId = uint32_t;

struct ExecSlot {
  /// dtype and shape; shape extents are dimension expressions over the
  /// program's symbols (exact, upper bound, or unknown until run time).
  ValueType type;
  /// The value's name, for messages ("slot 3 ('h')").
  std::string name;
  /// The instruction that writes the slot; nullopt for a program input and
  /// for a result of a dropped op.
  std::optional<uint32_t> producer;
};

struct ExecInstruction {
  OpKind kind = OpKind::Add;
  OpAttrs attrs;
  /// Slots read, in operand order (a slot may appear more than once).
  std::vector<SlotId> inputs;
  /// Slots written, in result order.
  std::vector<SlotId> outputs;
  /// One flag per entry of `inputs`: true where this read is the last read
  /// of that slot in the program (the slot may be released once this
  /// instruction has finished). At most one read of a slot is flagged (for
  /// a slot read twice by its last reader, the later operand); a slot that
  /// is a program output is never flagged.
  std::vector<bool> last_use;
  /// One flag per entry of `outputs`: true where nothing reads the slot and
  /// it is not a program output (it may be released as soon as written).
  std::vector<bool> unread_output;
  /// Index of the SemanticProgram op this instruction executes.
  size_t semantic_op = 0;
  /// Instructions (all lower) that must finish before this one starts
  /// besides those its operands need: the order a prepared program's pins
  /// ask for (with_order); empty after stage().
  std::vector<uint32_t> after{};

  bool is_constant() const { return kind == OpKind::Constant; }
};

struct ExecProgram {
  /// One per program value, indexed by SlotId.
  std::vector<ExecSlot> slots;
  /// Program inputs in declaration order.
  std::vector<SlotId> input_slots;
  /// Program outputs in declaration order; may repeat a slot and may name
  /// an input slot (passed through).
  std::vector<SlotId> output_slots;
  /// The live ops in program order, which is a topological order of the
  /// slot graph. Everything planned per op (dispatch, prepared ops,
  /// regions) is indexed by instruction, not by SemanticProgram op.
  std::vector<ExecInstruction> instructions;
  /// Indices into `instructions` of the constant instructions, ascending.
  std::vector<uint32_t> constant_instructions;
  /// SemanticProgram ops with no instruction (nothing reads their results),
  /// ascending.
  std::vector<size_t> dropped_ops;

  const ValueType& slot_type(SlotId slot) const { return slots[slot].type; }
  /// The shape of output `i` (extents over the program's symbols).
  const Shape& output_shape(size_t i) const { return slots[output_slots[i]].type.shape; }
  /// O(outputs): a caller asking for many slots builds a table instead.
  bool is_output(SlotId slot) const;
  /// Slots whose last read is instruction `index` (each once, ascending).
  std::vector<SlotId> released_after(size_t index) const;
  /// "slot 3 ('h')".
  std::string describe_slot(SlotId slot) const;

  friend bool operator==(const ExecProgram&, const ExecProgram&);
};

bool operator==(const ExecSlot& a, const ExecSlot& b);
bool operator==(const ExecInstruction& a, const ExecInstruction& b);

/// Stages a program (every SemanticProgram is validated, so its value ids
/// are in range). Errors: LimitExceeded when the program has more values or
/// ops than a 32-bit slot or instruction index can name; Unsupported for a
/// model (weights or states: it runs through Runtime::load_model).
Result<ExecProgram> stage(const SemanticProgram& program);

/// `program` with order edges: for each (before, after) pair of
/// SemanticProgram op indices whose ops both have instructions, the
/// instruction of `after` gets the one of `before` in its `after` list
/// (ascending, each once); pairs naming a dropped op are skipped.
/// Errors: InvalidAttribute for an op index out of range or a pair whose
/// `before` does not come first in program order.
Result<ExecProgram> with_order(ExecProgram program, std::span<const std::pair<uint32_t, uint32_t>> order,
                               size_t semantic_ops);

}  // namespace tenact
