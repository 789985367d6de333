// Models through the Runtime (actors/model.hpp): the KV-cache example run
// ten times against NumPy (tests/fixtures/gen_model_kv_cache.py), its
// states updated in place, read back and reset; an MLP with resident
// weights against the NumPy reference of examples/mlp, uploaded once per
// device (link bytes) and placed on both devices that read a weight; the
// plan in the prepared key; liveness packing giving the same outputs as
// unpacked storage over random programs, with fewer allocations; stateful
// runs serialized and pure runs concurrent; load errors; a model outliving
// its runtime.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "actors/runtime.hpp"
#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "engines/sim/sim_world.hpp"
#include "setup/engine_setup.hpp"

using namespace tenact;

namespace {

std::shared_ptr<const SemanticProgram> program_of(const std::string& json) {
  auto p = load_program(json);
  INFO((p.ok() ? std::string{} : p.error().to_string()));
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

std::shared_ptr<const SemanticProgram> program_file(const std::string& path) {
  auto p = load_program_file(std::string(TENACT_SOURCE_DIR) + "/" + path);
  INFO((p.ok() ? std::string{} : p.error().to_string()));
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

Tensor npy(const std::string& path) {
  auto t = read_tensor_file(path);
  INFO(path);
  REQUIRE(t.ok());
  return *t;
}

std::string kv_fixture(const std::string& file) { return std::string(TENACT_TEST_DATA_DIR) + "/model_kv_cache/" + file; }
std::string example(const std::string& file) { return std::string(TENACT_SOURCE_DIR) + "/examples/" + file; }

struct ModelRuntime {
  std::unique_ptr<Runtime> owned = std::make_unique<Runtime>();
  setup::RegisteredEngines engines;
  explicit ModelRuntime(const std::string& list) {
    auto specs = setup::parse_engine_list(list);
    REQUIRE(specs.ok());
    setup::EngineSetupOptions options;
    options.cpu_threads = 2;
    auto made = setup::register_engines(*owned, *specs, options);
    REQUIRE(made.ok());
    engines = std::move(*made);
  }
  Runtime& rt() { return *owned; }
  Tensor to_host(const Tensor& value) {
    if (value.is_host()) return value;
    auto copied = owned->copy(value, Endpoint::unowned_host()).get();
    REQUIRE(copied.ok());
    return *copied;
  }
};

ResolvedTensorSpec spec(DType dtype, std::vector<uint64_t> dims) {
  return ResolvedTensorSpec::make(std::move(dims), dtype, ResolvedTensorLayout::contiguous()).value();
}

// Within the spec's bounds for these small sums (a few ulps of the largest
// magnitude), as examples/ compares.
void check_close(const Tensor& got, const Tensor& want, const std::string& what) {
  INFO(what);
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.shape() == want.shape());
  auto g = got.contiguous().value();
  auto w = want.contiguous().value();
  const float* a = g.data_as<float>();
  const float* b = w.data_as<float>();
  float scale = 1;
  for (int64_t i = 0; i < w.element_count(); ++i) scale = std::max(scale, std::abs(b[i]));
  for (int64_t i = 0; i < w.element_count(); ++i)
    CHECK(std::abs(a[i] - b[i]) <= 64 * 1.2e-7f * scale);
}

ModelOptions kv_options() {
  ModelOptions o;
  for (const char* name : {"q", "k_new", "v_new"}) o.compile.tensors[name] = spec(DType::F32, {1, 16});
  return o;
}

// Runs the ten fixture steps on `model`, checking each context.
void run_kv_steps(Model& model, ModelRuntime& mr, int from = 0, int to = 10) {
  for (int t = from; t < to; ++t) {
    const std::string p = "step" + std::to_string(t) + "_";
    auto out = model.run({npy(kv_fixture(p + "q.npy")), npy(kv_fixture(p + "k_new.npy")), npy(kv_fixture(p + "v_new.npy"))}).get();
    INFO("step " << t << ": " << (out.ok() ? std::string{} : out.error().to_string()));
    REQUIRE(out.ok());
    REQUIRE(out->outputs.size() == 1);
    check_close(mr.to_host(out->outputs[0]), npy(kv_fixture(p + "context.npy")), "context of step " + std::to_string(t));
  }
}

const char* kMlpModel = R"({"format": "tenact.program/1", "name": "mlp_model",
  "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 16]}],
  "weights": [{"name": "w1", "dtype": "f32", "shape": [16, 32]}, {"name": "b1", "dtype": "f32", "shape": [32]},
              {"name": "w2", "dtype": "f32", "shape": [32, 10]}, {"name": "b2", "dtype": "f32", "shape": [10]}],
  "guards": ["B <= 65536"],
  "ops": [
    {"op": "dot_general", "in": ["x", "w1"], "out": "h1", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
    {"op": "broadcast_in_dim", "in": ["b1"], "out": "b1_rows", "shape": ["B", 32], "broadcast_dimensions": [1]},
    {"op": "add", "in": ["h1", "b1_rows"], "out": "z1"},
    {"op": "constant", "out": "zero", "dtype": "f32", "shape": ["B", 32], "value": 0},
    {"op": "maximum", "in": ["z1", "zero"], "out": "a1"},
    {"op": "dot_general", "in": ["a1", "w2"], "out": "h2", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
    {"op": "broadcast_in_dim", "in": ["b2"], "out": "b2_rows", "shape": ["B", 10], "broadcast_dimensions": [1]},
    {"op": "add", "in": ["h2", "b2_rows"], "out": "y"}],
  "outputs": ["y"]})";

std::map<std::string, Tensor> mlp_weights() {
  std::map<std::string, Tensor> w;
  for (const char* name : {"w1", "b1", "w2", "b2"}) w[name] = npy(example(std::string("mlp/inputs/") + name + ".npy"));
  return w;
}

ModelOptions mlp_options() {
  ModelOptions o;
  o.compile.tensors["x"] = spec(DType::F32, {4, 16});
  return o;
}

uint64_t link_bytes(const ModelRuntime& mr, const std::string& from, const std::string& to) {
  for (const sim::SimLinkStats& l : mr.engines.world->link_stats())
    if (l.from == from && l.to == to) return l.bytes;
  return 0;
}

}  // namespace

TEST_CASE("a KV-cache model run ten times matches NumPy step by step, its states persist in place and reset",
          "[model]") {
  ModelRuntime mr{"cpu"};
  auto model = mr.rt().load_model(program_file("examples/kv_cache_update/kv_cache_update.json"), {}, kv_options());
  INFO((model.ok() ? std::string{} : model.error().to_string()));
  REQUIRE(model.ok());
  const ModelPlan& plan = (*model)->plan();
  // Each update aliases its state: written in place, no copy of the cache.
  for (const StateUpdate& u : plan.program->state_updates()) {
    CHECK(plan.storage[u.value].kind == ValueStorage::Kind::Aliased);
    CHECK(plan.storage[u.value].aliases == std::optional<ValueId>{u.state});
  }
  run_kv_steps(**model, mr);
  auto k = (*model)->state("k_cache").get();
  auto v = (*model)->state("v_cache").get();
  auto step = (*model)->state("step").get();
  REQUIRE(k.ok());
  REQUIRE(v.ok());
  REQUIRE(step.ok());
  CHECK(k->bitwise_equal(npy(kv_fixture("k_cache.npy"))));
  CHECK(v->bitwise_equal(npy(kv_fixture("v_cache.npy"))));
  CHECK(step->bitwise_equal(npy(kv_fixture("step.npy"))));
  // The caches stay where they were allocated: ten runs later the engine
  // holds no more than after the first (outputs dropped), and no run
  // allocated a cache-sized copy.
  const auto after = mr.engines.cpus.at("cpu")->memory_stats("host").value();
  CHECK(after.allocated_bytes <= (*model)->memory().at("cpu/host").weight_bytes +
                                     (*model)->memory().at("cpu/host").state_bytes +
                                     (*model)->memory().at("cpu/host").arena_bytes);
  REQUIRE((*model)->reset().get().ok());
  auto zeroed = (*model)->state("k_cache").get();
  REQUIRE(zeroed.ok());
  for (int64_t i = 0; i < zeroed->element_count(); ++i) CHECK(zeroed->data_as<float>()[i] == 0.0f);
  run_kv_steps(**model, mr, 0, 2);  // from step 0 again
  CHECK((*model)->state("nope").get().error().code() == ErrorCode::UndefinedName);
}

TEST_CASE("the KV-cache model gives the same contexts on a simulated device as on the CPU engine", "[model][sim]") {
  ModelRuntime mr{"sim:0"};
  auto model = mr.rt().load_model(program_file("examples/kv_cache_update/kv_cache_update.json"), {}, kv_options());
  REQUIRE(model.ok());
  for (const NodeResolution& n : (*model)->plan().nodes) CHECK(n.engine == "sim:0");
  run_kv_steps(**model, mr);
  auto k = (*model)->state("k_cache").get();
  REQUIRE(k.ok());
  CHECK(k->bitwise_equal(npy(kv_fixture("k_cache.npy"))));
}

TEST_CASE("an MLP model runs with its weights resident: uploaded once, never again per run", "[model][sim]") {
  ModelRuntime mr{"sim:0"};
  auto model = mr.rt().load_model(program_of(kMlpModel), mlp_weights(), mlp_options());
  INFO((model.ok() ? std::string{} : model.error().to_string()));
  REQUIRE(model.ok());
  const Tensor x = npy(example("mlp/inputs/x.npy"));
  const uint64_t weights_bytes = (16 * 32 + 32 + 32 * 10 + 10) * 4;
  const uint64_t uploaded_at_load = link_bytes(mr, "host", "sim:0");
  CHECK(uploaded_at_load >= weights_bytes);
  for (int i = 0; i < 5; ++i) {
    auto out = (*model)->run({x}).get();
    REQUIRE(out.ok());
    check_close(mr.to_host(out->outputs[0]), npy(example("mlp/expected/y.npy")), "y");
  }
  // Five runs moved x (4 x 16 f32) each, and no weight.
  CHECK(link_bytes(mr, "host", "sim:0") - uploaded_at_load == 5 * 4 * 16 * 4);
}

TEST_CASE("packed weights: the MLP with the panel materializer runs on the packed-panel GEMM", "[model]") {
  ModelRuntime mr{"cpu"};
  ModelOptions options = mlp_options();
  options.compile.weight_materializer = "tenact.pack_panels";
  auto model = mr.rt().load_model(program_of(kMlpModel), mlp_weights(), options);
  INFO((model.ok() ? std::string{} : model.error().to_string()));
  REQUIRE(model.ok());
  CHECK((*model)->plan().node(0).provider == "cpu/dot_general.packed_panels");
  CHECK((*model)->plan().node(5).provider == "cpu/dot_general.packed_panels");
  auto out = (*model)->run({npy(example("mlp/inputs/x.npy"))}).get();
  REQUIRE(out.ok());
  check_close(out->outputs[0], npy(example("mlp/expected/y.npy")), "y");
}

TEST_CASE("one model on two devices places a weight read on both in both devices' arenas", "[model][sim]") {
  ModelRuntime mr{"sim:0,sim:1"};
  auto program = program_of(R"({"format": "tenact.program/1", "name": "two_readers",
    "inputs": [{"name": "a", "dtype": "f32", "shape": [2, 3]}, {"name": "b", "dtype": "f32", "shape": [2, 3]}],
    "weights": [{"name": "w", "dtype": "f32", "shape": [3, 2],
                 "data": {"dtype": "f32", "shape": [3, 2], "data": [1, 2, 3, 4, 5, 6]}}],
    "ops": [{"op": "dot_general", "in": ["a", "w"], "out": "ya", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
            {"op": "dot_general", "in": ["b", "w"], "out": "yb", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]}],
    "outputs": ["ya", "yb"]})");
  ModelOptions options;
  options.compile.tensors["a"] = spec(DType::F32, {2, 3});
  options.compile.tensors["b"] = spec(DType::F32, {2, 3});
  options.compile.preferred_providers["yb"] = "sim:1/dot_general.blas";
  auto model = mr.rt().load_model(program, {}, options);
  INFO((model.ok() ? std::string{} : model.error().to_string()));
  REQUIRE(model.ok());
  const ModelPlan& plan = (*model)->plan();
  CHECK(plan.node(0).engine == "sim:0");
  CHECK(plan.node(1).engine == "sim:1");
  REQUIRE(plan.weight_components.size() == 2);
  CHECK(plan.weight_components[0].endpoint == Endpoint{"sim:0", "device"});
  CHECK(plan.weight_components[1].endpoint == Endpoint{"sim:1", "device"});
  CHECK((*model)->memory().at("sim:0/device").weight_bytes >= 24);
  CHECK((*model)->memory().at("sim:1/device").weight_bytes >= 24);
  auto a = Tensor::zeros(DType::F32, {2, 3}).value();
  auto b = Tensor::zeros(DType::F32, {2, 3}).value();
  for (int i = 0; i < 6; ++i) {
    a.data_as<float>()[i] = static_cast<float>(i);      // [[0 1 2] [3 4 5]]
    b.data_as<float>()[i] = static_cast<float>(i == 0);  // [[1 0 0] [0 0 0]]
  }
  auto out = (*model)->run({a, b}).get();
  REQUIRE(out.ok());
  // a . w = [[0+3+10, 0+4+12], [3+12+25, 6+16+30]] = [[13, 16], [40, 52]]; b . w = [[1, 2], [0, 0]].
  const Tensor ya = mr.to_host(out->outputs[0]), yb = mr.to_host(out->outputs[1]);
  CHECK(std::vector<float>(ya.data_as<float>(), ya.data_as<float>() + 4) == std::vector<float>{13, 16, 40, 52});
  CHECK(std::vector<float>(yb.data_as<float>(), yb.data_as<float>() + 4) == std::vector<float>{1, 2, 0, 0});
  CHECK(out->outputs[0].endpoint() == Endpoint{"sim:0", "device"});
  CHECK(out->outputs[1].endpoint() == Endpoint{"sim:1", "device"});
}

