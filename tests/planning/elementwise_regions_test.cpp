// Elementwise region planning: which instructions fuse (chains, DAGs,
// regions broken by reductions, non-convex and cross-region cycles
// refused), per endpoint, with splat constants and broadcasts absorbed or not, region
// inputs and outputs, shapes (symbolic exact fuse, upper bounds do not),
// the sequential order of steps, and describe_region. Every expected
// region is derived by hand from the program beside it.
#include <catch2/catch.hpp>

#include "core/builder.hpp"
#include "core/program_json.hpp"
#include "planning/elementwise_regions.hpp"
#include "staged_programs.hpp"

using namespace tenact;
using tenact::testing::load;
using tenact::testing::stage_ok;
using tenact::testing::slot_named;
using tenact::testing::slots_named;

namespace {

const Endpoint kCpu{"cpu", "host"};
const Endpoint kSim{"sim", "device"};

bool fuse_everywhere(const Endpoint&) { return true; }

// Plans with every instruction on the CPU.
std::vector<ElementwiseRegion> plan_on_cpu(const ExecProgram& e) {
  std::vector<Endpoint> endpoints(e.instructions.size(), kCpu);
  auto r = plan_elementwise_regions(e, endpoints, fuse_everywhere);
  REQUIRE(r.ok());
  return std::move(*r);
}

using U = std::vector<uint32_t>;

}  // namespace

TEST_CASE("a straight chain of elementwise ops is one region", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "multiply", "in": ["x", "y"], "out": "a"},
            {"op": "add", "in": ["a", "x"], "out": "b"},
            {"op": "tanh", "in": ["b"], "out": "c"}],
    "outputs": ["c"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  const ElementwiseRegion& r = regions[0];
  CHECK(r.instructions == U{0, 1, 2});
  CHECK(r.splat_constants.empty());
  CHECK(r.compute_ops() == 3);
  CHECK(r.inputs == slots_named(e, {"x", "y"}));
  CHECK(r.outputs == slots_named(e, {"c"}));
  CHECK(r.endpoint == kCpu);
  CHECK(r.shape == exact_shape({4}));
  CHECK(region_of_instructions(3, regions) == std::vector<int32_t>{0, 0, 0});
}

TEST_CASE("a diamond of elementwise ops is one region with one output", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3]}],
    "ops": [{"op": "exponential", "in": ["x"], "out": "a"},
            {"op": "negate", "in": ["a"], "out": "b"},
            {"op": "abs", "in": ["a"], "out": "c"},
            {"op": "add", "in": ["b", "c"], "out": "d"}],
    "outputs": ["d"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == U{0, 1, 2, 3});
  CHECK(regions[0].inputs == slots_named(e, {"x"}));
  CHECK(regions[0].outputs == slots_named(e, {"d"}));
}

TEST_CASE("a reduction splits a chain into two regions joined by an edge", "[regions]") {
  // a, s fuse; r reads s outside; b, c fuse, absorbing the broadcast rb
  // of r, and c also reads s from the first region (an edge from a lower
  // to a higher region is fine).
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", 8]}],
    "ops": [{"op": "exponential", "in": ["x"], "out": "a"},
            {"op": "multiply", "in": ["a", "a"], "out": "s"},
            {"op": "reduce_sum", "in": ["s"], "out": "r", "dimensions": [1]},
            {"op": "broadcast_in_dim", "in": ["r"], "out": "rb", "shape": ["N", 8], "broadcast_dimensions": [0]},
            {"op": "negate", "in": ["rb"], "out": "b"},
            {"op": "add", "in": ["b", "s"], "out": "c"}],
    "outputs": ["c"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 2);
  CHECK(regions[0].instructions == U{0, 1});
  CHECK(regions[0].inputs == slots_named(e, {"x"}));
  CHECK(regions[0].outputs == slots_named(e, {"s"}));
  CHECK(regions[1].instructions == U{3, 4, 5});
  CHECK(regions[1].broadcasts == U{3});
  CHECK(regions[1].inputs == slots_named(e, {"r", "s"}));
  CHECK(regions[1].outputs == slots_named(e, {"c"}));
  CHECK(region_of_instructions(6, regions) == std::vector<int32_t>{0, 0, -1, 1, 1, 1});
}

