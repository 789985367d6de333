// The InPlace variant of dynamic_update_slice and scatter: only the updated
// elements of operand 0's buffer are written (hand-derived windows and
// clamped starts), the result is operand 0 itself, and the values are bit
// for bit the standard kernel's (duplicate and out-of-range scatter
// indices, every update kind tried); an operand 0 that is not dense
// row-major is refused.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "engines/cpu/kernels/kernel.hpp"

using namespace tenact;
using namespace tenact::cpu;

namespace in_place_test {

template <class T>
HostTensor filled(DType dtype, std::vector<int64_t> shape, T first, T step) {
  HostTensor t = HostTensor::zeros(dtype, std::move(shape)).value();
  for (int64_t i = 0; i < t.element_count(); ++i) t.data_as<T>()[i] = first + step * static_cast<T>(i);
  return t;
}

HostTensor index_scalar(int32_t v) {
  HostTensor t = HostTensor::zeros(DType::I32, {}).value();
  *t.data_as<int32_t>() = v;
  return t;
}

Result<std::vector<HostTensor>> run(OpKind kind, const OpAttrs& attrs, const std::vector<HostTensor>& inputs,
                                    KernelVariant variant) {
  const std::vector<ValueType> types{ValueType{inputs[0].dtype(), {}}};
  const SymbolBindings symbols;
  KernelCall call{kind, attrs, inputs, types, symbols, nullptr};
  call.variant = variant;
  return run_kernel(call);
}

/// The standard kernel's result on a copy of operand 0, then the in-place
/// run on `inputs` itself: the same bits, and operand 0's storage.
HostTensor same_as_standard(OpKind kind, const OpAttrs& attrs, std::vector<HostTensor> inputs) {
  std::vector<HostTensor> copy = inputs;
  copy[0] = inputs[0].clone().value();
  const HostTensor standard = run(kind, attrs, copy, KernelVariant::Standard).value()[0];
  const HostTensor result = run(kind, attrs, inputs, KernelVariant::InPlace).value()[0];
  CHECK(result.buffer() == inputs[0].buffer());
  CHECK(result.offset() == inputs[0].offset());
  CHECK(result.data() == inputs[0].data());
  CHECK(result.bitwise_equal(standard));
  CHECK(inputs[0].bitwise_equal(standard));
  return result;
}


TEST_CASE("dynamic_update_slice in place writes only the window, starts clamped", "[indexing][in_place]") {
  const OpAttrs none = NoAttrs{};
  // Operand [4, 5] holding 0..19, update [2, 3] holding 100..105.
  struct Case {
    int32_t row, col;  // requested start
    int64_t r0, c0;    // clamped start: into [0, 4 - 2] x [0, 5 - 3]
  };
  for (Case c : {Case{1, 1, 1, 1}, Case{3, 4, 2, 2}, Case{-5, 0, 0, 0}, Case{0, 99, 0, 2}}) {
    CAPTURE(c.row, c.col);
    const HostTensor x = filled<float>(DType::F32, {4, 5}, 0.0f, 1.0f);
    const HostTensor u = filled<float>(DType::F32, {2, 3}, 100.0f, 1.0f);
    const HostTensor out = same_as_standard(OpKind::DynamicUpdateSlice, none,
                                            {x, u, index_scalar(c.row), index_scalar(c.col)});
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        const bool in_window = i >= c.r0 && i < c.r0 + 2 && j >= c.c0 && j < c.c0 + 3;
        const float want = in_window ? 100.0f + static_cast<float>((i - c.r0) * 3 + (j - c.c0))
                                     : static_cast<float>(i * 5 + j);
        CHECK(out.data_as<float>()[i * 5 + j] == want);
      }
  }
}