TEST_CASE("a model's plan is part of its prepared key", "[model]") {
  ModelRuntime mr{"cpu"};
  auto program = program_of(kMlpModel);
  ModelOptions packed = mlp_options();
  packed.compile.pack_activations = false;
  auto first = mr.rt().load_model(program, mlp_weights(), mlp_options());
  auto second = mr.rt().load_model(program, mlp_weights(), packed);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK((*first)->plan().digest != (*second)->plan().digest);
  const Tensor x = npy(example("mlp/inputs/x.npy"));
  REQUIRE((*first)->run({x}).get().ok());
  REQUIRE((*second)->run({x}).get().ok());
  REQUIRE((*first)->run({x}).get().ok());
  CHECK(mr.rt().cache_stats().productions == 2);
}

TEST_CASE("runs of a model that updates states run one at a time, pure runs run concurrently", "[model]") {
  ModelRuntime mr{"cpu"};
  auto kv = mr.rt().load_model(program_file("examples/kv_cache_update/kv_cache_update.json"), {}, kv_options());
  auto mlp = mr.rt().load_model(program_of(kMlpModel), mlp_weights(), mlp_options());
  REQUIRE(kv.ok());
  REQUIRE(mlp.ok());
  const Tensor row = npy(kv_fixture("step0_q.npy"));
  const Tensor x = npy(example("mlp/inputs/x.npy"));
  const Tensor y = npy(example("mlp/expected/y.npy"));
  std::atomic<int> failed{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        if (!(*kv)->run({row, row, row}).get().ok()) ++failed;
        auto out = (*mlp)->run({x}).get();
        if (!out.ok()) {
          ++failed;
          continue;
        }
        // Catch2's assertions are not thread-safe: count here, assert below.
        const Tensor& got = out->outputs[0];
        bool same = got.shape() == y.shape();
        for (int64_t e = 0; same && e < y.element_count(); ++e)
          same = std::abs(got.data_as<float>()[e] - y.data_as<float>()[e]) <= 1e-4f;
        if (!same) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failed == 0);
  CHECK(wrong == 0);
  // Every one of the 160 updates of `step` was applied, once each.
  auto step = (*kv)->state("step").get();
  REQUIRE(step.ok());
  CHECK(step->data_as<int32_t>()[0] == 160);
  CHECK((*mlp)->memory().at("cpu/host").arenas <= 4);
}

