// The CPU indexing kernels (slice, dynamic_slice, dynamic_update_slice, pad,
// concatenate, reverse, gather, scatter, shape_of, dynamic_truncate,
// pad_to_match) against NumPy fixtures (tests/fixtures/gen_cpu_indexing.py,
// whose gather/scatter references are checked on the StableHLO spec's
// examples), bitwise, for every input layout; plus symbolic attributes,
// run-time errors and large gathers over the pool.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/engines/cpu/kernel_test_support.hpp"
#include "tests/engines/cpu/test_engine.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cpu {
namespace {

using namespace kernel_fixtures;

const std::string kIndexingUnit = "cpu_indexing";

TEST_CASE("slice matches NumPy, strides and empty slices included", "[indexing]") {
  check_fixture_op(kIndexingUnit, "slice", [](const FixtureAttrs& a) -> OpAttrs {
    SliceAttrs t;
    t.start_indices = fixture_dims(a, "start");
    t.limit_indices = fixture_dims(a, "limit");
    t.strides = fixture_ints(a, "strides");
    return t;
  });
}

TEST_CASE("dynamic_slice clamps its starts, signed or unsigned, as StableHLO", "[indexing]") {
  check_fixture_op(kIndexingUnit, "dynamic_slice", [](const FixtureAttrs& a) -> OpAttrs {
    DynamicSliceAttrs t;
    t.slice_sizes = fixture_dims(a, "sizes");
    return t;
  });
}

TEST_CASE("dynamic_update_slice clamps its starts and writes the update", "[indexing]") {
  check_fixture_op(kIndexingUnit, "dynamic_update_slice",
                   [](const FixtureAttrs&) -> OpAttrs { return NoAttrs{}; });
}

TEST_CASE("pad matches the spec example and NumPy, negative edges and interior", "[indexing]") {
  check_fixture_op(kIndexingUnit, "pad", [](const FixtureAttrs& a) -> OpAttrs {
    PadAttrs t;
    t.edge_padding_low = fixture_dims(a, "low");
    t.edge_padding_high = fixture_dims(a, "high");
    t.interior_padding = fixture_dims(a, "interior");
    return t;
  });
}

TEST_CASE("concatenate matches NumPy, empty inputs included", "[indexing]") {
  check_fixture_op(kIndexingUnit, "concatenate", [](const FixtureAttrs& a) -> OpAttrs {
    ConcatenateAttrs t;
    t.dimension = fixture_int(a, "dim");
    return t;
  });
}

TEST_CASE("reverse matches NumPy", "[indexing]") {
  check_fixture_op(kIndexingUnit, "reverse", [](const FixtureAttrs& a) -> OpAttrs {
    ReverseAttrs t;
    t.dimensions = fixture_ints(a, "dims");
    return t;
  });
}

TEST_CASE("shape_of gives the dimensions as i64", "[indexing]") {
  check_fixture_op(kIndexingUnit, "shape_of", [](const FixtureAttrs&) -> OpAttrs { return NoAttrs{}; });
}

TEST_CASE("dynamic_truncate keeps the first clamp(length, 0, dim) elements", "[indexing]") {
  check_fixture_op(kIndexingUnit, "dynamic_truncate", [](const FixtureAttrs& a) -> OpAttrs {
    DynamicTruncateAttrs t;
    t.dimension = fixture_int(a, "dim");
    return t;
  });
}

TEST_CASE("pad_to_match pads the high ends with the converted value", "[indexing]") {
  check_fixture_op(kIndexingUnit, "pad_to_match", [](const FixtureAttrs& a) -> OpAttrs {
    PadToMatchAttrs t;
    t.value = fixture_scalar(a, "splat");
    return t;
  });
}

OpAttrs gather_attrs(const FixtureAttrs& a) {
  GatherAttrs t;
  t.offset_dims = fixture_ints(a, "offset_dims");
  t.collapsed_slice_dims = fixture_ints(a, "collapsed");
  t.start_index_map = fixture_ints(a, "start_index_map");
  t.index_vector_dim = fixture_int(a, "ivd");
  t.slice_sizes = fixture_dims(a, "sizes");
  t.operand_batching_dims = fixture_ints(a, "operand_batching");
  t.start_indices_batching_dims = fixture_ints(a, "indices_batching");
  return t;
}

TEST_CASE("gather matches the StableHLO reference, batching dims and clamping included",
          "[indexing]") {
  check_fixture_op(kIndexingUnit, "gather", gather_attrs);
}

TEST_CASE("scatter matches the StableHLO reference: skips, order, combiners", "[indexing]") {
  check_fixture_op(kIndexingUnit, "scatter", [](const FixtureAttrs& a) -> OpAttrs {
    ScatterAttrs t;
    t.update_window_dims = fixture_ints(a, "window_dims");
    t.inserted_window_dims = fixture_ints(a, "inserted");
    t.scatter_dims_to_operand_dims = fixture_ints(a, "to_operand");
    t.index_vector_dim = fixture_int(a, "ivd");
    t.input_batching_dims = fixture_ints(a, "input_batching");
    t.scatter_indices_batching_dims = fixture_ints(a, "indices_batching");
    auto up = parse_scatter_update(a.at("update"));
    REQUIRE(up.has_value());
    t.update = *up;
    return t;
  });
}

// -- hand-checked cases --------------------------------------------------------------

struct IndexingRun {
  OpKind kind;
  OpAttrs attrs;
  std::vector<HostTensor> inputs;
  DType dtype;
  SymbolBindings symbols;
  WorkerPool* pool = nullptr;

