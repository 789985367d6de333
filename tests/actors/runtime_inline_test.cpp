// Runtime::run's caller-thread path (actors/inline_run.hpp): a run whose
// preparation the memo answers and whose plan is one small CPU batch is
// answered on the client's thread before run() returns, with what the
// usual path answers. Expected values are computed by hand.
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <thread>

#include "actors/runtime.hpp"
#include "core/program_json.hpp"
#include "engines/forwarding_engine.hpp"
#include "tests/actors/affine_programs.hpp"
#include "tests/engines/cpu/test_engine.hpp"

using namespace tenact;
using tenact::testing::affine;
using tenact::testing::iota8;

namespace {

struct Answer {
  bool inside = false;  // the callback ran before run() returned
  Result<std::vector<Tensor>> result = Error{ErrorCode::Internal, "not answered"};
};

// One run with a callback; waits for the answer if it came later. No
// Catch macros: client threads call it (Catch is not thread-safe).
Answer run_observed(Runtime& rt, const std::shared_ptr<const SemanticProgram>& program, std::vector<Tensor> inputs,
                    ExecutionStats* stats = nullptr) {
  auto promise = std::make_shared<std::promise<Answer>>();
  auto inside = std::make_shared<std::atomic<bool>>(true);
  rt.run(program, std::move(inputs), {},
         [promise, inside](Result<std::vector<Tensor>> r) {
           promise->set_value(Answer{inside->load(), std::move(r)});
         },
         stats);
  inside->store(false);
  auto f = promise->get_future();
  if (f.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
    return Answer{false, Error{ErrorCode::Timeout, "no answer within 10 s"}};
  return f.get();
}

// An f32 vector of `values` (an empty tensor if it cannot be made; no
// Catch macros, as above).
Tensor f32_vector(std::vector<float> values) {
  auto t = Tensor::zeros(DType::F32, {static_cast<int64_t>(values.size())});
  if (!t.ok()) return Tensor{};
  for (size_t i = 0; i < values.size(); ++i) t->data_as<float>()[i] = values[i];
  return *t;
}

// y = 3 x + 2 over f32[8], x = base + 0..7: exact in f32.
void check_affine2(const Result<std::vector<Tensor>>& r, float base = 0.0f) {
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  for (int i = 0; i < 8; ++i) REQUIRE((*r)[0].data_as<float>()[i] == 3.0f * (base + static_cast<float>(i)) + 2.0f);
}

// A CPU engine whose first `failures` batches on the caller's thread fail
// with TransientFailure; the others run as the CPU engine runs them.
class FailingOnCaller : public ForwardingEngine {
 public:
  FailingOnCaller(std::shared_ptr<Engine> inner, int failures) : ForwardingEngine(std::move(inner)), left_(failures) {}
  std::optional<Result<std::vector<Tensor>>> run_on_caller(const BatchWork& work) override {
    ++calls;
    if (left_-- > 0) return Result<std::vector<Tensor>>{Error{ErrorCode::TransientFailure, "injected on the caller"}};
    return inner().run_on_caller(work);
  }
  std::atomic<int> calls{0};

 private:
  std::atomic<int> left_;
};

// A runtime with one CPU engine of two threads.
struct Rig {
  Runtime rt{testing::small_runtime()};
  std::shared_ptr<cpu::CpuEngine> engine = cpu::test_engine(cpu::CpuEngineOptions{2});
  Rig() { REQUIRE(rt.register_engine(engine).ok()); }
};

}  // namespace

TEST_CASE("a prepared small run is answered on the caller's thread, with the usual path's counts",
          "[runtime][inline]") {
  Rig rig;
  Runtime& rt = rig.rt;
  const auto& engine = rig.engine;
  auto program = affine(2);
  ExecutionStats first;
  Answer prepared = run_observed(rt, program, {iota8()}, &first);  // prepares: the usual path
  check_affine2(prepared.result);
  CHECK(first.prepare_requests == 1);
  const uint64_t admitted = rt.queue_stats().at("cpu").runs;
  const uint64_t inline_before = engine->inline_batches();
  for (int k = 0; k < 50; ++k) {
    ExecutionStats stats;
    Answer a = run_observed(rt, program, {iota8()}, &stats);
    CHECK(a.inside);
    check_affine2(a.result);
    CHECK(stats.prepare_requests == 0);
    CHECK(stats.batches == 1);
    CHECK(stats.units == first.units);
  }
  CHECK(engine->inline_batches() == inline_before + 50);
  // Runs on the caller's thread take no room on the job board.
  CHECK(rt.queue_stats().at("cpu").runs == admitted);
  // The future form takes the same path.
  check_affine2(rt.run(program, {iota8()}).get());
  CHECK(engine->inline_batches() == inline_before + 51);
}

TEST_CASE("on the caller's thread, outputs come back in program order and symbols follow each run's shapes",
          "[runtime][inline]") {
  // outputs [y, x, y] with y = x + x over f32[N]: a repeated result and an
  // input passed through; N changes between runs.
  auto loaded = load_program(R"({"format": "tenact.program/1", "name": "twice",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}],
    "ops": [{"op": "add", "in": ["x", "x"], "out": "y"}],
    "outputs": ["y", "x", "y"]})");
  REQUIRE(loaded.ok());
  auto program = std::make_shared<const SemanticProgram>(std::move(*loaded));
  Rig rig;
  Runtime& rt = rig.rt;
  for (int pass = 0; pass < 3; ++pass)
    for (std::vector<float> x : {std::vector<float>{1, 2, 3, 4}, std::vector<float>{-1, 0.5f, 8, 9, 10, 11},
                                 std::vector<float>{7, 6, 5, 4}}) {
      Answer a = run_observed(rt, program, {f32_vector(x)});
      if (pass > 0) CHECK(a.inside);  // prepared by the first pass
      REQUIRE(a.result.ok());
      REQUIRE(a.result->size() == 3);
      for (size_t i = 0; i < x.size(); ++i) {
        CHECK((*a.result)[0].data_as<float>()[i] == 2 * x[i]);
        CHECK((*a.result)[1].data_as<float>()[i] == x[i]);
        CHECK((*a.result)[2].data_as<float>()[i] == 2 * x[i]);
      }
      CHECK((*a.result)[0].shape() == std::vector<int64_t>{static_cast<int64_t>(x.size())});
    }
}

