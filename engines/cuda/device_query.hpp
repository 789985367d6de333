// What the CUDA runtime sees: the devices and the cuBLAS version. The first
// piece of the CUDA engine (engines/cuda), built only where the CUDA toolkit
// is found. No CUDA type appears in this header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace tenact::cuda {

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  uint64_t total_memory_bytes = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessors = 0;
};

/// The visible devices. Errors: Unsupported naming the CUDA runtime's
/// reason when no driver or no device is present (the normal case on a
/// machine without a GPU). Thread-safe.
Result<std::vector<CudaDeviceInfo>> query_cuda_devices();

/// The cuBLAS version the engine links against, e.g. 130000.
int linked_cublas_version();

}  // namespace tenact::cuda
