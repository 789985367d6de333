#include <algorithm>

#include "planning/exec_program.hpp"

namespace tenact {

Result<ExecProgram> with_order(ExecProgram program, std::span<const std::pair<uint32_t, uint32_t>> order,
                               size_t semantic_ops) {
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> instruction_of(semantic_ops, kNone);
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const size_t op = program.instructions[i].semantic_op;
    if (op < semantic_ops) instruction_of[op] = static_cast<uint32_t>(i);
  }
  for (const auto& [before, after] : order) {
    if (before >= semantic_ops || after >= semantic_ops || before >= after)
      return Error{ErrorCode::InvalidAttribute, "order edge (op #" + std::to_string(before) + ", op #" +
                                                    std::to_string(after) + ") of a program with " +
                                                    std::to_string(semantic_ops) +
                                                    " ops: the first must come earlier in program order"};
    const uint32_t first = instruction_of[before], then = instruction_of[after];
    if (first == kNone || then == kNone) continue;
    std::vector<uint32_t>& list = program.instructions[then].after;
    if (std::find(list.begin(), list.end(), first) == list.end()) list.push_back(first);
  }
  for (ExecInstruction& ins : program.instructions) std::sort(ins.after.begin(), ins.after.end());
  return program;
}

}  // namespace tenact
