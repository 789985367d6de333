#include "bench/tbb_flow_baseline.hpp"

#if TENACT_HAVE_TBB
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/task_arena.h>
#endif

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

namespace tenact::bench {

#if TENACT_HAVE_TBB

namespace {

namespace flow = oneapi::tbb::flow;
using Node = flow::continue_node<flow::continue_msg>;
using Clock = std::chrono::steady_clock;

constexpr float kStart = 1.0f, kStep = 1.0f;

// Times `reps` runs of a graph started by `start`, whose results are
// `outputs` (each expected to be kStart + length * kStep).
FlowGraphTiming time_runs(flow::graph& g, flow::broadcast_node<flow::continue_msg>& start, std::vector<float>& values,
                          const std::vector<size_t>& outputs, int length, int reps) {
  FlowGraphTiming timing;
  std::vector<double> us;
  const float expected = kStart + static_cast<float>(length) * kStep;
  for (int r = 0; r <= reps; ++r) {  // run 0 warms up
    std::fill(values.begin(), values.end(), 0.0f);
    values[0] = kStart;
    const auto t0 = Clock::now();
    start.try_put(flow::continue_msg{});
    g.wait_for_all();
    const double elapsed = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (r > 0) us.push_back(elapsed);
    for (size_t o : outputs)
      if (values[o] != expected && timing.error.empty())
        timing.error = "a TBB run computed " + std::to_string(values[o]) + ", by hand " + std::to_string(expected);
  }
  std::sort(us.begin(), us.end());
  timing.median_run_us = us[us.size() / 2];
  return timing;
}

// `branches` chains of `length` adds reading values[0]: branch b's node i
// writes values[1 + b * length + i].
FlowGraphTiming branch_runs(int branches, int length, int threads, int reps) {
  FlowGraphTiming timing;
  oneapi::tbb::task_arena arena(threads);
  arena.execute([&] {
    flow::graph g;
    flow::broadcast_node<flow::continue_msg> start(g);
    std::vector<float> values(1 + static_cast<size_t>(branches) * static_cast<size_t>(length));
    std::vector<std::unique_ptr<Node>> nodes;
    std::vector<size_t> outputs;
    for (int b = 0; b < branches; ++b)
      for (int i = 0; i < length; ++i) {
        const size_t to = 1 + static_cast<size_t>(b) * static_cast<size_t>(length) + static_cast<size_t>(i);
        const size_t from = i == 0 ? 0 : to - 1;
        float* v = values.data();
        nodes.push_back(std::make_unique<Node>(g, [v, from, to](const flow::continue_msg&) { v[to] = v[from] + kStep; }));
        if (i == 0) flow::make_edge(start, *nodes.back());
        else flow::make_edge(*nodes[nodes.size() - 2], *nodes.back());
        if (i == length - 1) outputs.push_back(to);
      }
    timing = time_runs(g, start, values, outputs, length, reps);
  });
  return timing;
}

}  // namespace

bool tbb_flow_available() { return true; }

std::optional<FlowGraphTiming> tbb_chain_runs(int nodes, int threads, int reps) {
  return branch_runs(1, nodes, threads, reps);
}

std::optional<FlowGraphTiming> tbb_wide_runs(int branches, int length, int threads, int reps) {
  return branch_runs(branches, length, threads, reps);
}

#else

bool tbb_flow_available() { return false; }
std::optional<FlowGraphTiming> tbb_chain_runs(int, int, int) { return std::nullopt; }
std::optional<FlowGraphTiming> tbb_wide_runs(int, int, int, int) { return std::nullopt; }

#endif

}  // namespace tenact::bench
