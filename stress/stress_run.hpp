// The stress harness: client threads submit seeded random jobs
// (stress_programs.hpp) to one Runtime over the engines a command line
// names, and every answer is checked against the CPU engine running the
// same program on the client's thread (cpu_reference_runner.hpp).
//
// A job is
//  - correct: its outputs match the CPU engine's (stress_programs.hpp says
//    how), or both failed with the same error code;
//  - wrong: an output differs, or the runtime answered where the CPU
//    engine failed, or failed differently;
//  - failed as injected: an error the configured faults explain
//    (TransientFailure past the retries, EngineDown, ResourceExhausted, and
//    with failing op kinds Unsupported / NoEligibleEngine);
//  - an unexplained error: any other error;
//  - hung: no answer within twice the job deadline;
//  - lost: never answered, even once the runtime shut down (every request
//    must be answered, Shutdown at worst).
// At the end every engine's memory must be back to 0 bytes once the results
// and the prepare cache are gone; a byte left is a leak.
//
// Threading: run_stress blocks its caller (never call it on a runtime
// thread); it starts `clients` threads of its own and joins them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "setup/engine_setup.hpp"
#include "stress/stress_programs.hpp"

namespace tenact::stress {

struct StressProgress {
  uint64_t done = 0;
  uint64_t planned = 0;  // 0: bounded by time only
  uint64_t wrong = 0;
  uint64_t errors = 0;
  double seconds = 0;
};

struct StressOptions {
  /// Jobs to run: 0..jobs-1 (unless `only_job`).
  uint64_t jobs = 1000;
  uint64_t seed = 1;
  /// Stop claiming jobs after this long (0: no limit); the report counts
  /// the jobs that ran.
  std::chrono::milliseconds duration{0};
  GeneratorOptions generator;
  uint32_t clients = 4;
  /// Jobs each client keeps in flight.
  uint32_t window = 8;
  std::vector<setup::EngineSpec> engines;
  setup::EngineSetupOptions engine_options;
  RuntimeOptions runtime;
  PrepareOptions prepare;
  /// Runs only this job (a replay).
  std::optional<uint64_t> only_job;
  /// A job unanswered after twice this is hung; the runtime's run deadline
  /// is set to it.
  std::chrono::milliseconds job_deadline{std::chrono::seconds(60)};
  /// Threads of the CPU engine that computes the expected results.
  size_t reference_threads = 1;
  /// When set: each wrong job's program, inputs (.npy) and replay command
  /// are written to DIR/job-INDEX/ (created).
  std::string failures_dir;
  /// The harness's own check: the expected result of this job gets one
  /// bit flipped (in its first non-empty output), so the job must be
  /// reported wrong, written out and given its replay command.
  std::optional<uint64_t> plant_wrong_job;
  /// The command that replays a job, without " --job I".
  std::string replay_command;
  /// Called about once a second from the thread that called run_stress.
  std::function<void(const StressProgress&)> progress;
};

struct StressFailure {
  uint64_t job = 0;
  std::string what;    // "wrong", "unexplained error", "hung", "lost"
  std::string detail;  // what differed, or the error
  std::string replay;  // the command that replays it
};

struct StressReport {
  uint64_t jobs = 0;
  uint64_t correct = 0;
  /// Of the correct: jobs where the runtime and the CPU engine failed with
  /// the same error code.
  uint64_t agreed_errors = 0;
  uint64_t wrong = 0;
  uint64_t failed_as_injected = 0;
  uint64_t unexplained_errors = 0;
  uint64_t hung = 0;
  uint64_t lost = 0;
  /// Engines with memory left at the end, with the bytes.
  std::map<std::string, uint64_t> leaks;
  /// Errors by code name (explained and not).
  std::map<std::string, uint64_t> errors;
  uint64_t retries = 0;
  uint64_t replacements = 0;
  /// The earliest virtual start and latest virtual end over every job's
  /// work on simulated devices (0 without any).
  uint64_t virtual_makespan_ns = 0;
  /// Per simulated device: busy / (streams x virtual makespan); per
  /// engine: the runs admitted on it.
  std::map<std::string, double> utilisation;
  std::map<std::string, uint64_t> runs_per_engine;
  CacheStats cache;
  double wall_seconds = 0;
  uint64_t latency_p50_us = 0, latency_p99_us = 0, latency_max_us = 0;
  /// The first 20 failures.
  std::vector<StressFailure> failures;
  /// Set when the harness itself could not run (engines, threads).
  std::optional<Error> setup_error;

  /// No wrong, hung or lost job, no unexplained error, no leak.
  bool passed() const;
};

StressReport run_stress(const StressOptions& options);

/// The report as text lines (for a terminal) and as one JSON object.
std::string report_text(const StressReport& report);
std::string report_json(const StressReport& report);

}  // namespace tenact::stress