  Result<std::vector<HostTensor>> operator()() const {
    const std::vector<ValueType> types{ValueType{dtype, {}}};
    KernelCall call{kind, attrs, inputs, types, symbols, pool};
    return run_indexing(call);
  }
};

template <class T>
HostTensor tensor(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  auto t = HostTensor::zeros(dtype, std::move(shape));
  REQUIRE(t.ok());
  REQUIRE(static_cast<size_t>(t->element_count()) == values.size());
  REQUIRE(size_of(dtype) == sizeof(T));
  if (!values.empty()) std::memcpy(t->data(), values.data(), values.size() * sizeof(T));
  return *t;
}

template <class T>
std::vector<T> values(const HostTensor& t) {
  std::vector<T> v(static_cast<size_t>(t.element_count()));
  REQUIRE(t.is_contiguous());
  if (!v.empty()) std::memcpy(v.data(), t.data(), v.size() * sizeof(T));
  return v;
}

std::vector<DimExpr> consts(std::initializer_list<int64_t> v) {
  std::vector<DimExpr> out;
  for (int64_t x : v) out.push_back(DimExpr::constant(x));
  return out;
}

ErrorCode error_of(const Result<std::vector<HostTensor>>& r) {
  REQUIRE_FALSE(r.ok());
  return r.error().code();
}

TEST_CASE("slice and pad evaluate symbolic attributes", "[indexing]") {
  const HostTensor x = tensor<int32_t>(DType::I32, {6}, {0, 1, 2, 3, 4, 5});
  SliceAttrs s;
  s.start_indices = {DimExpr::symbol("B") - DimExpr::constant(4)};
  s.limit_indices = {DimExpr::symbol("B")};
  s.strides = {1};
  auto tail = IndexingRun{OpKind::Slice, s, {x}, DType::I32, {{"B", 6}}}();
  REQUIRE(tail.ok());
  CHECK(values<int32_t>((*tail)[0]) == std::vector<int32_t>{2, 3, 4, 5});
  auto past_end = IndexingRun{OpKind::Slice, s, {x}, DType::I32, {{"B", 7}}}();
  CHECK(error_of(past_end) == ErrorCode::InputMismatch);

  PadAttrs p;
  p.edge_padding_low = {DimExpr::constant(0) - DimExpr::symbol("K")};
  p.edge_padding_high = {DimExpr::symbol("K")};
  p.interior_padding = consts({0});
  const HostTensor nine = tensor<int32_t>(DType::I32, {}, {9});
  auto shifted = IndexingRun{OpKind::Pad, p, {x, nine}, DType::I32, {{"K", 2}}}();
  REQUIRE(shifted.ok());
  CHECK(values<int32_t>((*shifted)[0]) == std::vector<int32_t>{2, 3, 4, 5, 9, 9});
}

TEST_CASE("pad_to_match without a value pads with the dtype's zero, false for bool", "[indexing]") {
  const HostTensor like = tensor<uint8_t>(DType::U8, {3, 2}, std::vector<uint8_t>(6, 7));
  const HostTensor x = tensor<uint8_t>(DType::Bool, {2, 1}, {1, 1});
  auto padded = IndexingRun{OpKind::PadToMatch, PadToMatchAttrs{}, {x, like}, DType::Bool, {}}();
  REQUIRE(padded.ok());
  CHECK((*padded)[0].dtype() == DType::Bool);
  CHECK((*padded)[0].shape() == std::vector<int64_t>{3, 2});
  CHECK(values<uint8_t>((*padded)[0]) == std::vector<uint8_t>{1, 0, 1, 0, 0, 0});
  PadToMatchAttrs with_true;
  with_true.value = Scalar::of_bool(true);
  auto trues = IndexingRun{OpKind::PadToMatch, with_true, {x, like}, DType::Bool, {}}();
  REQUIRE(trues.ok());
  CHECK(values<uint8_t>((*trues)[0]) == std::vector<uint8_t>{1, 1, 1, 1, 1, 1});
  // The zero of other dtypes: 0, +0.0, 0+0i.
  const HostTensor row = tensor<uint8_t>(DType::U8, {3}, {7, 7, 7});
  auto i32 = IndexingRun{OpKind::PadToMatch, PadToMatchAttrs{},
                         {tensor<int32_t>(DType::I32, {1}, {-5}), row}, DType::I32, {}}();
  REQUIRE(i32.ok());
  CHECK(values<int32_t>((*i32)[0]) == std::vector<int32_t>{-5, 0, 0});
  auto f32 = IndexingRun{OpKind::PadToMatch, PadToMatchAttrs{},
                         {tensor<float>(DType::F32, {1}, {-0.5f}), row}, DType::F32, {}}();
  REQUIRE(f32.ok());
  const std::vector<float> f = values<float>((*f32)[0]);
  CHECK(f == std::vector<float>{-0.5f, 0.0f, 0.0f});
  CHECK_FALSE(std::signbit(f[2]));
  const HostTensor z = tensor<uint64_t>(DType::C64, {1}, {0x3f800000bf800000ull});  // (-1, 1)
  auto c = IndexingRun{OpKind::PadToMatch, PadToMatchAttrs{},
                       {z, tensor<uint8_t>(DType::U8, {2}, {7, 7})}, DType::C64, {}}();
  REQUIRE(c.ok());
  CHECK(values<uint64_t>((*c)[0]) == std::vector<uint64_t>{0x3f800000bf800000ull, 0});
  // A value that is not a bool for a bool x is refused.
  PadToMatchAttrs one;
  one.value = Scalar::of_int(1);
  CHECK(error_of(IndexingRun{OpKind::PadToMatch, one, {x, like}, DType::Bool, {}}()) ==
        ErrorCode::TypeMismatch);
}

TEST_CASE("indexing kernels report run-time mismatches as errors, never crash", "[indexing]") {
  const HostTensor x = tensor<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor big = tensor<float>(DType::F32, {3, 3}, std::vector<float>(9, 0));
  const HostTensor i0 = tensor<int32_t>(DType::I32, {}, {0});
  const HostTensor u0 = tensor<uint32_t>(DType::U32, {}, {0});
  const HostTensor f0 = tensor<float>(DType::F32, {}, {0});

  CHECK(error_of(IndexingRun{OpKind::PadToMatch, PadToMatchAttrs{}, {big, x}, DType::F32, {}}()) ==
        ErrorCode::InputMismatch);
  CHECK(error_of(IndexingRun{OpKind::PadToMatch, PadToMatchAttrs{}, {x, f0}, DType::F32, {}}()) ==
        ErrorCode::InputMismatch);

  DynamicSliceAttrs ds;
  ds.slice_sizes = consts({1, 1});
  CHECK(error_of(IndexingRun{OpKind::DynamicSlice, ds, {x, i0, u0}, DType::F32, {}}()) ==
        ErrorCode::TypeMismatch);
  CHECK(error_of(IndexingRun{OpKind::DynamicSlice, ds, {x, f0, f0}, DType::F32, {}}()) ==
        ErrorCode::TypeMismatch);
  CHECK(error_of(IndexingRun{OpKind::DynamicSlice, ds, {x, i0}, DType::F32, {}}()) ==
        ErrorCode::InputMismatch);
  ds.slice_sizes = consts({3, 1});
  CHECK(error_of(IndexingRun{OpKind::DynamicSlice, ds, {x, i0, i0}, DType::F32, {}}()) ==
        ErrorCode::InputMismatch);

  CHECK(error_of(IndexingRun{OpKind::DynamicUpdateSlice, NoAttrs{}, {x, big, i0, i0}, DType::F32, {}}()) ==
        ErrorCode::InputMismatch);

  ConcatenateAttrs cat;
  cat.dimension = 1;
  CHECK(error_of(IndexingRun{OpKind::Concatenate, cat, {x, big}, DType::F32, {}}()) ==
        ErrorCode::InputMismatch);
  cat.dimension = 2;
  CHECK(error_of(IndexingRun{OpKind::Concatenate, cat, {x, x}, DType::F32, {}}()) ==
        ErrorCode::InvalidAttribute);

  PadAttrs p;
  p.edge_padding_low = consts({-3, 0});
  p.edge_padding_high = consts({0, 0});
  p.interior_padding = consts({0, 0});
  CHECK(error_of(IndexingRun{OpKind::Pad, p, {x, f0}, DType::F32, {}}()) == ErrorCode::InputMismatch);
  p.edge_padding_low = consts({0, 0});
  p.interior_padding = consts({0, INT64_MAX});
  CHECK(error_of(IndexingRun{OpKind::Pad, p, {x, f0}, DType::F32, {}}()) == ErrorCode::Overflow);

  GatherAttrs g;
  g.offset_dims = {1};
  g.collapsed_slice_dims = {0};
  g.start_index_map = {0};
  g.index_vector_dim = 1;
  g.slice_sizes = consts({1, 4});  // larger than the operand's 3
  const HostTensor idx = tensor<int32_t>(DType::I32, {2}, {0, 1});
  CHECK(error_of(IndexingRun{OpKind::Gather, g, {x, idx}, DType::F32, {}}()) == ErrorCode::InputMismatch);
  g.slice_sizes = consts({0, 3});  // collapsed axis of size 0: rejected
  CHECK(error_of(IndexingRun{OpKind::Gather, g, {x, idx}, DType::F32, {}}()) ==
        ErrorCode::InvalidAttribute);
  g.slice_sizes = consts({1, 3});
  CHECK(error_of(IndexingRun{OpKind::Gather, g, {x, x}, DType::F32, {}}()) == ErrorCode::TypeMismatch);
  g.offset_dims = {5};
  CHECK(error_of(IndexingRun{OpKind::Gather, g, {x, idx}, DType::F32, {}}()) ==
        ErrorCode::InvalidAttribute);

  ScatterAttrs sc;
  sc.update_window_dims = {1};
  sc.inserted_window_dims = {0};
  sc.scatter_dims_to_operand_dims = {0};
  sc.index_vector_dim = 1;
  const HostTensor upd = tensor<float>(DType::F32, {3, 3}, std::vector<float>(9, 1));
  CHECK(error_of(IndexingRun{OpKind::Scatter, sc, {x, idx, upd}, DType::F32, {}}()) ==
        ErrorCode::InputMismatch);  // 3 update rows for 2 indices
  const HostTensor wide = tensor<float>(DType::F32, {2, 4}, std::vector<float>(8, 1));
  CHECK(error_of(IndexingRun{OpKind::Scatter, sc, {x, idx, wide}, DType::F32, {}}()) ==
        ErrorCode::InputMismatch);  // window of 4 on an axis of 3
  sc.inserted_window_dims = {0, 0};
  CHECK(error_of(IndexingRun{OpKind::Scatter, sc, {x, idx, upd}, DType::F32, {}}()) ==
        ErrorCode::InvalidAttribute);

  DynamicTruncateAttrs dt;
  dt.dimension = 0;
  CHECK(error_of(IndexingRun{OpKind::DynamicTruncate, dt, {x, f0}, DType::F32, {}}()) ==
        ErrorCode::TypeMismatch);
  dt.dimension = 2;
  CHECK(error_of(IndexingRun{OpKind::DynamicTruncate, dt, {x, i0}, DType::F32, {}}()) ==
        ErrorCode::InvalidAttribute);
}

TEST_CASE("a large gather split over the pool equals a plain lookup loop", "[indexing]") {
  auto pool_holder = test_pool(2);
  WorkerPool& pool = *pool_holder;
  const int64_t rows = 1000;
  const int64_t cols = 48;
  std::vector<float> table(static_cast<size_t>(rows * cols));
  for (size_t k = 0; k < table.size(); ++k) table[k] = static_cast<float>(k);
  std::vector<int64_t> picks(20000);
  for (size_t k = 0; k < picks.size(); ++k)
    picks[k] = static_cast<int64_t>((k * 7919) % 1201) - 100;  // some below 0, some past the end
  const HostTensor operand = tensor<float>(DType::F32, {rows, cols}, table);
  const HostTensor indices =
      tensor<int64_t>(DType::I64, {static_cast<int64_t>(picks.size()), 1}, picks);
  GatherAttrs g;
  g.offset_dims = {1};
  g.collapsed_slice_dims = {0};
  g.start_index_map = {0};
  g.index_vector_dim = 1;
  g.slice_sizes = consts({1, cols});
  auto out = IndexingRun{OpKind::Gather, g, {operand, indices}, DType::F32, {}, &pool}();
  REQUIRE(out.ok());
  const auto got = values<float>((*out)[0]);
  int64_t wrong = 0;
  for (size_t k = 0; k < picks.size(); ++k) {
    const int64_t row = std::clamp<int64_t>(picks[k], 0, rows - 1);
    for (int64_t c = 0; c < cols; ++c)
      wrong += got[k * cols + static_cast<size_t>(c)] != table[static_cast<size_t>(row * cols + c)];
  }
  CHECK(wrong == 0);
}

TEST_CASE("scatter add with many duplicates sums every in-bounds update", "[indexing]") {
  const int64_t n = 64;
  std::vector<int64_t> targets(5000);
  std::vector<int64_t> expected(static_cast<size_t>(n), 0);
  std::vector<int64_t> updates(targets.size());
  for (size_t k = 0; k < targets.size(); ++k) {
    targets[k] = static_cast<int64_t>((k * 37) % 80) - 8;  // 16 of 80 fall outside [0, 64)
    updates[k] = static_cast<int64_t>(k);
    if (targets[k] >= 0 && targets[k] < n) expected[static_cast<size_t>(targets[k])] += updates[k];
  }
  ScatterAttrs sc;
  sc.inserted_window_dims = {0};
  sc.scatter_dims_to_operand_dims = {0};
  sc.index_vector_dim = 1;
  sc.update = ScatterUpdate::Add;
  auto out = IndexingRun{OpKind::Scatter, sc,
                         {tensor<int64_t>(DType::I64, {n}, std::vector<int64_t>(static_cast<size_t>(n), 0)),
                          tensor<int64_t>(DType::I64, {static_cast<int64_t>(targets.size()), 1}, targets),
                          tensor<int64_t>(DType::I64, {static_cast<int64_t>(updates.size())}, updates)},
                         DType::I64, {}}();
  REQUIRE(out.ok());
  CHECK(values<int64_t>((*out)[0]) == expected);
}

}  // namespace
}  // namespace tenact::cpu