TEST_CASE("liveness packing gives the same outputs as unpacked storage, with fewer allocations", "[model]") {
  ModelRuntime mr{"cpu"};
  std::mt19937 rng(2026);
  for (int p = 0; p < 24; ++p) {
    // A random DAG of elementwise ops and small dots over [4, 4] f32 values:
    // each op reads one or two earlier values; the last two values are outputs.
    std::string ops;
    std::vector<std::string> values = {"x", "w"};
    const char* unary[] = {"tanh", "negate", "exponential_minus_one", "abs", "transpose"};
    const char* binary[] = {"add", "multiply", "subtract", "maximum"};
    const int count = 4 + static_cast<int>(rng() % 20);
    for (int i = 0; i < count; ++i) {
      const std::string out = "v" + std::to_string(i);
      const std::string a = values[rng() % values.size()], b = values[rng() % values.size()];
      const int kind = static_cast<int>(rng() % 8);
      if (!ops.empty()) ops += ",\n";
      if (kind < 3) {
        const std::string op = unary[rng() % 5];
        ops += R"({"op": ")" + op + R"(", "in": [")" + a + R"("], "out": ")" + out + "\"" +
               (op == "transpose" ? R"(, "permutation": [1, 0]})" : "}");
      } else if (kind < 7)
        ops += R"({"op": ")" + std::string(binary[rng() % 4]) + R"(", "in": [")" + a + R"(", ")" + b +
               R"("], "out": ")" + out + "\"}";
      else
        ops += R"({"op": "dot_general", "in": [")" + a + R"(", ")" + b + R"("], "out": ")" + out +
               R"(", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]})";
      values.push_back(out);
    }
    auto program = program_of(R"({"format": "tenact.program/1", "name": "random",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 4]}],
      "weights": [{"name": "w", "dtype": "f32", "shape": [4, 4]}],
      "ops": [)" + ops + R"(], "outputs": [")" + values[values.size() - 2] + R"(", ")" + values.back() + R"("]})");
    auto x = Tensor::zeros(DType::F32, {4, 4}).value();
    auto w = Tensor::zeros(DType::F32, {4, 4}).value();
    for (int i = 0; i < 16; ++i) {
      x.data_as<float>()[i] = 0.1f * static_cast<float>(i) - 0.7f;
      w.data_as<float>()[i] = 0.05f * static_cast<float>(15 - i);
    }
    ModelOptions packed;
    packed.compile.tensors["x"] = spec(DType::F32, {4, 4});
    ModelOptions unpacked = packed;
    unpacked.compile.pack_activations = false;
    unpacked.compile.compiler.fuse_elementwise = packed.compile.compiler.fuse_elementwise = false;  // every value materialized
    auto a = mr.rt().load_model(program, {{"w", w}}, packed);
    auto b = mr.rt().load_model(program, {{"w", w}}, unpacked);
    INFO("program " << p << ": " << (a.ok() ? std::string{} : a.error().to_string()));
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK((*a)->plan().planned_activation_bytes <= (*b)->plan().planned_activation_bytes);
    auto cpu = mr.engines.cpus.at("cpu");
    REQUIRE((*a)->run({x}).get().ok());  // makes the arena
    const uint64_t before_a = cpu->memory_stats("host")->allocations;
    auto out_a = (*a)->run({x}).get();
    const uint64_t allocations_a = cpu->memory_stats("host")->allocations - before_a;
    const uint64_t before_b = cpu->memory_stats("host")->allocations;
    auto out_b = (*b)->run({x}).get();
    const uint64_t allocations_b = cpu->memory_stats("host")->allocations - before_b;
    REQUIRE(out_a.ok());
    REQUIRE(out_b.ok());
    for (size_t k = 0; k < 2; ++k) CHECK(out_a->outputs[k].bitwise_equal(out_b->outputs[k]));
    // Packed with fusion on: regions run as one step, which the plan's
    // lifetimes account for (ModelPlan::op_windows); fused results bit for
    // bit as unfused ones (docs/program-format.md, "Rounding").
    ModelOptions fused = packed;
    fused.compile.compiler.fuse_elementwise = true;
    auto c = mr.rt().load_model(program, {{"w", w}}, fused);
    REQUIRE(c.ok());
    for (int again = 0; again < 2; ++again) {
      auto out_c = (*c)->run({x}).get();
      REQUIRE(out_c.ok());
      for (size_t k = 0; k < 2; ++k) CHECK(out_c->outputs[k].bitwise_equal(out_b->outputs[k]));
    }
    // Packed values a live op reads (ops no output depends on are dropped
    // when the program is staged and never allocate either way).
    std::vector<bool> read((*a)->plan().storage.size(), false);
    for (ValueId v : program->outputs()) read[v] = true;
    for (size_t i = program->ops().size(); i-- > 0;) {
      const Op& op = program->ops()[i];
      bool live = false;
      for (ValueId v : op.outputs) live = live || read[v];
      if (live)
        for (ValueId v : op.inputs) read[v] = true;
    }
    for (ValueId v : program->outputs()) read[v] = false;  // outputs: never packed
    for (const Op& op : program->ops())
      for (ValueId v : op.outputs)
        if (read[v] && (*a)->plan().storage[v].packed == false) read[v] = false;
    size_t packed_values = 0;
    for (size_t v = 0; v < read.size(); ++v) packed_values += (*a)->plan().storage[v].packed && read[v] ? 1 : 0;
    CHECK(allocations_a + packed_values <= allocations_b);
  }
}

