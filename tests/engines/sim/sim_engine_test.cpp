// The simulated GPUs at the engine level: real results in device memory of
// their own (not host addressable, bounded by the device's capacity),
// virtual time charged from the cost model with hand-derived figures,
// stream order and waits, copies along the platform's links, and virtual
// times that do not depend on the host's timing.
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "tests/util/host_load.hpp"

#include "engines/event.hpp"
#include "engines/sim/sim_engine.hpp"
#include "engines/sim/sim_links.hpp"
#include "tests/engines/cpu/batch_launch.hpp"
#include "tests/engines/cpu/test_engine.hpp"
#include "tests/engines/sim/sim_test_platform.hpp"

using namespace tenact;
using namespace tenact::sim;

namespace {

std::shared_ptr<const PreparedOp> f32_op(OpKind kind, int64_t n, const std::string& at) {
  auto op = std::make_shared<PreparedOp>();
  op->kind = kind;
  op->results = {ValueType{DType::F32, exact_shape({n})}};
  op->binding.endpoint = {at, SimEngine::kDeviceStorage};
  return op;
}

Tensor ramp(int64_t n, float scale) {
  auto t = Tensor::zeros(DType::F32, {n}).value();
  for (int64_t i = 0; i < n; ++i) t.data_as<float>()[i] = scale * static_cast<float>(i);
  return t;
}

/// out = a + b on `at`, on `queue`.
BatchWork add_batch(std::vector<Tensor> inputs, const std::string& at, uint32_t queue = BatchWork::kAnyQueue) {
  BatchWork w;
  const int64_t n = inputs[0].element_count();
  w.inputs = std::move(inputs);
  w.ops.push_back({f32_op(OpKind::Add, n, at), {BatchRef::input(0), BatchRef::input(1)}});
  w.outputs = {BatchRef::op(0)};
  w.queue = queue;
  return w;
}

constexpr auto run = &tenact::testing::launch_and_wait;

/// Reads a device value back to `host` along the platform's link.
Tensor read_back(Sim& sim, const Tensor& value, Engine& host) {
  TransferProvider link = sim_link_provider(sim.world);
  const Endpoint from = value.endpoint(), to{"cpu", "host"};
  REQUIRE(link.can_copy(from, to));
  auto copy = link.copy(TransferRequest{value, from, to, host});
  REQUIRE(copy.ok());
  REQUIRE(copy->is_host());
  return *copy;
}

}  // namespace

TEST_CASE("a sim device computes in its own memory and charges the cost model's virtual time", "[sim][engine]") {
  Sim sim{round_platform(1)};
  SimEngine& dev = *sim.devices[0];
  CHECK(dev.identity().id == "sim:0");
  CHECK(dev.capabilities().queues == 2);
  auto out = run(dev, add_batch({ramp(1000, 1), ramp(1000, 2)}, "sim:0", 0));
  REQUIRE(out.ok());
  const Tensor& sum = (*out)[0];
  CHECK_FALSE(sum.is_host());
  CHECK(sum.endpoint() == Endpoint{"sim:0", "device"});
  // Uploads: 4,000 bytes each over the host link, from time 0 at once
  // (links do not queue): 500 + 4,000 = 4,500 ns. The add reads 2,000 and
  // writes 1,000 elements (2,000 ops: 2,000 ns) and moves 12,000 bytes
  // (12,000 ns): 1,000 + 12,000 = 13,000 ns from 4,500.
  CHECK(sim.world->ready_at(sum) == 17500);
  SimEngineStats s = dev.stats();
  CHECK(s.kernels == 1);
  CHECK(s.ops == 1);
  CHECK(s.bytes_in == 8000);
  CHECK(s.busy_ns == 13000);
  CHECK(s.stream_clock_ns == std::vector<uint64_t>{17500, 0});
  auto cpu = cpu::test_engine();
  Tensor host = read_back(sim, sum, *cpu);
  for (int i = 0; i < 1000; ++i) CHECK(host.data_as<float>()[i] == 3.0f * static_cast<float>(i));
  CHECK(sim.world->ready_at(host) == 17500 + 500 + 4000);
  CHECK(dev.stats().bytes_out == 4000);
  CHECK(sim.world->now() == 22000);
}

