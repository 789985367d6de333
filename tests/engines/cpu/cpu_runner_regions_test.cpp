// The reference runner executes the regions planning gives it: a DAG as
// one region, a region whose members are not consecutive in program order
// (run after the independent op it reads, before the reduction that reads
// it), two regions joined by an edge, broadcasts absorbed into regions,
// and staged programs with regions passed in directly. Expected values are derived by hand (small integers,
// exact in i32).
#include <catch2/catch.hpp>

#include "tests/engines/cpu/test_engine.hpp"
#include "core/program_json.hpp"
#include "engines/cpu/cpu_engine.hpp"
#include "reference/cpu_reference_runner.hpp"
#include "host_vectors.hpp"
#include "../../planning/staged_programs.hpp"

using namespace tenact;
using tenact::testing::load;
using tenact::testing::i32;
using namespace tenact::cpu;

namespace {

std::vector<int32_t> values_of(const HostTensor& t) {
  REQUIRE(t.dtype() == DType::I32);
  const int32_t* d = t.data_as<int32_t>();
  return std::vector<int32_t>(d, d + t.element_count());
}

}  // namespace

TEST_CASE("a diamond of elementwise ops runs as one fused region", "[runner]") {
  // d = (x*x + x) * (x*x - x) = x^4 - x^2.
  const SemanticProgram p = load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "i32", "shape": ["N"]}],
    "ops": [{"op": "multiply", "in": ["x", "x"], "out": "a"},
            {"op": "add", "in": ["a", "x"], "out": "b"},
            {"op": "subtract", "in": ["a", "x"], "out": "c"},
            {"op": "multiply", "in": ["b", "c"], "out": "d"}],
    "outputs": ["d"]})");
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  CpuRunStats fused_stats, plain_stats;
  const std::vector<HostTensor> inputs{i32({1, 2, 3, -4})};
  auto fused = run_program_on_cpu(p, inputs, engine, CpuRunOptions{true}, &fused_stats);
  REQUIRE(fused.ok());
  CHECK(values_of((*fused)[0]) == std::vector<int32_t>{0, 12, 72, 240});
  CHECK(fused_stats.regions_run == 1);
  CHECK(fused_stats.ops_fused == 4);
  CHECK(fused_stats.kernels_run == 0);
  auto plain = run_program_on_cpu(p, inputs, engine, CpuRunOptions{false}, &plain_stats);
  REQUIRE(plain.ok());
  CHECK(values_of((*plain)[0]) == std::vector<int32_t>{0, 12, 72, 240});
  CHECK(plain_stats.regions_run == 0);
  CHECK(plain_stats.kernels_run == 4);
}

TEST_CASE("a region whose members are not consecutive runs after what it reads", "[runner]") {
  // a = -x is read by r before the region's last member b = a + max(x);
  // the region must run after sb and before r.
  const SemanticProgram p = load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "i32", "shape": [3]}],
    "ops": [{"op": "negate", "in": ["x"], "out": "a"},
            {"op": "reduce_sum", "in": ["a"], "out": "r", "dimensions": [0]},
            {"op": "reduce_max", "in": ["x"], "out": "s", "dimensions": [0]},
            {"op": "broadcast_in_dim", "in": ["s"], "out": "sb", "shape": [3], "broadcast_dimensions": []},
            {"op": "add", "in": ["a", "sb"], "out": "b"}],
    "outputs": ["r", "b"]})");
  auto engine_holder = test_engine(CpuEngineOptions{2});
  CpuEngine& engine = *engine_holder;
  CpuRunStats stats;
  auto r = run_program_on_cpu(p, std::vector<HostTensor>{i32({1, 2, 3})}, engine, CpuRunOptions{true}, &stats);
  REQUIRE(r.ok());
  REQUIRE((*r)[0].shape().empty());
  CHECK((*r)[0].data_as<int32_t>()[0] == -6);
  CHECK(values_of((*r)[1]) == std::vector<int32_t>{2, 1, 0});
  CHECK(stats.regions_run == 1);
  CHECK(stats.ops_fused == 2);
  // The reductions; the broadcast of s is read by the region as a view.
  CHECK(stats.kernels_run == 2);
}