TEST_CASE("loading a model names what is wrong", "[model]") {
  ModelRuntime mr{"cpu"};
  auto program = program_of(kMlpModel);
  auto weights = mlp_weights();
  SECTION("a missing weight") {
    weights.erase("b2");
    auto m = mr.rt().load_model(program, weights, mlp_options());
    REQUIRE(!m.ok());
    CHECK(m.error().message().find("b2") != std::string::npos);
  }
  SECTION("a weight of the wrong shape") {
    weights["w2"] = Tensor::zeros(DType::F32, {32, 11}).value();
    auto m = mr.rt().load_model(program, weights, mlp_options());
    REQUIRE(!m.ok());
    CHECK(m.error().code() == ErrorCode::InputMismatch);
    CHECK(m.error().message().find("w2") != std::string::npos);
  }
  SECTION("an input without a tensor") {
    auto m = mr.rt().load_model(program, weights, ModelOptions{});
    REQUIRE(!m.ok());
    CHECK(m.error().code() == ErrorCode::InvalidPlan);
    CHECK(m.error().message().find("`x`") != std::string::npos);
  }
  SECTION("an input beyond its planned capacity, at run time") {
    auto m = mr.rt().load_model(program, weights, mlp_options());
    REQUIRE(m.ok());
    auto out = (*m)->run({Tensor::zeros(DType::F32, {5, 16}).value()}).get();
    REQUIRE(!out.ok());
    CHECK(out.error().code() == ErrorCode::LimitExceeded);
    CHECK(out.error().message().find("'x'") != std::string::npos);
    auto smaller = (*m)->run({Tensor::zeros(DType::F32, {2, 16}).value()}).get();
    REQUIRE(smaller.ok());
    CHECK(smaller->outputs[0].shape() == std::vector<int64_t>{2, 10});
  }
  SECTION("from a runtime callback, where it would wait") {
    auto plain = program_of(R"({"format": "tenact.program/1", "inputs": [{"name": "a", "dtype": "f32", "shape": [1]}],
      "ops": [{"op": "negate", "in": ["a"], "out": "b"}], "outputs": ["b"]})");
    std::promise<Result<ModelPtr>> loaded;
    mr.rt().run(plain, {Tensor::zeros(DType::F32, {1}).value()}, {},
                [&](Result<std::vector<Tensor>>) { loaded.set_value(mr.rt().load_model(program, weights, mlp_options())); });
    auto m = loaded.get_future().get();
    // The callback may run inline on this thread (a small run): then it was
    // not a runtime thread and the load went through.
    if (!m.ok()) CHECK(m.error().code() == ErrorCode::Internal);
  }
}

