// The CPU engine behind the engine interface, and the reference program
// runner (fusion, signature checks, errors naming the op).
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <condition_variable>
#include <future>
#include <limits>
#include <mutex>
#include <thread>

#include "tests/engines/cpu/test_engine.hpp"
#include "core/builder.hpp"
#include "core/program_json.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "reference/cpu_reference_runner.hpp"
#include "host_vectors.hpp"

using namespace tenact;
using tenact::testing::f32;
using namespace tenact::cpu;

namespace {
OpPrepareRequest add_request(const std::string& engine = "cpu", const std::string& storage = "host") {
  OpPrepareRequest r;
  r.kind = OpKind::Add;
  r.attrs = NoAttrs{};
  r.operands = {ValueType{DType::F32, exact_shape({3})}, ValueType{DType::F32, exact_shape({3})}};
  r.results = {ValueType{DType::F32, exact_shape({3})}};
  r.binding.endpoint = Endpoint{engine, storage};
  r.binding.runtime_id = 7;
  r.binding.epoch = 3;
  r.binding.engine = EngineIdentity{engine, "x86_64-host", 1, 42};
  r.specialization.inputs = {InputRequirement{true, true, {0}, PlacementSpecialization::None,
                                              LayoutSpecialization::None, std::nullopt}};
  InputProjection x;
  x.dtype = DType::F32;
  x.rank = 1;
  x.concrete_dims = {ConcreteDim{0, 3}};
  r.projection.inputs = {x};
  return r;
}

}  // namespace

TEST_CASE("the cpu engine declares its identity and capabilities", "[cpu_engine]") {
  auto engine_holder = test_engine(CpuEngineOptions{2});
  CpuEngine& engine = *engine_holder;
  CHECK(engine.identity().id == "cpu");
  CHECK(engine.capabilities().executable);
  CHECK(engine.capabilities().default_storage_class == "host");
  for (OpFamily f : {OpFamily::Elementwise, OpFamily::Reduction, OpFamily::Indexing, OpFamily::Dot, OpFamily::Layout})
    CHECK(engine.capabilities().serves(f));
  CHECK_FALSE(engine.capabilities().serves(OpFamily::Extension));
  CHECK(engine.pool().thread_count() == 2);
}

TEST_CASE("prepare echoes exactly the binding and specialization asked for", "[cpu_engine]") {
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  const OpPrepareRequest req = add_request();
  PrepareAnswer answer = engine.prepare(req);
  auto* prepared = std::get_if<std::shared_ptr<const PreparedOp>>(&answer);
  REQUIRE(prepared);
  CHECK((*prepared)->binding == req.binding);
  CHECK((*prepared)->specialization == req.specialization);
  CHECK((*prepared)->projection == req.projection);
  CHECK((*prepared)->kind == OpKind::Add);
}

TEST_CASE("prepare answers Unsupported for a foreign endpoint or an extension", "[cpu_engine]") {
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  auto answer = engine.prepare(add_request("cuda:0", "device"));
  auto* u = std::get_if<Unsupported>(&answer);
  REQUIRE(u);
  CHECK_THAT(u->reason, Catch::Contains("cuda:0/device"));
  OpPrepareRequest ext = add_request();
  ext.kind = OpKind::Extension;
  ext.attrs = ExtensionAttrs{"tenact.softmax", "{}"};
  answer = engine.prepare(ext);
  u = std::get_if<Unsupported>(&answer);
  REQUIRE(u);
  CHECK_THAT(u->reason, Catch::Contains("tenact.softmax"));
}

TEST_CASE("allocate serves the host storage class only", "[cpu_engine]") {
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  auto t = engine.allocate("host", DType::I32, {2, 3});
  REQUIRE(t.ok());
  CHECK(t->shape() == std::vector<int64_t>{2, 3});
  CHECK(t->data_as<int32_t>()[5] == 0);
  auto bad = engine.allocate("device", DType::I32, {2});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code() == ErrorCode::Unsupported);
}

