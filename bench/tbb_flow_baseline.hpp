// The per-node baselines of runtime_bench (iii) in oneTBB's flow graph
// (Debian's libtbb-dev, found at build time; without it every call answers
// nullopt): the same graphs as Tenact's, a chain of scalar f32 adds
// v[i+1] = v[i] + c and `branches` chains of `length` such adds from one
// source, each add a continue_node. A graph is built once and run `reps`
// times (as a prepared program is run), on a task arena of `threads`.
//
// Each run's result is checked against its value computed by hand
// (x + length * c, exact in f32 for these sizes); a wrong one is reported
// as an error string.
#pragma once

#include <optional>
#include <string>

namespace tenact::bench {

struct FlowGraphTiming {
  double median_run_us = 0;  // one run of the whole graph
  std::string error;         // empty when every run gave the value by hand
};

/// Whether the TBB baseline was built in.
bool tbb_flow_available();

std::optional<FlowGraphTiming> tbb_chain_runs(int nodes, int threads, int reps);
std::optional<FlowGraphTiming> tbb_wide_runs(int branches, int length, int threads, int reps);

}  // namespace tenact::bench