TEST_CASE("a device's memory is bounded: past it is LimitExceeded naming the device, and it keeps serving",
          "[sim][engine][memory]") {
  Sim sim{round_platform(1, 12000)};
  SimEngine& dev = *sim.devices[0];
  auto held = dev.allocate("device", DType::F32, {1000});  // 4,000 of 12,000 bytes
  REQUIRE(held.ok());
  CHECK_FALSE(held->is_host());
  // Two uploads of 4,000 bytes and a 4,000-byte result do not fit beside it.
  auto refused = run(dev, add_batch({ramp(1000, 1), ramp(1000, 2)}, "sim:0"));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code() == ErrorCode::LimitExceeded);
  CHECK_THAT(refused.error().message(), Catch::Contains("sim:0/device"));
  *held = Tensor{};
  CHECK(dev.memory_stats("device")->allocated_bytes == 0);
  // Without it, the uploads and the result fill the device exactly.
  auto served = run(dev, add_batch({ramp(1000, 1), ramp(1000, 2)}, "sim:0"));
  REQUIRE(served.ok());
  CHECK(dev.memory_stats("device")->allocated_bytes == 4000);  // the result; the uploads went
  served->clear();
  CHECK(dev.memory_stats("device")->allocated_bytes == 0);
  CHECK(dev.memory_stats("device")->peak_allocated_bytes == 12000);  // exactly full
  CHECK_FALSE(dev.allocate("host", DType::F32, {1}).ok());
}

