#include "engines/cuda/device_query.hpp"

#include <cublas_api.h>
#include <cuda_runtime_api.h>

namespace tenact::cuda {

namespace {
Error cuda_error(cudaError_t status, const char* call) {
  return Error{ErrorCode::Unsupported, std::string{"CUDA runtime: "} + call + " failed: " +
                                           cudaGetErrorName(status) + " (" +
                                           cudaGetErrorString(status) + ")"};
}
}  // namespace

Result<std::vector<CudaDeviceInfo>> query_cuda_devices() {
  int count = 0;
  if (cudaError_t s = cudaGetDeviceCount(&count); s != cudaSuccess)
    return cuda_error(s, "cudaGetDeviceCount");
  std::vector<CudaDeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaError_t s = cudaGetDeviceProperties(&prop, i); s != cudaSuccess)
      return cuda_error(s, "cudaGetDeviceProperties");
    out.push_back(CudaDeviceInfo{i, prop.name, static_cast<uint64_t>(prop.totalGlobalMem), prop.major,
                                 prop.minor, prop.multiProcessorCount});
  }
  return out;
}

int linked_cublas_version() { return CUBLAS_VERSION; }

}  // namespace tenact::cuda
