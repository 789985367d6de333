// The CPU engine's estimate of a batch's work and the inline path it
// guards: a batch a client thread launches with caller_may_run runs on that
// thread when its linear work is at most inline_work_limit; any other batch
// goes to the pool. Expected work figures are counted by hand from the
// estimate's definition (batch_work_estimate.hpp).
#include <catch2/catch.hpp>

#include <future>
#include <thread>

#include "tests/engines/cpu/test_engine.hpp"
#include "engines/cpu/batch_work_estimate.hpp"
#include "engines/cpu/cpu_engine.hpp"

using namespace tenact;
using namespace tenact::cpu;

namespace {

std::shared_ptr<const PreparedOp> op_of(OpKind kind, Shape result_shape, OpAttrs attrs = NoAttrs{}) {
  auto op = std::make_shared<PreparedOp>();
  op->kind = kind;
  op->attrs = std::move(attrs);
  op->results = {ValueType{DType::F32, std::move(result_shape)}};
  return op;
}

HostTensor f32_ramp(int64_t n, float scale) {
  auto t = HostTensor::zeros(DType::F32, {n});
  REQUIRE(t.ok());
  for (int64_t i = 0; i < n; ++i) t->data_as<float>()[i] = scale * static_cast<float>(i % 7 + 1);
  return *t;
}

// e = maximum((x * y + x) - y, x) on f32[n]: four ops, the last the output.
BatchWork four_op_work(int64_t n) {
  BatchWork w;
  w.inputs = {f32_ramp(n, 1.0f), f32_ramp(n, 0.5f)};
  const Shape s = exact_shape({n});
  w.ops.push_back({op_of(OpKind::Multiply, s), {BatchRef::input(0), BatchRef::input(1)}});
  w.ops.push_back({op_of(OpKind::Add, s), {BatchRef::op(0), BatchRef::input(0)}});
  w.ops.push_back({op_of(OpKind::Subtract, s), {BatchRef::op(1), BatchRef::input(1)}});
  w.ops.push_back({op_of(OpKind::Maximum, s), {BatchRef::op(2), BatchRef::input(0)}});
  w.outputs = {BatchRef::op(3)};
  return w;
}

void check_four_op_result(const HostTensor& e, int64_t n) {
  REQUIRE(e.element_count() == n);
  for (int64_t i = 0; i < n; ++i) {
    const float x = static_cast<float>(i % 7 + 1), y = 0.5f * x;
    const float expected = std::max((x * y + x) - y, x);  // exact in f32 for these values
    REQUIRE(e.data_as<float>()[i] == expected);
  }
}

// a . a for a: f32[n, n] with element i = value(i), the caller allowed to
// run it.
BatchWork square_of(int64_t n, float (*value)(int)) {
  auto a = HostTensor::zeros(DType::F32, {n, n});
  REQUIRE(a.ok());
  for (int i = 0; i < n * n; ++i) a->data_as<float>()[i] = value(i);
  BatchWork work;
  work.inputs = {*a, *a};
  DotGeneralAttrs attrs;
  attrs.lhs_contracting_dimensions = {1};
  attrs.rhs_contracting_dimensions = {0};
  work.ops.push_back({op_of(OpKind::DotGeneral, exact_shape({n, n}), attrs), {BatchRef::input(0), BatchRef::input(1)}});
  work.outputs = {BatchRef::op(0)};
  work.caller_may_run = true;
  return work;
}

struct Launched {
  bool before_return = false;  // done ran before launch_batch returned
  std::thread::id thread;
  Result<std::vector<HostTensor>> result = Error{ErrorCode::Internal, "not run"};
};

Launched launch_and_wait(CpuEngine& engine, BatchWork work) {
  auto promise = std::make_shared<std::promise<Launched>>();
  auto future = promise->get_future();
  auto returned = std::make_shared<std::atomic<bool>>(false);
  engine.launch_batch(std::move(work), [promise, returned](Result<std::vector<HostTensor>> r) {
    Launched l;
    l.before_return = !returned->load();
    l.thread = std::this_thread::get_id();
    l.result = std::move(r);
    promise->set_value(std::move(l));
  });
  returned->store(true);
  return future.get();
}

}  // namespace

