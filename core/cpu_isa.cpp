#include "core/cpu_isa.hpp"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TENACT_CPU_ISA_X86 1
#else
#define TENACT_CPU_ISA_X86 0
#endif

namespace tenact {

std::string_view to_string(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Baseline: return "baseline";
    case CpuIsa::Avx2: return "avx2";
    case CpuIsa::Avx512: return "avx512f";
  }
  return "?";
}

bool cpu_runs(CpuIsa isa) {
  if (isa == CpuIsa::Baseline) return true;
#if TENACT_CPU_ISA_X86
  // libgcc's feature bits include the OS check (XCR0 saves the ymm/zmm
  // state), so a true answer means the instructions may run.
  __builtin_cpu_init();
  if (isa == CpuIsa::Avx2) return __builtin_cpu_supports("avx2");
  if (isa == CpuIsa::Avx512) return __builtin_cpu_supports("avx512f");
#endif
  return false;
}

CpuIsa best_cpu_isa() {
  static const CpuIsa best = cpu_runs(CpuIsa::Avx512) ? CpuIsa::Avx512
                             : cpu_runs(CpuIsa::Avx2) ? CpuIsa::Avx2
                                                      : CpuIsa::Baseline;
  return best;
}

}  // namespace tenact