TEST_CASE("a stream runs its batches in order, and a batch on another stream starts when its input is ready",
          "[sim][engine][stream]") {
  Sim sim{round_platform(1)};
  SimEngine& dev = *sim.devices[0];
  auto a = run(dev, add_batch({ramp(1000, 1), ramp(1000, 1)}, "sim:0", 0));  // ends at 17,500
  REQUIRE(a.ok());
  // Stream 1 is idle at 0, but its input is ready at 17,500; its other
  // input comes from the host at 4,500. Reads 2,000 elements, writes 1,000:
  // 1,000 + 12,000 ns.
  auto b = run(dev, add_batch({(*a)[0], ramp(1000, 1)}, "sim:0", 1));
  REQUIRE(b.ok());
  CHECK(sim.world->ready_at((*b)[0]) == 17500 + 13000);
  // Stream 0 again: after its own clock (17,500), the host input at 4,500.
  auto c = run(dev, add_batch({ramp(1000, 1), ramp(1000, 1)}, "sim:0", 0));
  REQUIRE(c.ok());
  CHECK(sim.world->ready_at((*c)[0]) == 17500 + 13000);
  CHECK(dev.stats().stream_clock_ns == std::vector<uint64_t>{30500, 30500});

  // A batch waits for its event without holding the stream's thread, and
  // starts only once it is signalled. Stream 0 is not held up meanwhile:
  // its next batch runs (its event is signalled), though the caller hears
  // of it only when the waiting one is done, since that one could still
  // have ended first in virtual time.
  auto gate = Event::create("gate");
  BatchWork waiting = add_batch({(*c)[0], (*c)[0]}, "sim:0", 1);
  waiting.waits = {gate};
  std::promise<Result<std::vector<Tensor>>> promise;
  auto future = promise.get_future();
  dev.launch_batch(std::move(waiting), [&](Result<std::vector<Tensor>> r) { promise.set_value(std::move(r)); });
  BatchWork next = add_batch({ramp(10, 1), ramp(10, 1)}, "sim:0", 0);
  auto next_signal = Event::create("next");
  std::promise<void> next_ran;
  next_signal->when_signaled([&](const Status&) { next_ran.set_value(); });
  next.signal = next_signal;
  std::promise<Result<std::vector<Tensor>>> next_promise;
  auto next_heard = next_promise.get_future();
  dev.launch_batch(std::move(next), [&](Result<std::vector<Tensor>> r) { next_promise.set_value(std::move(r)); });
  REQUIRE(next_ran.get_future().wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(future.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
  CHECK(next_heard.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);
  gate->signal(ok_status());
  auto waited = future.get();
  REQUIRE(waited.ok());
  CHECK(sim.world->ready_at((*waited)[0]) == 30500 + 13000);
  auto other = next_heard.get();
  REQUIRE(other.ok());
  CHECK(sim.world->ready_at((*other)[0]) == 30500 + 1120);  // 10 elements: 1,000 + 120 ns
}

TEST_CASE("copies between devices go along the peer link, counted out of one and into the other",
          "[sim][engine][link]") {
  Sim sim{round_platform(2)};
  auto produced = run(*sim.devices[0], add_batch({ramp(1000, 1), ramp(1000, 1)}, "sim:0"));
  REQUIRE(produced.ok());
  TransferProvider link = sim_link_provider(sim.world);
  const Endpoint d0{"sim:0", "device"}, d1{"sim:1", "device"};
  CHECK(link.can_copy(d0, d1));
  CHECK(link.can_copy(Endpoint{"cpu", "host"}, d1));
  CHECK(link.can_copy(Endpoint::unowned_host(), d0));
  CHECK_FALSE(link.can_copy(Endpoint{"cpu", "host"}, Endpoint{"cpu:1", "host"}));  // not a sim link
  CHECK_FALSE(link.can_copy(d0, Endpoint{"sim:7", "device"}));
  auto moved = link.copy(TransferRequest{(*produced)[0], d0, d1, *sim.devices[1]});
  REQUIRE(moved.ok());
  CHECK(moved->endpoint() == d1);
  // 4,000 bytes at 2 bytes per ns after 100 ns, from 17,500.
  CHECK(sim.world->ready_at(*moved) == 17500 + 100 + 2000);
  CHECK(sim.devices[0]->stats().bytes_out == 4000);
  CHECK(sim.devices[1]->stats().bytes_in == 4000);
  // sim:1 computes on the copy; sim:0 cannot read sim:1's memory.
  auto doubled = run(*sim.devices[1], add_batch({*moved, *moved}, "sim:1"));
  REQUIRE(doubled.ok());
  auto cpu = cpu::test_engine();
  Tensor host = read_back(sim, (*doubled)[0], *cpu);
  for (int i = 0; i < 1000; ++i) CHECK(host.data_as<float>()[i] == 4.0f * static_cast<float>(i));
  auto foreign = run(*sim.devices[0], add_batch({*moved, *moved}, "sim:0"));
  REQUIRE_FALSE(foreign.ok());
  CHECK(foreign.error().code() == ErrorCode::InputMismatch);
  CHECK_THAT(foreign.error().message(), Catch::Contains("sim:1/device"));
  auto routes = sim_routes(*sim.world, std::vector<Endpoint>{Endpoint{"cpu", "host"}});
  CHECK(routes.size() == 6);  // cpu <-> each device, sim:0 <-> sim:1
}

TEST_CASE("virtual times are a function of the work, the platform and the seed, not of the host's load",
          "[sim][engine][determinism]") {
  // A fixed sequence of batches over two streams with jitter.
  const auto clocks_of = [](uint64_t seed) {
    Sim sim{round_platform(1, uint64_t{1} << 30, 0.25, seed)};
    SimEngine& dev = *sim.devices[0];
    Tensor x = ramp(512, 1);
    std::vector<Tensor> last;
    for (int i = 0; i < 12; ++i) {
      auto r = run(dev, add_batch({i < 2 ? x : last[static_cast<size_t>(i % 2)], x}, "sim:0", i % 2));
      REQUIRE(r.ok());
      if (last.size() < 2) last.push_back((*r)[0]);
      else last[static_cast<size_t>(i % 2)] = (*r)[0];
    }
    return dev.stats().stream_clock_ns;
  };
  const auto reference = clocks_of(7);
  {
    testing::HostLoad load{2};
    for (int run_index = 0; run_index < 20; ++run_index) CHECK(clocks_of(7) == reference);
  }
  CHECK(clocks_of(8) != reference);  // another seed draws other jitter
}

TEST_CASE("the caller hears of a platform's completions in virtual-time order, not the host's",
          "[sim][engine][determinism]") {
  Sim sim{round_platform(2)};
  // sim:0's batch is short in virtual time (10 elements: uploads of 40
  // bytes at 540 ns, then 1,000 + 120 ns: ends at 1,660) but is held up on
  // the host by a gate; sim:1's is long (ends at 17,500) and free to run.
  auto gate = Event::create("gate");
  BatchWork short_work = add_batch({ramp(10, 1), ramp(10, 1)}, "sim:0", 0);
  short_work.waits = {gate};
  std::mutex mutex;
  std::vector<std::string> heard;
  std::promise<void> both;
  // Called on engine threads: only records (Catch's checks stay on this one).
  auto record = [&](std::string who) {
    return [&, who](Result<std::vector<Tensor>> r) {
      std::lock_guard lock(mutex);
      heard.push_back(r.ok() ? who + " at " + std::to_string(sim.world->ready_at((*r)[0])) : r.error().to_string());
      if (heard.size() == 2) both.set_value();
    };
  };
  sim.devices[0]->launch_batch(std::move(short_work), record("sim:0"));
  auto long_signal = Event::create("long");
  std::promise<void> long_done_on_host;
  long_signal->when_signaled([&](const Status&) { long_done_on_host.set_value(); });
  BatchWork long_work = add_batch({ramp(1000, 1), ramp(1000, 1)}, "sim:1", 0);
  long_work.signal = long_signal;
  sim.devices[1]->launch_batch(std::move(long_work), record("sim:1"));
  // sim:1's batch is done on the host (its event says so, and work behind
  // it could start), but the caller does not hear of it: sim:0's could
  // still end first in virtual time.
  REQUIRE(long_done_on_host.get_future().wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  {
    std::lock_guard lock(mutex);
    CHECK(heard.empty());
  }
  CHECK(sim.world->sequencer().held() == 1);
  gate->signal(ok_status());
  auto done = both.get_future();
  REQUIRE(done.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(heard == std::vector<std::string>{"sim:0 at 1660", "sim:1 at 17500"});
  CHECK(sim.world->sequencer().held() == 0);
  CHECK(sim.world->sequencer().in_flight() == 0);
}

TEST_CASE("a batch reports the virtual span it ran in when asked", "[sim][engine]") {
  Sim sim{round_platform(1)};
  BatchWork work = add_batch({ramp(1000, 1), ramp(1000, 2)}, "sim:0", 0);
  auto span = std::make_shared<VirtualSpan>();
  work.virtual_span = span;
  REQUIRE(run(*sim.devices[0], std::move(work)).ok());
  // As in the first test: the uploads start at 0 and arrive at 4,500, the
  // add takes 13,000 ns.
  CHECK(span->set);
  CHECK(span->begin_ns == 0);
  CHECK(span->end_ns == 17500);
}

TEST_CASE("a device that lacks an op says so in its capabilities and refuses it at prepare", "[sim][engine]") {
  SimPlatform platform = round_platform(1);
  platform.devices[0].lacks = {OpKind::Multiply};
  Sim sim{platform};
  SimEngine& dev = *sim.devices[0];
  CHECK_FALSE(dev.capabilities().runs(OpKind::Multiply));
  CHECK(dev.capabilities().runs(OpKind::Add));
  OpPrepareRequest request;
  request.kind = OpKind::Multiply;
  request.binding.endpoint = {"sim:0", SimEngine::kDeviceStorage};
  PrepareAnswer refused = dev.prepare(request);
  REQUIRE(std::holds_alternative<Unsupported>(refused));
  CHECK_THAT(std::get<Unsupported>(refused).reason, Catch::Contains("engine 'sim:0' has no kernel for multiply"));
  request.kind = OpKind::Add;
  CHECK(std::holds_alternative<std::shared_ptr<const PreparedOp>>(dev.prepare(request)));
}

// -- injected faults (engines/sim/sim_faults.hpp) -------------------------------------

namespace {

Sim faulty(const std::string& spec, uint32_t devices = 1) {
  SimPlatform p = round_platform(devices);
  p.faults = parse_fault_spec(spec).value();
  return Sim{std::move(p)};
}

}  // namespace

TEST_CASE("injected transient failures: the same seed fails the same batches, another seed others",
          "[sim][engine][faults]") {
  auto outcomes = [](const std::string& spec) {
    Sim sim = faulty(spec);
    std::string seen;
    for (int i = 0; i < 64; ++i) {
      auto out = run(*sim.devices[0], add_batch({ramp(10, 1), ramp(10, 2)}, "sim:0", 0));
      if (!out.ok()) {
        CHECK(out.error().code() == ErrorCode::TransientFailure);
        CHECK_THAT(out.error().message(), Catch::StartsWith("'sim:0' stream 0: add (op " + std::to_string(i) +
                                                            " tried on the stream) failed transiently"));
      }
      seen += out.ok() ? '.' : 'x';
    }
    return seen;
  };
  const std::string a = outcomes("seed=1,transient=0.3"), again = outcomes("seed=1,transient=0.3");
  const std::string b = outcomes("seed=2,transient=0.3");
  CHECK(a == again);
  CHECK(a != b);
  const auto failures = std::count(a.begin(), a.end(), 'x');
  CHECK(failures > 5);   // 30% of 64 is 19
  CHECK(failures < 40);
  CHECK(outcomes("seed=1") == std::string(64, '.'));
}

TEST_CASE("an injected deterministic failure refuses to prepare the op kind, naming it", "[sim][engine][faults]") {
  Sim sim = faulty("seed=4,fail=tanh");
  OpPrepareRequest r;
  r.op_index = 3;
  r.kind = OpKind::Tanh;
  r.operands = {ValueType{DType::F32, exact_shape({4})}};
  r.results = {ValueType{DType::F32, exact_shape({4})}};
  r.binding.endpoint = {"sim:0", "device"};
  PrepareAnswer a = sim.devices[0]->prepare(r);
  const auto* refused = std::get_if<Unsupported>(&a);
  REQUIRE(refused != nullptr);
  CHECK(refused->reason == "'sim:0': op #3 (tanh) fails deterministically (injected fault, seed 4)");
  r.kind = OpKind::Negate;
  CHECK(std::holds_alternative<std::shared_ptr<const PreparedOp>>(sim.devices[0]->prepare(r)));
}

TEST_CASE("a device that dies after N ops answers every later batch with EngineDown", "[sim][engine][faults]") {
  Sim sim = faulty("die=sim:0@3ops");
  for (int i = 0; i < 3; ++i) REQUIRE(run(*sim.devices[0], add_batch({ramp(4, 1), ramp(4, 1)}, "sim:0", 1)).ok());
  for (int i = 0; i < 2; ++i) {
    auto out = run(*sim.devices[0], add_batch({ramp(4, 1), ramp(4, 1)}, "sim:0", i));
    REQUIRE_FALSE(out.ok());
    CHECK(out.error() == Error{ErrorCode::EngineDown, "'sim:0' is down: it died after 3 ops (injected fault, seed 0)"});
  }
}

TEST_CASE("a device that dies at a virtual time, and a slow device's kernels", "[sim][engine][faults]") {
  // The add of two f32[1000] costs 13,000 ns from its inputs' upload at
  // 4,500 (the first test); slowed 2x: 1,000 + 2 x 12,000 = 25,000.
  Sim sim = faulty("die=sim:0@20000ns,slow=sim:0*2");
  auto first = run(*sim.devices[0], add_batch({ramp(1000, 1), ramp(1000, 2)}, "sim:0", 0));
  REQUIRE(first.ok());
  CHECK(sim.world->ready_at((*first)[0]) == 4500 + 1000 + 24000);
  // Stream 0 is at 29,500, past 20,000: the next batch there finds it dead.
  auto second = run(*sim.devices[0], add_batch({ramp(1000, 1), ramp(1000, 2)}, "sim:0", 0));
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().message() ==
        "'sim:0' is down: it died at virtual time 20000 ns (injected fault, seed 0)");
}

TEST_CASE("injected allocation and copy failures name the device or the link", "[sim][engine][faults]") {
  Sim alloc = faulty("seed=5,alloc=1");
  auto out = run(*alloc.devices[0], add_batch({ramp(4, 1), ramp(4, 1)}, "sim:0", 1));
  REQUIRE_FALSE(out.ok());
  CHECK(out.error() == Error{ErrorCode::ResourceExhausted,
                             "'sim:0' stream 1: allocating a batch's results failed (injected fault, seed 5)"});
  Sim copies = faulty("seed=6,transfer=1");
  auto up = run(*copies.devices[0], add_batch({ramp(4, 1), ramp(4, 1)}, "sim:0", 0));
  REQUIRE_FALSE(up.ok());
  CHECK(up.error() == Error{ErrorCode::TransientFailure,
                            "uploading input 0 to 'sim:0': the copy of 16 bytes from host to sim:0 failed (injected "
                            "fault, seed 6)"});
}

TEST_CASE("a sim device runs an extension op's host kernel and charges its family's estimate", "[sim][engine][extensions]") {
  auto negate_family = [](bool estimated) {
    auto f = std::make_shared<ExtensionFamily>();
    f->name = "t.neg";
    f->prepare_host = [](const ExtensionPrepareCall&) -> Result<HostExtensionKernel> {
      return HostExtensionKernel{[](const HostKernelArgs& args) -> Result<std::vector<HostTensor>> {
        auto x = args.inputs[0].contiguous().value();
        auto y = Tensor::zeros(DType::F32, x.shape()).value();
        for (int64_t i = 0; i < x.element_count(); ++i) y.data_as<float>()[i] = -x.data_as<float>()[i];
        return std::vector<HostTensor>{y};
      }};
    };
    if (estimated) f->estimate = [](const ExtensionWorkCall&) { return ExtensionWork{5000, 0}; };
    return f;
  };
  for (bool estimated : {false, true}) {
    INFO("estimated " << estimated);
    Sim sim{round_platform(1)};
    SimEngine& dev = *sim.devices[0];
    CHECK(dev.capabilities().host_extension_kernels);
    OpPrepareRequest r;
    r.kind = OpKind::Extension;
    r.attrs = ExtensionAttrs{"t.neg", "{}"};
    r.operands = {ValueType{DType::F32, exact_shape({1000})}};
    r.results = r.operands;
    r.binding.endpoint = {"sim:0", SimEngine::kDeviceStorage};
    r.extension = negate_family(estimated);
    PrepareAnswer answer = dev.prepare(r);
    auto* plan = std::get_if<std::shared_ptr<const PreparedOp>>(&answer);
    REQUIRE(plan);
    BatchWork w;
    w.inputs = {ramp(1000, 1)};
    w.ops.push_back({*plan, {BatchRef::input(0)}});
    w.outputs = {BatchRef::op(0)};
    w.queue = 0;
    auto out = run(dev, std::move(w));
    REQUIRE(out.ok());
    CHECK(read_back(sim, (*out)[0], *cpu::test_engine({1})).data_as<float>()[7] == -7.0f);
    // The upload: 500 + 4,000 = 4,500 ns. Without an estimate the op counts
    // as elementwise: 1,000 ops, 8,000 bytes -> 1,000 + 8,000 ns. With one:
    // 5,000 ops, 0 bytes -> 1,000 + 5,000 ns.
    CHECK(sim.world->ready_at((*out)[0]) == (estimated ? 4500 + 6000 : 4500 + 9000));
  }
}