TEST_CASE("linear work counts every operand and result element", "[batch_estimate]") {
  // Operands 2000 + 2000 + 2000 + 2000, results 4 x 1000.
  CHECK(linear_element_work(four_op_work(1000)) == std::optional<uint64_t>{12000});

  BatchWork w;
  w.inputs = {f32_ramp(200, 1.0f)};
  w.symbols = {{"N", 10}};
  const DimExpr n = DimExpr::symbol("N");
  // reshape to [N, 20] (200 + 200), reduce over axis 1 to [N] (200 + 10),
  // a truncated copy at most N long: its bound counts (10 + 10).
  w.ops.push_back({op_of(OpKind::Reshape, exact_shape({n, DimExpr::constant(20)})), {BatchRef::input(0)}});
  w.ops.push_back({op_of(OpKind::ReduceSum, exact_shape({n})), {BatchRef::op(0)}});
  w.ops.push_back({op_of(OpKind::Negate, Shape{ShapeExtent::upper_bound(n)}), {BatchRef::op(1)}});
  CHECK(linear_element_work(w) == std::optional<uint64_t>{200 + 200 + 200 + 10 + 10 + 10});
}

TEST_CASE("a dot counts its operands, its result and a visit per 4 multiply-adds", "[batch_estimate]") {
  // x: f32[4, 16] . w: f32[16, 32] -> [4, 32]: operands 64 + 512, result
  // 128, multiply-adds 128 x 16 = 2,048 -> 512 visits; then the result
  // . v: f32[32, 10] -> [4, 10]: operands 128 + 320, result 40,
  // multiply-adds 40 x 32 = 1,280 -> 320 visits.
  BatchWork w;
  auto zeros = [](std::vector<int64_t> shape) { return HostTensor::zeros(DType::F32, std::move(shape)).value(); };
  w.inputs = {zeros({4, 16}), zeros({16, 32}), zeros({32, 10})};
  DotGeneralAttrs contract_1_0;
  contract_1_0.lhs_contracting_dimensions = {1};
  contract_1_0.rhs_contracting_dimensions = {0};
  w.ops.push_back({op_of(OpKind::DotGeneral, exact_shape({4, 32}), contract_1_0), {BatchRef::input(0), BatchRef::input(1)}});
  w.ops.push_back({op_of(OpKind::DotGeneral, exact_shape({4, 10}), contract_1_0), {BatchRef::op(0), BatchRef::input(2)}});
  w.outputs = {BatchRef::op(1)};
  CHECK(kMacsPerVisit == 4);
  CHECK(linear_element_work(w) == std::optional<uint64_t>{64 + 512 + 128 + 512 + 128 + 320 + 40 + 320});
  // Contracting over both axes of a symbolic [N, 4] result with itself:
  // N x 4 multiply-adds into a scalar, N = 6.
  BatchWork s;
  s.inputs = {zeros({24})};
  s.symbols = {{"N", 6}};
  const DimExpr n = DimExpr::symbol("N");
  DotGeneralAttrs all;
  all.lhs_contracting_dimensions = {0, 1};
  all.rhs_contracting_dimensions = {0, 1};
  s.ops.push_back({op_of(OpKind::Reshape, exact_shape({n, DimExpr::constant(4)})), {BatchRef::input(0)}});
  s.ops.push_back({op_of(OpKind::DotGeneral, exact_shape(std::vector<DimExpr>{}), all), {BatchRef::op(0), BatchRef::op(0)}});
  CHECK(linear_element_work(s) == std::optional<uint64_t>{24 + 24 + 24 + 24 + 1 + 24 / 4});
}

TEST_CASE("no estimate for a dot without attributes, extensions, unknown or unbound extents, or overflow",
          "[batch_estimate]") {
  BatchWork dot = four_op_work(4);
  dot.ops[3].op = op_of(OpKind::DotGeneral, exact_shape({4}));
  CHECK_FALSE(linear_element_work(dot).has_value());

  BatchWork ext = four_op_work(4);
  ext.ops[0].op = op_of(OpKind::Extension, exact_shape({4}));
  CHECK_FALSE(linear_element_work(ext).has_value());

  BatchWork unknown = four_op_work(4);
  unknown.ops[1].op = op_of(OpKind::Add, Shape{ShapeExtent::unknown()});
  CHECK_FALSE(linear_element_work(unknown).has_value());

  BatchWork unbound = four_op_work(4);
  unbound.ops[1].op = op_of(OpKind::Add, exact_shape({DimExpr::symbol("M")}));
  CHECK_FALSE(linear_element_work(unbound).has_value());

  BatchWork huge = four_op_work(4);
  const DimExpr big = DimExpr::constant(int64_t{1} << 40);
  huge.ops[0].op = op_of(OpKind::Multiply, exact_shape({big, big}));
  CHECK_FALSE(linear_element_work(huge).has_value());
}

