// PipelineRun: the units of a prepared program (instructions, transfers,
// fused regions) and their dependencies, ready units and batches per
// location, values held until their last reader is done, outputs (passed
// through and repeated), misuse of unit_done, and failure that cancels and
// releases. Programs are prepared against scripted engines; every expected
// unit, batch, dependency and byte count is derived by hand from the
// program beside it. The run executes nothing: the tests feed unit_done
// tensors they make themselves.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../planning/planning_world.hpp"
#include "actors/pipeline/pipeline_run.hpp"

using namespace tenact;
using namespace tenact::testing;

namespace {

using U = std::vector<uint32_t>;

std::shared_ptr<const PreparedProgram> prepare(const World& w, const std::string& json,
                                               const std::vector<InputDescriptor>& inputs) {
  auto p = prepare_program(w.config, program_of(json), inputs, {}, w.lookup());
  if (!p.ok()) FAIL(p.error().to_string());
  return *p;
}

// A dense f32 tensor of `n` elements, every one `value`.
HostTensor filled(float value, std::vector<int64_t> shape = {4}) {
  auto t = HostTensor::zeros(DType::F32, std::move(shape));
  REQUIRE(t.ok());
  for (int64_t i = 0; i < t->element_count(); ++i) t->data_as<float>()[i] = value;
  return *t;
}

PipelineRun start(std::shared_ptr<const PreparedProgram> program, std::vector<HostTensor> inputs) {
  auto run = PipelineRun::start(std::move(program), std::move(inputs));
  if (!run.ok()) FAIL(run.error().to_string());
  return std::move(*run);
}

long uses(const HostTensor& t) { return t.buffer().use_count(); }

SlotCopy at(const PipelineRun& run, SlotId slot, const Endpoint& e) {
  for (LocationId l = 0; l < run.plan().schedule().locations.size(); ++l)
    if (run.plan().endpoint(l) == e) return SlotCopy{slot, l};
  FAIL("no location " + e.to_string());
  return {};
}

const Endpoint kCpu{"cpu", "host"};

// x -> a -> b -> c -> d, each f32[4].
const char* kChain = R"({"format": "tenact.program/1", "name": "chain",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
  "ops": [{"op": "negate", "in": ["x"], "out": "a"},
          {"op": "exponential", "in": ["a"], "out": "b"},
          {"op": "tanh", "in": ["b"], "out": "c"},
          {"op": "abs", "in": ["c"], "out": "d"}],
  "outputs": ["d"]})";

// a and b both read x; c reads both; d reads c.
const char* kDiamond = R"({"format": "tenact.program/1", "name": "diamond",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
  "ops": [{"op": "negate", "in": ["x"], "out": "a"},
          {"op": "exponential", "in": ["x"], "out": "b"},
          {"op": "add", "in": ["a", "b"], "out": "c"},
          {"op": "tanh", "in": ["c"], "out": "d"}],
  "outputs": ["d"]})";

// Engine a runs elementwise ops, b reductions; a route "link" a -> b.
World elementwise_then_reduction() {
  World w;
  w.add("a", {"host"}, {OpFamily::Elementwise});
  w.add("b", {"host"}, {OpFamily::Reduction});
  w.route({"a", "host"}, {"b", "host"}, "link");
  return w;
}

World cpu_world(bool fuses = false) {
  World w;
  auto e = std::make_shared<ScriptedEngine>("cpu", std::vector<std::string>{"host"});
  e->capabilities_.fused_elementwise_regions = fuses;
  w.add(e);
  return w;
}

}  // namespace

