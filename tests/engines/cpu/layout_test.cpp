// The CPU layout kernels (transpose, reshape, broadcast_in_dim, constant, iota,
// extract_diag, embed_diag, tril, triu) against NumPy fixtures
// (tests/fixtures/gen_cpu_layout.py), bitwise, for every input layout; plus
// symbolic shapes, run-time errors and the large blocked transpose.
//
// This file also holds the fixture harness that indexing_test.cpp uses (one
// test binary): check_fixture_op and the attribute readers below, declared
// in kernel_test_support.hpp.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/engines/cpu/kernel_test_support.hpp"
#include "tests/engines/cpu/test_engine.hpp"
#include "core/tensor_io.hpp"
#include "engines/cpu/kernels/kernel.hpp"
#include "engines/cpu/kernels/layout_kernel_support.hpp"
#include "engines/cpu/kernels/layout_strided_copy.hpp"
#include "util/worker_pool.hpp"

namespace tenact::cpu::kernel_fixtures {

std::vector<int64_t> fixture_ints(const FixtureAttrs& attrs, const std::string& key) {
  auto it = attrs.find(key);
  if (it == attrs.end()) FAIL("fixture attribute '" << key << "' is missing");
  std::vector<int64_t> out;
  std::stringstream ss(it->second);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stoll(item));
  return out;
}

int64_t fixture_int(const FixtureAttrs& attrs, const std::string& key) {
  auto v = fixture_ints(attrs, key);
  REQUIRE(v.size() == 1);
  return v[0];
}

std::vector<DimExpr> fixture_dims(const FixtureAttrs& attrs, const std::string& key) {
  std::vector<DimExpr> out;
  for (int64_t v : fixture_ints(attrs, key)) out.push_back(DimExpr::constant(v));
  return out;
}

// "b:1", "i:-3", "u:18446744073709551615", "f:1.5" / "f:nan" / "f:-inf", "c:1,-2".
Scalar fixture_scalar(const FixtureAttrs& attrs, const std::string& key) {
  auto it = attrs.find(key);
  if (it == attrs.end()) FAIL("fixture attribute '" << key << "' is missing");
  const std::string& text = it->second;
  REQUIRE(text.size() > 2);
  const std::string body = text.substr(2);
  switch (text[0]) {
    case 'b': return Scalar::of_bool(body == "1");
    case 'i': return Scalar::of_int(std::stoll(body));
    case 'u': return Scalar::of_uint(std::stoull(body));
    case 'f': return Scalar::of_float(std::stod(body));
    case 'c': {
      const auto comma = body.find(',');
      return Scalar::of_complex(std::stod(body.substr(0, comma)), std::stod(body.substr(comma + 1)));
    }
    default: FAIL("bad scalar " << text);
  }
  return Scalar{};
}