TEST_CASE("an op reading both a region result and a reduction of it stays outside", "[regions]") {
  // Softmax: y = e / broadcast(reduce_sum(e)). Joining e's region would put
  // the reduction both after and before the region: not convex. y forms a
  // region of its own with the broadcast sb it absorbs, as e's region
  // absorbs mb.
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", 8]}],
    "ops": [{"op": "reduce_max", "in": ["x"], "out": "row_max", "dimensions": [1]},
            {"op": "broadcast_in_dim", "in": ["row_max"], "out": "mb", "shape": ["N", 8], "broadcast_dimensions": [0]},
            {"op": "subtract", "in": ["x", "mb"], "out": "shifted"},
            {"op": "exponential", "in": ["shifted"], "out": "e"},
            {"op": "reduce_sum", "in": ["e"], "out": "row_sum", "dimensions": [1]},
            {"op": "broadcast_in_dim", "in": ["row_sum"], "out": "sb", "shape": ["N", 8], "broadcast_dimensions": [0]},
            {"op": "divide", "in": ["e", "sb"], "out": "y"}],
    "outputs": ["y"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 2);
  CHECK(regions[0].instructions == U{1, 2, 3});
  CHECK(regions[0].broadcasts == U{1});
  CHECK(regions[0].inputs == slots_named(e, {"row_max", "x"}));
  CHECK(regions[0].outputs == slots_named(e, {"e"}));  // read by the reduction and by y
  CHECK(regions[1].instructions == U{5, 6});
  CHECK(regions[1].broadcasts == U{5});
  CHECK(regions[1].inputs == slots_named(e, {"row_sum", "e"}));
  CHECK(regions[1].outputs == slots_named(e, {"y"}));
}

TEST_CASE("two regions that would feed each other are not both formed", "[regions]") {
  // Each alone would be convex: A = {a1, a2} over [4], B = {b2, b1} over [2],
  // but A -> t -> b1 and b2 -> u -> a2 make a cycle between them. B opens
  // after A, so it may read A's results; a2 may not read what B feeds.
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [2]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a1"},
            {"op": "negate", "in": ["y"], "out": "b2"},
            {"op": "slice", "in": ["a1"], "out": "t", "start_indices": [0], "limit_indices": [2]},
            {"op": "add", "in": ["t", "b2"], "out": "b1"},
            {"op": "concatenate", "in": ["b2", "b2"], "out": "u", "dimension": 0},
            {"op": "add", "in": ["a1", "u"], "out": "a2"}],
    "outputs": ["a2", "b1"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == U{1, 3});
  CHECK(regions[0].inputs == slots_named(e, {"y", "t"}));
  CHECK(regions[0].outputs == slots_named(e, {"b2", "b1"}));
  // Every instruction and the region appear once, each after what it reads.
  const auto steps = sequential_steps(e, regions);
  using K = ExecStep::Kind;
  CHECK(steps == std::vector<ExecStep>{{K::Instruction, 0}, {K::Instruction, 2}, {K::Region, 0},
                                       {K::Instruction, 4}, {K::Instruction, 5}});
}

