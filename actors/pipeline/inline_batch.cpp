#include "actors/pipeline/inline_batch.hpp"

#include <algorithm>

#include "actors/pipeline/batch_work_build.hpp"
#include "actors/pipeline/pipeline_run.hpp"
#include "planning/signature.hpp"

namespace tenact {

std::shared_ptr<const InlineBatch> InlineBatch::build(const std::shared_ptr<const PipelinePlan>& plan,
                                                      std::span<const Tensor> inputs) {
  if (!plan || !plan->single_lane()) return nullptr;
  auto run = PipelineRun::start(plan, std::vector<Tensor>(inputs.begin(), inputs.end()));
  if (!run.ok()) return nullptr;
  const std::vector<PipelineBatch> batches = run->take_ready_batches();
  if (batches.size() != 1 || batches[0].units.size() != plan->unit_count()) return nullptr;
  const std::vector<uint32_t>& units = batches[0].units;
  const std::vector<CopyId> in = run->batch_input_ids(units);
  const std::vector<CopyId> made = run->batch_output_ids(units);
  const std::span<const CopyId> program_inputs = plan->input_copies();
  auto position = [](std::span<const CopyId> list, CopyId c) -> int64_t {
    auto it = std::find(list.begin(), list.end(), c);
    return it == list.end() ? -1 : it - list.begin();
  };

  std::shared_ptr<InlineBatch> batch{new InlineBatch};
  for (CopyId c : in) {
    const int64_t i = position(program_inputs, c);
    if (i < 0) return nullptr;  // read from another batch: not one batch after all
    batch->input_of_.push_back(static_cast<uint32_t>(i));
  }
  for (CopyId c : plan->output_copies()) {
    if (const int64_t k = position(made, c); k >= 0) {
      batch->output_from_.push_back(k);
    } else if (const int64_t i = position(program_inputs, c); i >= 0) {
      batch->output_from_.push_back(-1 - i);
    } else {
      return nullptr;
    }
  }
  for (CopyId c : made) {
    const ValueType& type = plan->staging().slot_type(plan->copy(c).slot);
    batch->result_types_.emplace_back(type.dtype, type.rank());
  }
  batch->skeleton_ = build_work(*run, units, in, nullptr);
  batch->skeleton_.queue = batches[0].queue;
  batch->skeleton_.caller_may_run = true;
  batch->endpoint_ = plan->endpoint(batches[0].location);
  batch->units_ = units.size();
  return batch;
}

Result<InlineBatch::Lease> InlineBatch::lease(const SemanticProgram& program, std::span<const Tensor> inputs) const {
  std::unique_ptr<Slot> slot;
  {
    std::lock_guard lock(mutex_);
    if (!pool_.empty()) {
      slot = std::move(pool_.back());
      pool_.pop_back();
    }
  }
  if (!slot) {
    slot = std::make_unique<Slot>();
    slot->work = skeleton_;
  }
  bool bound = slot->bound && slot->shapes.size() == inputs.size();
  for (size_t i = 0; bound && i < inputs.size(); ++i) bound = slot->shapes[i] == inputs[i].shape();
  if (!bound) {
    auto symbols = bind_signature(program, signature_of(inputs));
    if (!symbols.ok()) {
      give_back(std::move(slot));
      return symbols.error();
    }
    slot->work.symbols = std::move(*symbols);
    slot->work.caller_notes.reset();  // the engine's notes were for other shapes
    slot->shapes.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) slot->shapes[i] = inputs[i].shape();
    slot->bound = true;
  }
  slot->work.inputs.clear();
  for (uint32_t i : input_of_) slot->work.inputs.push_back(inputs[i]);
  return Lease{this, std::move(slot)};
}

Result<std::vector<Tensor>> InlineBatch::outputs(std::span<const Tensor> inputs, std::vector<Tensor> results) const {
  if (results.size() != result_types_.size())
    return Error{ErrorCode::Internal, "the engine returned " + std::to_string(results.size()) +
                                          " results for a batch of " + std::to_string(result_types_.size())};
  for (size_t k = 0; k < results.size(); ++k)
    if (results[k].dtype() != result_types_[k].first || results[k].rank() != result_types_[k].second)
      return Error{ErrorCode::Internal, "batch result " + std::to_string(k) + " is " +
                                            std::string{to_string(results[k].dtype())} + " of rank " +
                                            std::to_string(results[k].rank()) + ", its value " +
                                            std::string{to_string(result_types_[k].first)} + " of rank " +
                                            std::to_string(result_types_[k].second)};
  bool same = output_from_.size() == results.size();
  for (size_t k = 0; same && k < output_from_.size(); ++k) same = output_from_[k] == static_cast<int64_t>(k);
  if (same) return results;
  std::vector<Tensor> out;
  out.reserve(output_from_.size());
  for (int64_t from : output_from_)
    out.push_back(from >= 0 ? results[static_cast<size_t>(from)] : inputs[static_cast<size_t>(-1 - from)]);
  return out;
}

void InlineBatch::give_back(std::unique_ptr<Slot> slot) const {
  slot->work.inputs.clear();
  std::lock_guard lock(mutex_);
  if (pool_.size() < kPoolSize) pool_.push_back(std::move(slot));
}

BatchWork& InlineBatch::Lease::work() { return slot_->work; }

void InlineBatch::Lease::release_inputs() {
  if (slot_) slot_->work.inputs.clear();
}

InlineBatch::Lease::~Lease() {
  if (owner_ && slot_) owner_->give_back(std::move(slot_));
}

std::shared_ptr<const InlineBatch> PipelinePlan::inline_batch(const std::shared_ptr<const PipelinePlan>& plan,
                                                              std::span<const Tensor> inputs) {
  if (!plan) return nullptr;
  InlineCache& cache = *plan->inline_cache_;
  std::call_once(cache.once, [&] { cache.batch = InlineBatch::build(plan, inputs); });
  return cache.batch;
}

}  // namespace tenact
