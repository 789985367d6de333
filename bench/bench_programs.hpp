// Programs that several benchmarks run (runtime_bench, bench/peers), as
// program-format JSON text: one definition, so that their figures are of
// the same program.
#pragma once

#include <cstdint>
#include <string>

namespace tenact::bench {

/// 5 ops on x, y: f32[n]: maximum(tanh(x*y + x) - y, x). 14 element visits
/// per element (operands 2 + 2 + 1 + 2 + 2, results 5), so 32,768 visits
/// at n = 2,340.
inline std::string small_program_json(int64_t n) {
  const std::string shape = "[" + std::to_string(n) + "]";
  return R"({"format": "tenact.program/1", "name": "small",
    "inputs": [{"name": "x", "dtype": "f32", "shape": )" + shape + R"(}, {"name": "y", "dtype": "f32", "shape": )" + shape + R"(}],
    "ops": [{"op": "multiply", "in": ["x", "y"], "out": "a"},
            {"op": "add", "in": ["a", "x"], "out": "b"},
            {"op": "tanh", "in": ["b"], "out": "c"},
            {"op": "subtract", "in": ["c", "y"], "out": "d"},
            {"op": "maximum", "in": ["d", "x"], "out": "e"}],
    "outputs": ["e"]})";
}

/// A chain of `n` scalar (rank-0 f32) adds: v_{i+1} = v_i + c, v_0 = x.
inline std::string scalar_chain_json(int n) {
  std::string ops;
  for (int i = 0; i < n; ++i)
    ops += std::string{i ? ",\n" : ""} + R"({"op": "add", "in": [")" + (i ? "v" + std::to_string(i) : std::string{"x"}) +
           R"(", "c"], "out": "v)" + std::to_string(i + 1) + R"("})";
  return R"({"format": "tenact.program/1", "name": "chain",
    "inputs": [{"name": "x", "dtype": "f32", "shape": []}, {"name": "c", "dtype": "f32", "shape": []}],
    "ops": [)" + ops + R"(], "outputs": ["v)" + std::to_string(n) + R"("]})";
}

/// The mlp example: y = relu(x . w1 + b1) . w2 + b2, x: f32[B, 16],
/// w1: [16, 32], b1: [32], w2: [32, 10], b2: [10].
inline std::string mlp_program_json() {
  return R"({"format": "tenact.program/1", "name": "mlp",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 16]}, {"name": "w1", "dtype": "f32", "shape": [16, 32]},
               {"name": "b1", "dtype": "f32", "shape": [32]}, {"name": "w2", "dtype": "f32", "shape": [32, 10]},
               {"name": "b2", "dtype": "f32", "shape": [10]}],
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
}

}  // namespace tenact::bench