TEST_CASE("an unrelated op between members does not break a region", "[regions]") {
  // r reads a (a region output, read before the region's last member);
  // s is independent and feeds b through sb, which the region absorbs.
  // The region runs after s and before r.
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "i32", "shape": [3]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a"},
            {"op": "reduce_sum", "in": ["a"], "out": "r", "dimensions": [0]},
            {"op": "reduce_max", "in": ["x"], "out": "s", "dimensions": [0]},
            {"op": "broadcast_in_dim", "in": ["s"], "out": "sb", "shape": [3], "broadcast_dimensions": []},
            {"op": "add", "in": ["a", "sb"], "out": "b"}],
    "outputs": ["r", "b"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == U{0, 3, 4});
  CHECK(regions[0].broadcasts == U{3});
  CHECK(regions[0].inputs == slots_named(e, {"x", "s"}));
  CHECK(regions[0].outputs == slots_named(e, {"a", "b"}));
  using K = ExecStep::Kind;
  CHECK(sequential_steps(e, regions) ==
        std::vector<ExecStep>{{K::Instruction, 2}, {K::Region, 0}, {K::Instruction, 1}});
}

TEST_CASE("without regions the sequential steps are program order", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [3]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a"},
            {"op": "reduce_sum", "in": ["x"], "out": "r", "dimensions": [0]},
            {"op": "abs", "in": ["a"], "out": "b"}],
    "outputs": ["r", "b"]})"));
  using K = ExecStep::Kind;
  CHECK(sequential_steps(e, {}) ==
        std::vector<ExecStep>{{K::Instruction, 0}, {K::Instruction, 1}, {K::Instruction, 2}});
}

TEST_CASE("regions form per endpoint and only where the engine can fuse", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a"},
            {"op": "abs", "in": ["a"], "out": "b"},
            {"op": "exponential", "in": ["b"], "out": "c"},
            {"op": "sqrt", "in": ["c"], "out": "d"}],
    "outputs": ["d"]})"));
  const std::vector<Endpoint> split{kCpu, kCpu, kSim, kSim};
  auto both = plan_elementwise_regions(e, split, fuse_everywhere);
  REQUIRE(both.ok());
  REQUIRE(both->size() == 2);
  CHECK((*both)[0].instructions == U{0, 1});
  CHECK((*both)[0].endpoint == kCpu);
  CHECK((*both)[0].outputs == slots_named(e, {"b"}));
  CHECK((*both)[1].instructions == U{2, 3});
  CHECK((*both)[1].endpoint == kSim);
  CHECK((*both)[1].inputs == slots_named(e, {"b"}));

  auto cpu_only = plan_elementwise_regions(e, split, [](const Endpoint& ep) { return ep.engine == "cpu"; });
  REQUIRE(cpu_only.ok());
  REQUIRE(cpu_only->size() == 1);
  CHECK((*cpu_only)[0].instructions == U{0, 1});

  // Alternating endpoints: no two neighbours share one, and the cpu ops
  // a and c are joined only through b on sim.
  const std::vector<Endpoint> alternating{kCpu, kSim, kCpu, kSim};
  auto none = plan_elementwise_regions(e, alternating, [](const Endpoint& ep) { return ep.engine == "cpu"; });
  REQUIRE(none.ok());
  CHECK(none->empty());

  auto no_fusion = plan_elementwise_regions(e, split, [](const Endpoint&) { return false; });
  REQUIRE(no_fusion.ok());
  CHECK(no_fusion->empty());
}