TEST_CASE("a chain on one engine is one batch, in order", "[pipeline_run]") {
  World w = cpu_world();
  auto program = prepare(w, kChain, {input(DType::F32, {4})});
  const HostTensor x = filled(1);
  PipelineRun run = start(program, {x});

  REQUIRE(run.unit_count() == 4);
  for (uint32_t u = 0; u < 4; ++u) {
    CHECK(run.unit(u).kind == PipelineUnitKind::Instruction);
    CHECK(run.unit(u).index == u);
    CHECK(run.plan().endpoint(run.unit(u).location) == kCpu);
    CHECK(run.unit(u).dependencies == (u == 0 ? U{} : U{u - 1}));
  }
  REQUIRE(run.unit(2).ops.size() == 1);
  CHECK(run.unit(2).ops[0]->kind == OpKind::Tanh);
  CHECK(run.unit(2).ops[0] == program->ops[2]);
  CHECK(run.unit(0).dependents == U{1});

  auto batches = run.take_ready_batches();
  REQUIRE(batches.size() == 1);
  CHECK(run.plan().endpoint(batches[0].location) == kCpu);
  CHECK(batches[0].units == U{0, 1, 2, 3});
  CHECK(run.in_flight() == 4);
  CHECK(run.take_ready().empty());
  CHECK(run.take_ready_batches().empty());

  // The batch needs x from outside and gives back only d (slot 4); a, b, c
  // are read inside it alone.
  CHECK(run.batch_input_copies(batches[0].units) == std::vector<SlotCopy>{at(run, 0, kCpu)});
  CHECK(run.batch_output_copies(batches[0].units) == std::vector<SlotCopy>{at(run, 4, kCpu)});
  const auto in = run.batch_inputs(batches[0].units);
  REQUIRE(in.size() == 1);
  CHECK(in[0].buffer() == x.buffer());

  const HostTensor d = filled(4);
  REQUIRE(run.batch_done(batches[0].units, {d}).ok());
  CHECK(run.finished());
  CHECK(run.in_flight() == 0);
  // x (16 bytes) and d (16 bytes) were held together once; now only d.
  CHECK(run.peak_bytes() == 32);
  CHECK(run.live_bytes() == 16);
  auto out = run.take_outputs();
  REQUIRE(out.ok());
  REQUIRE(out->size() == 1);
  CHECK((*out)[0].buffer() == d.buffer());
}

TEST_CASE("units run one at a time release each value after its last reader", "[pipeline_run]") {
  World w = cpu_world();
  PipelineRun run = start(prepare(w, kChain, {input(DType::F32, {4})}), {filled(1)});
  CHECK(run.live_bytes() == 16);
  CHECK(run.held_copies() == 1);
  std::vector<HostTensor> fed;
  for (uint32_t u = 0; u < 4; ++u) {
    CHECK(run.take_ready() == U{u});
    CHECK(run.take_ready().empty());
    const auto inputs = run.unit_inputs(u);
    REQUIRE(inputs.size() == 1);
    if (u > 0) CHECK(inputs[0].buffer() == fed.back().buffer());
    fed.push_back(filled(static_cast<float>(u)));
    REQUIRE(run.unit_done(u, {fed.back()}).ok());
    // Held now: only the value just made (the previous one had its last
    // reader in u); the test's copies and `inputs` hold the rest.
    CHECK(run.held_copies() == 1);
    CHECK(run.live_bytes() == 16);
    CHECK(uses(fed.back()) == 2);
    if (u > 0) CHECK(uses(fed[u - 1]) == 2);  // fed + inputs
  }
  CHECK(uses(fed[0]) == 1);
  CHECK(uses(fed[2]) == 1);
  CHECK(run.peak_bytes() == 32);
  CHECK(run.finished());
  auto out = run.take_outputs();
  REQUIRE(out.ok());
  CHECK((*out)[0].buffer() == fed[3].buffer());
  CHECK(run.live_bytes() == 0);
  CHECK(run.held_copies() == 0);
}