namespace {

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

struct Case {
  std::string name;
  std::string op;
  size_t inputs = 0;
  FixtureAttrs attrs;
};

std::vector<Case> read_manifest(const std::string& unit) {
  std::ifstream in(fixture_dir(unit) + "manifest.txt");
  if (!in) FAIL("no fixture manifest in " << fixture_dir(unit) << " (run generate_fixtures.py)");
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream ss(line);
    Case c;
    ss >> c.name >> c.op >> c.inputs;
    std::string kv;
    while (ss >> kv) {
      const auto eq = kv.find('=');
      c.attrs[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// Test-side re-layouts of a dense tensor (independent of the kernels): the
// same logical values stored column-major, reversed (negative strides), or
// with a gap after every element (filled with 0xAB bytes that must never be
// read).
enum class Storage { Dense, ColumnMajor, Reversed, Gapped };

const char* storage_name(Storage s) {
  switch (s) {
    case Storage::Dense: return "dense";
    case Storage::ColumnMajor: return "column-major";
    case Storage::Reversed: return "reversed";
    case Storage::Gapped: return "gapped";
  }
  return "?";
}

HostTensor restride(const HostTensor& dense, Storage storage) {
  const auto& shape = dense.shape();
  const int64_t n = dense.element_count();
  if (storage == Storage::Dense || shape.empty() || n == 0) return dense;
  REQUIRE(dense.is_contiguous());
  const size_t r = shape.size();
  const size_t elem = size_of(dense.dtype());
  std::vector<int64_t> rm(r, 1);
  for (size_t d = r - 1; d > 0; --d) rm[d - 1] = rm[d] * shape[d];
  std::vector<int64_t> strides(r);
  int64_t offset = 0;
  int64_t capacity = n;
  switch (storage) {
    case Storage::ColumnMajor: {
      int64_t acc = 1;
      for (size_t d = 0; d < r; ++d) {
        strides[d] = acc;
        acc *= shape[d];
      }
      break;
    }
    case Storage::Reversed:
      for (size_t d = 0; d < r; ++d) strides[d] = -rm[d];
      offset = n - 1;
      break;
    case Storage::Gapped:
      for (size_t d = 0; d < r; ++d) strides[d] = 2 * rm[d];
      offset = 1;
      capacity = 2 * n + 1;
      break;
    case Storage::Dense: break;
  }
  auto buffer = Buffer::allocate(static_cast<size_t>(capacity) * elem);
  REQUIRE(buffer.ok());
  std::memset((*buffer)->data(), 0xAB, (*buffer)->size());
  for (int64_t k = 0; k < n; ++k) {
    int64_t rest = k;
    int64_t pos = offset;
    for (size_t d = 0; d < r; ++d) {
      pos += (rest / rm[d]) * strides[d];
      rest %= rm[d];
    }
    std::memcpy((*buffer)->data() + pos * static_cast<int64_t>(elem),
                dense.data() + k * static_cast<int64_t>(elem), elem);
  }
  auto view = HostTensor::view(*buffer, dense.dtype(), shape, strides, offset);
  REQUIRE(view.ok());
  return *view;
}

Result<std::vector<HostTensor>> run_family(const KernelCall& call) {
  return family_of(call.kind) == OpFamily::Layout ? run_layout(call) : run_indexing(call);
}

}  // namespace

/// Runs every fixture case of `op` in `unit`: each input in four storages
/// (dense, column-major, reversed, gapped), serially and on a two-thread
/// pool; the result must be dense row-major and bitwise equal to NumPy's.
/// The builder receives the case's attributes plus "$dtype" (the expected
/// result dtype) and "$dense" (the path of NAME.dense.npy when present).
void check_fixture_op(const std::string& unit, const std::string& op, const AttrsBuilder& build) {
  static auto pool_holder = test_pool(2);
  static WorkerPool& pool = *pool_holder;
  const auto kind = parse_op_kind(op);
  REQUIRE(kind.has_value());
  int cases = 0;
  for (const Case& c : read_manifest(unit)) {
    if (c.op != op) continue;
    ++cases;
    INFO("fixture case " << c.name);
    const std::string base = fixture_dir(unit) + c.name;
    const HostTensor expected = load(base + ".out.npy");
    FixtureAttrs attrs = c.attrs;
    attrs["$dtype"] = std::string(to_string(expected.dtype()));
    if (file_exists(base + ".dense.npy")) attrs["$dense"] = base + ".dense.npy";
    const OpAttrs op_attrs = build(attrs);
    std::vector<HostTensor> dense_inputs;
    std::vector<bool> is_view;
    for (size_t i = 0; i < c.inputs; ++i) {
      const std::string key = std::to_string(i);
      if (c.attrs.count("bshape" + key)) {
        const HostTensor b = load(base + ".in" + key + ".base.npy");
        dense_inputs.push_back(
            b.broadcast_view(fixture_ints(c.attrs, "bshape" + key), fixture_ints(c.attrs, "bdims" + key)));
        is_view.push_back(true);
      } else {
        dense_inputs.push_back(load(base + ".in" + key + ".npy"));
        is_view.push_back(false);
      }
    }
    std::vector<DimExpr> out_dims;
    for (int64_t d : expected.shape()) out_dims.push_back(DimExpr::constant(d));
    const std::vector<ValueType> result_types{ValueType{expected.dtype(), exact_shape(out_dims)}};
    const SymbolBindings symbols;
    for (Storage storage :
         {Storage::Dense, Storage::ColumnMajor, Storage::Reversed, Storage::Gapped}) {
      std::vector<HostTensor> inputs;
      for (size_t i = 0; i < dense_inputs.size(); ++i)
        inputs.push_back(is_view[i] ? dense_inputs[i] : restride(dense_inputs[i], storage));
      for (WorkerPool* p : {static_cast<WorkerPool*>(nullptr), &pool}) {
        INFO("inputs " << storage_name(storage) << (p ? ", pool of 2" : ", serial"));
        KernelCall call{*kind, op_attrs, inputs, result_types, symbols, p};
        auto result = run_family(call);
        if (!result.ok()) FAIL("kernel error: " << result.error().to_string());
        REQUIRE(result->size() == 1);
        const HostTensor& out = (*result)[0];
        CHECK(out.is_contiguous());
        CHECK(out.offset() == 0);
        CHECK(out.bitwise_equal(expected));
        for (size_t i = 0; i < inputs.size(); ++i) CHECK(inputs[i].bitwise_equal(dense_inputs[i]));
      }
    }
  }
  CHECK(cases > 0);
}

}  // namespace tenact::cpu::kernel_fixtures

namespace tenact::cpu {
namespace {

using namespace kernel_fixtures;

const std::string kLayoutUnit = "cpu_layout";

TEST_CASE("transpose matches NumPy for every dtype, permutation and input layout", "[layout]") {
  check_fixture_op(kLayoutUnit, "transpose", [](const FixtureAttrs& a) -> OpAttrs {
    TransposeAttrs t;
    t.permutation = fixture_ints(a, "permutation");
    return t;
  });
}

TEST_CASE("reshape matches NumPy, including rank 0 and empty shapes", "[layout]") {
  check_fixture_op(kLayoutUnit, "reshape", [](const FixtureAttrs& a) -> OpAttrs {
    ReshapeAttrs t;
    t.shape = fixture_dims(a, "shape");
    return t;
  });
}

TEST_CASE("broadcast_in_dim matches NumPy, dimensions in any order", "[layout]") {
  check_fixture_op(kLayoutUnit, "broadcast_in_dim", [](const FixtureAttrs& a) -> OpAttrs {
    BroadcastInDimAttrs t;
    t.shape = fixture_dims(a, "shape");
    t.broadcast_dimensions = fixture_ints(a, "dims");
    return t;
  });
}

TEST_CASE("constant fills a converted scalar or copies a dense value", "[layout]") {
  check_fixture_op(kLayoutUnit, "constant", [](const FixtureAttrs& a) -> OpAttrs {
    ConstantAttrs t;
    t.dtype = *parse_dtype(a.at("$dtype"));
    t.shape = fixture_dims(a, "shape");
    if (a.count("$dense")) {
      auto dense = read_tensor_file(a.at("$dense"));
      REQUIRE(dense.ok());
      t.dense = *dense;
    } else {
      t.splat = fixture_scalar(a, "splat");
    }
    return t;
  });
}

TEST_CASE("iota counts along its axis: integers wrap, floats round once", "[layout]") {
  check_fixture_op(kLayoutUnit, "iota", [](const FixtureAttrs& a) -> OpAttrs {
    IotaAttrs t;
    t.dtype = *parse_dtype(a.at("$dtype"));
    t.shape = fixture_dims(a, "shape");
    t.iota_dimension = fixture_int(a, "dim");
    return t;
  });
}

TEST_CASE("extract_diag and embed_diag match NumPy", "[layout]") {
  auto none = [](const FixtureAttrs&) -> OpAttrs { return NoAttrs{}; };
  check_fixture_op(kLayoutUnit, "extract_diag", none);
  check_fixture_op(kLayoutUnit, "embed_diag", none);
}

TEST_CASE("tril and triu keep their triangle for any k, square or not", "[layout]") {
  auto triangle = [](const FixtureAttrs& a) -> OpAttrs {
    TriangleAttrs t;
    t.k = fixture_int(a, "k");
    return t;
  };
  check_fixture_op(kLayoutUnit, "tril", triangle);
  check_fixture_op(kLayoutUnit, "triu", triangle);
}

// -- hand-checked cases --------------------------------------------------------------

struct LayoutRun {
  OpKind kind;
  OpAttrs attrs;
  std::vector<HostTensor> inputs;
  DType dtype;
  SymbolBindings symbols;
  WorkerPool* pool = nullptr;

  Result<std::vector<HostTensor>> operator()() const {
    const std::vector<ValueType> types{ValueType{dtype, {}}};
    KernelCall call{kind, attrs, inputs, types, symbols, pool};
    return run_layout(call);
  }
};

HostTensor f32_tensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  auto t = HostTensor::zeros(DType::F32, std::move(shape));
  REQUIRE(t.ok());
  REQUIRE(static_cast<size_t>(t->element_count()) == values.size());
  if (!values.empty()) std::memcpy(t->data(), values.data(), values.size() * sizeof(float));
  return *t;
}

std::vector<float> f32_values(const HostTensor& t) {
  std::vector<float> v(static_cast<size_t>(t.element_count()));
  REQUIRE(t.is_contiguous());
  if (!v.empty()) std::memcpy(v.data(), t.data(), v.size() * sizeof(float));
  return v;
}

TEST_CASE("constant and iota evaluate symbolic shapes against the call's symbols", "[layout]") {
  ConstantAttrs c;
  c.dtype = DType::F32;
  c.shape = {DimExpr::symbol("B"), DimExpr::constant(2)};
  c.splat = Scalar::of_float(2.5);
  auto out = LayoutRun{OpKind::Constant, c, {}, DType::F32, {{"B", 3}}}();
  REQUIRE(out.ok());
  CHECK((*out)[0].shape() == std::vector<int64_t>{3, 2});
  CHECK(f32_values((*out)[0]) == std::vector<float>(6, 2.5f));

  IotaAttrs i;
  i.dtype = DType::F32;
  i.shape = {DimExpr::symbol("T") + DimExpr::constant(1)};
  auto iota = LayoutRun{OpKind::Iota, i, {}, DType::F32, {{"T", 3}}}();
  REQUIRE(iota.ok());
  CHECK(f32_values((*iota)[0]) == std::vector<float>{0, 1, 2, 3});

  auto unbound = LayoutRun{OpKind::Iota, i, {}, DType::F32, {}}();
  REQUIRE_FALSE(unbound.ok());
  CHECK(unbound.error().code() == ErrorCode::UnboundSymbol);
}

TEST_CASE("reshape and broadcast_in_dim take symbolic target shapes", "[layout]") {
  const HostTensor x = f32_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  ReshapeAttrs r;
  r.shape = {DimExpr::symbol("N") * DimExpr::constant(2)};
  auto flat = LayoutRun{OpKind::Reshape, r, {x}, DType::F32, {{"N", 3}}}();
  REQUIRE(flat.ok());
  CHECK(f32_values((*flat)[0]) == std::vector<float>{1, 2, 3, 4, 5, 6});

  BroadcastInDimAttrs b;
  b.shape = {DimExpr::symbol("B"), DimExpr::constant(3), DimExpr::constant(2)};
  b.broadcast_dimensions = {2, 1};  // a transpose and a broadcast at once
  auto wide = LayoutRun{OpKind::BroadcastInDim, b, {x}, DType::F32, {{"B", 2}}}();
  REQUIRE(wide.ok());
  CHECK((*wide)[0].shape() == std::vector<int64_t>{2, 3, 2});
  CHECK(f32_values((*wide)[0]) ==
        std::vector<float>{1, 4, 2, 5, 3, 6, 1, 4, 2, 5, 3, 6});
}

TEST_CASE("broadcast_in_dim keeps its shape and copy plan in a KernelKeep, per operand layout", "[layout][keep]") {
  // b = [10, 20, 30] broadcast to [2, 3] along axis 1: [[10, 20, 30], [10, 20, 30]].
  const HostTensor b = f32_tensor({3}, {10, 20, 30});
  // The same values every other element of a buffer: shape [3], strides [2].
  const HostTensor spaced_storage = f32_tensor({6}, {10, -1, 20, -1, 30, -1});
  auto spaced = HostTensor::view(spaced_storage.buffer(), DType::F32, {3}, {2}, 0);
  REQUIRE(spaced.ok());
  BroadcastInDimAttrs attrs;
  attrs.shape = {DimExpr::constant(2), DimExpr::constant(3)};
  attrs.broadcast_dimensions = {1};
  const OpAttrs op_attrs = attrs;
  const std::vector<ValueType> types{ValueType{DType::F32, {}}};
  const SymbolBindings symbols;
  auto pool = WorkerPool::create(2);
  REQUIRE(pool.ok());
  KernelKeep keep;
  auto broadcast = [&](const HostTensor& x, WorkerPool* with) {
    const std::vector<HostTensor> inputs{x};
    KernelCall call{OpKind::BroadcastInDim, op_attrs, inputs, types, symbols, with};
    call.keep = &keep;
    auto out = run_layout(call);
    REQUIRE(out.ok());
    CHECK((*out)[0].shape() == std::vector<int64_t>{2, 3});
    CHECK(f32_values((*out)[0]) == std::vector<float>{10, 20, 30, 10, 20, 30});
  };
  broadcast(b, nullptr);
  REQUIRE(keep.kept);
  const void* first = keep.kept.get();
  broadcast(b, nullptr);
  CHECK(keep.kept.get() == first);  // the same operand layout: the kept plan
  broadcast(*spaced, nullptr);       // other strides: planned again
  const void* second = keep.kept.get();
  CHECK(second != first);
  broadcast(*spaced, pool->get());   // a pool (rows may split): planned again
  CHECK(keep.kept.get() != second);
  broadcast(b, pool->get());
}

TEST_CASE("layout kernels report run-time mismatches as errors", "[layout]") {
  const HostTensor x = f32_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  ReshapeAttrs r;
  r.shape = {DimExpr::symbol("N")};
  auto wrong_count = LayoutRun{OpKind::Reshape, r, {x}, DType::F32, {{"N", 5}}}();
  REQUIRE_FALSE(wrong_count.ok());
  CHECK(wrong_count.error().code() == ErrorCode::InputMismatch);
  CHECK(wrong_count.error().message().find("reshape") != std::string::npos);

  BroadcastInDimAttrs b;
  b.shape = {DimExpr::constant(4), DimExpr::constant(3)};
  b.broadcast_dimensions = {1, 0};  // operand axis 0 (2) onto result axis 1 (3)
  auto bad_broadcast = LayoutRun{OpKind::BroadcastInDim, b, {x}, DType::F32, {}}();
  REQUIRE_FALSE(bad_broadcast.ok());
  CHECK(bad_broadcast.error().code() == ErrorCode::InputMismatch);

  auto not_square = LayoutRun{OpKind::ExtractDiag, NoAttrs{}, {x}, DType::F32, {}}();
  REQUIRE_FALSE(not_square.ok());
  CHECK(not_square.error().code() == ErrorCode::InputMismatch);

  TransposeAttrs t;
  t.permutation = {0, 0};
  auto bad_perm = LayoutRun{OpKind::Transpose, t, {x}, DType::F32, {}}();
  REQUIRE_FALSE(bad_perm.ok());
  CHECK(bad_perm.error().code() == ErrorCode::InvalidAttribute);

  IotaAttrs i;
  i.dtype = DType::Bool;
  i.shape = {DimExpr::constant(2)};
  auto bool_iota = LayoutRun{OpKind::Iota, i, {}, DType::Bool, {}}();
  REQUIRE_FALSE(bool_iota.ok());
  CHECK(bool_iota.error().code() == ErrorCode::TypeMismatch);

  ConstantAttrs c;
  c.dtype = DType::F32;
  auto no_value = LayoutRun{OpKind::Constant, c, {}, DType::F32, {}}();
  REQUIRE_FALSE(no_value.ok());
  CHECK(no_value.error().code() == ErrorCode::InvalidAttribute);

  ConstantAttrs huge;
  huge.dtype = DType::F64;
  huge.shape = {DimExpr::constant(int64_t{1} << 40), DimExpr::constant(int64_t{1} << 20)};
  huge.splat = Scalar::of_float(0);
  auto too_big = LayoutRun{OpKind::Constant, huge, {}, DType::F64, {}}();
  REQUIRE_FALSE(too_big.ok());

  auto wrong_arity = LayoutRun{OpKind::Transpose, t, {x, x}, DType::F32, {}}();
  REQUIRE_FALSE(wrong_arity.ok());
  CHECK(wrong_arity.error().code() == ErrorCode::InputMismatch);
}

TEST_CASE("check_broadcast_operand: extents equal or 1 on distinct mapped axes, else an error naming the axis",
          "[layout]") {
  using support::check_broadcast_operand;
  using V = std::vector<int64_t>;
  CHECK(check_broadcast_operand(V{3, 1}, V{2, 3, 4}, V{1, 2}).ok());  // extent 1 onto 4
  CHECK(check_broadcast_operand(V{4, 3}, V{3, 4}, V{1, 0}).ok());     // transposing map
  CHECK(check_broadcast_operand(V{}, V{5, 2}, V{}).ok());             // rank 0 onto anything

  auto wrong_extent = check_broadcast_operand(V{7}, V{1000}, V{0});
  REQUIRE_FALSE(wrong_extent.ok());
  CHECK(wrong_extent.error().code() == ErrorCode::InputMismatch);
  CHECK(wrong_extent.error().message() == "operand axis 0 of extent 7 cannot broadcast to result axis 0 of extent 1000");
  auto second_axis = check_broadcast_operand(V{2, 3}, V{2, 4}, V{0, 1});
  REQUIRE_FALSE(second_axis.ok());
  CHECK(second_axis.error().message() == "operand axis 1 of extent 3 cannot broadcast to result axis 1 of extent 4");
  for (const V& dims : {V{0, 0}, V{0, 2}, V{-1, 1}, V{0}, V{0, 1, 1}}) {
    auto bad_dims = check_broadcast_operand(V{2, 3}, V{2, 3}, dims);
    REQUIRE_FALSE(bad_dims.ok());
    CHECK(bad_dims.error().code() == ErrorCode::InvalidAttribute);
    CHECK_THAT(bad_dims.error().message(), Catch::Contains("do not map the operand's 2 axes to distinct axes of the "
                                                           "result [2, 3]"));
  }
}

// Every element of out = transpose(in) by formula: in[i, j] holds the bits
// i * cols + j.
void check_transposed_u32(const HostTensor& out, int64_t rows, int64_t cols) {
  REQUIRE(out.shape() == std::vector<int64_t>{cols, rows});
  const auto* o = out.data_as<uint32_t>();
  int64_t wrong = 0;
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i)
      wrong += o[j * rows + i] != static_cast<uint32_t>(i * cols + j);
  CHECK(wrong == 0);
}

HostTensor counting_f32(int64_t rows, int64_t cols) {
  auto t = HostTensor::zeros(DType::F32, {rows, cols});
  REQUIRE(t.ok());
  auto* p = t->data_as<uint32_t>();
  for (int64_t k = 0; k < rows * cols; ++k) p[k] = static_cast<uint32_t>(k);
  return *t;
}

TEST_CASE("a large transpose split over the pool is exact, tile edges included", "[layout]") {
  auto pool_holder = test_pool(2);
  WorkerPool& pool = *pool_holder;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1000, 1037}, {3, 70001}, {513, 2}}) {
    INFO(rows << " x " << cols);
    const HostTensor x = counting_f32(rows, cols);
    TransposeAttrs t;
    t.permutation = {1, 0};
    for (WorkerPool* p : {static_cast<WorkerPool*>(nullptr), &pool}) {
      auto out = LayoutRun{OpKind::Transpose, t, {x}, DType::F32, {}, p}();
      REQUIRE(out.ok());
      check_transposed_u32((*out)[0], rows, cols);
    }
  }
}