TEST_CASE("on the caller's thread, a run is answered from the thread's last memo answer only for the same request",
          "[runtime][inline]") {
  Rig rig;
  Runtime& rt = rig.rt;
  auto program = affine(2);
  auto run_counted = [&](const std::shared_ptr<const SemanticProgram>& p, Tensor x, float base = 0.0f) {
    ExecutionStats stats;
    Answer a = run_observed(rt, p, {std::move(x)}, &stats);
    check_affine2(a.result, base);
    return stats.prepare_requests;
  };
  CHECK(run_counted(program, iota8()) == 1);
  CHECK(run_counted(program, iota8()) == 0);
  // After clear_cache the answer is not served again: prepared anew.
  rt.clear_cache();
  CHECK(run_counted(program, iota8()) == 1);
  CHECK(run_counted(program, iota8()) == 0);
  // An input of another alignment (a view one element into a buffer:
  // 4-byte aligned) and an equal program loaded again are answered as the
  // memo answers them: correctly, without preparing again.
  auto storage = Tensor::zeros(DType::F32, {9});
  REQUIRE(storage.ok());
  for (int i = 0; i < 9; ++i) storage->data_as<float>()[i] = static_cast<float>(i) + 9.0f;
  auto shifted = Tensor::view(storage->buffer(), DType::F32, {8}, {1}, 1);  // 10, 11, ..., 17
  REQUIRE(shifted.ok());
  CHECK(run_counted(program, *shifted, 10.0f) == 0);
  CHECK(run_counted(program, iota8()) == 0);
  CHECK(run_counted(affine(2), iota8()) == 0);
  CHECK(run_counted(program, iota8()) == 0);
}

TEST_CASE("client threads running one program at once on their threads each get their own results",
          "[runtime][inline]") {
  Rig rig;
  Runtime& rt = rig.rt;
  const auto& engine = rig.engine;
  auto program = affine(2);
  check_affine2(rt.run(program, {iota8()}).get());
  const uint64_t inline_before = engine->inline_batches();
  constexpr int kThreads = 8, kRuns = 100;
  std::atomic<int> wrong{0}, inside{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t)
    clients.emplace_back([&, t] {
      for (int k = 0; k < kRuns; ++k) {
        const float base = static_cast<float>(t * 1000 + k);
        std::vector<float> x(8);
        for (int i = 0; i < 8; ++i) x[i] = base + static_cast<float>(i);
        Answer a = run_observed(rt, program, {f32_vector(x)});
        if (a.inside) ++inside;
        bool right = a.result.ok() && a.result->size() == 1;
        for (int i = 0; right && i < 8; ++i) right = (*a.result)[0].data_as<float>()[i] == 3.0f * x[i] + 2.0f;
        if (!right) ++wrong;
      }
    });
  for (std::thread& c : clients) c.join();
  CHECK(wrong == 0);
  // A run whose queue was busy with another client's went the usual way;
  // every run on the caller's thread was counted by the engine.
  CHECK(inside > 0);
  CHECK(engine->inline_batches() - inline_before >= static_cast<uint64_t>(inside.load()));
}