TEST_CASE("a diamond waits for both sides and batches whole", "[pipeline_run]") {
  World w = cpu_world();
  auto program = prepare(w, kDiamond, {input(DType::F32, {4})});

  SECTION("unit by unit") {
    const HostTensor x = filled(1);
    PipelineRun run = start(program, {x});
    REQUIRE(run.unit_count() == 4);
    CHECK(run.unit(2).dependencies == U{0, 1});
    CHECK(run.unit(0).dependents == U{2});
    CHECK(run.unit(1).dependents == U{2});
    CHECK(run.take_ready() == U{0, 1});
    CHECK(uses(x) == 2);
    REQUIRE(run.unit_done(1, {filled(2)}).ok());
    CHECK(run.take_ready().empty());  // c still waits for a
    CHECK(uses(x) == 2);              // a has not finished reading x
    const HostTensor a = filled(3);
    REQUIRE(run.unit_done(0, {a}).ok());
    CHECK(uses(x) == 1);
    CHECK(run.take_ready() == U{2});
    const auto c_in = run.unit_inputs(2);
    REQUIRE(c_in.size() == 2);
    CHECK(c_in[0].buffer() == a.buffer());
    CHECK(run.live_bytes() == 32);  // a and b
    REQUIRE(run.unit_done(2, {filled(4)}).ok());
    CHECK(run.live_bytes() == 16);  // c
    CHECK(run.take_ready() == U{3});
    REQUIRE(run.unit_done(3, {filled(5)}).ok());
    CHECK(run.finished());
    // Peak: x, a and b held together (a stored before x was let go).
    CHECK(run.peak_bytes() == 48);
  }
  SECTION("as one batch") {
    PipelineRun run = start(program, {filled(1)});
    auto batches = run.take_ready_batches();
    REQUIRE(batches.size() == 1);
    CHECK(batches[0].units == U{0, 1, 2, 3});
    CHECK(run.batch_output_copies(batches[0].units) == std::vector<SlotCopy>{at(run, 4, kCpu)});
  }
}

TEST_CASE("a copy read by a unit that becomes ready late outlives a reader finishing early",
          "[pipeline_run]") {
  // q (node 1) reads x but waits for p; r (node 2) reads x and is ready at
  // once. The schedule names r, the last reader in node order, as the one
  // releasing x; finishing r first must not drop x while q still needs it.
  World w = cpu_world();
  auto program = prepare(w, R"({"format": "tenact.program/1", "name": "late",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["y"], "out": "p"},
            {"op": "add", "in": ["p", "x"], "out": "q"},
            {"op": "exponential", "in": ["x"], "out": "r"}],
    "outputs": ["q", "r"]})",
                         {input(DType::F32, {4}), input(DType::F32, {4})});
  const auto& g = *program->root->schedule;
  REQUIRE(g.nodes.size() == 3);
  CHECK(g.nodes[2].releases == std::vector<SlotCopy>{{0, g.input_locations[0]}});

  const HostTensor x = filled(1);
  PipelineRun run = start(program, {x, filled(2)});
  CHECK(run.take_ready() == U{0, 2});
  REQUIRE(run.unit_done(2, {filled(3)}).ok());
  CHECK(uses(x) == 2);
  REQUIRE(run.unit_done(0, {filled(4)}).ok());
  CHECK(run.take_ready() == U{1});
  const auto q_in = run.unit_inputs(1);
  REQUIRE(q_in.size() == 2);
  CHECK(q_in[1].buffer() == x.buffer());
  REQUIRE(run.unit_done(1, {filled(5)}).ok());
  CHECK(uses(x) == 2);  // x, q_in
  CHECK(run.finished());
}