TEST_CASE("a model that outlives its runtime answers Shutdown", "[model]") {
  ModelPtr model;
  {
    ModelRuntime mr{"cpu"};
    auto m = mr.rt().load_model(program_of(kMlpModel), mlp_weights(), mlp_options());
    REQUIRE(m.ok());
    model = *m;
  }
  auto out = model->run({npy(example("mlp/inputs/x.npy"))}).get();
  REQUIRE(!out.ok());
  CHECK(out.error().code() == ErrorCode::Shutdown);
  CHECK(model->state("anything").get().error().code() == ErrorCode::UndefinedName);
  CHECK(model->reset().get().ok());  // no states: nothing to do
}

TEST_CASE("a state update no kernel writes in place replaces the state after each run", "[model][sim]") {
  for (const char* engines : {"cpu", "sim:0"}) {
    ModelRuntime mr{engines};
    // count_next = count + x: no in-place provider serves `add`.
    auto program = program_of(R"({"format": "tenact.program/1", "name": "counter",
      "inputs": [{"name": "x", "dtype": "i64", "shape": [2]}],
      "states": [{"name": "count", "dtype": "i64", "shape": [2]}],
      "ops": [{"op": "add", "in": ["count", "x"], "out": "count_next"},
              {"op": "multiply", "in": ["count_next", "x"], "out": "y"}],
      "state_updates": [{"state": "count", "value": "count_next"}],
      "outputs": ["y"]})");
    ModelOptions options;
    options.compile.tensors["x"] = spec(DType::I64, {2});
    auto model = mr.rt().load_model(program, {}, options);
    INFO(engines << ": " << (model.ok() ? std::string{} : model.error().to_string()));
    REQUIRE(model.ok());
    CHECK((*model)->plan().storage[program->state_updates()[0].value].kind == ValueStorage::Kind::Activation);
    auto x = Tensor::zeros(DType::I64, {2}).value();
    x.data_as<int64_t>()[0] = 1;
    x.data_as<int64_t>()[1] = 3;
    for (int64_t run = 1; run <= 5; ++run) {
      auto out = (*model)->run({x}).get();
      REQUIRE(out.ok());
      const Tensor y = mr.to_host(out->outputs[0]);
      // count after the run is run * x; y = count * x.
      CHECK(y.data_as<int64_t>()[0] == run * 1 * 1);
      CHECK(y.data_as<int64_t>()[1] == run * 3 * 3);
    }
    auto count = (*model)->state("count").get();
    REQUIRE(count.ok());
    CHECK(count->data_as<int64_t>()[0] == 5);
    CHECK(count->data_as<int64_t>()[1] == 15);
  }
}

