// The DAG suite of sim_bench, as programs (tenact.program/1 JSON) built in
// code: a chain, a fork-join, diamonds, a layered random DAG (each node one
// f32[128,128] x f32[128,128] dot, extra parents added in first), and a
// transformer block from core ops (8-head attention with a softmax of
// reduces and elementwise ops, an output projection, a tanh MLP, residuals).
// Every input is f32; `inputs` lists their shapes for the caller to fill.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tenact::bench {

struct SuiteProgram {
  std::string name;
  std::string json;
  std::vector<std::vector<int64_t>> inputs;
  /// Whether it is one of the wide graphs the targets are about.
  bool wide = false;
};

inline std::string dims_json(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// A program over x, w: f32[128,128]; node i is dot(sum of its parents (or
// x), w), with the adds joining extra parents first.
inline SuiteProgram dot_dag(const std::string& name, const std::vector<std::vector<int>>& parents,
                            const std::vector<int>& sinks, bool wide) {
  std::string ops;
  for (size_t i = 0; i < parents.size(); ++i) {
    std::string in = parents[i].empty() ? "x" : "n" + std::to_string(parents[i][0]);
    for (size_t p = 1; p < parents[i].size(); ++p) {
      const std::string sum = "s" + std::to_string(i) + "_" + std::to_string(p);
      ops += R"({"op": "add", "in": [")" + in + R"(", "n)" + std::to_string(parents[i][p]) + R"("], "out": ")" +
             sum + R"("},)";
      in = sum;
    }
    ops += R"({"op": "dot_general", "in": [")" + in + R"(", "w"], "out": "n)" + std::to_string(i) +
           R"(", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},)";
  }
  ops.pop_back();
  std::string outputs;
  for (int s : sinks) outputs += std::string{outputs.empty() ? "" : ", "} + "\"n" + std::to_string(s) + "\"";
  SuiteProgram p;
  p.name = name;
  p.wide = wide;
  p.inputs = {{128, 128}, {128, 128}};
  p.json = R"({"format": "tenact.program/1", "name": ")" + name + R"(",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [128, 128]}, {"name": "w", "dtype": "f32", "shape": [128, 128]}],
    "ops": [)" + ops + R"(], "outputs": [)" + outputs + "]}";
  return p;
}

inline SuiteProgram chain(int length) {
  std::vector<std::vector<int>> parents;
  for (int i = 0; i < length; ++i) parents.push_back(i ? std::vector<int>{i - 1} : std::vector<int>{});
  return dot_dag("chain" + std::to_string(length), parents, {length - 1}, false);
}

// `branches` chains of `depth` dots from x, joined by one dot reading every
// branch's end.
inline SuiteProgram fork_join(int branches, int depth) {
  std::vector<std::vector<int>> parents;
  std::vector<int> ends;
  for (int b = 0; b < branches; ++b)
    for (int j = 0; j < depth; ++j) {
      parents.push_back(j == 0 ? std::vector<int>{} : std::vector<int>{static_cast<int>(parents.size()) - 1});
      if (j == depth - 1) ends.push_back(static_cast<int>(parents.size()) - 1);
    }
  parents.push_back(ends);
  return dot_dag("fork_join" + std::to_string(branches) + "x" + std::to_string(depth), parents,
                 {static_cast<int>(parents.size()) - 1}, branches >= 16);
}

// `stages` diamonds in a row: a node fans out to `width` nodes, which one
// node joins.
inline SuiteProgram diamonds(int stages, int width) {
  std::vector<std::vector<int>> parents;
  int top = -1;
  for (int s = 0; s < stages; ++s) {
    std::vector<int> middle;
    for (int k = 0; k < width; ++k) {
      middle.push_back(static_cast<int>(parents.size()));
      parents.push_back(top < 0 ? std::vector<int>{} : std::vector<int>{top});
    }
    top = static_cast<int>(parents.size());
    parents.push_back(middle);
  }
  return dot_dag("diamond" + std::to_string(stages) + "x" + std::to_string(width), parents, {top}, width >= 16);
}

// `layers` layers of `width` nodes; each reads 1-2 random nodes of the
// layer before.
inline SuiteProgram layered(int layers, int width, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int>> parents;
  std::vector<int> previous;
  for (int layer = 0; layer < layers; ++layer) {
    std::vector<int> current;
    for (int k = 0; k < width; ++k) {
      std::vector<int> p;
      if (!previous.empty()) {
        p.push_back(previous[rng() % previous.size()]);
        const int other = previous[rng() % previous.size()];
        if (rng() % 2 == 0 && other != p[0]) p.push_back(other);
      }
      current.push_back(static_cast<int>(parents.size()));
      parents.push_back(p);
    }
    previous = current;
  }
  return dot_dag("layered" + std::to_string(layers) + "x" + std::to_string(width), parents, previous, width >= 16);
}