TEST_CASE("an op placed on a queue joins only a region it reads from", "[regions]") {
  // Two independent chains of one shape: x -> a -> b and y -> c -> d. With
  // no queues planned (the engine spreads its work) c joins the region of
  // a and b, the latest of its shape; placed on queues, each chain is a
  // region of its own, so that neither waits for the other's inputs.
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a"},
            {"op": "abs", "in": ["a"], "out": "b"},
            {"op": "exponential", "in": ["y"], "out": "c"},
            {"op": "sqrt", "in": ["c"], "out": "d"}],
    "outputs": ["b", "d"]})"));
  const std::vector<Endpoint> on_sim(4, kSim);
  auto spread = plan_elementwise_regions(e, on_sim, fuse_everywhere);
  REQUIRE(spread.ok());
  REQUIRE(spread->size() == 1);
  CHECK((*spread)[0].instructions == U{0, 1, 2, 3});

  const uint32_t any = BatchWork::kAnyQueue;
  for (const std::vector<uint32_t>& queues : {std::vector<uint32_t>{0, 0, 1, 1}, std::vector<uint32_t>{0, 0, 0, 0}}) {
    auto placed = plan_elementwise_regions(e, on_sim, fuse_everywhere, queues);
    REQUIRE(placed.ok());
    REQUIRE(placed->size() == 2);
    CHECK((*placed)[0].instructions == U{0, 1});
    CHECK((*placed)[1].instructions == U{2, 3});
  }
  auto unplanned = plan_elementwise_regions(e, on_sim, fuse_everywhere, std::vector<uint32_t>(4, any));
  REQUIRE(unplanned.ok());
  CHECK(*unplanned == *spread);

  auto short_list = plan_elementwise_regions(e, on_sim, fuse_everywhere, std::vector<uint32_t>{0, 0});
  REQUIRE_FALSE(short_list.ok());
  CHECK(short_list.error().code() == ErrorCode::Internal);
  CHECK_THAT(short_list.error().message(), Catch::Contains("2 instruction queues for 4 instructions"));
}

TEST_CASE("a wrong number of endpoints is an internal error", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a"}, {"op": "abs", "in": ["a"], "out": "b"}],
    "outputs": ["b"]})"));
  const std::vector<Endpoint> one{kCpu};
  auto r = plan_elementwise_regions(e, one, fuse_everywhere);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::Internal);
  CHECK_THAT(r.error().message(), Catch::Contains("1 instruction endpoints for 2 instructions"));
}

TEST_CASE("a splat read only inside a region is absorbed, one read outside is not", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}],
    "ops": [{"op": "constant", "out": "two", "dtype": "f32", "shape": ["N"], "value": 2},
            {"op": "constant", "out": "three", "dtype": "f32", "shape": ["N"], "value": 3},
            {"op": "multiply", "in": ["x", "two"], "out": "a"},
            {"op": "add", "in": ["a", "three"], "out": "b"},
            {"op": "reduce_sum", "in": ["three"], "out": "s", "dimensions": [0]}],
    "outputs": ["b", "s"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == U{0, 2, 3});
  CHECK(regions[0].splat_constants == U{0});
  CHECK(regions[0].compute_ops() == 2);
  CHECK(regions[0].inputs == slots_named(e, {"x", "three"}));
  CHECK(regions[0].outputs == slots_named(e, {"b"}));
}

TEST_CASE("a splat that is a program output is not absorbed", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "i32", "shape": ["N"]}],
    "ops": [{"op": "constant", "out": "two", "dtype": "i32", "shape": ["N"], "value": 2},
            {"op": "multiply", "in": ["x", "two"], "out": "y"},
            {"op": "constant", "out": "one", "dtype": "i32", "shape": ["N"], "value": 1},
            {"op": "negate", "in": ["one"], "out": "m"},
            {"op": "add", "in": ["y", "m"], "out": "z"}],
    "outputs": ["z", "two"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == U{1, 2, 3, 4});
  CHECK(regions[0].splat_constants == U{2});
  CHECK(regions[0].inputs == slots_named(e, {"x", "two"}));
  CHECK(regions[0].outputs == slots_named(e, {"z"}));
}

TEST_CASE("a region keeps its first splat as a full-shape input when it has no other", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}],
    "ops": [{"op": "constant", "out": "c1", "dtype": "f32", "shape": ["N"], "value": 3},
            {"op": "constant", "out": "c2", "dtype": "f32", "shape": ["N"], "value": 4},
            {"op": "multiply", "in": ["c1", "c2"], "out": "m"},
            {"op": "negate", "in": ["m"], "out": "y"}],
    "outputs": ["y"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == U{1, 2, 3});
  CHECK(regions[0].splat_constants == U{1});
  CHECK(regions[0].inputs == slots_named(e, {"c1"}));
  CHECK(regions[0].outputs == slots_named(e, {"y"}));
}

