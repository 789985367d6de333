// What a cached program's run costs in heap allocations on the caller's
// thread: Runtime::run_sync of a prepared small program allocates only the
// vector it returns (issue 17: no allocation on the hot path). Counted by
// this binary's replacement of operator new
// (tests/util/counting_operator_new.hpp; its own binary, as the replacement
// holds for the whole executable). Expected values by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "actors/runtime.hpp"
#include "core/program_json.hpp"
#include "tests/engines/cpu/test_engine.hpp"
#include "tests/util/counting_operator_new.hpp"

using namespace tenact;

#if TENACT_COUNTS_OPERATOR_NEW
namespace {

// e = max(tanh(x * y + x) - y, x): five elementwise ops, one fused region.
constexpr const char* kSmallProgram = R"({"format": "tenact.program/1", "name": "small",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [1000]}, {"name": "y", "dtype": "f32", "shape": [1000]}],
  "ops": [{"op": "multiply", "in": ["x", "y"], "out": "a"},
          {"op": "add", "in": ["a", "x"], "out": "b"},
          {"op": "tanh", "in": ["b"], "out": "c"},
          {"op": "subtract", "in": ["c", "y"], "out": "d"},
          {"op": "maximum", "in": ["d", "x"], "out": "e"}],
  "outputs": ["e"]})";

// y = relu(x . w1 + b1) . w2 + b2 with a symbolic batch B (the mlp example's
// ops at a size whose values are exact by hand).
constexpr const char* kMlpProgram = R"({"format": "tenact.program/1", "name": "mlp",
  "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 3]}, {"name": "w1", "dtype": "f32", "shape": [3, 2]},
             {"name": "b1", "dtype": "f32", "shape": [2]}, {"name": "w2", "dtype": "f32", "shape": [2, 1]},
             {"name": "b2", "dtype": "f32", "shape": [1]}],
  "ops": [{"op": "dot_general", "in": ["x", "w1"], "out": "h0",
           "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
          {"op": "broadcast_in_dim", "in": ["b1"], "out": "b1b", "shape": ["B", 2], "broadcast_dimensions": [1]},
          {"op": "add", "in": ["h0", "b1b"], "out": "h1"},
          {"op": "constant", "out": "zero", "dtype": "f32", "shape": ["B", 2], "value": 0},
          {"op": "maximum", "in": ["h1", "zero"], "out": "h"},
          {"op": "dot_general", "in": ["h", "w2"], "out": "o0",
           "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
          {"op": "broadcast_in_dim", "in": ["b2"], "out": "b2b", "shape": ["B", 1], "broadcast_dimensions": [1]},
          {"op": "add", "in": ["o0", "b2b"], "out": "y"}],
  "outputs": ["y"]})";

Tensor f32_tensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  Tensor t = Tensor::zeros(DType::F32, std::move(shape)).value();
  for (size_t i = 0; i < values.size(); ++i) t.data_as<float>()[i] = values[i];
  return t;
}

std::shared_ptr<const SemanticProgram> load(const char* text) {
  auto program = load_program(text);
  REQUIRE(program.ok());
  return std::make_shared<const SemanticProgram>(std::move(*program));
}

// A service's loop: `runs` times run_sync, read the answer (`check`, which
// REQUIREs what it must be), drop it. Returns the operator new calls made
// by the run_sync calls alone (the caller's argument copies are made before).
int64_t run_sync_allocations(Runtime& rt, const std::shared_ptr<const SemanticProgram>& program,
                             const std::vector<Tensor>& inputs, int runs,
                             const std::function<void(const Result<std::vector<Tensor>>&)>& check) {
  std::vector<std::vector<Tensor>> argument_lists(static_cast<size_t>(runs), inputs);
  int64_t allocations = 0;
  for (auto& arguments : argument_lists) {
    const int64_t before = g_operator_new_calls;
    Result<std::vector<Tensor>> answer = rt.run_sync(program, std::move(arguments));
    allocations += g_operator_new_calls - before;
    check(answer);
  }
  return allocations;
}

}  // namespace

