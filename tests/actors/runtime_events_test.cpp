// Runs over two engines enqueued behind events (RuntimeOptions::
// enqueue_behind_events): a chain that alternates between an engine that
// serves only elementwise ops and one that serves only layout ops, so each
// step is a batch behind a transfer behind a batch. The engines complete
// each batch late, at random, on threads of their own, and check that no
// batch began before the events it waited on were signalled. Expected
// values are derived by hand: each round y -> reshape(-(reshape(y + y))),
// so three rounds give -8x.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <random>
#include <thread>

#include "actors/runtime.hpp"
#include "core/builder.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "engines/forwarding_engine.hpp"
#include "tests/actors/affine_programs.hpp"
#include "tests/engines/cpu/test_engine.hpp"
#include "util/worker_pool.hpp"

using namespace tenact;
using tenact::testing::iota8;
using namespace std::chrono_literals;

namespace {

// A CPU engine that serves only `families`, completes each batch 0-300 µs
// late on a thread of its own (publishing and signalling itself), and can
// be told to fail every batch holding an op of one kind. Counts batches
// that waited on events and batches that began before one of their waits
// was signalled (must stay 0).
class JitteryEngine final : public ForwardingEngine {
 public:
  JitteryEngine(std::string id, std::vector<OpFamily> families, uint32_t seed)
      : ForwardingEngine(make_inner(std::move(id))), random_(seed), delayer_(WorkerPool::create(1).value()) {
    capabilities_.op_families = std::move(families);
  }
  // The inner engine's threads first: one may still be handing a
  // completion to the delayer.
  ~JitteryEngine() override { inner_.reset(); }

  void launch_batch(BatchWork work, LaunchCompletion done) override {
    EventPtr signal = std::move(work.signal);
    PublishedResultsPtr publish = std::move(work.publish);
    std::vector<EventPtr> waits = work.waits;
    if (!waits.empty()) waited_batches_.fetch_add(1);
    bool fail = false;
    for (const BatchOp& op : work.ops) fail = fail || (fail_kind_ && op.op->kind == *fail_kind_);
    auto timings = work.timings ? work.timings : std::make_shared<BatchTimings>();
    work.timings = timings;
    if (fail) {
      // Fails after its waits, as a kernel would.
      return when_all_signaled(waits, [this, signal, done](Status) mutable {
        complete_late(Error{ErrorCode::ExecutionFailed, "injected failure"}, nullptr, std::move(signal),
                      std::move(done));
      });
    }
    inner().launch_batch(std::move(work), [this, waits, timings, signal, publish,
                                           done](Result<std::vector<Tensor>> r) mutable {
      uint64_t first = UINT64_MAX;
      for (const OpTiming& t : timings->ops) first = std::min(first, t.begin_ns);
      for (const EventPtr& w : waits)
        if (!w->signaled() || (r.ok() && w->signaled_ns() > first)) early_starts_.fetch_add(1);
      complete_late(std::move(r), std::move(publish), std::move(signal), std::move(done));
    });
  }

  void fail_batches_with(OpKind kind) { fail_kind_ = kind; }
  uint64_t waited_batches() const { return waited_batches_.load(); }
  uint64_t early_starts() const { return early_starts_.load(); }

 private:
  static std::shared_ptr<cpu::CpuEngine> make_inner(std::string id) {
    cpu::CpuEngineOptions o;
    o.id = std::move(id);
    o.threads = 1;
    return cpu::test_engine(o);
  }

  void complete_late(Result<std::vector<Tensor>> r, PublishedResultsPtr publish, EventPtr signal,
                     LaunchCompletion done) {
    std::chrono::microseconds delay;
    {
      std::lock_guard lock(mutex_);
      delay = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 300)(random_));
    }
    delayer_->post([r = std::move(r), publish = std::move(publish), signal = std::move(signal),
                    done = std::move(done), delay]() mutable {
      std::this_thread::sleep_for(delay);
      if (publish && r.ok()) publish->tensors = *r;
      publish.reset();
      if (signal) signal->signal(r.ok() ? ok_status() : Status{r.error()});
      signal.reset();
      done(std::move(r));
    });
  }

  std::optional<OpKind> fail_kind_;
  std::mutex mutex_;
  std::mt19937 random_;
  std::atomic<uint64_t> waited_batches_{0};
  std::atomic<uint64_t> early_starts_{0};
  std::unique_ptr<WorkerPool> delayer_;  // last: joined first, while the rest is alive
};

