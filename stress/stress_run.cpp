#include "stress/stress_run.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/json_text.hpp"
#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "reference/cpu_reference_runner.hpp"

namespace tenact::stress {

namespace {

using Clock = std::chrono::steady_clock;

// What every client shares. Callbacks hold it by shared_ptr, so a late
// answer (after its job was declared hung, or after run_stress returned)
// finds it alive.
struct Shared {
  std::mutex mutex;
  std::condition_variable changed;
  // (client, job, result), in the order answered.
  struct Answer {
    uint64_t job;
    Result<std::vector<Tensor>> result;
  };
  std::vector<std::deque<Answer>> inbox;
  std::atomic<uint64_t> submitted{0};
  std::atomic<uint64_t> answered{0};
};

// One job between submission and its check. `stats` is written by the
// runtime until the callback runs: a hung job's Pending is kept until the
// runtime is gone.
struct Pending {
  uint64_t job = 0;
  GeneratedJob generated;
  Result<std::vector<HostTensor>> expected{std::vector<HostTensor>{}};
  Clock::time_point start;
  ExecutionStats stats;
};

struct Tally {
  std::mutex mutex;
  StressReport report;
  std::vector<uint64_t> latencies_us;
  bool any_virtual = false;
  uint64_t virtual_begin = 0, virtual_end = 0;
  std::atomic<uint64_t> done{0};
};

bool explained(ErrorCode code, const sim::SimFaultSpec* faults) {
  if (faults == nullptr || !faults->any()) return false;
  switch (code) {
    case ErrorCode::TransientFailure:
    case ErrorCode::EngineDown:
    case ErrorCode::ResourceExhausted: return true;
    case ErrorCode::Unsupported:
    case ErrorCode::NoEligibleEngine: return !faults->fail_ops.empty();
    default: return false;
  }
}

// Programs parsed once per index (jobs share them, and so the runtime's
// memo sees the same program object).
class ProgramCache {
 public:
  Result<std::shared_ptr<const SemanticProgram>> get(uint32_t index, const std::string& json) {
    std::lock_guard lock(mutex_);
    if (auto it = programs_.find(index); it != programs_.end()) return it->second;
    auto p = load_program(json);
    if (!p.ok()) return p.error().with_context("stress program " + std::to_string(index));
    auto shared = std::make_shared<const SemanticProgram>(std::move(*p));
    programs_.emplace(index, shared);
    return shared;
  }

 private:
  std::mutex mutex_;
  std::map<uint32_t, std::shared_ptr<const SemanticProgram>> programs_;
};

class Harness {
 public:
  Harness(const StressOptions& o, Runtime& rt, cpu::CpuEngine& reference, const sim::SimFaultSpec* faults)
      : o_(o), rt_(rt), reference_(reference), faults_(faults), shared_(std::make_shared<Shared>()) {
    shared_->inbox.resize(std::max<uint32_t>(1, o.clients));
    next_ = o.only_job ? *o.only_job : 0;
    end_ = o.only_job ? *o.only_job + 1 : o.jobs;
    deadline_ = o.duration.count() > 0 ? Clock::now() + o.duration : Clock::time_point::max();
  }

  void run_client(uint32_t client) {
    std::map<uint64_t, std::unique_ptr<Pending>> in_flight;
    const auto hung_after = 2 * o_.job_deadline;
    for (;;) {
      while (in_flight.size() < std::max<uint32_t>(1, o_.window)) {
        auto job = claim();
        if (!job) break;
        submit(client, *job, in_flight);
      }
      if (in_flight.empty()) return;
      std::deque<Shared::Answer> answers;
      {
        std::unique_lock lock(shared_->mutex);
        shared_->changed.wait_for(lock, std::chrono::milliseconds(200),
                                  [&] { return !shared_->inbox[client].empty(); });
        answers.swap(shared_->inbox[client]);
      }
      for (auto& a : answers) {
        auto it = in_flight.find(a.job);
        if (it == in_flight.end()) continue;  // answered after it was declared hung
        check(*it->second, std::move(a.result));
        in_flight.erase(it);
      }
      const auto now = Clock::now();
      for (auto it = in_flight.begin(); it != in_flight.end();) {
        if (now - it->second->start < hung_after) {
          ++it;
          continue;
        }
        fail(it->second->job, "hung", "no answer after " + std::to_string(hung_after.count()) + " ms");
        {
          std::lock_guard lock(graveyard_mutex_);
          graveyard_.push_back(std::move(it->second));
        }
        it = in_flight.erase(it);
      }
    }
  }

