// What `tenact run --stats` and `--stats-json FILE` report: per engine, the
// ops it ran, the bytes that came in and went out, its peak memory and its
// busy time (virtual for a simulated device, wall-clock for a CPU engine);
// the copies along each link; each run's makespan (virtual when a
// simulated device or link ran any of it, else wall-clock; the last run's
// is "the" makespan); the prepare cache's counters.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "setup/engine_setup.hpp"

namespace tenact::cli {

struct RunStats {
  /// Wall-clock nanoseconds of all runs together.
  uint64_t wall_ns = 0;
  /// Per run, in order: its makespan (ExecutionStats::virtual_makespan_ns
  /// when virtual_time, else its wall-clock time).
  std::vector<uint64_t> makespans_ns;
  bool virtual_time = false;
  CacheStats cache;
  /// Per engine: runs in flight at most, runs, runs that waited
  /// (Runtime::queue_stats after the last run).
  std::map<std::string, EngineQueueStats> queues;

  /// Records one run: its stats and wall-clock time.
  void add_run(const ExecutionStats& run, uint64_t wall);
};

/// The human-readable lines (one per engine, per link, then makespan).
void print_engine_stats(const setup::RegisteredEngines& engines, const RunStats& run, std::ostream& out);
/// {"engines": {ID: {"ops", "bytes_in", "bytes_out", "peak_bytes", "busy_ns", "virtual",
///  "runs", "max_queue_depth", "waited", "utilisation"}}, where utilisation
///  is busy_ns / (lanes x the runs' makespans added up), lanes being a
///  simulated device's streams (1 for a CPU engine: its busy time counts
///  the batches it ran, whatever their threads),
///  "transfers": [{"from", "to", "copies", "bytes", "busy_ns"}], "makespan_ns" (the last run's),
///  "run_makespans_ns": [each run's], "virtual_time", "cache": {...}}
std::string engine_stats_json(const setup::RegisteredEngines& engines, const RunStats& run);

}  // namespace tenact::cli