TEST_CASE("an elementwise region is one unit with its splat constant", "[pipeline_run]") {
  // Slots: x 0, y 1, two 2, m 3, s 4, t 5, r 6. The region holds the
  // constant (#0, absorbed), multiply, add and tanh; it reads x and y and
  // materializes s (an output) and t (read by the reduction).
  World w = cpu_world(true);
  auto program = prepare(w, R"({"format": "tenact.program/1", "name": "fused",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "constant", "out": "two", "dtype": "f32", "shape": [4], "value": 2},
            {"op": "multiply", "in": ["x", "two"], "out": "m"},
            {"op": "add", "in": ["m", "y"], "out": "s"},
            {"op": "tanh", "in": ["s"], "out": "t"},
            {"op": "reduce_sum", "in": ["t"], "out": "r", "dimensions": [0]}],
    "outputs": ["r", "s"]})",
                         {input(DType::F32, {4}), input(DType::F32, {4})});
  REQUIRE(program->root->regions.size() == 1);
  const HostTensor x = filled(1), y = filled(2);
  PipelineRun run = start(program, {x, y});
  REQUIRE(run.unit_count() == 2);
  const PipelineUnit& region = run.unit(0);
  CHECK(region.kind == PipelineUnitKind::Region);
  CHECK(region.index == 0);
  CHECK(region.nodes == U{0, 1, 2, 3});
  CHECK(region.instructions == U{0, 1, 2, 3});
  REQUIRE(region.ops.size() == 4);
  CHECK(region.ops[0]->kind == OpKind::Constant);
  CHECK(region.ops[3]->kind == OpKind::Tanh);
  CHECK(region.dependencies.empty());
  CHECK(region.inputs == std::vector<SlotCopy>{at(run, 0, kCpu), at(run, 1, kCpu)});
  CHECK(region.outputs == std::vector<SlotCopy>{at(run, 4, kCpu), at(run, 5, kCpu)});
  CHECK(run.plan().describe_unit(0) ==
        "region 0 (#1 multiply, #2 add, #3 tanh (+1 splat) over f32[4] at cpu/host)");
  CHECK(run.plan().unit_of_node(2) == 0);
  CHECK(run.plan().unit_of_node(4) == 1);
  const PipelineUnit& reduce = run.unit(1);
  CHECK(reduce.kind == PipelineUnitKind::Instruction);
  CHECK(reduce.index == 4);
  CHECK(reduce.dependencies == U{0});
  CHECK(reduce.inputs == std::vector<SlotCopy>{at(run, 5, kCpu)});

  CHECK(run.take_ready() == U{0});
  const auto in = run.unit_inputs(0);
  REQUIRE(in.size() == 2);
  CHECK(in[0].buffer() == x.buffer());
  CHECK(in[1].buffer() == y.buffer());
  const HostTensor s = filled(4), t = filled(5), r = filled(20, {});
  REQUIRE(run.unit_done(0, {s, t}).ok());
  CHECK(run.live_bytes() == 32);  // s and t; x and y released
  CHECK(run.take_ready() == U{1});
  REQUIRE(run.unit_done(1, {r}).ok());
  CHECK(run.live_bytes() == 20);  // r (4 bytes) and s
  CHECK(uses(t) == 1);
  auto out = run.take_outputs();
  REQUIRE(out.ok());
  REQUIRE(out->size() == 2);
  CHECK((*out)[0].buffer() == r.buffer());
  CHECK((*out)[1].buffer() == s.buffer());
}

TEST_CASE("units are numbered so that a region runs after what it reads", "[pipeline_run]") {
  // Region 0 = {#0 negate, #2 clamp}; #2 also reads r (a scalar bound),
  // which the reduction #1 made between them. The reduction's unit comes
  // first.
  World w = cpu_world(true);
  auto program = prepare(w, R"({"format": "tenact.program/1", "name": "interleaved",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a"},
            {"op": "reduce_sum", "in": ["y"], "out": "r", "dimensions": [0]},
            {"op": "clamp", "in": ["r", "a", "a"], "out": "b"}],
    "outputs": ["b"]})",
                         {input(DType::F32, {4}), input(DType::F32, {4})});
  REQUIRE(program->root->regions.size() == 1);
  PipelineRun run = start(program, {filled(1), filled(2)});
  REQUIRE(run.unit_count() == 2);
  CHECK(run.unit(0).kind == PipelineUnitKind::Instruction);
  CHECK(run.unit(0).index == 1);
  CHECK(run.unit(1).kind == PipelineUnitKind::Region);
  CHECK(run.unit(1).nodes == U{0, 2});
  CHECK(run.unit(1).dependencies == U{0});
  // Region inputs in order of first read: x, then r (slot 3).
  CHECK(run.unit(1).inputs == std::vector<SlotCopy>{at(run, 0, kCpu), at(run, 3, kCpu)});
  auto batches = run.take_ready_batches();
  REQUIRE(batches.size() == 1);
  CHECK(batches[0].units == U{0, 1});
}

