#include <catch2/catch.hpp>

#include "engines/cuda/device_query.hpp"

using namespace tenact;

TEST_CASE("the CUDA runtime reports its devices or why there are none", "[cuda]") {
  auto devices = cuda::query_cuda_devices();
  if (devices.ok()) {
    for (const auto& d : *devices) {
      INFO(d.name);
      CHECK_FALSE(d.name.empty());
      CHECK(d.total_memory_bytes > 0);
      CHECK(d.compute_capability_major >= 5);
      CHECK(d.multiprocessors > 0);
    }
  } else {
    CHECK(devices.error().code() == ErrorCode::Unsupported);
    CHECK_THAT(devices.error().message(), Catch::StartsWith("CUDA runtime: cudaGetDeviceCount failed: cuda"));
  }
}

TEST_CASE("the engine links cuBLAS of the CUDA 12 or 13 toolkit", "[cuda]") {
  CHECK(cuda::linked_cublas_version() >= 120000);
}