// x: f32[8]; three rounds of m = y + y (elementwise), r = reshape(m, [2, 4])
// (layout), n = negate(r) (elementwise), y = reshape(n, [8]) (layout).
std::shared_ptr<const SemanticProgram> alternating_chain() {
  ProgramBuilder b{"alternating"};
  ValueRef y = b.input("x", DType::F32, {Dim{8}});
  for (int round = 0; round < 3; ++round) {
    ValueRef m = b.binary(OpKind::Add, y, y);
    ValueRef r = b.reshape(m, {Dim{2}, Dim{4}});
    ValueRef n = b.unary(OpKind::Negate, r);
    y = b.reshape(n, {Dim{8}});
  }
  b.output(y);
  auto p = b.build();
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

struct TwoEngines {
  std::shared_ptr<JitteryEngine> elementwise =
      std::make_shared<JitteryEngine>("cpu", std::vector<OpFamily>{OpFamily::Elementwise}, 7);
  std::shared_ptr<JitteryEngine> layout =
      std::make_shared<JitteryEngine>("cpu:1", std::vector<OpFamily>{OpFamily::Layout}, 11);
};

RuntimeOptions runtime_options(bool behind_events) {
  RuntimeOptions o;
  o.scheduler_threads = 2;
  o.enqueue_behind_events = behind_events;
  return o;
}

void register_both(Runtime& rt, const TwoEngines& engines) {
  REQUIRE(rt.register_engine(engines.elementwise, 0).ok());
  REQUIRE(rt.register_engine(engines.layout, 1).ok());
  REQUIRE(rt.add_route(TransferRoute{{"cpu", "host"}, {"cpu:1", "host"}, "host_copy"}).ok());
  REQUIRE(rt.add_route(TransferRoute{{"cpu:1", "host"}, {"cpu", "host"}, "host_copy"}).ok());
}

// The alternating chain prepared with x at cpu/host.
PreparedProgramPtr prepare_chain(Runtime& rt) {
  auto prepared = rt.prepare(alternating_chain(), {describe_input(iota8(), Endpoint{"cpu", "host"})}).get();
  REQUIRE(prepared.ok());
  return *prepared;
}

Result<std::vector<Tensor>> execute(Runtime& rt, const PreparedProgramPtr& prepared, ExecutionStats* stats) {
  std::promise<Result<std::vector<Tensor>>> done;
  rt.execute(prepared, {iota8()}, [&](Result<std::vector<Tensor>> r) { done.set_value(std::move(r)); }, stats);
  return done.get_future().get();
}

}  // namespace

TEST_CASE("a chain alternating between two engines runs behind events: no batch begins before its waits "
          "(1,000 runs, completions late at random)",
          "[runtime][events]") {
  TwoEngines engines;
  Runtime rt{runtime_options(true)};
  register_both(rt, engines);
  const PreparedProgramPtr prepared = prepare_chain(rt);
  REQUIRE(prepared->root->schedule->transfer_count() >= 6);
  for (int run = 0; run < 1000; ++run) {
    ExecutionStats stats;
    auto out = execute(rt, prepared, &stats);
    REQUIRE(out.ok());
    REQUIRE(out->size() == 1);
    const Tensor& y = (*out)[0];
    for (int i = 0; i < 8; ++i) REQUIRE(y.data_as<float>()[i] == static_cast<float>(-8 * i));
    REQUIRE(stats.transfers >= 6);
  }
  CHECK(engines.elementwise->early_starts() == 0);
  CHECK(engines.layout->early_starts() == 0);
  // Both engines got batches behind events (not only after the host heard).
  CHECK(engines.elementwise->waited_batches() >= 1000);
  CHECK(engines.layout->waited_batches() >= 1000);
}

TEST_CASE("the host-mediated path gives the same results and sends no batch with waits",
          "[runtime][events]") {
  TwoEngines engines;
  Runtime rt{runtime_options(false)};
  register_both(rt, engines);
  const PreparedProgramPtr prepared = prepare_chain(rt);
  for (int run = 0; run < 50; ++run) {
    auto out = execute(rt, prepared, nullptr);
    REQUIRE(out.ok());
    for (int i = 0; i < 8; ++i) REQUIRE((*out)[0].data_as<float>()[i] == static_cast<float>(-8 * i));
  }
  CHECK(engines.elementwise->waited_batches() == 0);
  CHECK(engines.layout->waited_batches() == 0);
}

TEST_CASE("a batch that fails behind events fails the run with its own error, not its waiters'",
          "[runtime][events]") {
  TwoEngines engines;
  engines.elementwise->fail_batches_with(OpKind::Negate);
  Runtime rt{runtime_options(true)};
  register_both(rt, engines);
  const PreparedProgramPtr prepared = prepare_chain(rt);
  for (int run = 0; run < 100; ++run) {
    auto out = execute(rt, prepared, nullptr);
    REQUIRE_FALSE(out.ok());
    CHECK(out.error().code() == ErrorCode::ExecutionFailed);
    CHECK(out.error().message().find("injected failure") != std::string::npos);
    CHECK(out.error().message().find("negate") != std::string::npos);
    CHECK(out.error().message().find("waiting on") == std::string::npos);
  }
  // The runtime still serves: the next run on a healthy pair succeeds.
  engines.elementwise->fail_batches_with(OpKind::Iota);
  auto out = execute(rt, prepared, nullptr);
  REQUIRE(out.ok());
  CHECK((*out)[0].data_as<float>()[7] == -56.0f);
}