TEST_CASE("a prepared small program run by run_sync allocates only the vector it returns", "[runtime][allocation]") {
  Runtime rt;
  REQUIRE(rt.register_engine(cpu::test_engine()).ok());
  auto program = load(kSmallProgram);
  std::vector<float> x(1000), y(1000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(static_cast<int>(i % 37) - 18) / 8.0f;  // -2.25 .. 2.25
    y[i] = static_cast<float>(static_cast<int>(i % 11) - 5) / 4.0f;   // -1.25 .. 1.25
  }
  const std::vector<Tensor> inputs{f32_tensor({1000}, x), f32_tensor({1000}, y)};
  for (int warm = 0; warm < 3; ++warm) REQUIRE(rt.run_sync(program, inputs).ok());  // prepared, region compiled

  constexpr int kRuns = 20;
  const auto check = [&](const Result<std::vector<Tensor>>& answer) {
    // The program's value (std::tanh in double as the oracle; the spec
    // allows 4 ulps for tanh, here within 1e-6).
    REQUIRE(answer.ok());
    const float* e = (*answer)[0].data_as<float>();
    for (size_t i = 0; i < x.size(); ++i) {
      const double xi = x[i], yi = y[i];
      const double want = std::max(std::tanh(xi * yi + xi) - yi, xi);
      REQUIRE(std::abs(e[i] - want) <= 1e-6 * std::max(1.0, std::abs(want)));
    }
  };
  const int64_t allocations = run_sync_allocations(rt, program, inputs, kRuns, check);
  INFO("operator new calls over " << kRuns << " runs: " << allocations);
  CHECK(allocations <= kRuns);  // one each: the returned std::vector<Tensor>
}

TEST_CASE("a prepared mlp run by run_sync allocates only the vector it returns", "[runtime][allocation]") {
  Runtime rt;
  REQUIRE(rt.register_engine(cpu::test_engine()).ok());
  auto program = load(kMlpProgram);
  // x: [[1, 2, 3], [-1, 0, 1]]; w1 = [[1, -1], [0, 1], [1, 0]]; b1 = [0.5, -3];
  // w2 = [[2], [1]]; b2 = [0.25].
  // x.w1 = [[4, 1], [0, 1]]; + b1 = [[4.5, -2], [0.5, -2]]; relu = [[4.5, 0], [0.5, 0]];
  // . w2 = [[9], [1]]; + b2 = [[9.25], [1.25]].
  const std::vector<Tensor> inputs{f32_tensor({2, 3}, {1, 2, 3, -1, 0, 1}), f32_tensor({3, 2}, {1, -1, 0, 1, 1, 0}),
                                   f32_tensor({2}, {0.5f, -3}), f32_tensor({2, 1}, {2, 1}), f32_tensor({1}, {0.25f})};
  for (int warm = 0; warm < 3; ++warm) REQUIRE(rt.run_sync(program, inputs).ok());

  constexpr int kRuns = 20;
  const auto check = [](const Result<std::vector<Tensor>>& answer) {
    REQUIRE(answer.ok());
    const float* out = (*answer)[0].data_as<float>();
    REQUIRE(out[0] == 9.25f);
    REQUIRE(out[1] == 1.25f);
  };
  const int64_t allocations = run_sync_allocations(rt, program, inputs, kRuns, check);
  INFO("operator new calls over " << kRuns << " runs: " << allocations);
  // One each: the returned vector (the dots' result lists are the ones
  // their keeps hold from the last run: single_result).
  CHECK(allocations <= kRuns);
}
#else
TEST_CASE("allocation counts: not measured under this sanitizer", "[runtime][allocation]") {
  WARN("skipped: operator new is the sanitizer's here (the release variant runs these tests)");
}
#endif
