#include "planning/exec_program.hpp"

#include <algorithm>
#include <limits>

namespace tenact {

bool operator==(const ExecSlot& a, const ExecSlot& b) {
  return a.type == b.type && a.name == b.name && a.producer == b.producer;
}

bool operator==(const ExecInstruction& a, const ExecInstruction& b) {
  return a.kind == b.kind && a.attrs == b.attrs && a.inputs == b.inputs &&
         a.outputs == b.outputs && a.last_use == b.last_use &&
         a.unread_output == b.unread_output && a.semantic_op == b.semantic_op && a.after == b.after;
}

bool operator==(const ExecProgram& a, const ExecProgram& b) {
  return a.slots == b.slots && a.input_slots == b.input_slots &&
         a.output_slots == b.output_slots && a.instructions == b.instructions &&
         a.constant_instructions == b.constant_instructions && a.dropped_ops == b.dropped_ops;
}

bool ExecProgram::is_output(SlotId slot) const {
  return std::find(output_slots.begin(), output_slots.end(), slot) != output_slots.end();
}

std::vector<SlotId> ExecProgram::released_after(size_t index) const {
  std::vector<SlotId> out;
  if (index >= instructions.size()) return out;
  const ExecInstruction& ins = instructions[index];
  for (size_t i = 0; i < ins.inputs.size(); ++i)
    if (ins.last_use[i]) out.push_back(ins.inputs[i]);
  std::sort(out.begin(), out.end());
  return out;
}

std::string ExecProgram::describe_slot(SlotId slot) const {
  std::string out = "slot " + std::to_string(slot);
  if (slot < slots.size()) out += " ('" + slots[slot].name + "')";
  return out;
}

Result<ExecProgram> stage(const SemanticProgram& program) {
  if (program.is_model())
    return Error{ErrorCode::Unsupported, "program '" + program.name() +
                                             "' declares weights or states: load it as a model "
                                             "(Runtime::load_model)"};
  const auto& values = program.values();
  const auto& ops = program.ops();
  constexpr size_t kMaxIndex = std::numeric_limits<uint32_t>::max();
  if (values.size() > kMaxIndex || ops.size() > kMaxIndex)
    return Error{ErrorCode::LimitExceeded,
                 "program has " + std::to_string(values.size()) + " values and " +
                     std::to_string(ops.size()) + " ops; staging names at most " +
                     std::to_string(kMaxIndex) + " of each"};
  ExecProgram out;
  out.slots.reserve(values.size());
  for (const ValueInfo& v : values) out.slots.push_back(ExecSlot{v.type, v.name, std::nullopt});
  out.input_slots.assign(program.inputs().begin(), program.inputs().end());
  out.output_slots.assign(program.outputs().begin(), program.outputs().end());

  // Liveness, walking ops backwards: an op is live when a program output
  // or a live op reads one of its results. Dead ops (nothing reads their
  // results, directly or through other ops) are dropped: they never run
  // and need no engine.
  std::vector<bool> needed(values.size(), false);
  for (SlotId s : out.output_slots) needed[s] = true;
  std::vector<bool> live(ops.size(), false);
  for (size_t i = ops.size(); i > 0; --i) {
    const Op& op = ops[i - 1];
    for (ValueId id : op.outputs) live[i - 1] = live[i - 1] || needed[id];
    if (live[i - 1])
      for (ValueId id : op.inputs) needed[id] = true;
  }

  out.instructions.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!live[i]) {
      out.dropped_ops.push_back(i);
      continue;
    }
    const Op& op = ops[i];
    const auto index = static_cast<uint32_t>(out.instructions.size());
    ExecInstruction ins;
    ins.kind = op.kind;
    ins.attrs = op.attrs;
    ins.semantic_op = i;
    ins.inputs.assign(op.inputs.begin(), op.inputs.end());
    ins.outputs.assign(op.outputs.begin(), op.outputs.end());
    for (ValueId id : op.outputs) out.slots[id].producer = index;
    ins.last_use.assign(ins.inputs.size(), false);
    ins.unread_output.assign(ins.outputs.size(), false);
    if (ins.is_constant()) out.constant_instructions.push_back(index);
    out.instructions.push_back(std::move(ins));
  }

  // Walking reads backwards, the first read met of a slot is its last use.
  std::vector<bool> read(values.size(), false);
  for (SlotId s : out.output_slots) read[s] = true;  // outputs are never released
  for (size_t i = out.instructions.size(); i > 0; --i) {
    ExecInstruction& ins = out.instructions[i - 1];
    for (size_t k = ins.inputs.size(); k > 0; --k) {
      const SlotId s = ins.inputs[k - 1];
      if (!read[s]) {
        ins.last_use[k - 1] = true;
        read[s] = true;
      }
    }
  }
  for (ExecInstruction& ins : out.instructions)
    for (size_t k = 0; k < ins.outputs.size(); ++k)
      ins.unread_output[k] = !read[ins.outputs[k]];
  return out;
}

}  // namespace tenact
