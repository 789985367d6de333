// validate_batch (engines/engine.hpp): every malformed BatchWork is refused
// with Internal naming what is wrong, before any kernel runs; and the batch
// runner names a failing op by BatchWork::op_names when given.
#include <catch2/catch.hpp>

#include "tests/engines/cpu/test_engine.hpp"
#include "engines/cpu/cpu_batch_runner.hpp"
#include "engines/engine.hpp"
#include "host_vectors.hpp"

using namespace tenact;
using tenact::testing::f32;
using namespace tenact::cpu;

namespace {

std::shared_ptr<const PreparedOp> plan(OpKind kind, std::vector<int64_t> shape) {
  auto op = std::make_shared<PreparedOp>();
  op->kind = kind;
  op->attrs = NoAttrs{};
  Shape result;
  for (int64_t d : shape) result.push_back(ShapeExtent::exact(DimExpr::constant(d)));
  op->results = {ValueType{DType::F32, std::move(result)}};
  return op;
}

// y = -(x + x) over f32[3]; a region over both ops.
BatchWork valid() {
  BatchWork w;
  w.inputs = {f32({1, 2, 3})};
  w.ops.push_back({plan(OpKind::Add, {3}), {BatchRef::input(0), BatchRef::input(0)}});
  w.ops.push_back({plan(OpKind::Negate, {3}), {BatchRef::op(0)}});
  w.regions.push_back(BatchRegion{0, 2, {BatchRef::op(1)}});
  w.outputs = {BatchRef::op(1)};
  return w;
}

void check_refused(const BatchWork& w, const std::string& what) {
  Status s = validate_batch(w);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code() == ErrorCode::Internal);
  CHECK(s.error().message() == "malformed batch: " + what);
}

}  // namespace

TEST_CASE("a well-formed batch passes and runs", "[batch_validation]") {
  CHECK(validate_batch(valid()).ok());
  auto pool_holder = test_pool(1);
  WorkerPool& pool = *pool_holder;
  auto out = run_batch_on_cpu(valid(), pool, nullptr);
  REQUIRE(out.ok());
  CHECK((*out)[0].data_as<float>()[2] == -6.0f);
}

TEST_CASE("every malformed batch is refused naming the fault", "[batch_validation]") {
  BatchWork w = valid();
  w.ops[0].operands[1] = BatchRef::input(4);
  check_refused(w, "op 0 reads input 4 of 1");

  w = valid();
  w.ops[0].operands[0] = BatchRef::op(1);
  check_refused(w, "op 0 reads op 1, which does not run before it");

  w = valid();
  w.ops[1].operands[0] = BatchRef::op(0, 2);
  check_refused(w, "op 1 reads result 2 of op 0");

  w = valid();
  w.ops[1].op = nullptr;
  check_refused(w, "op 1 has no plan");

  w = valid();
  w.outputs = {BatchRef::op(2)};
  check_refused(w, "an output reads op 2, which does not run before it");

  w = valid();
  w.op_names = {"only one"};
  check_refused(w, "1 op names for 2 ops");

  w = valid();
  w.regions = {BatchRegion{0, 3, {BatchRef::op(1)}}};
  check_refused(w, "region of ops [0, +3)");

  w = valid();
  w.regions = {BatchRegion{0, 1, {BatchRef::op(0)}}, BatchRegion{0, 2, {BatchRef::op(1)}}};
  check_refused(w, "region of ops [0, +2)");

  w = valid();
  w.regions = {BatchRegion{1, 1, {BatchRef::op(0)}}};
  check_refused(w, "a region output outside its ops");

  // The runner refuses it the same way, running nothing.
  auto pool_holder = test_pool(1);
  WorkerPool& pool = *pool_holder;
  auto out = run_batch_on_cpu(w, pool, nullptr);
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().message() == "malformed batch: a region output outside its ops");
}

TEST_CASE("the batch runner names a failing op by its given name", "[batch_validation]") {
  // reshape of f32[3] to f32[2] fails in the kernel (element counts differ).
  BatchWork w;
  w.inputs = {f32({1, 2, 3})};
  w.ops.push_back({plan(OpKind::Reshape, {2}), {BatchRef::input(0)}});
  w.outputs = {BatchRef::op(0)};
  auto pool_holder = test_pool(1);
  WorkerPool& pool = *pool_holder;
  auto unnamed = run_batch_on_cpu(w, pool, nullptr);
  REQUIRE_FALSE(unnamed.ok());
  CHECK_THAT(unnamed.error().message(), Catch::StartsWith("batch op 0 (reshape)"));
  w.op_names = {"op #7 (reshape -> 'r')"};
  auto named = run_batch_on_cpu(w, pool, nullptr);
  REQUIRE_FALSE(named.ok());
  CHECK_THAT(named.error().message(), Catch::StartsWith("op #7 (reshape -> 'r')"));
}