TEST_CASE("a splat of another shape than the region stays outside", "[regions]") {
  // A rank-0 splat read by clamp is a rank-0 input, not a member.
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [5]}],
    "ops": [{"op": "constant", "out": "lo", "dtype": "f32", "shape": [], "value": 0},
            {"op": "constant", "out": "hi", "dtype": "f32", "shape": [], "value": 1},
            {"op": "clamp", "in": ["lo", "x", "hi"], "out": "c"},
            {"op": "negate", "in": ["c"], "out": "y"}],
    "outputs": ["y"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == U{2, 3});
  CHECK(regions[0].splat_constants.empty());
  CHECK(regions[0].inputs == slots_named(e, {"lo", "x", "hi"}));
}

TEST_CASE("a broadcast read only inside a region is absorbed: its operand is the region's input", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 32]}, {"name": "b", "dtype": "f32", "shape": [32]}],
    "ops": [{"op": "broadcast_in_dim", "in": ["b"], "out": "bb", "shape": ["B", 32], "broadcast_dimensions": [1]},
            {"op": "add", "in": ["x", "bb"], "out": "z"},
            {"op": "constant", "out": "zero", "dtype": "f32", "shape": ["B", 32], "value": 0},
            {"op": "maximum", "in": ["z", "zero"], "out": "y"}],
    "outputs": ["y"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  const ElementwiseRegion& r = regions[0];
  CHECK(r.instructions == U{0, 1, 2, 3});
  CHECK(r.broadcasts == U{0});
  CHECK(r.splat_constants == U{2});
  CHECK(r.compute_ops() == 2);
  // In order of first read: the broadcast (instruction 0) reads b first.
  CHECK(r.inputs == slots_named(e, {"b", "x"}));
  CHECK(r.outputs == slots_named(e, {"y"}));
  CHECK(describe_region(e, r, 0) == "region 0: #1 add, #3 maximum (+1 splat) (+1 broadcast) over f32[B, 32] at cpu/host");
}

TEST_CASE("one elementwise op reading an absorbed broadcast is a region of its own", "[regions]") {
  // Alone, the add would be no region; with the broadcast it saves a pass.
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "h", "dtype": "f32", "shape": [4, 10]}, {"name": "b", "dtype": "f32", "shape": [10]}],
    "ops": [{"op": "broadcast_in_dim", "in": ["b"], "out": "bb", "shape": [4, 10], "broadcast_dimensions": [1]},
            {"op": "add", "in": ["h", "bb"], "out": "y"},
            {"op": "negate", "in": ["h"], "out": "n"}],
    "outputs": ["y", "n"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == U{0, 1, 2});
  CHECK(regions[0].broadcasts == U{0});
  CHECK(regions[0].compute_ops() == 2);
  const ExecProgram single = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "h", "dtype": "f32", "shape": [4, 10]}, {"name": "b", "dtype": "f32", "shape": [10]}],
    "ops": [{"op": "broadcast_in_dim", "in": ["b"], "out": "bb", "shape": [4, 10], "broadcast_dimensions": [1]},
            {"op": "add", "in": ["h", "bb"], "out": "y"}],
    "outputs": ["y"]})"));
  const auto one = plan_on_cpu(single);
  REQUIRE(one.size() == 1);
  CHECK(one[0].instructions == U{0, 1});
  CHECK(one[0].broadcasts == U{0});
  CHECK(one[0].compute_ops() == 1);
  CHECK(one[0].inputs == slots_named(single, {"b", "h"}));
  CHECK(one[0].outputs == slots_named(single, {"y"}));
}