TEST_CASE("a transfer between two engines is a unit and a batch of its own", "[pipeline_run]") {
  // n and e run on a (elementwise only), r on b (reduction only): e moves
  // a -> b. Nodes: 0 negate, 1 exponential, 2 transfer of e, 3 reduce_sum.
  World w = elementwise_then_reduction();
  auto program = prepare(w, R"({"format": "tenact.program/1", "name": "moved",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "n"},
            {"op": "exponential", "in": ["n"], "out": "e"},
            {"op": "reduce_sum", "in": ["e"], "out": "r", "dimensions": [0]}],
    "outputs": ["r"]})",
                         {input(DType::F32, {4})});
  const Endpoint a{"a", "host"}, b{"b", "host"};
  PipelineRun run = start(program, {filled(1)});
  REQUIRE(run.unit_count() == 4);
  const PipelineUnit& t = run.unit(2);
  CHECK(t.kind == PipelineUnitKind::Transfer);
  CHECK(t.index == 2);
  CHECK(t.slot == 2);
  CHECK(run.plan().endpoint(t.source) == a);
  CHECK(run.plan().endpoint(t.location) == b);
  CHECK(t.provider == "link");
  CHECK(t.ops.empty());
  CHECK(t.dependencies == U{1});
  CHECK(t.inputs == std::vector<SlotCopy>{at(run, 2, a)});
  CHECK(t.outputs == std::vector<SlotCopy>{at(run, 2, b)});
  CHECK(run.unit(3).dependencies == U{2});
  CHECK(run.plan().describe_unit(2) == "transfer of slot 2 ('e') a/host -> b/host");
  CHECK(run.plan().describe_unit(3) == "op #2 (reduce_sum -> 'r') at b/host");

  auto first = run.take_ready_batches();
  REQUIRE(first.size() == 1);
  CHECK(run.plan().endpoint(first[0].location) == a);
  CHECK(first[0].units == U{0, 1});
  CHECK(run.batch_output_copies(first[0].units) == std::vector<SlotCopy>{at(run, 2, a)});
  CHECK(run.take_ready_batches().empty());
  REQUIRE(run.batch_done(first[0].units, {filled(2)}).ok());
  CHECK(run.live_bytes() == 16);  // e at a

  auto second = run.take_ready_batches();
  REQUIRE(second.size() == 1);
  CHECK(second[0].units == U{2});
  CHECK(run.plan().endpoint(second[0].location) == b);
  CHECK(run.take_ready_batches().empty());
  const auto moved_in = run.unit_inputs(2);
  REQUIRE(moved_in.size() == 1);
  REQUIRE(run.unit_done(2, {filled(2)}).ok());
  CHECK(run.live_bytes() == 16);  // e at b; e at a released

  auto third = run.take_ready_batches();
  REQUIRE(third.size() == 1);
  CHECK(third[0].units == U{3});
  REQUIRE(run.unit_done(3, {filled(8, {})}).ok());
  CHECK(run.live_bytes() == 4);
  CHECK(run.finished());
}

TEST_CASE("ready work on two engines forms one batch per engine", "[pipeline_run]") {
  // x at a, y at b. Nodes: 0 negate(x)@a, 1 reduce(y)@b, 2 transfer n
  // a -> b, 3 reduce(n)@b. Unit 3 waits for the transfer, which is not in
  // b's first batch.
  World w = elementwise_then_reduction();
  const Endpoint a{"a", "host"}, b{"b", "host"};
  auto program = prepare(w, R"({"format": "tenact.program/1", "name": "two",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "n"},
            {"op": "reduce_sum", "in": ["y"], "out": "s", "dimensions": [0]},
            {"op": "reduce_sum", "in": ["n"], "out": "m", "dimensions": [0]}],
    "outputs": ["s", "m"]})",
                         {input(DType::F32, {4}, a), input(DType::F32, {4}, b)});
  PipelineRun run = start(program, {filled(1), filled(2)});
  REQUIRE(run.unit_count() == 4);
  CHECK(run.unit(2).kind == PipelineUnitKind::Transfer);
  auto batches = run.take_ready_batches();
  REQUIRE(batches.size() == 2);
  CHECK(run.plan().endpoint(batches[0].location) == a);
  CHECK(batches[0].units == U{0});
  CHECK(run.plan().endpoint(batches[1].location) == b);
  CHECK(batches[1].units == U{1});
  REQUIRE(run.batch_done(batches[1].units, {filled(8, {})}).ok());
  CHECK(run.take_ready_batches().empty());
  REQUIRE(run.batch_done(batches[0].units, {filled(-1)}).ok());
  auto next = run.take_ready_batches();
  REQUIRE(next.size() == 1);
  CHECK(next[0].units == U{2});
  REQUIRE(run.batch_done(next[0].units, {filled(-1)}).ok());
  auto last = run.take_ready_batches();
  REQUIRE(last.size() == 1);
  CHECK(last[0].units == U{3});
  REQUIRE(run.batch_done(last[0].units, {filled(-4, {})}).ok());
  CHECK(run.finished());
  auto out = run.take_outputs();
  REQUIRE(out.ok());
  CHECK(out->size() == 2);
}

