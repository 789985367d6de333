#include "tools/engine_stats.hpp"

#include <algorithm>
#include <sstream>

#include "core/json_text.hpp"

namespace tenact::cli {

namespace {

struct EngineFigures {
  std::string id;
  uint64_t ops = 0, bytes_in = 0, bytes_out = 0, peak_bytes = 0, busy_ns = 0;
  bool virtual_time = false;
  uint32_t lanes = 1;
};

std::vector<EngineFigures> figures_of(const setup::RegisteredEngines& engines) {
  std::vector<EngineFigures> out;
  for (const auto& engine : engines.engines) {
    EngineFigures f;
    f.id = engine->identity().id;
    if (auto it = engines.sims.find(f.id); it != engines.sims.end()) {
      const sim::SimEngineStats s = it->second->stats();
      f.ops = s.ops;
      f.bytes_in = s.bytes_in;
      f.bytes_out = s.bytes_out;
      f.peak_bytes = s.peak_bytes;
      f.busy_ns = s.busy_ns;
      f.virtual_time = true;
      f.lanes = std::max<uint32_t>(1, it->second->capabilities().queues);
    } else if (auto cpu = engines.cpus.find(f.id); cpu != engines.cpus.end()) {
      f.ops = cpu->second->ops_run();
      f.busy_ns = cpu->second->busy_ns();
      if (auto m = cpu->second->memory_stats(cpu::CpuEngine::kHostStorage); m.ok()) f.peak_bytes = m->peak_allocated_bytes;
    }
    out.push_back(std::move(f));
  }
  return out;
}

uint64_t makespan_ns(const RunStats& run) { return run.makespans_ns.empty() ? 0 : run.makespans_ns.back(); }

// busy / (lanes x every run's makespan): the share of the engine's lanes'
// time its work filled while the runs ran (0 when nothing ran).
double utilisation(const EngineFigures& f, const RunStats& run) {
  uint64_t elapsed = 0;
  for (uint64_t m : run.makespans_ns) elapsed += m;
  if (elapsed == 0) return 0.0;
  return static_cast<double>(f.busy_ns) / (static_cast<double>(elapsed) * f.lanes);
}

EngineQueueStats queue_of(const RunStats& run, const std::string& id) {
  auto it = run.queues.find(id);
  return it == run.queues.end() ? EngineQueueStats{} : it->second;
}

}  // namespace

void RunStats::add_run(const ExecutionStats& run, uint64_t wall) {
  wall_ns += wall;
  // Virtual as soon as a simulated device or link ran any run's work.
  virtual_time = virtual_time || run.virtual_time;
  makespans_ns.push_back(run.virtual_time ? run.virtual_makespan_ns() : wall);
}

void print_engine_stats(const setup::RegisteredEngines& engines, const RunStats& run, std::ostream& out) {
  for (const EngineFigures& f : figures_of(engines))
    out << "engine " << f.id << ": ops " << f.ops << ", bytes in " << f.bytes_in << ", bytes out " << f.bytes_out
        << ", peak memory " << f.peak_bytes << " bytes, busy " << f.busy_ns << " ns"
        << (f.virtual_time ? " (virtual)" : " (wall clock)") << ", runs " << queue_of(run, f.id).runs
        << ", queue depth at most " << queue_of(run, f.id).max_in_flight << ", utilisation "
        << utilisation(f, run) << "\n";
  if (engines.world)
    for (const sim::SimLinkStats& l : engines.world->link_stats())
      out << "link " << l.from << " -> " << l.to << ": copies " << l.copies << ", bytes " << l.bytes << ", busy "
          << l.busy_ns << " ns (virtual)\n";
  out << "makespan: " << makespan_ns(run) << " ns" << (run.virtual_time ? " (virtual)" : " (wall clock)");
  if (run.makespans_ns.size() > 1) {
    out << "; per run:";
    for (uint64_t m : run.makespans_ns) out << " " << m;
  }
  out << "\n";
}

std::string engine_stats_json(const setup::RegisteredEngines& engines, const RunStats& run) {
  std::ostringstream j;
  j << "{\"engines\": {";
  bool first = true;
  for (const EngineFigures& f : figures_of(engines)) {
    j << (first ? "" : ", ") << json_quoted(f.id) << ": {\"ops\": " << f.ops << ", \"bytes_in\": " << f.bytes_in
      << ", \"bytes_out\": " << f.bytes_out << ", \"peak_bytes\": " << f.peak_bytes << ", \"busy_ns\": " << f.busy_ns
      << ", \"virtual\": " << (f.virtual_time ? "true" : "false") << ", \"runs\": " << queue_of(run, f.id).runs
      << ", \"max_queue_depth\": " << queue_of(run, f.id).max_in_flight << ", \"waited\": " << queue_of(run, f.id).waited
      << ", \"utilisation\": " << utilisation(f, run) << "}";
    first = false;
  }
  j << "}, \"transfers\": [";
  first = true;
  if (engines.world)
    for (const sim::SimLinkStats& l : engines.world->link_stats()) {
      j << (first ? "" : ", ") << "{\"from\": " << json_quoted(l.from) << ", \"to\": " << json_quoted(l.to)
        << ", \"copies\": " << l.copies << ", \"bytes\": " << l.bytes << ", \"busy_ns\": " << l.busy_ns << "}";
      first = false;
    }
  const CacheStats& c = run.cache;
  j << "], \"makespan_ns\": " << makespan_ns(run) << ", \"run_makespans_ns\": [";
  for (size_t i = 0; i < run.makespans_ns.size(); ++i) j << (i ? ", " : "") << run.makespans_ns[i];
  j << "], \"virtual_time\": " << (run.virtual_time ? "true" : "false") << ", \"cache\": {\"hits\": " << c.hits
    << ", \"misses\": " << c.misses << ", \"productions\": " << c.productions << ", \"entries\": " << c.entries
    << ", \"bytes\": " << c.bytes << ", \"evictions\": " << c.evictions << "}}\n";
  return j.str();
}

}  // namespace tenact::cli
