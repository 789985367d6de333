// Rank-1 host tensors from literal values, for the CPU engine's tests.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "core/tensor.hpp"

namespace tenact::testing {

template <class T>
HostTensor host_vector(DType dtype, const std::vector<T>& values) {
  auto t = HostTensor::zeros(dtype, {static_cast<int64_t>(values.size())});
  REQUIRE(t.ok());
  std::copy(values.begin(), values.end(), t->data_as<T>());
  return *t;
}

inline HostTensor f32(const std::vector<float>& values) { return host_vector(DType::F32, values); }
inline HostTensor i32(const std::vector<int32_t>& values) { return host_vector(DType::I32, values); }

}  // namespace tenact::testing