TEST_CASE("broadcasts a region absorbs are read as views: along rows, columns, scalars, transposed",
          "[runner]") {
  // y[i][j] = (x[i][j] + b[j]) * c[i] - s + t[j][i] + u[0][j], by hand for
  // x = [[1,2,3],[4,5,6]], b = [10,20,30], c = [2,3], s = 7,
  // t = [[100,200],[300,400],[500,600]], u = [[1000,2000,3000]].
  const SemanticProgram p = load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "i32", "shape": ["N", 3]}, {"name": "b", "dtype": "i32", "shape": [3]},
               {"name": "c", "dtype": "i32", "shape": ["N"]}, {"name": "s", "dtype": "i32", "shape": []},
               {"name": "t", "dtype": "i32", "shape": [3, "N"]}, {"name": "u", "dtype": "i32", "shape": [1, 3]}],
    "ops": [{"op": "broadcast_in_dim", "in": ["b"], "out": "bb", "shape": ["N", 3], "broadcast_dimensions": [1]},
            {"op": "broadcast_in_dim", "in": ["c"], "out": "cb", "shape": ["N", 3], "broadcast_dimensions": [0]},
            {"op": "broadcast_in_dim", "in": ["s"], "out": "sb", "shape": ["N", 3], "broadcast_dimensions": []},
            {"op": "broadcast_in_dim", "in": ["t"], "out": "tb", "shape": ["N", 3], "broadcast_dimensions": [1, 0]},
            {"op": "broadcast_in_dim", "in": ["u"], "out": "ub", "shape": ["N", 3], "broadcast_dimensions": [0, 1]},
            {"op": "add", "in": ["x", "bb"], "out": "y1"},
            {"op": "multiply", "in": ["y1", "cb"], "out": "y2"},
            {"op": "subtract", "in": ["y2", "sb"], "out": "y3"},
            {"op": "add", "in": ["y3", "tb"], "out": "y4"},
            {"op": "add", "in": ["y4", "ub"], "out": "y"}],
    "outputs": ["y"]})");
  auto engine_holder = test_engine(CpuEngineOptions{2});
  CpuEngine& engine = *engine_holder;
  HostTensor x = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor t = i32({3, 2}, {100, 200, 300, 400, 500, 600});
  HostTensor u = i32({1, 3}, {1000, 2000, 3000});
  HostTensor s = i32({}, {7});
  const std::vector<HostTensor> inputs{x, i32({10, 20, 30}), i32({2, 3}), s, t, u};
  const std::vector<int32_t> expected{1115, 2337, 3559, 1235, 2468, 3701};
  CpuRunStats fused_stats, plain_stats;
  auto fused = run_program_on_cpu(p, inputs, engine, CpuRunOptions{true}, &fused_stats);
  REQUIRE(fused.ok());
  CHECK((*fused)[0].shape() == std::vector<int64_t>{2, 3});
  CHECK(values_of((*fused)[0]) == expected);
  CHECK(fused_stats.regions_run == 1);
  CHECK(fused_stats.ops_fused == 5);
  CHECK(fused_stats.kernels_run == 0);
  auto plain = run_program_on_cpu(p, inputs, engine, CpuRunOptions{false}, &plain_stats);
  REQUIRE(plain.ok());
  CHECK(values_of((*plain)[0]) == expected);
  CHECK(plain_stats.kernels_run == 10);
}

TEST_CASE("one add over an absorbed broadcast runs as a region", "[runner]") {
  // The mlp's output layer: y = h + broadcast(b), by hand.
  const SemanticProgram p = load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "h", "dtype": "i32", "shape": ["B", 2]}, {"name": "b", "dtype": "i32", "shape": [2]}],
    "ops": [{"op": "broadcast_in_dim", "in": ["b"], "out": "bb", "shape": ["B", 2], "broadcast_dimensions": [1]},
            {"op": "add", "in": ["h", "bb"], "out": "y"}],
    "outputs": ["y"]})");
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuRunStats stats;
  HostTensor h = i32({3, 2}, {1, 2, 3, 4, 5, 6});
  auto r = run_program_on_cpu(p, std::vector<HostTensor>{h, i32({10, -10})}, *engine_holder, CpuRunOptions{true},
                              &stats);
  REQUIRE(r.ok());
  CHECK(values_of((*r)[0]) == std::vector<int32_t>{11, -8, 13, -6, 15, -4});
  CHECK(stats.regions_run == 1);
  CHECK(stats.ops_fused == 1);
  CHECK(stats.kernels_run == 0);
}

