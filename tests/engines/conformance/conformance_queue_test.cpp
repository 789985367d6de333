// The conformance suite, second part: queues and events on every engine
// kind (submission order, waits, deferred inputs, failed waits), what an
// engine refuses at prepare, the negative controls that show the suite
// catches a wrong engine, and the comparison itself.
#include "tests/engines/conformance/conformance_support.hpp"

using namespace tenact;
using namespace tenact::conformance;
using namespace tenact::conformance::suite;
using namespace std::chrono_literals;

TEST_CASE("conformance: batches of one queue run in submission order", "[conformance][queue]") {
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind};
    Engine& engine = rig->engine();
    const std::vector<uint32_t> queues = queues_to_test(engine);
    if (queues.empty()) WARN("engine kind '" << kind.name << "' has no queues");
    for (uint32_t queue : queues) {
      INFO("engine kind '" << kind.name << "', queue " << queue);
      const int64_t n = 2000;
      const Tensor one = place(*rig, ramp(n, 0, 1), engine);
      const int batches = 40;
      std::vector<Tensor> inputs;
      for (int i = 0; i < batches; ++i) inputs.push_back(place(*rig, ramp(n, 1, float(i)), engine));
      std::mutex m;
      std::vector<int> order;
      std::vector<Launched> launched(batches);
      for (int i = 0; i < batches; ++i) {
        LaunchCompletion done = launched[i].done();
        engine.launch_batch(add_batch(engine, {inputs[i], one}, queue, n),
                            [&m, &order, i, done = std::move(done)](Result<std::vector<Tensor>> r) {
                              {
                                std::lock_guard lock(m);
                                order.push_back(r.ok() ? i : -1 - i);
                              }
                              done(std::move(r));
                            });
      }
      for (int i = 0; i < batches; ++i) {
        Tensor got = result_of(*rig, launched[i].future);
        CHECK(got.data_as<float>()[n - 1] == float(n - 1) + float(i) + 1.0f);
      }
      std::vector<int> expected(batches);
      for (int i = 0; i < batches; ++i) expected[i] = i;
      std::lock_guard lock(m);
      CHECK(order == expected);
    }
  }
}

TEST_CASE("conformance: a batch waiting on an event starts only once it is signalled, and the queue behind it waits",
          "[conformance][queue][event]") {
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind};
    Engine& engine = rig->engine();
    for (uint32_t queue : queues_to_test(engine)) {
      INFO("engine kind '" << kind.name << "', queue " << queue);
      const int64_t n = 64;
      const Tensor a = place(*rig, ramp(n, 1), engine), b = place(*rig, ramp(n, 2), engine);
      auto gate = Event::create("the test's gate");
      auto first_signal = Event::create("first batch"), second_signal = Event::create("second batch");
      BatchWork first = add_batch(engine, {a, b}, queue, n);
      first.waits = {gate};
      first.signal = first_signal;
      BatchWork second = add_batch(engine, {b, b}, queue, n);
      second.signal = second_signal;
      Launched l1, l2;
      engine.launch_batch(std::move(first), l1.done());
      engine.launch_batch(std::move(second), l2.done());
      CHECK(l1.future.wait_for(50ms) == std::future_status::timeout);
      CHECK(l2.future.wait_for(0ms) == std::future_status::timeout);  // behind the waiting batch on its queue
      CHECK_FALSE(first_signal->signaled());
      CHECK_FALSE(second_signal->signaled());
      gate->signal(ok_status());
      Tensor r1 = result_of(*rig, l1.future), r2 = result_of(*rig, l2.future);
      CHECK(r1.data_as<float>()[10] == 30.0f);
      CHECK(r2.data_as<float>()[10] == 40.0f);
      REQUIRE(first_signal->signaled());
      REQUIRE(second_signal->signaled());
      CHECK(first_signal->outcome()->ok());
      CHECK(first_signal->signaled_ns() >= gate->signaled_ns());
      CHECK(second_signal->signaled_ns() >= first_signal->signaled_ns());
    }
  }
}

