// Events and the CPU engine's queues: an event is signalled once and tells
// every waiter its outcome; batches of one queue run in submission order;
// a batch waits for its events without holding a thread, fails with a
// failed wait's error, and signals its own event before `done`; a consumer
// never starts before its producer's event, with completions delayed at
// random (1,000 runs).
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <mutex>
#include <random>
#include <thread>

#include "engines/cpu/cpu_engine.hpp"
#include "engines/event.hpp"
#include "tests/engines/cpu/test_engine.hpp"

using namespace tenact;
using namespace tenact::cpu;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<const PreparedOp> add_op(int64_t n) {
  auto op = std::make_shared<PreparedOp>();
  op->kind = OpKind::Add;
  op->results = {ValueType{DType::F32, exact_shape({n})}};
  op->binding.endpoint = {"cpu", "host"};
  return op;
}

HostTensor filled(int64_t n, float v) {
  auto t = HostTensor::zeros(DType::F32, {n}).value();
  for (int64_t i = 0; i < n; ++i) t.data_as<float>()[i] = v;
  return t;
}

/// out = a + b, on `queue`, after `waits`, signalling `signal`.
BatchWork add_batch(Tensor a, Tensor b, uint32_t queue, std::vector<EventPtr> waits = {},
                    EventPtr signal = nullptr) {
  BatchWork w;
  w.inputs = {std::move(a), std::move(b)};
  w.ops.push_back({add_op(w.inputs[0].element_count()), {BatchRef::input(0), BatchRef::input(1)}});
  w.outputs = {BatchRef::op(0)};
  w.queue = queue;
  w.waits = std::move(waits);
  w.signal = std::move(signal);
  return w;
}

CpuEngineOptions two_threads() {
  CpuEngineOptions o;
  o.threads = 2;
  return o;
}

}  // namespace

TEST_CASE("an event is signalled once and every waiter learns its outcome, in order", "[event]") {
  auto e = Event::create("producer");
  std::vector<int> seen;
  e->when_signaled([&](const Status& s) { seen.push_back(s.ok() ? 1 : -1); });
  e->when_signaled([&](const Status& s) { seen.push_back(s.ok() ? 2 : -2); });
  CHECK_FALSE(e->signaled());
  CHECK(seen.empty());
  CHECK(e->signal(Error{ErrorCode::ExecutionFailed, "boom"}));
  CHECK(seen == std::vector<int>{-1, -2});
  CHECK_FALSE(e->signal(ok_status()));  // the first signal wins
  CHECK_FALSE(e->outcome()->ok());
  e->when_signaled([&](const Status& s) { seen.push_back(s.ok() ? 3 : -3); });  // at once
  CHECK(seen == std::vector<int>{-1, -2, -3});

  auto a = Event::create("a"), b = Event::create("b");
  std::optional<Status> all;
  const std::vector<EventPtr> both = {a, b, nullptr};
  when_all_signaled(both, [&](Status s) { all = std::move(s); });
  b->signal(Error{ErrorCode::ExecutionFailed, "b failed"});
  CHECK_FALSE(all.has_value());  // a is still pending
  a->signal(ok_status());
  REQUIRE(all.has_value());
  REQUIRE_FALSE(all->ok());
  CHECK(all->error().message() == "waiting on b: b failed");
  std::optional<Status> none;
  when_all_signaled({}, [&](Status s) { none = std::move(s); });
  CHECK((none && none->ok()));
}

TEST_CASE("batches of one queue finish in submission order, any queue in parallel", "[cpu_engine][queue]") {
  auto engine = test_engine(two_threads());
  CHECK(engine->capabilities().queues == 2);
  std::mutex m;
  std::vector<int> order;
  std::promise<void> all;
  const int kBatches = 200;
  for (int i = 0; i < kBatches; ++i)
    engine->launch_batch(add_batch(filled(4000, float(i)), filled(4000, 1.0f), 1), [&, i](Result<std::vector<Tensor>> r) {
      std::lock_guard lock(m);
      order.push_back(r.ok() && (*r)[0].data_as<float>()[3999] == float(i + 1) ? i : -1);
      if (order.size() == kBatches) all.set_value();
    });
  REQUIRE(all.get_future().wait_for(30s) == std::future_status::ready);
  std::vector<int> expected(kBatches);
  for (int i = 0; i < kBatches; ++i) expected[i] = i;
  CHECK(order == expected);
  // A queue the engine does not have.
  std::promise<Result<std::vector<Tensor>>> bad;
  engine->launch_batch(add_batch(filled(1, 0), filled(1, 0), 2), [&](Result<std::vector<Tensor>> r) { bad.set_value(std::move(r)); });
  auto refused = bad.get_future().get();
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message() == "engine 'cpu' has 2 queues; a batch was sent to queue 2");
}