TEST_CASE("two regions joined by an edge both run fused", "[runner]") {
  // Region {a, s}; r outside; region {rb, b, c} reads r (through the
  // broadcast it absorbs) and s.
  const SemanticProgram p = load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "i32", "shape": ["N"]}],
    "ops": [{"op": "multiply", "in": ["x", "x"], "out": "a"},
            {"op": "add", "in": ["a", "x"], "out": "s"},
            {"op": "reduce_sum", "in": ["s"], "out": "r", "dimensions": [0]},
            {"op": "broadcast_in_dim", "in": ["r"], "out": "rb", "shape": ["N"], "broadcast_dimensions": []},
            {"op": "negate", "in": ["rb"], "out": "b"},
            {"op": "add", "in": ["b", "s"], "out": "c"}],
    "outputs": ["c", "a"]})");
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  CpuRunStats stats;
  auto r = run_program_on_cpu(p, std::vector<HostTensor>{i32({1, 2, 3})}, engine, CpuRunOptions{true}, &stats);
  REQUIRE(r.ok());
  // a = [1, 4, 9], s = [2, 6, 12], r = 20, c = s - 20.
  CHECK(values_of((*r)[0]) == std::vector<int32_t>{-18, -14, -8});
  CHECK(values_of((*r)[1]) == std::vector<int32_t>{1, 4, 9});  // an intermediate that is an output
  CHECK(stats.regions_run == 2);
  CHECK(stats.ops_fused == 4);
  CHECK(stats.kernels_run == 1);
}

TEST_CASE("run_exec_program_on_cpu runs the regions it is given", "[runner]") {
  // y = -(x + two) with `two` a splat absorbed into the region.
  const SemanticProgram p = load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "i32", "shape": ["N"]}],
    "ops": [{"op": "constant", "out": "two", "dtype": "i32", "shape": ["N"], "value": 2},
            {"op": "add", "in": ["x", "two"], "out": "s"},
            {"op": "negate", "in": ["s"], "out": "y"}],
    "outputs": ["y"]})");
  auto staged = stage(p);
  REQUIRE(staged.ok());
  // Planned for another endpoint: the CPU runs the regions it is handed.
  const std::vector<Endpoint> endpoints(staged->instructions.size(), Endpoint{"sim", "device"});
  auto regions = plan_elementwise_regions(*staged, endpoints, [](const Endpoint&) { return true; });
  REQUIRE(regions.ok());
  REQUIRE(regions->size() == 1);
  auto engine_holder = test_engine(CpuEngineOptions{1});
  CpuEngine& engine = *engine_holder;
  const std::vector<HostTensor> inputs{i32({5, -2})};
  CpuRunStats stats;
  auto r = run_exec_program_on_cpu(p, *staged, *regions, inputs, engine, &stats);
  REQUIRE(r.ok());
  CHECK(values_of((*r)[0]) == std::vector<int32_t>{-7, 0});
  CHECK(stats.regions_run == 1);
  CHECK(stats.ops_fused == 2);
  CHECK(stats.kernels_run == 0);
  CpuRunStats alone;
  auto plain = run_exec_program_on_cpu(p, *staged, {}, inputs, engine, &alone);
  REQUIRE(plain.ok());
  CHECK(values_of((*plain)[0]) == std::vector<int32_t>{-7, 0});
  CHECK(alone.kernels_run == 3);
  // Inputs are checked against the program first.
  auto bad = run_exec_program_on_cpu(p, *staged, *regions, std::vector<HostTensor>{}, engine, nullptr);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code() == ErrorCode::InputMismatch);
}