  std::shared_ptr<Shared> shared() const { return shared_; }
  Tally& tally() { return tally_; }
  uint64_t planned() const { return end_ - (o_.only_job ? *o_.only_job : 0); }

 private:
  std::optional<uint64_t> claim() {
    if (Clock::now() >= deadline_) return std::nullopt;
    uint64_t job = next_.fetch_add(1);
    if (job >= end_) return std::nullopt;
    return job;
  }

  void submit(uint32_t client, uint64_t job, std::map<uint64_t, std::unique_ptr<Pending>>& in_flight) {
    auto p = std::make_unique<Pending>();
    p->job = job;
    auto generated = generate_job(o_.seed, job, o_.generator);
    if (!generated.ok()) return fail(job, "unexplained error", "generating the job: " + generated.error().message());
    p->generated = std::move(*generated);
    auto program = programs_.get(p->generated.program_index, p->generated.program_json);
    if (!program.ok()) return fail(job, "unexplained error", program.error().message());
    p->expected = cpu::run_program_on_cpu(**program, p->generated.inputs, reference_);
    if (o_.plant_wrong_job == job && p->expected.ok()) plant_wrong(*p->expected);
    p->start = Clock::now();
    std::vector<Tensor> inputs = p->generated.inputs;
    auto shared = shared_;
    ExecutionStats* stats = &p->stats;
    in_flight.emplace(job, std::move(p));
    shared->submitted.fetch_add(1);
    rt_.run(*program, std::move(inputs), o_.prepare,
            [shared, client, job](Result<std::vector<Tensor>> r) {
              {
                std::lock_guard lock(shared->mutex);
                shared->inbox[client].push_back({job, std::move(r)});
              }
              shared->answered.fetch_add(1);
              shared->changed.notify_all();
            },
            stats);
  }

  // Flips the lowest bit of the first element of the first non-empty
  // output (a copy: the reference's tensors may share buffers); when every
  // output is empty (N = 0), the first becomes one element of its dtype,
  // a shape the engine's result cannot have.
  static void plant_wrong(std::vector<HostTensor>& outputs) {
    for (HostTensor& t : outputs) {
      if (t.element_count() == 0) continue;
      auto copy = t.clone();
      if (!copy.ok()) return;
      auto dense = copy->contiguous();
      if (!dense.ok()) return;
      *dense->data() ^= std::byte{1};
      t = std::move(*dense);
      return;
    }
    if (outputs.empty()) return;
    if (auto one = Tensor::zeros(outputs.front().dtype(), {1}); one.ok()) outputs.front() = std::move(*one);
  }

  // Reads an output back to the host, trying a copy that failed as
  // injected again (each try draws its own fault).
  Result<HostTensor> to_host(const Tensor& t) {
    if (t.is_host()) return t;
    Result<Tensor> copied = Error{ErrorCode::Internal, "no try"};
    for (int attempt = 0; attempt < 8; ++attempt) {
      copied = rt_.copy(t, Endpoint::unowned_host()).get();
      if (copied.ok() || copied.error().code() != ErrorCode::TransientFailure) break;
    }
    return copied;
  }

