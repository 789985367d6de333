// A prepared program that is one batch on one engine lane, ready to be run
// again and again on a client's thread (actors/inline_run.hpp) without a
// PipelineRun per run: the batch's ops, regions and results are built once
// from the plan; a run only binds its input tensors (and, when the shapes
// changed, its symbols) into a BatchWork taken from a small pool.
//
// Contract: built once per PipelinePlan (PipelinePlan::inline_batch) and
// shared by every run of it, from any thread. lease() and outputs() are
// thread-safe; a Lease belongs to one thread. Costs per run: a mutex-held
// pop and push on the pool and copies of the input handles; no allocation
// once the pool holds as many works as runs overlap (up to kPoolSize).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/program.hpp"
#include "core/tensor.hpp"
#include "engines/engine.hpp"

namespace tenact {

class PipelinePlan;

class InlineBatch {
  struct Slot;

 public:
  /// The plan's single batch with `inputs` as the run's inputs (their
  /// count, dtypes and ranks checked as PipelineRun::start does). Null
  /// when the plan is not one batch of compute units on one lane, or a
  /// batch input is not a program input (then runs take the other paths).
  static std::shared_ptr<const InlineBatch> build(const std::shared_ptr<const PipelinePlan>& plan,
                                                  std::span<const Tensor> inputs);

  /// Where the batch runs (engine and memory) and how many units it
  /// covers (ExecutionStats::units).
  const Endpoint& endpoint() const { return endpoint_; }
  uint64_t units() const { return units_; }

  class Lease {
   public:
    Lease(Lease&& other) noexcept : owner_(other.owner_), slot_(std::move(other.slot_)) { other.owner_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    BatchWork& work();
    /// Drops the input handles now (the inputs go before a caller hears).
    void release_inputs();

   private:
    friend class InlineBatch;
    Lease(const InlineBatch* owner, std::unique_ptr<Slot> slot) : owner_(owner), slot_(std::move(slot)) {}
    const InlineBatch* owner_;
    std::unique_ptr<Slot> slot_;
  };

  /// A BatchWork of this batch whose inputs are the run's (`inputs` in
  /// program order) and whose symbols are bound to their shapes. Errors:
  /// what bind_signature says about the shapes.
  Result<Lease> lease(const SemanticProgram& program, std::span<const Tensor> inputs) const;

  /// The program's outputs from the batch's results: each the batch result
  /// that makes it, or the program input it passes through. Errors:
  /// Internal when the engine returned another number of results, or a
  /// result whose dtype or rank differs from its value's.
  Result<std::vector<Tensor>> outputs(std::span<const Tensor> inputs, std::vector<Tensor> results) const;

  static constexpr size_t kPoolSize = 8;

 private:
  InlineBatch() = default;
  void give_back(std::unique_ptr<Slot> slot) const;

  /// The batch with no inputs and no symbols.
  BatchWork skeleton_;
  /// Per batch input, the program input it is.
  std::vector<uint32_t> input_of_;
  /// Per program output: a batch result (>= 0) or program input -1 - i.
  std::vector<int64_t> output_from_;
  /// Per batch result, the dtype and rank its value has.
  std::vector<std::pair<DType, size_t>> result_types_;
  Endpoint endpoint_;
  uint64_t units_ = 0;

  /// A work of the pool and the input shapes its symbols are bound for.
  struct Slot {
    BatchWork work;
    std::vector<std::vector<int64_t>> shapes;
    bool bound = false;
  };
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Slot>> pool_;
};

}  // namespace tenact
