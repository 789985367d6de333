#include "actors/pipeline/batch_work_build.hpp"

#include <unordered_map>

namespace tenact {

BatchWork build_work(const PipelineRun& run, const std::vector<uint32_t>& units,
                     std::span<const CopyId> input_ids, std::vector<uint32_t>* instructions) {
  BatchWork work;
  const ExecProgram& staging = run.plan().staging();
  std::unordered_map<SlotId, BatchRef> refs;
  for (size_t k = 0; k < input_ids.size(); ++k)
    refs.emplace(run.plan().copy(input_ids[k]).slot, BatchRef::input(static_cast<uint32_t>(k)));
  auto add_op = [&](uint32_t instruction, const std::shared_ptr<const PreparedOp>& op) {
    const ExecInstruction& ins = staging.instructions[instruction];
    BatchOp batch_op{op, {}};
    if (const PlannedDestinations* planned = run.destinations().get(); planned && ins.semantic_op < planned->by_op.size())
      batch_op.destinations = planned->by_op[ins.semantic_op];
    batch_op.operands.reserve(ins.inputs.size());
    for (SlotId s : ins.inputs) batch_op.operands.push_back(refs.at(s));
    const auto index = static_cast<uint32_t>(work.ops.size());
    if (instructions) instructions->push_back(instruction);
    for (size_t r = 0; r < ins.outputs.size(); ++r)
      refs.insert_or_assign(ins.outputs[r], BatchRef::op(index, static_cast<uint32_t>(r)));
    work.ops.push_back(std::move(batch_op));
  };
  for (uint32_t u : units) {
    const PipelineUnit& unit = run.unit(u);
    const auto first = static_cast<uint32_t>(work.ops.size());
    for (size_t k = 0; k < unit.instructions.size(); ++k) add_op(unit.instructions[k], unit.ops[k]);
    if (unit.kind == PipelineUnitKind::Region) {
      BatchRegion region{first, static_cast<uint32_t>(unit.instructions.size()), {}, unit.region_memo};
      for (const SlotCopy& c : unit.outputs) region.outputs.push_back(refs.at(c.slot));
      work.regions.push_back(std::move(region));
    }
  }
  for (const SlotCopy& c : run.batch_output_copies(units)) work.outputs.push_back(refs.at(c.slot));
  return work;
}

BatchWork build_held_work(const PipelineRun& run, const std::vector<uint32_t>& units,
                          std::vector<uint32_t>* instructions) {
  const std::vector<CopyId> ids = run.batch_input_ids(units);
  BatchWork work = build_work(run, units, ids, instructions);
  work.inputs = run.batch_inputs(units);
  return work;
}

}  // namespace tenact