TEST_CASE("outputs may pass an input through and repeat a value", "[pipeline_run]") {
  World w = cpu_world();
  auto program = prepare(w, R"({"format": "tenact.program/1", "name": "through",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "add", "in": ["x", "y"], "out": "a"},
            {"op": "exponential", "in": ["x"], "out": "unread"}],
    "outputs": ["a", "x", "a"]})",
                         {input(DType::F32, {4}), input(DType::F32, {4})});
  const HostTensor x = filled(1), y = filled(2);
  PipelineRun run = start(program, {x, y});
  // exponential -> 'unread' is read by nothing: staging dropped it, so the
  // run has one unit only.
  CHECK(run.unit_count() == 1);
  CHECK(run.take_ready() == U{0});
  const HostTensor a = filled(3);
  REQUIRE(run.unit_done(0, {a}).ok());
  CHECK(uses(y) == 1);  // y's last reader is done
  CHECK(uses(x) == 2);  // x is an output
  CHECK(run.finished());
  CHECK(run.held_copies() == 2);
  CHECK(run.live_bytes() == 32);
  auto out = run.take_outputs();
  REQUIRE(out.ok());
  REQUIRE(out->size() == 3);
  CHECK((*out)[0].buffer() == a.buffer());
  CHECK((*out)[1].buffer() == x.buffer());
  CHECK((*out)[2].buffer() == a.buffer());
  CHECK(run.held_copies() == 0);
  CHECK(run.live_bytes() == 0);
  auto again = run.take_outputs();
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().code() == ErrorCode::Internal);
}

TEST_CASE("a program without ops is finished at once", "[pipeline_run]") {
  World w = cpu_world();
  auto program = prepare(w, R"({"format": "tenact.program/1", "name": "identity",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}], "ops": [], "outputs": ["x", "x"]})",
                         {input(DType::F32, {4})});
  const HostTensor x = filled(1);
  PipelineRun run = start(program, {x});
  CHECK(run.unit_count() == 0);
  CHECK(run.finished());
  CHECK(run.take_ready_batches().empty());
  auto out = run.take_outputs();
  REQUIRE(out.ok());
  REQUIRE(out->size() == 2);
  CHECK((*out)[0].buffer() == x.buffer());
  CHECK((*out)[1].buffer() == x.buffer());
}

TEST_CASE("start checks the number, dtypes and ranks of the inputs", "[pipeline_run]") {
  World w = cpu_world();
  auto program = prepare(w, kChain, {input(DType::F32, {4})});
  auto none = PipelineRun::start(program, {});
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code() == ErrorCode::InputMismatch);
  CHECK_THAT(none.error().message(), Catch::Contains("takes 1 inputs, got 0"));
  auto i32 = HostTensor::zeros(DType::I32, {4});
  REQUIRE(i32.ok());
  auto wrong = PipelineRun::start(program, {*i32});
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().code() == ErrorCode::InputMismatch);
  CHECK_THAT(wrong.error().message(), Catch::Contains("input 0 ('x')"));
  auto rank = PipelineRun::start(program, {filled(1, {2, 2})});
  REQUIRE_FALSE(rank.ok());
  CHECK(rank.error().code() == ErrorCode::InputMismatch);
}