TEST_CASE("conformance: a batch never reads a deferred input before its producer's event: 100 runs with random delays",
          "[conformance][queue][event]") {
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind};
    Engine& engine = rig->engine();
    std::vector<uint32_t> queues = queues_to_test(engine);
    queues.push_back(BatchWork::kAnyQueue);
    const int64_t n = 32;
    const Tensor one = place(*rig, ramp(n, 0, 1), engine);
    std::mt19937 random(20260417);
    const int runs = 100;
    std::vector<Launched> launched(runs);
    std::vector<std::thread> producers;
    for (int i = 0; i < runs; ++i) {
      // The test is the producer: it publishes a value after a random
      // delay, then signals. Started early, the batch would find nothing
      // published.
      const Tensor produced = place(*rig, ramp(n, 1, float(i)), engine);
      auto published = std::make_shared<PublishedResults>();
      auto event = Event::create("producer " + std::to_string(i));
      BatchWork work;
      work.inputs = {one};
      work.deferred = {DeferredInput{published, 0}};
      work.ops.push_back({prepared_add(engine, n), {BatchRef::input(1), BatchRef::input(0)}});
      work.outputs = {BatchRef::op(0)};
      work.queue = queues[static_cast<size_t>(i) % queues.size()];
      work.waits = {event};
      engine.launch_batch(std::move(work), launched[i].done());
      const auto delay = std::chrono::microseconds(random() % 400);
      producers.emplace_back([produced, published, event, delay] {
        std::this_thread::sleep_for(delay);
        published->tensors = {produced};
        event->signal(ok_status());
      });
      if (producers.size() == 16) {
        for (auto& t : producers) t.join();
        producers.clear();
      }
    }
    for (auto& t : producers) t.join();
    int wrong = 0;
    for (int i = 0; i < runs; ++i) {
      INFO("engine kind '" << kind.name << "', run " << i);
      Tensor got = result_of(*rig, launched[i].future);
      for (int64_t k = 0; k < n; ++k) wrong += got.data_as<float>()[k] != float(k) + float(i) + 1.0f;
    }
    INFO("engine kind '" << kind.name << "'");
    CHECK(wrong == 0);
  }
}

TEST_CASE("conformance: a consumer on another queue follows its producer's event and publication",
          "[conformance][queue][event]") {
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind};
    Engine& engine = rig->engine();
    const std::vector<uint32_t> queues = queues_to_test(engine);
    if (queues.empty()) continue;
    INFO("engine kind '" << kind.name << "'");
    const int64_t n = 128;
    const Tensor x = place(*rig, ramp(n, 1), engine), y = place(*rig, ramp(n, 0, 0.5f), engine);
    auto gate = Event::create("gate");
    auto produced = Event::create("producer batch");
    auto consumed = Event::create("consumer batch");
    auto published = std::make_shared<PublishedResults>();
    BatchWork producer = add_batch(engine, {x, y}, queues.front(), n);
    producer.waits = {gate};
    producer.signal = produced;
    producer.publish = published;
    BatchWork consumer;
    consumer.inputs = {y};
    consumer.deferred = {DeferredInput{published, 0}};
    consumer.ops.push_back({prepared_add(engine, n), {BatchRef::input(1), BatchRef::input(0)}});
    consumer.outputs = {BatchRef::op(0)};
    consumer.queue = queues.back();
    consumer.waits = {produced};
    consumer.signal = consumed;
    Launched lc, lp;
    engine.launch_batch(std::move(consumer), lc.done());  // submitted first
    engine.launch_batch(std::move(producer), lp.done());
    CHECK(lc.future.wait_for(30ms) == std::future_status::timeout);
    gate->signal(ok_status());
    Tensor p = result_of(*rig, lp.future), c = result_of(*rig, lc.future);
    for (int64_t k = 0; k < n; k += 17) {
      CHECK(p.data_as<float>()[k] == float(k) + 0.5f);
      CHECK(c.data_as<float>()[k] == float(k) + 1.0f);
    }
    CHECK(consumed->signaled_ns() >= produced->signaled_ns());
  }
}

TEST_CASE("conformance: a failed wait fails the batch and its event with that error, and the queue goes on",
          "[conformance][queue][event]") {
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind};
    Engine& engine = rig->engine();
    std::vector<uint32_t> queues = queues_to_test(engine);
    queues.push_back(BatchWork::kAnyQueue);
    for (uint32_t queue : queues) {
      INFO("engine kind '" << kind.name << "', queue " << queue);
      const int64_t n = 16;
      const Tensor a = place(*rig, ramp(n, 1), engine);
      auto failed = Event::create("a producer on another engine");
      failed->signal(Error{ErrorCode::ExecutionFailed, "op #4 (tanh) failed"});
      auto mine = Event::create("waiting batch");
      BatchWork waiting = add_batch(engine, {a, a}, queue, n);
      waiting.waits = {failed};
      waiting.signal = mine;
      Launched lw, lb;
      engine.launch_batch(std::move(waiting), lw.done());
      engine.launch_batch(add_batch(engine, {a, a}, queue, n), lb.done());
      REQUIRE(lw.future.wait_for(30s) == std::future_status::ready);
      auto r = lw.future.get();
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().code() == ErrorCode::ExecutionFailed);
      CHECK_THAT(r.error().message(), Catch::Contains("waiting on a producer on another engine"));
      REQUIRE(mine->signaled());
      CHECK_FALSE(mine->outcome()->ok());
      Tensor behind = result_of(*rig, lb.future);
      CHECK(behind.data_as<float>()[3] == 6.0f);
    }
  }
}

