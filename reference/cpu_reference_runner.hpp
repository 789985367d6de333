// Runs a whole semantic program on the CPU engine, step by step on the
// calling thread (kernels split large work over the engine's pool), without
// the actor runtime: the reference executor that tests and benchmarks
// compare other paths and engines against. It sits above planning and the
// CPU engine (it stages and plans regions itself), so neither depends on it.
//
// The staged program becomes one BatchWork in planning's sequential step
// order (sequential_steps) and runs through the CPU engine's batch runner
// (cpu_batch_runner.hpp), the same executor as the engine's launch_batch:
// the planned elementwise regions as fused regions (one tiled pass, no
// full-size intermediates), every other instruction alone, every tensor
// released right after the last step that reads it. Results are
// bit-identical with or without regions.
//
// Thread-safety: safe to call from many threads at once with one engine.
// Never call it on a CAF scheduler thread (it blocks while kernels run).
#pragma once

#include <span>
#include <vector>

#include "core/program.hpp"
#include "core/tensor.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "planning/elementwise_regions.hpp"
#include "planning/exec_program.hpp"

namespace tenact::cpu {

struct CpuRunOptions {
  bool fuse_elementwise = true;
};

struct CpuRunStats {
  uint64_t kernels_run = 0;   // single-instruction kernel calls (constants included)
  uint64_t regions_run = 0;   // fused regions executed
  uint64_t ops_fused = 0;     // compute ops executed inside fused regions
};

/// Checks the inputs against the program (planning/signature.hpp), stages
/// it, plans its elementwise regions (every instruction at the engine's
/// default endpoint, "cpu/host"; none when `fuse_elementwise` is off or
/// the engine cannot fuse) and runs it with run_exec_program_on_cpu.
/// Returns the outputs in program order. Errors name the op
/// ("op #3 (add -> 'z')") or the region ("region of op #2 (...) .. op #4
/// (...)") that failed.
Result<std::vector<HostTensor>> run_program_on_cpu(const SemanticProgram& program,
                                                   std::span<const HostTensor> inputs,
                                                   CpuEngine& engine, const CpuRunOptions& options = {},
                                                   CpuRunStats* stats = nullptr);

/// Runs `staged` (stage(program)) with `regions` (planned for `staged`, on
/// any endpoints: the CPU runs them all) after checking the inputs against
/// `program`. `stats` may be null.
Result<std::vector<HostTensor>> run_exec_program_on_cpu(const SemanticProgram& program,
                                                        const ExecProgram& staged,
                                                        std::span<const ElementwiseRegion> regions,
                                                        std::span<const HostTensor> inputs,
                                                        CpuEngine& engine, CpuRunStats* stats = nullptr);

}  // namespace tenact::cpu
