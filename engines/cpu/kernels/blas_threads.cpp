#include "engines/cpu/kernels/blas_threads.hpp"

#include <cblas.h>

#include <algorithm>
#include <mutex>

namespace tenact::cpu {

namespace {
std::mutex& blas_threads_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

int set_blas_threads(int threads) {
  std::lock_guard<std::mutex> lock(blas_threads_mutex());
  const int procs = std::max(1, openblas_get_num_procs());
  const int wanted = std::clamp(threads, 1, procs);
  if (openblas_get_num_threads() != wanted) openblas_set_num_threads(wanted);
  return openblas_get_num_threads();
}

int blas_threads() { return openblas_get_num_threads(); }

}  // namespace tenact::cpu