TEST_CASE("unit_done misuse is Internal and changes nothing", "[pipeline_run]") {
  World w = cpu_world();
  PipelineRun run = start(prepare(w, kDiamond, {input(DType::F32, {4})}), {filled(1)});
  auto expect_internal = [&](Status s, const std::string& text) {
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code() == ErrorCode::Internal);
    CHECK_THAT(s.error().message(), Catch::Contains(text));
    CHECK_FALSE(run.failed());
  };
  expect_internal(run.unit_done(0, {filled(1)}), "has not started");
  CHECK(run.take_ready() == U{0, 1});
  expect_internal(run.unit_done(0, {}), "with 0 outputs, expected 1");
  expect_internal(run.unit_done(0, {filled(1), filled(2)}), "with 2 outputs, expected 1");
  auto f64 = HostTensor::zeros(DType::F64, {4});
  REQUIRE(f64.ok());
  expect_internal(run.unit_done(0, {*f64}), "f64 of rank 1 for slot 1 ('a')");
  expect_internal(run.unit_done(9, {filled(1)}), "unit 9 of a run with 4 units");
  CHECK(run.in_flight() == 2);
  CHECK(run.live_bytes() == 16);
  REQUIRE(run.unit_done(0, {filled(1)}).ok());
  expect_internal(run.unit_done(0, {filled(1)}), "op #0 (negate -> 'a') at cpu/host, which is already done");
  expect_internal(run.unit_done(2, {filled(1)}), "has not started");
  CHECK(run.in_flight() == 1);
  // A batch listing a unit twice, or a unit not started.
  expect_internal(run.batch_done(U{1, 1}, {}), "twice");
  expect_internal(run.batch_done(U{1, 2}, {}), "has not started");
  auto early = run.take_outputs();
  REQUIRE_FALSE(early.ok());
  CHECK(early.error().code() == ErrorCode::Internal);
}

TEST_CASE("a failure names its unit, cancels the rest and releases everything", "[pipeline_run]") {
  World w = cpu_world();
  const HostTensor x = filled(1);
  PipelineRun run = start(prepare(w, kDiamond, {input(DType::F32, {4})}), {x});
  CHECK(run.take_ready() == U{0, 1});
  run.fail(0, Error{ErrorCode::ExecutionFailed, "kernel exploded"});
  REQUIRE(run.failed());
  const Error expected{ErrorCode::ExecutionFailed, "op #0 (negate -> 'a') at cpu/host: kernel exploded"};
  CHECK(*run.error() == expected);
  CHECK(run.in_flight() == 1);
  CHECK_FALSE(run.finished());
  CHECK(run.take_ready().empty());
  CHECK(run.take_ready_batches().empty());
  CHECK(run.live_bytes() == 0);
  CHECK(run.held_copies() == 0);
  CHECK(uses(x) == 1);
  auto early = run.take_outputs();
  REQUIRE_FALSE(early.ok());
  CHECK(early.error().code() == ErrorCode::Internal);

  SECTION("the unit still in flight reports its result, which is dropped") {
    const HostTensor b = filled(2);
    REQUIRE(run.unit_done(1, {b}).ok());
    CHECK(uses(b) == 1);
    CHECK(run.live_bytes() == 0);
  }
  SECTION("the unit still in flight fails too; the first error wins") {
    run.fail(1, Error{ErrorCode::Timeout, "late"});
    CHECK(*run.error() == expected);
  }
  CHECK(run.in_flight() == 0);
  CHECK(run.finished());
  CHECK(run.take_ready().empty());
  auto out = run.take_outputs();
  REQUIRE_FALSE(out.ok());
  CHECK(out.error() == expected);
}

TEST_CASE("a failed batch names its units and finishes them all", "[pipeline_run]") {
  World w = cpu_world();
  PipelineRun run = start(prepare(w, kChain, {input(DType::F32, {4})}), {filled(1)});
  auto batches = run.take_ready_batches();
  REQUIRE(batches.size() == 1);
  run.fail_batch(batches[0].units, Error{ErrorCode::ExecutionFailed, "batch op 2 (tanh): no"});
  REQUIRE(run.failed());
  CHECK(run.error()->message() ==
        "batch of 4 units at cpu/host, op #0 (negate -> 'a') at cpu/host to op #3 (abs -> 'd') at cpu/host: "
        "batch op 2 (tanh): no");
  CHECK(run.in_flight() == 0);
  CHECK(run.finished());
  CHECK(run.live_bytes() == 0);
}