TEST_CASE("a broadcast read outside its region, output, placed elsewhere or ordered stays outside", "[regions]") {
  const char* read_outside = R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 3]}, {"name": "b", "dtype": "f32", "shape": [3]}],
    "ops": [{"op": "broadcast_in_dim", "in": ["b"], "out": "bb", "shape": [4, 3], "broadcast_dimensions": [1]},
            {"op": "add", "in": ["x", "bb"], "out": "z"},
            {"op": "tanh", "in": ["z"], "out": "y"},
            {"op": "reduce_sum", "in": ["bb"], "out": "s", "dimensions": [0]}],
    "outputs": ["y", "s"]})";
  const ExecProgram shared = stage_ok(load(read_outside));
  auto regions = plan_on_cpu(shared);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == U{1, 2});
  CHECK(regions[0].broadcasts.empty());
  CHECK(regions[0].inputs == slots_named(shared, {"x", "bb"}));

  const char* as_output = R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 3]}, {"name": "b", "dtype": "f32", "shape": [3]}],
    "ops": [{"op": "broadcast_in_dim", "in": ["b"], "out": "bb", "shape": [4, 3], "broadcast_dimensions": [1]},
            {"op": "add", "in": ["x", "bb"], "out": "z"},
            {"op": "tanh", "in": ["z"], "out": "y"}],
    "outputs": ["y", "bb"]})";
  const ExecProgram output = stage_ok(load(as_output));
  regions = plan_on_cpu(output);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == U{1, 2});
  CHECK(regions[0].broadcasts.empty());

  // The same program as the first test's without the reduction: absorbed
  // on one endpoint and queue, not across endpoints or queues.
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 3]}, {"name": "b", "dtype": "f32", "shape": [3]}],
    "ops": [{"op": "broadcast_in_dim", "in": ["b"], "out": "bb", "shape": [4, 3], "broadcast_dimensions": [1]},
            {"op": "add", "in": ["x", "bb"], "out": "z"},
            {"op": "tanh", "in": ["z"], "out": "y"}],
    "outputs": ["y"]})"));
  regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].broadcasts == U{0});
  const std::vector<Endpoint> split{kSim, kCpu, kCpu};
  auto elsewhere = plan_elementwise_regions(e, split, fuse_everywhere);
  REQUIRE(elsewhere.ok());
  REQUIRE(elsewhere->size() == 1);
  CHECK((*elsewhere)[0].instructions == U{1, 2});
  CHECK((*elsewhere)[0].broadcasts.empty());
  const std::vector<Endpoint> on_sim(3, kSim);
  auto same_queue = plan_elementwise_regions(e, on_sim, fuse_everywhere, std::vector<uint32_t>{1, 1, 1});
  REQUIRE(same_queue.ok());
  REQUIRE(same_queue->size() == 1);
  CHECK((*same_queue)[0].broadcasts == U{0});
  auto other_queue = plan_elementwise_regions(e, on_sim, fuse_everywhere, std::vector<uint32_t>{0, 1, 1});
  REQUIRE(other_queue.ok());
  REQUIRE(other_queue->size() == 1);
  CHECK((*other_queue)[0].instructions == U{1, 2});
  CHECK((*other_queue)[0].broadcasts.empty());
  // Ordered after another op (a model's state order), it keeps its place.
  const std::vector<std::pair<uint32_t, uint32_t>> edge{{1, 2}, {0, 2}};
  for (size_t k = 0; k < 2; ++k) {
    auto ordered = with_order(e, std::span{edge}.subspan(k, 1), 3);
    REQUIRE(ordered.ok());
    const auto held = plan_on_cpu(*ordered);
    REQUIRE(held.size() == 1);
    CHECK(held[0].broadcasts.empty() == (k == 1));
  }
}

TEST_CASE("an intermediate that is a program output is a region output", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a"},
            {"op": "abs", "in": ["a"], "out": "b"},
            {"op": "exponential", "in": ["b"], "out": "c"}],
    "outputs": ["c", "a"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == U{0, 1, 2});
  CHECK(regions[0].outputs == slots_named(e, {"a", "c"}));  // ascending slots
}

