// Runs a whole semantic program on the CPU engine, op by op in program
// order, on the calling thread (kernels split large work over the engine's
// pool). The reference executor: `tenact run` uses it until the actor
// runtime takes over, and tests compare other engines against it.
//
// Runs of consecutive elementwise ops over one shape are executed as fused
// regions (one tiled pass, no full-size intermediates) when
// `fuse_elementwise` is set; results are bit-identical either way.
// Intermediate tensors are released right after their last use.
//
// Thread-safety: safe to call from many threads at once with one engine.
// Never call it on a CAF scheduler thread (it blocks while kernels run).
#pragma once

#include <span>
#include <vector>

#include "core/program.hpp"
#include "core/tensor.hpp"
#include "engines/cpu/cpu_engine.hpp"

namespace tenact::cpu {

struct CpuRunOptions {
  bool fuse_elementwise = true;
};

struct CpuRunStats {
  uint64_t kernels_run = 0;   // single-op kernel calls
  uint64_t regions_run = 0;   // fused regions executed
  uint64_t ops_fused = 0;     // ops executed inside fused regions
};

/// Checks the inputs against the program (planning/signature.hpp), then
/// runs it. Returns the outputs in program order. Errors name the op
/// ("op #3 (add -> 'z')") for failures while running.
Result<std::vector<HostTensor>> run_program_on_cpu(const SemanticProgram& program,
                                                   std::span<const HostTensor> inputs,
                                                   CpuEngine& engine, const CpuRunOptions& options = {},
                                                   CpuRunStats* stats = nullptr);

}  // namespace tenact::cpu