TEST_CASE("launch runs on an engine thread and completes exactly once", "[cpu_engine]") {
  auto engine_holder = test_engine(CpuEngineOptions{2});
  CpuEngine& engine = *engine_holder;
  auto prepared = std::get<std::shared_ptr<const PreparedOp>>(engine.prepare(add_request()));
  std::mutex m;
  std::condition_variable cv;
  int completions = 0;
  std::thread::id ran_on;
  std::optional<Result<std::vector<HostTensor>>> result;
  engine.launch(prepared, {f32({1, 2, 3}), f32({10, 20, 30})}, {}, [&](Result<std::vector<HostTensor>> r) {
    std::lock_guard lock{m};
    ++completions;
    ran_on = std::this_thread::get_id();
    result.emplace(std::move(r));
    cv.notify_all();
  });
  std::unique_lock lock{m};
  REQUIRE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return completions > 0; }));
  CHECK(completions == 1);
  CHECK(ran_on != std::this_thread::get_id());
  REQUIRE(result->ok());
  const float* y = (**result)[0].data_as<float>();
  CHECK(y[0] == 11.0f);
  CHECK(y[1] == 22.0f);
  CHECK(y[2] == 33.0f);
}

TEST_CASE("a launch that fails reports its error through the completion", "[cpu_engine]") {
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  auto prepared = std::get<std::shared_ptr<const PreparedOp>>(engine.prepare(add_request()));
  std::promise<Result<std::vector<HostTensor>>> done;
  auto fut = done.get_future();
  // Operands of different lengths: only run time can tell.
  engine.launch(prepared, {f32({1, 2, 3}), f32({1, 2})}, {},
                [&](Result<std::vector<HostTensor>> r) { done.set_value(std::move(r)); });
  REQUIRE(fut.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  auto r = fut.get();
  CHECK_FALSE(r.ok());
}

TEST_CASE("fused and op-by-op runs give the same bits and fusion is counted", "[cpu_engine]") {
  // y = tanh(a*b + c) * half + a, with the constant first so the chain is unbroken.
  ProgramBuilder b{"chain"};
  auto a = b.input("a", DType::F32, {"N"});
  auto bb = b.input("b", DType::F32, {"N"});
  auto c = b.input("c", DType::F32, {"N"});
  auto half = b.constant(DType::F32, {"N"}, Scalar::of_float(0.5));
  auto t = b.unary(OpKind::Tanh, b.binary(OpKind::Add, b.binary(OpKind::Multiply, a, bb), c));
  b.output(b.binary(OpKind::Add, b.binary(OpKind::Multiply, t, half), a, "y"));
  auto program = b.build();
  REQUIRE(program.ok());
  const int64_t n = 100003;
  std::vector<HostTensor> inputs;
  for (int k = 0; k < 3; ++k) {
    auto x = HostTensor::zeros(DType::F32, {n});
    REQUIRE(x.ok());
    for (int64_t i = 0; i < n; ++i) x->data_as<float>()[i] = static_cast<float>((i * (k + 3)) % 97) / 13.0f - 3.0f;
    inputs.push_back(*x);
  }
  auto engine_holder = test_engine(CpuEngineOptions{2});
  CpuEngine& engine = *engine_holder;
  CpuRunStats fused_stats, plain_stats;
  auto fused = run_program_on_cpu(*program, inputs, engine, CpuRunOptions{true}, &fused_stats);
  auto plain = run_program_on_cpu(*program, inputs, engine, CpuRunOptions{false}, &plain_stats);
  REQUIRE(fused.ok());
  REQUIRE(plain.ok());
  CHECK((*fused)[0].bitwise_equal((*plain)[0]));
  CHECK(fused_stats.regions_run == 1);
  CHECK(fused_stats.ops_fused == 5);
  CHECK(fused_stats.kernels_run == 0);  // the splat constant is a rank-0 region input
  CHECK(plain_stats.regions_run == 0);
  CHECK(plain_stats.kernels_run == 6);
  CHECK(engine.fused_counters().regions_run.load() == 1);
  CHECK(engine.fused_counters().ops_fused.load() == 5);
  // Spot-check against a hand evaluation in double, rounded per op to f32.
  const float* y = (*fused)[0].data_as<float>();
  for (int64_t i : {int64_t{0}, int64_t{17}, n - 1}) {
    float av = inputs[0].data_as<float>()[i], bv = inputs[1].data_as<float>()[i], cv = inputs[2].data_as<float>()[i];
    float s = av * bv;
    s = s + cv;
    float th = static_cast<float>(std::tanh(static_cast<double>(s)));
    float expected = th * 0.5f + av;
    CHECK(std::fabs(y[i] - expected) <= 4 * std::numeric_limits<float>::epsilon() * (std::fabs(expected) + 1));
  }
}

TEST_CASE("splat constants in a region are materialized only when read outside it", "[cpu_engine]") {
  auto p = load_program(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "i32", "shape": ["N"]}],
    "ops": [{"op": "constant", "out": "two", "dtype": "i32", "shape": ["N"], "value": 2},
            {"op": "multiply", "in": ["x", "two"], "out": "y"},
            {"op": "constant", "out": "one", "dtype": "i32", "shape": ["N"], "value": 1},
            {"op": "negate", "in": ["one"], "out": "m"},
            {"op": "add", "in": ["y", "m"], "out": "z"}],
    "outputs": ["z", "two"]})");
  REQUIRE(p.ok());
  auto x = HostTensor::zeros(DType::I32, {3});
  REQUIRE(x.ok());
  for (int i = 0; i < 3; ++i) x->data_as<int32_t>()[i] = 10 * (i + 1);
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  CpuRunStats stats;
  auto r = run_program_on_cpu(*p, std::vector<HostTensor>{*x}, engine, CpuRunOptions{true}, &stats);
  REQUIRE(r.ok());
  // z = 2x - 1; `two` is a program output, so it is materialized in full.
  CHECK((*r)[0].data_as<int32_t>()[0] == 19);
  CHECK((*r)[0].data_as<int32_t>()[2] == 59);
  REQUIRE((*r)[1].shape() == std::vector<int64_t>{3});
  CHECK((*r)[1].data_as<int32_t>()[2] == 2);
  CHECK(stats.regions_run == 1);
  CHECK(stats.ops_fused == 3);
  CHECK(stats.kernels_run == 1);  // `two` only
}