  void check(Pending& p, Result<std::vector<Tensor>> result) {
    const uint64_t us = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - p.start).count());
    std::string what, detail;
    bool failed = false;  // the runtime failed (with `code`)
    ErrorCode code = ErrorCode::Internal;
    bool agreed = false;
    if (result.ok()) {
      std::vector<HostTensor> actual;
      for (size_t i = 0; i < result->size() && !failed; ++i) {
        auto h = to_host((*result)[i]);
        if (!h.ok()) failed = true, code = h.error().code(), detail = "reading output " + std::to_string(i) + " back: " + h.error().message();
        else actual.push_back(std::move(*h));
      }
      result = std::vector<Tensor>{};  // the runtime's buffers go now
      if (!failed) {
        if (!p.expected.ok()) {
          what = "wrong", detail = "the runtime answered; the CPU engine failed: " + p.expected.error().message();
        } else if (actual.size() != p.expected->size()) {
          what = "wrong", detail = std::to_string(actual.size()) + " outputs, the CPU engine gives " + std::to_string(p.expected->size());
        } else {
          for (size_t i = 0; i < actual.size() && what.empty(); ++i) {
            std::string why;
            if (!results_match((*p.expected)[i], actual[i], p.generated.output_ulps[i], &why))
              what = "wrong", detail = "output " + std::to_string(i) + ": " + why;
          }
        }
      }
    } else {
      failed = true;
      code = result.error().code();
      detail = result.error().message();
    }
    if (failed && what.empty()) {
      if (!p.expected.ok() && p.expected.error().code() == code) {
        failed = false;  // both failed alike
        agreed = true;
      } else if (!explained(code, faults_)) {
        what = "unexplained error";
      }
    }
    std::lock_guard lock(tally_.mutex);
    StressReport& r = tally_.report;
    ++r.jobs;
    r.retries += p.stats.retries;
    r.replacements += p.stats.replacements;
    if (p.stats.virtual_time) {
      tally_.virtual_begin = tally_.any_virtual ? std::min(tally_.virtual_begin, p.stats.virtual_begin_ns) : p.stats.virtual_begin_ns;
      tally_.virtual_end = std::max(tally_.virtual_end, p.stats.virtual_end_ns);
      tally_.any_virtual = true;
    }
    tally_.latencies_us.push_back(us);
    if (failed || agreed) ++r.errors[std::string(to_string(code))];
    if (what == "wrong") ++r.wrong;
    else if (what == "unexplained error") ++r.unexplained_errors;
    else if (failed) ++r.failed_as_injected;
    else ++r.correct, r.agreed_errors += agreed ? 1 : 0;
    tally_.done.fetch_add(1);
    if (!what.empty()) record(p, what, detail);
  }

  void fail(uint64_t job, std::string what, std::string detail) {
    std::lock_guard lock(tally_.mutex);
    ++tally_.report.jobs;
    if (what == "hung") ++tally_.report.hung;
    else ++tally_.report.unexplained_errors;
    tally_.done.fetch_add(1);
    if (tally_.report.failures.size() < 20)
      tally_.report.failures.push_back({job, std::move(what), std::move(detail), replay(job)});
  }

  // Caller holds tally_.mutex.
  void record(const Pending& p, const std::string& what, const std::string& detail) {
    if (tally_.report.failures.size() < 20) tally_.report.failures.push_back({p.job, what, detail, replay(p.job)});
    if (o_.failures_dir.empty() || what != "wrong") return;
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir = fs::path(o_.failures_dir) / ("job-" + std::to_string(p.job));
    fs::create_directories(dir, ec);
    if (ec) return;
    (void)write_file((dir / "program.json").string(), p.generated.program_json);
    for (size_t i = 0; i < p.generated.inputs.size(); ++i)
      (void)write_tensor_file((dir / ("input-" + std::to_string(i) + ".npy")).string(), p.generated.inputs[i]);
    (void)write_file((dir / "replay.txt").string(),
                     replay(p.job) + "\n# N = " + std::to_string(p.generated.n) + ", M = " +
                         std::to_string(p.generated.m) + "; " + detail + "\n");
  }

  std::string replay(uint64_t job) const {
    return o_.replay_command.empty() ? "" : o_.replay_command + " --job " + std::to_string(job);
  }

  const StressOptions& o_;
  Runtime& rt_;
  cpu::CpuEngine& reference_;
  const sim::SimFaultSpec* faults_;
  std::shared_ptr<Shared> shared_;
  ProgramCache programs_;
  Tally tally_;
  std::atomic<uint64_t> next_{0};
  uint64_t end_ = 0;
  Clock::time_point deadline_;
  std::mutex graveyard_mutex_;

 public:
  // Hung jobs' state, kept until the runtime is gone.
  std::vector<std::unique_ptr<Pending>> graveyard_;
};