TEST_CASE("dynamic_update_slice in place refuses an operand that is not dense row-major",
          "[indexing][in_place]") {
  const OpAttrs none = NoAttrs{};
  const HostTensor x = filled<float>(DType::F32, {4, 5}, 0.0f, 1.0f);
  const std::vector<int64_t> perm{1, 0};
  const HostTensor u = filled<float>(DType::F32, {1, 1}, 7.0f, 0.0f);
  auto refused = run(OpKind::DynamicUpdateSlice, none, {x.transposed(perm), u, index_scalar(0), index_scalar(0)},
                     KernelVariant::InPlace);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code() == ErrorCode::InputMismatch);
  CHECK(x.data_as<float>()[0] == 0.0f);  // nothing written
}

TEST_CASE("scatter in place equals the standard scatter bit for bit", "[indexing][in_place]") {
  // Operand [5, 3]; four index rows {1, 3, 1, 7} and {-1}: rows of 3
  // updates; 7 and -1 are out of range (skipped), row 1 is updated twice.
  ScatterAttrs dims;
  dims.update_window_dims = {1};
  dims.inserted_window_dims = {0};
  dims.scatter_dims_to_operand_dims = {0};
  dims.index_vector_dim = 1;
  HostTensor indices = HostTensor::zeros(DType::I32, {5, 1}).value();
  const int32_t rows[] = {1, 3, 1, 7, -1};
  std::memcpy(indices.data(), rows, sizeof rows);
  for (ScatterUpdate update : {ScatterUpdate::Replace, ScatterUpdate::Add, ScatterUpdate::Max,
                               ScatterUpdate::Min, ScatterUpdate::Multiply}) {
    CAPTURE(to_string(update));
    dims.update = update;
    const OpAttrs attrs = dims;
    const HostTensor x = filled<float>(DType::F32, {5, 3}, -4.0f, 0.5f);
    const HostTensor u = filled<float>(DType::F32, {5, 3}, 3.0f, -0.75f);
    const HostTensor out = same_as_standard(OpKind::Scatter, attrs, {x, indices, u});
    const float* o = out.data_as<float>();
    // Rows 0, 2, 4 are untouched.
    for (int64_t r : {0, 2, 4})
      for (int64_t c = 0; c < 3; ++c) CHECK(o[r * 3 + c] == -4.0f + 0.5f * static_cast<float>(r * 3 + c));
    if (update == ScatterUpdate::Replace) {
      // The last duplicate wins: row 1 holds update row 2, row 3 update row 1.
      for (int64_t c = 0; c < 3; ++c) {
        CHECK(o[3 + c] == 3.0f - 0.75f * static_cast<float>(6 + c));
        CHECK(o[9 + c] == 3.0f - 0.75f * static_cast<float>(3 + c));
      }
    }
    if (update == ScatterUpdate::Add)  // (x + u0) + u2, in update order
      for (int64_t c = 0; c < 3; ++c)
        CHECK(o[3 + c] == (-4.0f + 0.5f * static_cast<float>(3 + c) + (3.0f - 0.75f * static_cast<float>(c))) +
                              (3.0f - 0.75f * static_cast<float>(6 + c)));
  }
  // Integers, and a partly out-of-range window: start row 4 of a 2-row
  // window over [5, 3] keeps its first row only.
  ScatterAttrs window;
  window.update_window_dims = {0, 1};
  window.scatter_dims_to_operand_dims = {0};
  window.index_vector_dim = 0;
  window.update = ScatterUpdate::Add;
  const HostTensor at = index_scalar(4);
  const HostTensor xi = filled<int32_t>(DType::I32, {5, 3}, 0, 1);
  const HostTensor ui = filled<int32_t>(DType::I32, {2, 3}, 10, 10);
  const HostTensor out = same_as_standard(OpKind::Scatter, OpAttrs{window}, {xi, at, ui});
  CHECK(out.data_as<int32_t>()[12] == 12 + 10);
  CHECK(out.data_as<int32_t>()[14] == 14 + 30);
  CHECK(out.data_as<int32_t>()[11] == 11);
}

}  // namespace in_place_test