TEST_CASE("a region whose only inputs are splat constants still has the full shape", "[cpu_engine]") {
  auto p = load_program(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}],
    "ops": [{"op": "constant", "out": "c", "dtype": "f32", "shape": ["N"], "value": 3},
            {"op": "negate", "in": ["c"], "out": "n"},
            {"op": "abs", "in": ["n"], "out": "y"}],
    "outputs": ["y"]})");
  REQUIRE(p.ok());
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  auto r = run_program_on_cpu(*p, std::vector<HostTensor>{f32({0, 0, 0, 0})}, engine);
  REQUIRE(r.ok());
  REQUIRE((*r)[0].shape() == std::vector<int64_t>{4});
  CHECK((*r)[0].data_as<float>()[3] == 3.0f);
}

TEST_CASE("the runner checks inputs first and names the op that fails", "[cpu_engine]") {
  auto p = load_program(R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}],
    "guards": ["N <= 4"], "ops": [{"op": "negate", "in": ["x"], "out": "y"}], "outputs": ["y"]})");
  REQUIRE(p.ok());
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  auto r = run_program_on_cpu(*p, std::vector<HostTensor>{f32({1, 2, 3, 4, 5})}, engine);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::GuardViolated);
  CHECK_THAT(r.error().message(), Catch::Contains("evaluates to 5 <= 4"));
  auto ok = run_program_on_cpu(*p, std::vector<HostTensor>{f32({1, -2})}, engine);
  REQUIRE(ok.ok());
  CHECK((*ok)[0].data_as<float>()[1] == 2.0f);

  // pad_to_match fails at run time when x is longer than `like` (spec).
  auto pad = load_program(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}, {"name": "l", "dtype": "f32", "shape": ["M"]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "n"}, {"op": "pad_to_match", "in": ["n", "l"], "out": "y"}],
    "outputs": ["y"]})");
  REQUIRE(pad.ok());
  auto failed = run_program_on_cpu(*pad, std::vector<HostTensor>{f32({1, 2, 3}), f32({0, 0})}, engine);
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.error().message(), Catch::StartsWith("op #1 (pad_to_match -> 'y')"));
}

TEST_CASE("an engine whose pool cannot start is an error value naming the engine", "[cpu_engine]") {
  auto engine = CpuEngine::create(CpuEngineOptions{WorkerPool::kMaxThreads + 1});
  REQUIRE_FALSE(engine.ok());
  CHECK(engine.error().code() == ErrorCode::LimitExceeded);
  CHECK(engine.error().message() == "CPU engine 'cpu': a worker pool of 1025 threads is over the limit of 1024");
}