uint64_t percentile(std::vector<uint64_t>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

bool StressReport::passed() const {
  return !setup_error && wrong == 0 && hung == 0 && lost == 0 && unexplained_errors == 0 && leaks.empty();
}

StressReport run_stress(const StressOptions& options) {
  StressReport failed;
  const auto started = Clock::now();
  auto reference = cpu::CpuEngine::create(cpu::CpuEngineOptions{.threads = options.reference_threads});
  if (!reference.ok()) {
    failed.setup_error = reference.error().with_context("the reference CPU engine");
    return failed;
  }
  RuntimeOptions runtime_options = options.runtime;
  runtime_options.run_deadline = options.job_deadline;
  std::optional<Runtime> rt(std::in_place, runtime_options);
  if (auto s = rt->status(); !s.ok()) {
    failed.setup_error = s.error();
    return failed;
  }
  auto engines = setup::register_engines(*rt, options.engines, options.engine_options);
  if (!engines.ok()) {
    failed.setup_error = engines.error();
    return failed;
  }
  const sim::SimFaultSpec* faults = engines->world ? &engines->world->platform().faults : nullptr;
  Harness harness(options, *rt, **reference, faults);
  std::vector<std::thread> clients;
  for (uint32_t c = 0; c < std::max<uint32_t>(1, options.clients); ++c)
    clients.emplace_back([&harness, c] { harness.run_client(c); });
  // Progress from this thread while the clients run.
  std::atomic<bool> finished{false};
  std::thread joiner([&] {
    for (auto& t : clients) t.join();
    finished = true;
    harness.shared()->changed.notify_all();
  });
  while (!finished) {
    std::unique_lock lock(harness.shared()->mutex);
    harness.shared()->changed.wait_for(lock, std::chrono::seconds(1), [&] { return finished.load(); });
    lock.unlock();
    if (options.progress && !finished) {
      StressProgress p;
      p.done = harness.tally().done.load();
      p.planned = options.duration.count() > 0 ? 0 : harness.planned();
      {
        std::lock_guard tally_lock(harness.tally().mutex);
        p.wrong = harness.tally().report.wrong;
        p.errors = harness.tally().report.unexplained_errors + harness.tally().report.failed_as_injected;
      }
      p.seconds = std::chrono::duration<double>(Clock::now() - started).count();
      options.progress(p);
    }
  }
  joiner.join();

  StressReport report = std::move(harness.tally().report);
  report.cache = rt->cache_stats();
  for (const auto& [id, q] : rt->queue_stats()) report.runs_per_engine[id] = q.runs;
  if (harness.tally().any_virtual) report.virtual_makespan_ns = harness.tally().virtual_end - harness.tally().virtual_begin;
  for (const auto& [id, sim] : engines->sims) {
    const auto s = sim->stats();
    const double lanes = std::max<uint32_t>(1, sim->capabilities().queues);
    report.utilisation[id] = report.virtual_makespan_ns == 0 ? 0.0
                                                            : static_cast<double>(s.busy_ns) /
                                                                  (lanes * static_cast<double>(report.virtual_makespan_ns));
  }
  // Leaks: with every result dropped and the prepare cache cleared, no
  // engine holds memory.
  rt->clear_cache();
  for (const auto& engine : engines->engines) {
    uint64_t left = 0;
    for (const std::string& storage : engine->capabilities().storage_classes)
      if (auto m = engine->memory_stats(storage); m.ok()) left += m->allocated_bytes;
    if (left > 0) report.leaks[engine->identity().id] = left;
  }
  const std::string replay_prefix = options.replay_command;
  auto shared = harness.shared();
  engines = Error{ErrorCode::Internal, "released"};
  rt.reset();  // fails whatever is still in flight with Shutdown, joins
  harness.graveyard_.clear();
  report.lost = shared->submitted.load() - shared->answered.load();
  if (report.lost > 0 && report.failures.size() < 20)
    report.failures.push_back({0, "lost", std::to_string(report.lost) + " jobs never answered", ""});
  auto& lat = harness.tally().latencies_us;
  report.latency_p50_us = percentile(lat, 0.50);
  report.latency_p99_us = percentile(lat, 0.99);
  report.latency_max_us = lat.empty() ? 0 : *std::max_element(lat.begin(), lat.end());
  report.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return report;
}

std::string report_text(const StressReport& r) {
  std::ostringstream o;
  if (r.setup_error) {
    o << "stress: could not start: " << r.setup_error->message() << "\n";
    return o.str();
  }
  o << "jobs " << r.jobs << ": correct " << r.correct << " (of which failed alike on both " << r.agreed_errors
    << "), wrong " << r.wrong << ", failed as injected "
    << r.failed_as_injected << ", unexplained errors " << r.unexplained_errors << ", hung " << r.hung << ", lost "
    << r.lost << "\n";
  o << "errors by code:";
  if (r.errors.empty()) o << " none";
  for (const auto& [code, n] : r.errors) o << " " << code << " " << n;
  o << "\nretries " << r.retries << ", re-placements " << r.replacements << "\n";
  o << "leaks: ";
  if (r.leaks.empty()) o << "none";
  for (const auto& [id, bytes] : r.leaks) o << id << " " << bytes << " bytes; ";
  o << "\nper engine:";
  for (const auto& [id, runs] : r.runs_per_engine) {
    o << " " << id << " runs " << runs;
    if (auto u = r.utilisation.find(id); u != r.utilisation.end()) o << " (utilisation " << u->second << ")";
    o << ";";
  }
  o << "\nvirtual makespan " << r.virtual_makespan_ns << " ns; wall " << r.wall_seconds << " s ("
    << (r.wall_seconds > 0 ? static_cast<double>(r.jobs) / r.wall_seconds : 0.0) << " jobs/s); latency p50 "
    << r.latency_p50_us << " us, p99 " << r.latency_p99_us << " us, max " << r.latency_max_us << " us\n";
  o << "prepare cache: hits " << r.cache.hits << ", misses " << r.cache.misses << ", joins " << r.cache.in_flight_joins
    << ", productions " << r.cache.productions << "\n";
  for (const auto& f : r.failures)
    o << f.what << ": job " << f.job << ": " << f.detail << (f.replay.empty() ? "" : "\n  replay: " + f.replay) << "\n";
  o << (r.passed() ? "PASSED" : "FAILED") << "\n";
  return o.str();
}

std::string report_json(const StressReport& r) {
  std::ostringstream j;
  j << "{\"passed\": " << (r.passed() ? "true" : "false") << ", \"jobs\": " << r.jobs << ", \"correct\": " << r.correct << ", \"agreed_errors\": " << r.agreed_errors
    << ", \"wrong\": " << r.wrong << ", \"failed_as_injected\": " << r.failed_as_injected
    << ", \"unexplained_errors\": " << r.unexplained_errors << ", \"hung\": " << r.hung << ", \"lost\": " << r.lost
    << ", \"retries\": " << r.retries << ", \"replacements\": " << r.replacements
    << ", \"virtual_makespan_ns\": " << r.virtual_makespan_ns << ", \"wall_seconds\": " << r.wall_seconds
    << ", \"latency_us\": {\"p50\": " << r.latency_p50_us << ", \"p99\": " << r.latency_p99_us << ", \"max\": "
    << r.latency_max_us << "}, \"errors\": {";
  bool first = true;
  for (const auto& [code, n] : r.errors) j << (first ? "" : ", ") << json_quoted(code) << ": " << n, first = false;
  j << "}, \"leaks\": {";
  first = true;
  for (const auto& [id, n] : r.leaks) j << (first ? "" : ", ") << json_quoted(id) << ": " << n, first = false;
  j << "}, \"engines\": {";
  first = true;
  for (const auto& [id, runs] : r.runs_per_engine) {
    j << (first ? "" : ", ") << json_quoted(id) << ": {\"runs\": " << runs;
    if (auto u = r.utilisation.find(id); u != r.utilisation.end()) j << ", \"utilisation\": " << u->second;
    j << "}";
    first = false;
  }
  j << "}, \"cache\": {\"hits\": " << r.cache.hits << ", \"misses\": " << r.cache.misses << ", \"joins\": "
    << r.cache.in_flight_joins << ", \"productions\": " << r.cache.productions << "}, \"failures\": [";
  first = true;
  for (const auto& f : r.failures) {
    j << (first ? "" : ", ") << "{\"job\": " << f.job << ", \"what\": " << json_quoted(f.what)
      << ", \"detail\": " << json_quoted(f.detail) << ", \"replay\": " << json_quoted(f.replay) << "}";
    first = false;
  }
  j << "]";
  if (r.setup_error) j << ", \"setup_error\": " << json_quoted(r.setup_error->message());
  j << "}\n";
  return j.str();
}

}  // namespace tenact::stress