// -- refusals ------------------------------------------------------------------------------------

TEST_CASE("conformance: what an engine kind lists as unsupported, or does not declare, is refused at prepare",
          "[conformance][refusal]") {
  // The listed refusals (none for cpu and sim) are checked by the matrix
  // (run_matrix checks the refusal of every case a kind refuses); here: the
  // families an engine does not declare, and extension families it has no
  // slot for.
  ExtensionRegistry extensions;
  extensions.add("conformance.identity",
                 [](std::span<const ValueType> in, const std::string&) -> Result<std::vector<ValueType>> {
                   return std::vector<ValueType>{in[0]};
                 });
  auto extension_program = program_of(R"({"format": "tenact.program/1",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [8]}],
      "ops": [{"op": "extension", "family": "conformance.identity", "in": ["x"], "out": "y"}], "outputs": ["y"]})",
                                      extensions);
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind};
    INFO("engine kind '" << kind.name << "'");
    const EngineCapabilities& caps = rig->engine().capabilities();
    CHECK_FALSE(caps.has_extension("conformance.identity"));
    CHECK(refusal_verdict(*rig, extension_program, {ramp(8, 1)}) == "ok");
    // Each core family it does not declare: every case of it is refused.
    for (OpFamily family : {OpFamily::Elementwise, OpFamily::Reduction, OpFamily::Indexing, OpFamily::Dot,
                            OpFamily::Layout}) {
      if (caps.serves(family)) continue;
      for (const OpSpec& spec : op_table()) {
        if (family_of(spec.kind) != family) continue;
        auto cases = make_cases(spec, spec.admitted.front(), Layout::Contiguous);
        REQUIRE(cases.ok());
        INFO("case " << cases->front().label());
        CHECK(refusal_verdict(*rig, cases->front().program, cases->front().inputs) == "ok");
      }
    }
  }
}

TEST_CASE("conformance negative control: an engine that refuses dot_general at prepare is caught refusing, "
          "and nothing of it runs",
          "[conformance][refusal][control]") {
  for (ControlBehaviour behaviour : {ControlBehaviour::RefuseAtPrepare, ControlBehaviour::DropFromCapabilities}) {
    INFO((behaviour == ControlBehaviour::RefuseAtPrepare ? "refuses at prepare" : "leaves dot out of its capabilities"));
    auto counters = std::make_shared<ControlCounters>();
    const EngineKind control =
        control_kind("cpu without dot", OpFamily::Dot, behaviour, {Refusal{OpFamily::Dot, {}, {}}}, counters);
    const MatrixReport dots = run_matrix({control}, [](const OpSpec& s) { return s.kind == OpKind::DotGeneral; });
    for (const std::string& failure : dots.failures) FAIL_CHECK(failure);
    CHECK(dots.compared == 0);
    CHECK(dots.refused == dots.cases);
    CHECK(dots.refused > 0);
    CHECK(counters->launches_of_family.load() == 0);
    if (behaviour == ControlBehaviour::RefuseAtPrepare) CHECK(counters->prepares_refused.load() > 0);
    // Everything else it serves, and matches.
    const MatrixReport others = run_matrix({control}, [](const OpSpec& s) { return s.kind == OpKind::Reverse; });
    for (const std::string& failure : others.failures) FAIL_CHECK(failure);
    CHECK(others.compared == others.cases);
    CHECK(others.compared > 0);
  }
}

