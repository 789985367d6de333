// How OpenBLAS's threads and the CPU engine's worker pool share the cores.
//
// Policy:
// - OpenBLAS gets as many threads as the worker pool has (the engine calls
//   set_blas_threads(pool.thread_count()) once, when it starts, before any
//   kernel runs). The environment (OPENBLAS_NUM_THREADS, OPENBLAS_CORETYPE)
//   is never touched.
// - A gemm large enough for OpenBLAS to split (M*N*K above
//   kBlasSingleThreadWork) is called from one thread, outside any
//   parallel_for: OpenBLAS's threads do the work while the pool's threads
//   are not running this kernel.
// - Batched small gemms (each at or below kBlasSingleThreadWork, which
//   OpenBLAS 0.3.21 runs single-threaded in the calling thread) are spread
//   over the pool, one gemm per task: at most pool-size threads compute.
// - The engine runs one dot_general at a time per pool; two kernels
//   calling large gemms at once would share OpenBLAS's threads (correct,
//   but slower), which is the engine's scheduling concern.
// Results do not depend on the thread counts: OpenBLAS splits a gemm over
// M and N only (never over K), and each of our tasks computes whole gemms.
#pragma once

namespace tenact::cpu {

/// M*N*K at or below which OpenBLAS 0.3.21 runs a gemm single-threaded in
/// the calling thread (SMP_THRESHOLD_MIN 65536 * GEMM_MULTITHREAD_THRESHOLD 4,
/// interface/gemm.c; Debian's build keeps the threshold at 4).
inline constexpr double kBlasSingleThreadWork = 65536.0 * 4.0;

/// Sets the number of threads OpenBLAS uses, clamped to [1, the number of
/// processors OpenBLAS sees]. Process-wide. Thread-safe against itself
/// (serialized), but must not overlap a running gemm: call it when the
/// engine starts. Returns the count in effect afterwards.
int set_blas_threads(int threads);

/// The number of threads OpenBLAS currently uses.
int blas_threads();

}  // namespace tenact::cpu
