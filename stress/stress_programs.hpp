// The stress harness's random programs and inputs: a seeded generator of
// the project's own, so that every job is a pure function of (seed, job
// index) and a failing one replays from those two numbers alone.
//
// What it makes. A program has one element type (any of the format's
// fifteen but bool; bool values arise from compare and convert), inputs of
// the symbolic shape [N, N] under guards on N (a third of the programs also
// one of shape [M, N] under guards on M and M * N, which pairs of dots
// carry through: a . x, then a^T . (a . x)), and 3 to max_ops ops drawn
// from every family the CPU engine runs: elementwise unary and binary
// (transcendentals included), compare/select/clamp, convert round trips
// through other types, transpose, reshape (through "N*N"), broadcast_in_dim,
// iota, constants, tril/triu, extract_diag/embed_diag, the five reductions,
// slice, dynamic_slice, dynamic_update_slice, pad (growing by dimension
// expressions and shrinking back), concatenate (to "2*N"), gather and
// scatter of rows (indices in order, reversed, out of range or repeated;
// every update kind), shape_of, dynamic_truncate padded back by
// pad_to_match, and dot_general.
// Inputs hold the special values of their type: NaN, infinities, -0,
// subnormals, the extremes, or small integers.
//
// What the oracle can check. Every op whose result the spec fixes bit for
// bit (integer arithmetic wraps, the correctly rounded float ops, layout,
// indexing) is compared bit for bit. Sums and products may reassociate, so
// the generator feeds them only operands whose every term is an integer
// small enough that any order gives the same sum (it clamps and rounds
// operands first where needed, per dtype: 2^8 for bf16, 2^11 for f16, 2^24
// for f32, 2^53 for f64), and adds +0 to the result (a zero sum's sign is
// unspecified; +0 fixes it). Transcendental ops are within 4 ulps by the
// spec: outputs that depend on them carry an ulp allowance
// (GeneratedJob::output_ulps), checked the same way on every engine. NaN
// matches NaN whatever its payload.
//
// Thread-safety: pure functions; safe from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace tenact::stress {

struct GeneratorOptions {
  /// Distinct programs per seed (jobs share them, so the prepare cache
  /// serves repeats; each job has its own N and inputs).
  uint32_t programs = 32;
  /// Ops per program, at most (at least 3); helper ops count.
  uint32_t max_ops = 40;
  /// The largest N a job draws; at most 64.
  uint32_t max_n = 24;
  /// dot_general on floating and complex types (BLAS-backed on the CPU
  /// engine); off where BLAS cannot run (ThreadSanitizer runs: OpenBLAS is
  /// not instrumented).
  bool float_dots = true;
};

/// The program `program_index` of `seed` as a tenact.program/1 document.
std::string generate_program_json(uint64_t seed, uint32_t program_index, const GeneratorOptions& options = {});

struct GeneratedJob {
  uint32_t program_index = 0;
  std::string program_json;
  /// The symbol N's value for this job.
  int64_t n = 0;
  /// The symbol M's value, when the program has an input of shape [M, N]
  /// (else 0).
  int64_t m = 0;
  /// In program order, host memory.
  std::vector<HostTensor> inputs;
  /// Per output: 0 for bit for bit, else the ulps allowed between the
  /// engine's result and the CPU engine's.
  std::vector<uint32_t> output_ulps;
};

/// Job `index` of `seed`: its program (program index drawn from the job),
/// N, inputs and comparison rules. Errors: ResourceExhausted when inputs
/// cannot be allocated.
Result<GeneratedJob> generate_job(uint64_t seed, uint64_t index, const GeneratorOptions& options = {});

/// Whether `actual` matches `expected` under `ulps` (0: bit for bit; NaN
/// matches NaN; a complex value compares its components). On a mismatch,
/// `why` names the first differing element and both values.
bool results_match(const HostTensor& expected, const HostTensor& actual, uint32_t ulps, std::string* why);

}  // namespace tenact::stress