TEST_CASE("conformance negative control: a table that lists as unsupported what the engine runs is caught",
          "[conformance][refusal][control]") {
  auto counters = std::make_shared<ControlCounters>();
  const EngineKind liar = control_kind("cpu claiming no reverse", OpFamily::Indexing, ControlBehaviour::ServeAnyway,
                                       {Refusal{{}, OpKind::Reverse, DType::F32}}, counters);
  const MatrixReport report = run_matrix({liar}, [](const OpSpec& s) { return s.kind == OpKind::Reverse; });
  CHECK(report.refused == std::size(kAllLayouts));  // reverse f32 in each layout
  REQUIRE(report.failures.size() == report.refused);
  for (const std::string& failure : report.failures) {
    CHECK_THAT(failure, Catch::Contains("reverse f32") && Catch::Contains("is listed as unsupported, but it was prepared"));
  }
  CHECK(counters->launches_of_family.load() > 0);
}

TEST_CASE("conformance negative control: an engine whose dot results are off by one bit is caught by the comparison",
          "[conformance][control]") {
  auto counters = std::make_shared<ControlCounters>();
  const EngineKind corrupt =
      control_kind("cpu with a flipped bit", OpFamily::Dot, ControlBehaviour::CorruptResults, {}, counters);
  const MatrixReport report = run_matrix({corrupt}, [](const OpSpec& s) { return s.kind == OpKind::DotGeneral; });
  CHECK(report.compared == report.cases);
  CHECK(counters->launches_of_family.load() > 0);
  // Every case has an output with elements (with nothing to contract, the
  // result is zeros), so every case is caught.
  for (const std::string& failure : report.failures) CHECK_THAT(failure, Catch::Contains("elements differ bitwise"));
  CHECK(report.failing_cases.size() == report.cases);
  CHECK(report.cases > 0);
}

// -- the comparison itself ------------------------------------------------------------------------

TEST_CASE("conformance: the comparison is bitwise at 0 ulps and bounded otherwise", "[conformance][compare]") {
  Tensor a = Tensor::zeros(DType::F32, {3}).value();
  a.data_as<float>()[0] = 1.0f;
  a.data_as<float>()[1] = std::nanf("1");
  a.data_as<float>()[2] = 0.0f;
  Tensor b = a.clone().value();
  CHECK(compare(a, b, {}) == "");
  uint32_t bits;
  std::memcpy(&bits, &b.data_as<float>()[0], 4);
  bits += 1;  // one ulp up
  std::memcpy(&b.data_as<float>()[0], &bits, 4);
  CHECK_THAT(compare(a, b, {}), Catch::Contains("1 of 3 elements differ bitwise") && Catch::Contains("at [0]"));
  CHECK(compare(a, b, {1}) == "");
  b.data_as<float>()[1] = std::nanf("2");  // another payload
  b.data_as<float>()[2] = -0.0f;
  CHECK_THAT(compare(a, b, {}), Catch::Contains("3 of 3 elements differ"));
  CHECK(compare(a, b, {1}) == "");
  b.data_as<float>()[2] = 1e-45f;  // 1 ulp from either zero
  CHECK(compare(a, b, {1}) == "");
  b.data_as<float>()[2] = 3e-45f;
  CHECK_THAT(compare(a, b, {1}), Catch::Contains("by more than 1 ulps"));
  b.data_as<float>()[1] = 1.0f;  // NaN expected
  CHECK_THAT(compare(a, b, {4}), Catch::Contains("at [1]"));
  CHECK_THAT(compare(a, Tensor::zeros(DType::F32, {4}).value(), {}), Catch::Contains("shape [4], expected [3]"));
  CHECK_THAT(compare(a, Tensor::zeros(DType::F64, {3}).value(), {}), Catch::Contains("dtype f64, expected f32"));
  // Integers are compared bitwise whatever the bound.
  Tensor i = integer_tensor(DType::I32, {2}, {5, -5}), j = integer_tensor(DType::I32, {2}, {5, -4});
  CHECK_THAT(compare(i, j, {100}), Catch::Contains("at [1] -4"));
  // Ulps across zero, and between the largest finite value and infinity.
  CHECK(ulp_distance(DType::F16, 0x0001, 0x8001) == 2u);
  CHECK(ulp_distance(DType::F16, 0x0000, 0x8000) == 0u);
  CHECK(ulp_distance(DType::BF16, 0x7f7f, 0x7f80) == 1u);
  CHECK_FALSE(ulp_distance(DType::F64, 0x7ff8000000000000ull, 0x3ff0000000000000ull).has_value());
  // Layout does not matter: a transposed view equals its dense copy.
  Tensor m = random_tensor(DType::C64, {3, 4}, 9);
  Tensor mt = m.transposed(std::vector<int64_t>{1, 0});
  CHECK(compare(mt.clone().value(), mt, {}) == "");
}