TEST_CASE("a transformer block packed and fused gives the unpacked outputs bit for bit", "[model]") {
  // bench/models/transformer_block.json: layer norms from reductions, whose
  // broadcast of the scale sits between two multiplies one region fuses —
  // the region runs after the broadcast, so program-order liveness alone
  // would let the broadcast overwrite what the region still reads.
  ModelRuntime mr{"cpu"};
  auto program = program_file("bench/models/transformer_block.json");
  std::map<std::string, Tensor> weights;
  for (const WeightInfo& w : program->weights()) {
    const ValueInfo& v = program->value(w.value);
    std::vector<int64_t> shape;
    for (const ShapeExtent& e : v.type.shape) shape.push_back(*e.expr.constant_value());
    auto t = Tensor::zeros(DType::F32, shape).value();
    for (int64_t i = 0; i < t.element_count(); ++i)
      t.data_as<float>()[i] = 0.02f * static_cast<float>((i * 7919 + static_cast<int64_t>(w.value) * 31) % 97 - 48);
    weights[v.name] = t;
  }
  const ValueInfo& in = program->value(program->inputs()[0]);
  std::vector<int64_t> shape;
  for (const ShapeExtent& e : in.type.shape) shape.push_back(*e.expr.constant_value());
  auto x = Tensor::zeros(DType::F32, shape).value();
  for (int64_t i = 0; i < x.element_count(); ++i) x.data_as<float>()[i] = 0.01f * static_cast<float>(i % 211 - 105);
  ModelOptions packed;
  packed.compile.tensors[in.name] = spec(DType::F32, {shape.begin(), shape.end()});
  ModelOptions unpacked = packed;
  unpacked.compile.pack_activations = false;
  auto a = mr.rt().load_model(program, weights, packed);
  auto b = mr.rt().load_model(program, weights, unpacked);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK_FALSE((*a)->plan().fused_regions.empty());
  auto out_a = (*a)->run({x}).get();
  auto out_b = (*b)->run({x}).get();
  REQUIRE(out_a.ok());
  REQUIRE(out_b.ok());
  for (size_t k = 0; k < out_b->outputs.size(); ++k) CHECK(out_a->outputs[k].bitwise_equal(out_b->outputs[k]));
}
