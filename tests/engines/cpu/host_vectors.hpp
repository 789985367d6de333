// Host tensors (rank 1, or i32 of any shape) from literal values, for the CPU engine's tests.
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

/// An i32 tensor of `shape` holding `values` in row-major order.
inline HostTensor i32(std::vector<int64_t> shape, const std::vector<int32_t>& values) {
  auto t = HostTensor::zeros(DType::I32, std::move(shape));
  REQUIRE(t.ok());
  REQUIRE(t->element_count() == static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), t->data_as<int32_t>());
  return *t;
}

}  // namespace tenact::testing