TEST_CASE("a chain of 10,000 nodes plans and batches as one", "[pipeline_run]") {
  constexpr int kOps = 10000;
  std::string json = R"({"format": "tenact.program/1", "name": "long",
    "inputs": [{"name": "v0", "dtype": "f32", "shape": [4]}], "ops": [)";
  for (int i = 0; i < kOps; ++i)
    json += std::string{i ? "," : ""} + R"({"op": "negate", "in": ["v)" + std::to_string(i) + R"("], "out": "v)" +
            std::to_string(i + 1) + R"("})";
  json += R"(], "outputs": ["v)" + std::to_string(kOps) + R"("]})";
  World w = cpu_world();
  auto program = prepare(w, json, {input(DType::F32, {4})});
  auto plan = PipelinePlan::build(program);
  REQUIRE(plan.ok());
  REQUIRE((*plan)->unit_count() == kOps);

  auto first = PipelineRun::start(*plan, {filled(1)});
  REQUIRE(first.ok());
  auto batches = first->take_ready_batches();
  REQUIRE(batches.size() == 1);
  REQUIRE(batches[0].units.size() == kOps);
  bool ascending = true;
  for (uint32_t u = 0; u < kOps; ++u) ascending = ascending && batches[0].units[u] == u;
  CHECK(ascending);
  REQUIRE(first->batch_output_copies(batches[0].units).size() == 1);
  REQUIRE(first->batch_done(batches[0].units, {filled(1)}).ok());
  CHECK(first->finished());

  // The same plan, one unit at a time: one value held after each step.
  auto second = PipelineRun::start(*plan, {filled(1)});
  REQUIRE(second.ok());
  bool one_at_a_time = true;
  for (uint32_t u = 0; u < kOps; ++u) {
    const auto ready = second->take_ready();
    one_at_a_time = one_at_a_time && ready == U{u} && second->unit_done(u, {filled(0)}).ok() &&
                    second->held_copies() == 1;
  }
  CHECK(one_at_a_time);
  CHECK(second->finished());
  CHECK(second->peak_bytes() == 32);
}

TEST_CASE("enqueued behind events, a batch ends after a unit another lane waits for", "[pipeline_run]") {
  // x at a. Nodes: 0 negate(x)@a, 1 transfer n a -> b, 2 reduce(n)@b,
  // 3 exponential(n)@a, 4 tanh(m)@a. The transfer waits on the signal of
  // the batch holding negate; were exponential and tanh in that batch, the
  // copy (and b) would wait for them too, though neither is needed there.
  World w = elementwise_then_reduction();
  const Endpoint a{"a", "host"}, b{"b", "host"};
  auto program = prepare(w, R"({"format": "tenact.program/1", "name": "cut",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "n"},
            {"op": "reduce_sum", "in": ["n"], "out": "r", "dimensions": [0]},
            {"op": "exponential", "in": ["n"], "out": "m"},
            {"op": "tanh", "in": ["m"], "out": "t"}],
    "outputs": ["r", "t"]})",
                         {input(DType::F32, {4}, a)});
  PipelineRun run = start(program, {filled(1)});
  REQUIRE(run.unit_count() == 5);
  REQUIRE(run.unit(1).kind == PipelineUnitKind::Transfer);
  CHECK(run.unit(0).feeds_other_lane);   // the transfer reads n
  CHECK_FALSE(run.unit(1).feeds_other_lane);  // a transfer is a batch of its own
  CHECK_FALSE(run.unit(2).feeds_other_lane);
  CHECK_FALSE(run.unit(3).feeds_other_lane);  // tanh runs on a's lane
  CHECK_FALSE(run.unit(4).feeds_other_lane);

  auto batches = run.take_all_batches();
  REQUIRE(batches.size() == 4);
  CHECK(batches[0].units == U{0});
  CHECK(run.plan().endpoint(batches[0].location) == a);
  CHECK(batches[1].units == U{1});
  CHECK(batches[2].units == U{2});
  CHECK(run.plan().endpoint(batches[2].location) == b);
  CHECK(batches[3].units == U{3, 4});
  CHECK(run.plan().endpoint(batches[3].location) == a);
  CHECK(run.take_all_batches().empty());

  REQUIRE(run.batch_done(batches[0].units, {filled(-1)}).ok());
  REQUIRE(run.batch_done(batches[1].units, {filled(-1)}).ok());
  REQUIRE(run.batch_done(batches[2].units, {filled(-4, {})}).ok());
  REQUIRE(run.batch_done(batches[3].units, {filled(0.5f)}).ok());
  CHECK(run.finished());
  auto out = run.take_outputs();
  REQUIRE(out.ok());
  REQUIRE(out->size() == 2);
  CHECK((*out)[0].data_as<float>()[0] == -4.0f);
  CHECK((*out)[1].data_as<float>()[0] == 0.5f);
}
