#include "actors/job_board.hpp"

#include <algorithm>
#include <utility>

namespace tenact {

JobLoad job_load_of(const PreparedProgram& program) {
  JobLoad load;
  if (!program.root || !program.root->schedule) return load;
  const ScheduledGraph& g = *program.root->schedule;
  auto share_of = [&load](const std::string& engine) -> JobLoad::Share& {
    for (JobLoad::Share& s : load.engines)
      if (s.engine == engine) return s;
    load.engines.push_back(JobLoad::Share{engine, 0});
    return load.engines.back();
  };
  for (const ScheduledNode& node : g.nodes) share_of(g.endpoint(node.location).engine);
  for (size_t i = 0; i < g.placement.size() && i < g.instruction_locations.size(); ++i) {
    const OpPlacement& p = g.placement[i];
    share_of(g.endpoint(g.instruction_locations[i]).engine).busy_ns += p.est_finish_ns - p.est_start_ns;
  }
  return load;
}

JobBoard::JobBoard(JobBoardOptions options) : options_(options) {}

bool JobBoard::fits_locked(const JobLoad& load) const {
  if (options_.max_runs_per_engine == 0) return true;
  for (const JobLoad::Share& s : load.engines) {
    auto it = engines_.find(s.engine);
    if (it != engines_.end() && it->second.in_flight >= options_.max_runs_per_engine) return false;
  }
  return true;
}

void JobBoard::take_locked(const JobLoad& load, bool waited) {
  for (const JobLoad::Share& s : load.engines) {
    EngineQueueStats& e = engines_[s.engine];
    e.in_flight += 1;
    e.max_in_flight = std::max(e.max_in_flight, e.in_flight);
    e.runs += 1;
    e.waited += waited ? 1 : 0;
    e.backlog_ns += s.busy_ns;
  }
}

std::string JobBoard::full_engines_locked(const JobLoad& load) const {
  std::string out;
  for (const JobLoad::Share& s : load.engines) {
    auto it = engines_.find(s.engine);
    if (it == engines_.end() || it->second.in_flight < options_.max_runs_per_engine) continue;
    out += std::string{out.empty() ? "" : ", "} + "'" + s.engine + "' (" + std::to_string(it->second.in_flight) +
           " runs in flight)";
  }
  return out.empty() ? std::string{"none"} : out;
}

void JobBoard::admit(JobLoad load, std::chrono::steady_clock::time_point deadline, Start start) {
  std::unique_lock lock(mutex_);
  if (fits_locked(load)) {
    take_locked(load, false);
    lock.unlock();
    return start(ok_status());
  }
  if (waiting_.size() >= options_.max_waiting) {
    const std::string full = full_engines_locked(load);
    lock.unlock();
    return start(Error{ErrorCode::LimitExceeded, "the runtime is full: " + std::to_string(options_.max_waiting) +
                                                     " runs wait for room already (engines at their bound of " +
                                                     std::to_string(options_.max_runs_per_engine) +
                                                     " runs in flight: " + full + ")"});
  }
  waiting_.push_back(Waiting{std::move(load), deadline, std::move(start)});
}

void JobBoard::finished(const JobLoad& load) {
  std::vector<Start> admitted;
  {
    std::lock_guard lock(mutex_);
    for (const JobLoad::Share& s : load.engines) {
      auto it = engines_.find(s.engine);
      if (it == engines_.end()) continue;
      it->second.in_flight -= std::min<uint64_t>(it->second.in_flight, 1);
      it->second.backlog_ns -= std::min(it->second.backlog_ns, s.busy_ns);
    }
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (!fits_locked(it->load)) {
        ++it;
        continue;
      }
      take_locked(it->load, true);
      admitted.push_back(std::move(it->start));
      it = waiting_.erase(it);
    }
  }
  for (Start& s : admitted) s(ok_status());
}

size_t JobBoard::expire(std::chrono::steady_clock::time_point now) {
  std::vector<std::pair<Start, Error>> expired;
  {
    std::lock_guard lock(mutex_);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (it->deadline > now) {
        ++it;
        continue;
      }
      expired.emplace_back(std::move(it->start),
                           Error{ErrorCode::Timeout, "the run waited past its deadline for room on engines " +
                                                        full_engines_locked(it->load) + ", each at its bound of " +
                                                        std::to_string(options_.max_runs_per_engine) +
                                                        " runs in flight"});
      it = waiting_.erase(it);
    }
  }
  for (auto& [start, error] : expired) start(error);
  return expired.size();
}

void JobBoard::fail_all(const Error& error) {
  std::deque<Waiting> all;
  {
    std::lock_guard lock(mutex_);
    all.swap(waiting_);
  }
  for (Waiting& w : all) w.start(error);
}

std::string JobBoard::least_loaded(std::span<const std::string> candidates) const {
  std::lock_guard lock(mutex_);
  const std::string* best = nullptr;
  EngineQueueStats best_stats;
  for (const std::string& c : candidates) {
    auto it = engines_.find(c);
    const EngineQueueStats s = it == engines_.end() ? EngineQueueStats{} : it->second;
    if (!best || s.backlog_ns < best_stats.backlog_ns ||
        (s.backlog_ns == best_stats.backlog_ns && s.in_flight < best_stats.in_flight)) {
      best = &c;
      best_stats = s;
    }
  }
  return best ? *best : std::string{};
}

std::map<std::string, EngineQueueStats> JobBoard::stats() const {
  std::lock_guard lock(mutex_);
  return {engines_.begin(), engines_.end()};
}

size_t JobBoard::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_.size();
}

}  // namespace tenact