TEST_CASE("a small batch the caller may run runs on the caller's thread", "[cpu_engine][inline]") {
  auto engine_holder = test_engine(CpuEngineOptions{2});
  CpuEngine& engine = *engine_holder;
  BatchWork work = four_op_work(1000);
  work.caller_may_run = true;
  Launched l = launch_and_wait(engine, std::move(work));
  CHECK(l.before_return);
  CHECK(l.thread == std::this_thread::get_id());
  REQUIRE(l.result.ok());
  REQUIRE(l.result->size() == 1);
  check_four_op_result((*l.result)[0], 1000);
  CHECK(engine.inline_batches() == 1);
}

TEST_CASE("a small dot the caller may run runs on the caller's thread", "[cpu_engine][inline]") {
  // [[1, 2], [3, 4]]^2 = [[7, 10], [15, 22]]: 8 multiply-adds.
  auto engine_holder = test_engine(CpuEngineOptions{2});
  CpuEngine& engine = *engine_holder;
  Launched l = launch_and_wait(engine, square_of(2, [](int i) { return static_cast<float>(i + 1); }));
  CHECK(l.before_return);
  CHECK(l.thread == std::this_thread::get_id());
  REQUIRE(l.result.ok());
  const float* c = (*l.result)[0].data_as<float>();
  CHECK(c[0] == 7.0f);
  CHECK(c[1] == 10.0f);
  CHECK(c[2] == 15.0f);
  CHECK(c[3] == 22.0f);
  CHECK(engine.inline_batches() == 1);
}

TEST_CASE("other batches go to the pool", "[cpu_engine][inline]") {
  SECTION("the caller did not allow it") {
    auto engine_holder = test_engine(CpuEngineOptions{2});
    CpuEngine& engine = *engine_holder;
    Launched l = launch_and_wait(engine, four_op_work(1000));
    CHECK(l.thread != std::this_thread::get_id());
    REQUIRE(l.result.ok());
    check_four_op_result((*l.result)[0], 1000);
    CHECK(engine.inline_batches() == 0);
  }
  SECTION("the work is over the limit") {
    CpuEngineOptions o;
    o.threads = 2;
    o.inline_work_limit = 11999;  // the batch is 12000 visits
    auto engine_holder = test_engine(o);
    CpuEngine& engine = *engine_holder;
    BatchWork work = four_op_work(1000);
    work.caller_may_run = true;
    Launched l = launch_and_wait(engine, std::move(work));
    CHECK(l.thread != std::this_thread::get_id());
    REQUIRE(l.result.ok());
    check_four_op_result((*l.result)[0], 1000);
    CHECK(engine.inline_batches() == 0);

    BatchWork exact = four_op_work(1000);
    exact.caller_may_run = true;
    CpuEngineOptions at;
    at.threads = 2;
    at.inline_work_limit = 12000;
    auto at_limit_holder = test_engine(at);
    CpuEngine& at_limit = *at_limit_holder;
    CHECK(launch_and_wait(at_limit, std::move(exact)).thread == std::this_thread::get_id());
  }
  SECTION("inlining is off") {
    CpuEngineOptions o;
    o.threads = 2;
    o.inline_work_limit = 0;
    auto engine_holder = test_engine(o);
    CpuEngine& engine = *engine_holder;
    BatchWork work = four_op_work(10);
    work.caller_may_run = true;
    CHECK(launch_and_wait(engine, std::move(work)).thread != std::this_thread::get_id());
    CHECK(engine.inline_batches() == 0);
  }
  SECTION("a dot whose multiply-adds pass the limit") {
    // f32[64, 64] . f32[64, 64]: 262,144 multiply-adds, 65,536 visits of
    // them (plus 3 x 4,096 elements), over the 32,768 of the limit.
    auto engine_holder = test_engine(CpuEngineOptions{2});
    CpuEngine& engine = *engine_holder;
    BatchWork work = square_of(64, [](int) { return 1.0f; });
    REQUIRE(linear_element_work(work) == std::optional<uint64_t>{3 * 4096 + 65536});
    Launched l = launch_and_wait(engine, std::move(work));
    CHECK(l.thread != std::this_thread::get_id());
    REQUIRE(l.result.ok());
    CHECK((*l.result)[0].data_as<float>()[0] == 64.0f);
    CHECK((*l.result)[0].data_as<float>()[4095] == 64.0f);
    CHECK(engine.inline_batches() == 0);
  }
}

TEST_CASE("run_on_caller runs a small batch here and leaves the work as it was", "[cpu_engine][inline]") {
  auto engine_holder = test_engine(CpuEngineOptions{2});
  CpuEngine& engine = *engine_holder;
  BatchWork work = four_op_work(1000);
  work.caller_may_run = true;
  for (int pass = 0; pass < 3; ++pass) {  // the same work, run again: inputs and ops untouched
    auto outcome = engine.run_on_caller(work);
    REQUIRE(outcome.has_value());
    REQUIRE(outcome->ok());
    REQUIRE((*outcome)->size() == 1);
    check_four_op_result((**outcome)[0], 1000);
    CHECK(work.inputs.size() == 2);
    CHECK(work.ops.size() == 4);
  }
  CHECK(engine.inline_batches() == 3);
}