TEST_CASE("a batch waits for its event without holding the queue's order back", "[cpu_engine][queue]") {
  auto engine = test_engine(two_threads());
  auto producer = Event::create("producer");
  auto first_done = Event::create("first batch");
  std::mutex m;
  std::vector<int> order;
  std::promise<void> both;
  auto record = [&](int which) {
    return [&, which](Result<std::vector<Tensor>> r) {
      std::lock_guard lock(m);
      order.push_back(r.ok() ? which : -which);
      if (order.size() == 2) both.set_value();
    };
  };
  engine->launch_batch(add_batch(filled(8, 1), filled(8, 2), 0, {producer}, first_done), record(1));
  engine->launch_batch(add_batch(filled(8, 3), filled(8, 4), 0), record(2));  // behind it, no waits
  auto done = both.get_future();
  CHECK(done.wait_for(100ms) == std::future_status::timeout);  // nothing ran: the head waits
  CHECK_FALSE(first_done->signaled());
  producer->signal(ok_status());
  REQUIRE(done.wait_for(10s) == std::future_status::ready);
  CHECK(order == std::vector<int>{1, 2});
  CHECK((first_done->signaled() && first_done->outcome()->ok()));
}

TEST_CASE("a failed wait fails the batch and its own event with that error", "[cpu_engine][queue]") {
  auto engine = test_engine(two_threads());
  auto producer = Event::create("queue 0 of engine 'gpu'");
  auto mine = Event::create("consumer");
  producer->signal(Error{ErrorCode::ExecutionFailed, "op #2 (add) failed"});
  for (uint32_t queue : {0u, BatchWork::kAnyQueue}) {
    std::promise<Result<std::vector<Tensor>>> got;
    auto signal = Event::create("consumer");
    engine->launch_batch(add_batch(filled(8, 1), filled(8, 2), queue, {producer}, signal),
                         [&](Result<std::vector<Tensor>> r) {
                           CHECK(signal->signaled());  // signalled before done
                           got.set_value(std::move(r));
                         });
    auto r = got.get_future().get();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message() == "waiting on queue 0 of engine 'gpu': op #2 (add) failed");
    REQUIRE(signal->signaled());
    CHECK(signal->outcome()->error().message() == r.error().message());
  }
}

TEST_CASE("a consumer never starts before its producer's event: 1,000 runs with random delays",
          "[cpu_engine][queue]") {
  // The producer stands for another engine's queue: it writes its result
  // into a buffer after a random delay, then signals. The consumer (on the
  // CPU engine, a queue or any) reads that buffer; had it started early it
  // would read the zeros the buffer starts with.
  auto engine = test_engine(two_threads());
  std::mt19937 random(20261201);
  const int kRuns = 1000;
  const int64_t n = 64;
  std::vector<std::promise<Result<std::vector<Tensor>>>> results(kRuns);
  std::vector<std::thread> producers;
  for (int i = 0; i < kRuns; ++i) {
    Tensor produced = HostTensor::zeros(DType::F32, {n}).value();
    auto event = Event::create("producer " + std::to_string(i));
    const auto delay = std::chrono::microseconds(random() % 300);
    const uint32_t queue = i % 3 == 2 ? BatchWork::kAnyQueue : uint32_t(i % 2);
    engine->launch_batch(add_batch(produced, filled(n, 0.5f), queue, {event}),
                         [&results, i](Result<std::vector<Tensor>> r) { results[i].set_value(std::move(r)); });
    producers.emplace_back([produced, event, delay, i] {
      std::this_thread::sleep_for(delay);
      for (int64_t k = 0; k < n; ++k) produced.data_as<float>()[k] = float(i + k);
      event->signal(ok_status());
    });
    if (producers.size() == 32) {
      for (auto& t : producers) t.join();
      producers.clear();
    }
  }
  for (auto& t : producers) t.join();
  int wrong = 0;
  for (int i = 0; i < kRuns; ++i) {
    auto r = results[i].get_future().get();
    REQUIRE(r.ok());
    for (int64_t k = 0; k < n; ++k)
      if ((*r)[0].data_as<float>()[k] != float(i + k) + 0.5f) ++wrong;
  }
  CHECK(wrong == 0);
}

TEST_CASE("an engine destroyed while a batch waits fails that batch, never loses it", "[cpu_engine][queue]") {
  std::promise<Result<std::vector<Tensor>>> got;
  auto never = Event::create("a producer that never finishes");
  {
    auto engine = test_engine(two_threads());
    engine->launch_batch(add_batch(filled(8, 1), filled(8, 2), 1, {never}),
                         [&](Result<std::vector<Tensor>> r) { got.set_value(std::move(r)); });
  }
  auto future = got.get_future();
  REQUIRE(future.wait_for(5s) == std::future_status::ready);
  auto r = future.get();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::Shutdown);
  CHECK(r.error().message() ==
        "queue 1 of engine 'cpu' was destroyed before the events its batch waits on were signalled");
  never->signal(ok_status());  // late: nobody is left to run, nothing breaks
}