// One transformer block over x: f32[T, 128], T = 128 tokens, 8 heads of 16:
// per head q, k, v = x . W[:, head] (a slice of the weight), scores = q . k^T,
// a softmax along the keys (reduce_max, subtract, exponential, reduce_sum,
// divide), o = p . v; the heads concatenated, projected, added to x; then
// tanh(h . w1) . w2 (w1: 128x512) added back.
inline SuiteProgram transformer_block() {
  std::string ops;
  auto op = [&ops](const std::string& text) { ops += (ops.empty() ? "" : ",\n") + text; };
  auto dot = [&](const std::string& a, const std::string& b, const std::string& out, int lc, int rc) {
    op(R"({"op": "dot_general", "in": [")" + a + R"(", ")" + b + R"("], "out": ")" + out +
       R"(", "lhs_contracting_dimensions": [)" + std::to_string(lc) + R"(], "rhs_contracting_dimensions": [)" +
       std::to_string(rc) + "]}");
  };
  std::string heads;
  for (int h = 0; h < 8; ++h) {
    const std::string H = std::to_string(h), lo = std::to_string(16 * h), hi = std::to_string(16 * h + 16);
    for (const char* m : {"q", "k", "v"}) {
      const std::string M = m;
      op(R"({"op": "slice", "in": ["w)" + M + R"("], "out": "w)" + M + H + R"(", "start_indices": [0, )" + lo +
         R"(], "limit_indices": [128, )" + hi + "]}");
      dot("x", "w" + M + H, M + H, 1, 0);  // [T, 16]
    }
    dot("q" + H, "k" + H, "s" + H, 1, 1);  // [T, T]
    op(R"({"op": "reduce_max", "in": ["s)" + H + R"("], "out": "m)" + H + R"(", "dimensions": [1]})");
    op(R"({"op": "broadcast_in_dim", "in": ["m)" + H + R"("], "out": "mb)" + H +
       R"(", "shape": [128, 128], "broadcast_dimensions": [0]})");
    op(R"({"op": "subtract", "in": ["s)" + H + R"(", "mb)" + H + R"("], "out": "d)" + H + R"("})");
    op(R"({"op": "exponential", "in": ["d)" + H + R"("], "out": "e)" + H + R"("})");
    op(R"({"op": "reduce_sum", "in": ["e)" + H + R"("], "out": "z)" + H + R"(", "dimensions": [1]})");
    op(R"({"op": "broadcast_in_dim", "in": ["z)" + H + R"("], "out": "zb)" + H +
       R"(", "shape": [128, 128], "broadcast_dimensions": [0]})");
    op(R"({"op": "divide", "in": ["e)" + H + R"(", "zb)" + H + R"("], "out": "p)" + H + R"("})");
    dot("p" + H, "v" + H, "o" + H, 1, 0);  // [T, 16]
    heads += std::string{heads.empty() ? "" : ", "} + "\"o" + H + "\"";
  }
  op(R"({"op": "concatenate", "in": [)" + heads + R"(], "out": "attn", "dimension": 1})");
  dot("attn", "wo", "proj", 1, 0);
  op(R"({"op": "add", "in": ["x", "proj"], "out": "h"})");
  dot("h", "w1", "u", 1, 0);  // [T, 512]
  op(R"({"op": "tanh", "in": ["u"], "out": "a"})");
  dot("a", "w2", "f", 1, 0);  // [T, 128]
  op(R"({"op": "add", "in": ["h", "f"], "out": "y"})");
  SuiteProgram p;
  p.name = "transformer";
  p.wide = true;
  p.inputs = {{128, 128}, {128, 128}, {128, 128}, {128, 128}, {128, 128}, {128, 512}, {512, 128}};
  const char* names[] = {"x", "wq", "wk", "wv", "wo", "w1", "w2"};
  std::string inputs;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    inputs += std::string{i ? ", " : ""} + R"({"name": ")" + names[i] + R"(", "dtype": "f32", "shape": )" +
              dims_json(p.inputs[i]) + "}";
  p.json = R"({"format": "tenact.program/1", "name": "transformer", "inputs": [)" + inputs + R"(], "ops": [
)" + ops + R"(], "outputs": ["y"]})";
  return p;
}

}  // namespace tenact::bench
