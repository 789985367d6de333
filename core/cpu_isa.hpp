// The x86 vector widths that Tenact's run-time-dispatched loops are compiled
// for, and the one decision of which of them this CPU runs. The CPU
// engine's vector-math tiles and the built-in extension module's loops both
// dispatch on it.
//
// Thread-safety: every function may be called from any thread;
// best_cpu_isa decides once per process (a function-local static).
#pragma once

#include <cstdint>
#include <string_view>

namespace tenact {

/// The instruction sets, narrowest first.
enum class CpuIsa : uint8_t { Baseline, Avx2, Avx512 };

/// "baseline", "avx2", "avx512f".
std::string_view to_string(CpuIsa isa);

/// True when this CPU and OS run code compiled for `isa` (Baseline: always;
/// false for the x86 variants on other architectures).
bool cpu_runs(CpuIsa isa);

/// The widest isa cpu_runs, decided once per process.
CpuIsa best_cpu_isa();

}  // namespace tenact