TEST_CASE("ops of different shapes form separate regions even when interleaved", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [2, 4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a"},
            {"op": "negate", "in": ["y"], "out": "b"},
            {"op": "abs", "in": ["a"], "out": "c"},
            {"op": "abs", "in": ["b"], "out": "d"}],
    "outputs": ["c", "d"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 2);
  CHECK(regions[0].instructions == U{0, 2});
  CHECK(regions[0].shape == exact_shape({4}));
  CHECK(regions[1].instructions == U{1, 3});
  CHECK(regions[1].shape == exact_shape({2, 4}));
}

TEST_CASE("symbolic exact shapes fuse, distinct symbols do not share a region", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["n", 4]}, {"name": "y", "dtype": "f32", "shape": ["m", 4]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a"},
            {"op": "negate", "in": ["y"], "out": "b"},
            {"op": "abs", "in": ["a"], "out": "c"},
            {"op": "abs", "in": ["b"], "out": "d"}],
    "outputs": ["c", "d"]})"));
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 2);
  CHECK(regions[0].instructions == U{0, 2});
  CHECK(regions[0].shape == exact_shape({DimExpr::symbol("n"), DimExpr::constant(4)}));
  CHECK(regions[1].instructions == U{1, 3});
}

TEST_CASE("ops over an upper-bound extent never fuse", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}, {"name": "len", "dtype": "i64", "shape": []}],
    "ops": [{"op": "dynamic_truncate", "in": ["x", "len"], "out": "t", "dimension": 0},
            {"op": "negate", "in": ["t"], "out": "a"},
            {"op": "abs", "in": ["a"], "out": "b"}],
    "outputs": ["b"]})"));
  REQUIRE_FALSE(e.slot_type(slot_named(e, "a")).shape[0].is_exact());
  CHECK(plan_on_cpu(e).empty());
}

TEST_CASE("a single elementwise op is no region", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "constant", "out": "c", "dtype": "f32", "shape": [4], "value": 1},
            {"op": "add", "in": ["x", "c"], "out": "a"},
            {"op": "reduce_sum", "in": ["a"], "out": "r", "dimensions": [0]}],
    "outputs": ["r"]})"));
  CHECK(plan_on_cpu(e).empty());
}

TEST_CASE("planning is deterministic", "[regions]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "constant", "out": "c", "dtype": "f32", "shape": [4], "value": 1},
            {"op": "add", "in": ["x", "c"], "out": "a"},
            {"op": "tanh", "in": ["a"], "out": "b"}],
    "outputs": ["b"]})"));
  CHECK(plan_on_cpu(e) == plan_on_cpu(e));
}

TEST_CASE("describe_region names the members, splats, type and endpoint", "[regions]") {
  ProgramBuilder b{"chain"};
  auto x = b.input("x", DType::F32, {"n", 4});
  auto y = b.input("y", DType::F32, {"n", 4});
  auto half = b.constant(DType::F32, {"n", 4}, Scalar::of_float(0.5));
  auto t = b.unary(OpKind::Tanh, b.binary(OpKind::Add, b.binary(OpKind::Multiply, x, y), half));
  b.output(t);
  auto p = b.build();
  REQUIRE(p.ok());
  const ExecProgram e = stage_ok(*p);
  const auto regions = plan_on_cpu(e);
  REQUIRE(regions.size() == 1);
  CHECK(describe_region(e, regions[0], 0) ==
        "region 0: #1 multiply, #2 add, #3 tanh (+1 splat) over f32[n, 4] at cpu/host");
  // A compare ends in bool: the type shown is the last compute member's.
  const ExecProgram c = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [3]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a"},
            {"op": "compare", "in": ["a", "x"], "out": "b", "direction": "LT"}],
    "outputs": ["b"]})"));
  const auto cr = plan_on_cpu(c);
  REQUIRE(cr.size() == 1);
  CHECK(describe_region(c, cr[0], 2) == "region 2: #0 negate, #1 compare over bool[3] at cpu/host");
}