TEST_CASE("run_on_caller keeps what it learnt of a work in its notes, and reads only its own",
          "[cpu_engine][inline]") {
  auto first_holder = test_engine(CpuEngineOptions{2});
  auto second_holder = test_engine(CpuEngineOptions{2});
  CpuEngine& first = *first_holder;
  CpuEngine& second = *second_holder;
  SECTION("a small work: noted, then run again from the notes") {
    BatchWork work = four_op_work(1000);
    work.caller_may_run = true;
    REQUIRE_FALSE(work.caller_notes);
    auto once = first.run_on_caller(work);
    REQUIRE((once.has_value() && once->ok()));
    REQUIRE(work.caller_notes);
    const CallerNotes* noted = work.caller_notes.get();
    CHECK(noted->owner == &first);
    auto again = first.run_on_caller(work);
    REQUIRE((again.has_value() && again->ok()));
    check_four_op_result((**again)[0], 1000);
    CHECK(work.caller_notes.get() == noted);  // not worked out again
    // Another engine does not take the first one's notes as its own.
    auto elsewhere = second.run_on_caller(work);
    REQUIRE((elsewhere.has_value() && elsewhere->ok()));
    check_four_op_result((**elsewhere)[0], 1000);
    CHECK(work.caller_notes->owner == &second);
    CHECK(second.inline_batches() == 1);
  }
  SECTION("a work over the limit: noted, and declined again") {
    BatchWork work = square_of(64, [](int) { return 1.0f; });
    CHECK_FALSE(first.run_on_caller(work).has_value());
    REQUIRE(work.caller_notes);
    CHECK_FALSE(first.run_on_caller(work).has_value());
    CHECK(first.inline_batches() == 0);
  }
  SECTION("a launcher that changes the shapes drops the notes, and the work is judged again") {
    BatchWork work = four_op_work(10);
    work.caller_may_run = true;
    REQUIRE(first.run_on_caller(work).has_value());
    // The same ops over inputs too big to run here (8 visits per element
    // and 4 ops: 40,000 elements are over the 32,768 limit).
    BatchWork big = four_op_work(40000);
    big.caller_may_run = true;
    work.inputs = big.inputs;
    work.ops = big.ops;
    work.caller_notes.reset();
    CHECK_FALSE(first.run_on_caller(work).has_value());
    CHECK(first.inline_batches() == 1);
  }
}

TEST_CASE("run_on_caller declines what launch_batch would not run here", "[cpu_engine][inline]") {
  auto engine_holder = test_engine(CpuEngineOptions{2});
  CpuEngine& engine = *engine_holder;
  SECTION("the caller may not run it") {
    BatchWork work = four_op_work(1000);
    CHECK_FALSE(engine.run_on_caller(work).has_value());
  }
  SECTION("over the work limit") {
    BatchWork work = square_of(64, [](int) { return 1.0f; });
    CHECK_FALSE(engine.run_on_caller(work).has_value());
  }
  SECTION("it waits on an event") {
    BatchWork work = four_op_work(10);
    work.caller_may_run = true;
    work.waits.push_back(Event::create("a test gate"));
    CHECK_FALSE(engine.run_on_caller(work).has_value());
  }
  SECTION("its queue is busy") {
    // A batch on queue 0 that waits on an unsignalled event holds the
    // queue: a batch for queue 0 must go behind it, not run here.
    auto gate = Event::create("a test gate");
    BatchWork first = four_op_work(10);
    first.queue = 0;
    first.waits.push_back(gate);
    std::promise<Result<std::vector<HostTensor>>> first_done;
    engine.launch_batch(std::move(first), [&](Result<std::vector<HostTensor>> r) { first_done.set_value(std::move(r)); });
    BatchWork second = four_op_work(10);
    second.queue = 0;
    second.caller_may_run = true;
    CHECK_FALSE(engine.run_on_caller(second).has_value());
    gate->signal(ok_status());
    auto r = first_done.get_future().get();
    REQUIRE(r.ok());
    check_four_op_result((*r)[0], 10);
    // Idle again once the pool thread has let the queue go (just after the
    // completion ran): then it runs here.
    std::optional<Result<std::vector<HostTensor>>> here;
    for (int i = 0; i < 1000 && !here; ++i) {
      here = engine.run_on_caller(second);
      if (!here) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE(here.has_value());
    REQUIRE(here->ok());
    check_four_op_result((**here)[0], 10);
  }
  CHECK(engine.inline_batches() <= 1);
}