TEST_CASE("a run the memo cannot answer, or issued from a runtime thread, takes the usual path", "[runtime][inline]") {
  // The usual path is admitted by the job board (queue_stats' runs count
  // it); the caller-thread path is not.
  Rig rig;
  Runtime& rt = rig.rt;
  auto program = affine(2);
  check_affine2(rt.run(program, {iota8()}).get());
  const uint64_t admitted = rt.queue_stats().at("cpu").runs;

  PrepareOptions uncached;
  uncached.cache_in_flight = false;
  ExecutionStats stats;
  auto promise = std::make_shared<std::promise<Result<std::vector<Tensor>>>>();
  rt.run(program, {iota8()}, uncached, [promise](Result<std::vector<Tensor>> r) { promise->set_value(std::move(r)); },
         &stats);
  check_affine2(promise->get_future().get());
  CHECK(stats.prepare_requests == 1);
  CHECK(rt.queue_stats().at("cpu").runs == admitted + 1);

  // From a run's callback (a runtime thread): the nested run is admitted.
  auto nested = std::make_shared<std::promise<Result<std::vector<Tensor>>>>();
  check_affine2(run_observed(rt, program, {iota8()}).result);
  rt.run(program, {iota8()}, {}, [&rt, program, nested](Result<std::vector<Tensor>> outer) {
    REQUIRE(outer.ok());
    rt.run(program, {iota8()}, {}, [nested](Result<std::vector<Tensor>> r) { nested->set_value(std::move(r)); });
  });
  check_affine2(nested->get_future().get());
  CHECK(rt.queue_stats().at("cpu").runs == admitted + 2);
}

TEST_CASE("a batch that fails on the caller's thread is run again the usual way and answered from there",
          "[runtime][inline]") {
  Runtime rt{testing::small_runtime()};
  auto cpu = cpu::test_engine(cpu::CpuEngineOptions{2});
  auto engine = std::make_shared<FailingOnCaller>(cpu, 2);
  REQUIRE(rt.register_engine(engine).ok());
  auto program = affine(2);
  check_affine2(rt.run(program, {iota8()}).get());  // prepared (the usual path: no caller-thread attempt)
  const uint64_t admitted = rt.queue_stats().at("cpu").runs;
  for (int k = 0; k < 3; ++k) {
    ExecutionStats stats;
    auto r = rt.run_sync(program, {iota8()}, {}, &stats);
    check_affine2(r);
    CHECK(stats.retries == 0);  // the failure on the caller's thread is no try of the run
    CHECK(stats.batches == 1);
  }
  CHECK(engine->calls == 3);
  // The two failed attempts went the usual way (admitted); the third ran here.
  CHECK(rt.queue_stats().at("cpu").runs == admitted + 2);
}

TEST_CASE("run_sync answers like run, and refuses to wait on a runtime thread", "[runtime][inline]") {
  Rig rig;
  Runtime& rt = rig.rt;
  auto program = affine(2);
  check_affine2(rt.run_sync(program, {iota8()}));  // prepares, then waits for the usual path's answer
  check_affine2(rt.run_sync(program, {iota8()}));  // answered here
  auto bad = rt.run_sync(program, {});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code() == ErrorCode::InputMismatch);
  auto inside = std::make_shared<std::promise<Result<std::vector<Tensor>>>>();
  rt.run(program, {iota8()}, {}, [&rt, program, inside](Result<std::vector<Tensor>> outer) {
    REQUIRE(outer.ok());
    inside->set_value(rt.run_sync(program, {iota8()}));
  });
  auto refused = inside->get_future().get();
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code() == ErrorCode::InvalidAttribute);
  CHECK(refused.error().message().find("run_sync called on a runtime thread") != std::string::npos);
}