TEST_CASE("complex -> bool drops the imaginary part, and a bool pad_to_match pads false, end to end",
          "[cpu_engine]") {
  auto p = load_program(R"({"format": "tenact.program/1",
    "inputs": [{"name": "z", "dtype": "c64", "shape": ["N"]}, {"name": "l", "dtype": "f32", "shape": ["M"]}],
    "ops": [{"op": "convert", "in": ["z"], "out": "b", "dtype": "bool"},
            {"op": "not", "in": ["b"], "out": "nb"},
            {"op": "pad_to_match", "in": ["b", "l"], "out": "p"},
            {"op": "pad_to_match", "in": ["b", "l"], "out": "t", "value": true}],
    "outputs": ["nb", "p", "t"]})");
  INFO((p.ok() ? std::string("ok") : p.error().to_string()));
  REQUIRE(p.ok());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const HostTensor z = tenact::testing::host_vector<std::complex<float>>(
      DType::C64, {{0, 1}, {1, 0}, {0, 0}, {nan, 0}, {0, nan}});
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  auto r = run_program_on_cpu(*p, std::vector<HostTensor>{z, f32(std::vector<float>(7, 1))}, engine);
  INFO((r.ok() ? std::string("ok") : r.error().to_string()));
  REQUIRE(r.ok());
  REQUIRE(r->size() == 3);
  auto bools = [](const HostTensor& t) {
    REQUIRE(t.dtype() == DType::Bool);
    const uint8_t* d = t.data_as<uint8_t>();
    return std::vector<uint8_t>(d, d + t.element_count());
  };
  CHECK(bools((*r)[0]) == std::vector<uint8_t>{1, 0, 1, 0, 1});
  CHECK(bools((*r)[1]) == std::vector<uint8_t>{0, 1, 0, 1, 0, 0, 0});
  CHECK(bools((*r)[2]) == std::vector<uint8_t>{0, 1, 0, 1, 0, 1, 1});
}

TEST_CASE("an expression that overflows only for some values of its symbols is checked per "
          "signature, naming where it stands",
          "[cpu_engine]") {
  // B*2^62 fits for B <= 1 and overflows int64 from B = 2 on.
  auto p = load_program(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B"]}],
    "guards": ["B*4611686018427387904 <= 4611686018427387904"],
    "ops": [{"op": "negate", "in": ["x"], "out": "y"}], "outputs": ["y"]})");
  INFO((p.ok() ? std::string("ok") : p.error().to_string()));
  REQUIRE(p.ok());
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  auto ok = run_program_on_cpu(*p, std::vector<HostTensor>{f32({3})}, engine);
  REQUIRE(ok.ok());
  CHECK((*ok)[0].data_as<float>()[0] == -3.0f);
  auto r = run_program_on_cpu(*p, std::vector<HostTensor>{f32({1, 2})}, engine);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::Overflow);
  CHECK_THAT(r.error().message(),
             Catch::StartsWith("guard 'B*4611686018427387904 <= 4611686018427387904': dimension "
                               "expression '4611686018427387904*B' overflows int64 with B=2"));
}

TEST_CASE("an engine whose last owner lets go in its own pool's task finishes the work queued behind it",
          "[cpu_engine]") {
  // The engine's posted work uses the engine through a plain pointer (as
  // its batches do); the engine must outlive that work, so it is destroyed
  // off its pool, after the queue drains.
  for (int round = 0; round < 10; ++round) {
    auto engine = test_engine(CpuEngineOptions{.threads = 1});
    CpuEngine* raw = engine.get();
    std::weak_ptr<CpuEngine> watch = engine;
    std::promise<void> gate;
    std::promise<bool> queued_ran;
    raw->pool().post([held = std::move(engine), open = gate.get_future().share()]() mutable {
      open.wait();
      held.reset();  // the last owner
    });
    raw->pool().post([raw, &queued_ran] { queued_ran.set_value(raw->memory_stats("host").ok()); });
    // The last task: its token goes when the pool has run it, i.e. while the
    // engine's destructor joins its pool, just before the engine is freed.
    auto token = std::make_shared<int>(0);
    std::weak_ptr<int> drained = token;
    raw->pool().post([token = std::move(token)] {});
    gate.set_value();
    auto ran = queued_ran.get_future();
    REQUIRE(ran.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    CHECK(ran.get());
    for (int i = 0; i < 4000 && !drained.expired(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(drained.expired());
    CHECK(watch.expired());
  }
}
