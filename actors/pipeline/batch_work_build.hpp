// Turning a batch of a PipelineRun into the BatchWork an engine runs:
// the ops of its units, operands resolved to batch inputs or earlier
// results, fused regions and the results the batch returns. No CAF; the
// pipeline actor, the direct single-batch path and the caller-thread path
// (actors/inline_run.hpp) share it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "actors/pipeline/pipeline_run.hpp"
#include "engines/engine.hpp"

namespace tenact {

/// The ops of a batch of compute units at one location, with operands
/// resolved to batch inputs or earlier batch results (slots are SSA: one
/// producer each). `input_ids`: the batch's input copies in BatchRef input
/// order; the caller fills work.inputs (and work.deferred) to match.
/// `instructions`, when set, gets the instruction each batch op runs.
BatchWork build_work(const PipelineRun& run, const std::vector<uint32_t>& units, std::span<const CopyId> input_ids,
                     std::vector<uint32_t>* instructions);

/// A batch whose inputs are all held (the host-mediated path): build_work
/// over run.batch_input_ids(units), with work.inputs filled.
BatchWork build_held_work(const PipelineRun& run, const std::vector<uint32_t>& units,
                          std::vector<uint32_t>* instructions);

}  // namespace tenact
