// The job board: which runs are in flight on which engine, with how much
// estimated work, and which wait for room. It gives the runtime
//  - backpressure: with a bound of K runs in flight per engine, a run that
//    would put an engine past K waits here (not in an engine's queue) until
//    a run on that engine finishes; past its deadline it fails with Timeout
//    naming the engines that had no room; when the waiting room itself is
//    full it is refused at once (LimitExceeded);
//  - job placement: the least loaded of several engines (estimated work in
//    flight, then runs in flight), for the runtime to put a job's ops there
//    when they could go anywhere (Runtime::run);
//  - per-engine queue statistics (runs in flight now and at most, runs
//    admitted, runs that had to wait, estimated work in flight).
//
// Waiting runs are admitted in arrival order among those that fit: one
// that needs a full engine does not hold back one that does not. A run's
// load is fixed when it is admitted and given back whole when it finishes.
//
// Thread-safe: every call may come from any thread. Callbacks (a run's
// start) are called outside the lock, on the thread that admitted it:
// admit()'s caller when there is room at once, else the thread whose
// finished() or expire() made the decision. No CAF, no engine calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "planning/prepared_program.hpp"

namespace tenact {

/// The engines one run uses, each once, with the work estimated for it
/// there (nanoseconds; 0 when the plan has no estimates).
struct JobLoad {
  struct Share {
    std::string engine;
    uint64_t busy_ns = 0;
  };
  std::vector<Share> engines;
};

/// The load of running `program`: each engine its schedule names (ops and
/// transfer destinations), with the estimated time of its instructions
/// (ScheduledGraph::placement; none without cost-aware placement).
JobLoad job_load_of(const PreparedProgram& program);

struct JobBoardOptions {
  /// Runs in flight per engine; 0: no bound (nothing ever waits).
  uint32_t max_runs_per_engine = 0;
  /// Runs that may wait at once; one more is refused.
  size_t max_waiting = 4096;
};

struct EngineQueueStats {
  uint64_t in_flight = 0;
  uint64_t max_in_flight = 0;
  /// Runs admitted on it, and of those the ones that waited first.
  uint64_t runs = 0;
  uint64_t waited = 0;
  /// Estimated work of the runs in flight on it.
  uint64_t backlog_ns = 0;
};

class JobBoard {
 public:
  /// ok: the run may start now; an error: it never will (Timeout,
  /// LimitExceeded, Shutdown).
  using Start = std::function<void(Status)>;

  explicit JobBoard(JobBoardOptions options = {});

  /// Admits the run now (calls start(ok) before returning) when every
  /// engine of `load` has room; else it waits until `deadline`.
  void admit(JobLoad load, std::chrono::steady_clock::time_point deadline, Start start);
  /// A run admitted with `load` is over: its engines get the room back, and
  /// waiting runs that fit now are admitted (their starts called here).
  void finished(const JobLoad& load);
  /// Fails the waiting runs past their deadline with Timeout; returns how
  /// many.
  size_t expire(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  /// Fails every waiting run with `error` (shutdown).
  void fail_all(const Error& error);

  /// Of `candidates` (in preference order), the one with the least
  /// estimated work in flight, then the fewest runs in flight, then the
  /// first. Empty for no candidates.
  std::string least_loaded(std::span<const std::string> candidates) const;

  std::map<std::string, EngineQueueStats> stats() const;
  size_t waiting() const;
  uint32_t bound() const { return options_.max_runs_per_engine; }

 private:
  struct Waiting {
    JobLoad load;
    std::chrono::steady_clock::time_point deadline;
    Start start;
  };
  // Under mutex_.
  bool fits_locked(const JobLoad& load) const;
  void take_locked(const JobLoad& load, bool waited);
  std::string full_engines_locked(const JobLoad& load) const;

  JobBoardOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, EngineQueueStats, std::less<>> engines_;
  std::deque<Waiting> waiting_;
};

}  // namespace tenact
