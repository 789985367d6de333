// cpu_bench: throughput of the CPU engine's kernels against baselines
// measured in the same run (see bench/README.md). A benchmark, not a test:
// exits 0 whatever the figures, 1 when a kernel fails or a result is wrong,
// 2 on a bad command line.
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "bench/bench_util.hpp"
#include "bench/cpu_bench_sections.hpp"
#include "engines/cpu/kernels/blas_threads.hpp"

namespace {

using tenact::bench::BenchOptions;
using tenact::bench::Statistic;

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: cpu_bench [--quick] [--median] [--threads N] [--only dot|chain|memory|packed|small]\n"
               "                 [--keep-freed-memory]\n"
               "  --quick      fewer repetitions (about a quarter, at least 3)\n"
               "  --median     report the median of the N repetitions instead of the best\n"
               "  --threads N  engine worker threads (default: hardware concurrency)\n"
               "  --only S     run one section: dot, chain, memory, packed or small\n"
               "  --keep-freed-memory  diagnostic: glibc malloc never returns freed memory\n"
               "               to the system, so kernel outputs reuse already-mapped pages\n"
               "               (shows what page faults on fresh outputs cost)\n");
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions options;
  std::string only;
  bool keep_freed_memory = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--median") {
      options.statistic = Statistic::Median;
    } else if (arg == "--threads" && i + 1 < argc) {
      options.threads = static_cast<size_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
      if (only != "dot" && only != "chain" && only != "memory" && only != "packed" && only != "small") {
        usage(stderr);
        return 2;
      }
    } else if (arg == "--keep-freed-memory") {
      keep_freed_memory = true;
    } else if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }

  if (keep_freed_memory) {
    // Every allocation from the heap (never a fresh mmap), and the heap is
    // never trimmed: a freed 64 MiB output is reused, its pages mapped.
    if (mallopt(M_MMAP_MAX, 0) != 1 || mallopt(M_TRIM_THRESHOLD, 1 << 30) != 1 ||
        mallopt(M_TOP_PAD, 256 << 20) != 1) {
      std::fprintf(stderr, "cpu_bench: mallopt failed\n");
      return 2;
    }
  }
  auto created = tenact::cpu::CpuEngine::create(tenact::cpu::CpuEngineOptions{.threads = options.threads});
  if (!created.ok()) {
    std::fprintf(stderr, "cpu_bench: %s\n", created.error().to_string().c_str());
    return 2;
  }
  tenact::cpu::CpuEngine& engine = **created;
  tenact::bench::Table table;
  tenact::bench::Checks checks;
  tenact::bench::BenchContext ctx{engine, options, table, checks};

  std::printf("cpu_bench: %zu pool threads, OpenBLAS %d threads; figures are the %s of the "
              "timed repetitions (%s run), variants interleaved; 1 GB = 1e9 bytes%s\n\n",
              engine.pool().thread_count(), tenact::cpu::blas_threads(),
              tenact::bench::statistic_name(options.statistic), options.quick ? "quick" : "full",
              keep_freed_memory ? "\nDIAGNOSTIC MODE --keep-freed-memory: freed memory is reused "
                                  "(no page faults on fresh kernel outputs)"
                                : "");
  std::fflush(stdout);

  if (only.empty() || only == "dot") tenact::bench::bench_dot_general(ctx);
  if (only.empty() || only == "chain") tenact::bench::bench_elementwise_chain(ctx);
  if (only.empty() || only == "memory") tenact::bench::bench_memory_bound(ctx);
  if (only.empty() || only == "packed") tenact::bench::bench_packed_panels(ctx);
  if (only.empty() || only == "small") tenact::bench::bench_small_ops(ctx);

  table.print(stdout);
  std::printf("\nchecks:\n");
  checks.print(stdout);
  std::printf("\n%d figure(s) below target; %d failed check(s)\n", table.misses(),
              checks.failures());
  return checks.failures() == 0 ? 0 : 1;
}