// A figure, not a unit test (hidden: run with "[.perf]"). The copy is timed
// on its own and as the whole kernel call, whose output allocation
// (Buffer::allocate zero-fills, faulting in 4 KiB pages) the kernel does not
// control.
TEST_CASE("transpose of 4096 x 4096 f32 moves 5 GB/s or more", "[layout][.perf]") {
  auto pool_holder = test_pool(0);
  WorkerPool& pool = *pool_holder;
  const int64_t n = 4096;
  const HostTensor x = counting_f32(n, n);
  auto y = HostTensor::zeros(DType::F32, {n, n});
  REQUIRE(y.ok());
  const std::vector<int64_t> swap{1, 0};
  TransposeAttrs t;
  t.permutation = swap;
  LayoutRun run{OpKind::Transpose, t, {x}, DType::F32, {}, &pool};
  auto seconds = [](auto&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  double copy = 1e9;
  double call = 1e9;
  for (int k = 0; k < 5; ++k) {
    copy = std::min(copy, seconds([&] { copy_to_dense(x.transposed(swap), y->data(), &pool); }));
    call = std::min(call, seconds([&] { REQUIRE(run().ok()); }));
  }
  check_transposed_u32(*y, n, n);
  const double bytes = static_cast<double>(n * n * 4);
  WARN("transpose 4096x4096 f32 on " << pool.thread_count() << " threads: copy "
                                     << copy * 1e3 << " ms (" << bytes / copy / 1e9
                                     << " GB/s), kernel call with allocation " << call * 1e3
                                     << " ms (" << bytes / call / 1e9 << " GB/s)");
  CHECK(bytes / copy / 1e9 >= 5.0);
}

}  // namespace
}  // namespace tenact::cpu
