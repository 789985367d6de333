#include "actors/trace_recorder.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "engines/engine.hpp"

namespace tenact {

TraceRecorder::TraceRecorder() : origin_ns_(steady_now_ns()) {}

uint32_t TraceRecorder::track(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = tracks_.emplace(name, static_cast<uint32_t>(tracks_.size() + 1));
  return it->second;
}

void TraceRecorder::span(uint32_t track, std::string name, std::string category, uint64_t begin_ns,
                         uint64_t end_ns, std::map<std::string, std::string> args, bool virtual_time) {
  std::lock_guard lock(mutex_);
  events_.push_back(Event{'X', track, std::move(name), std::move(category), begin_ns,
                          end_ns < begin_ns ? begin_ns : end_ns, std::move(args), virtual_time});
}

void TraceRecorder::counter(const std::string& name, uint64_t at_ns, int64_t value) {
  std::lock_guard lock(mutex_);
  events_.push_back(Event{'C', 0, name, "queue", at_ns, at_ns, {}, false, value});
}

void TraceRecorder::instant(uint32_t track, std::string name, std::string category, uint64_t at_ns,
                            std::map<std::string, std::string> args) {
  std::lock_guard lock(mutex_);
  events_.push_back(Event{'i', track, std::move(name), std::move(category), at_ns, at_ns, std::move(args)});
}

size_t TraceRecorder::event_count() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

std::string TraceRecorder::to_json() const {
  std::lock_guard lock(mutex_);
  using nlohmann::ordered_json;
  auto us = [this](uint64_t ns) { return ns < origin_ns_ ? 0.0 : static_cast<double>(ns - origin_ns_) / 1000.0; };
  ordered_json events = ordered_json::array();
  for (const auto& [name, id] : tracks_)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", id}, {"args", {{"name", name}}}});
  auto virtual_us = [](uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
  for (const Event& e : events_) {
    const auto at = [&](uint64_t ns) { return e.virtual_time ? virtual_us(ns) : us(ns); };
    ordered_json j{{"name", e.name}, {"cat", e.category}, {"ph", std::string(1, e.phase)},
                   {"ts", at(e.begin_ns)}, {"pid", 1}, {"tid", e.track}};
    if (e.phase == 'X') j["dur"] = at(e.end_ns) - at(e.begin_ns);
    if (e.phase == 'i') j["s"] = "t";
    if (!e.args.empty()) j["args"] = e.args;
    if (e.phase == 'C') j["args"] = {{"runs in flight", e.value}};
    events.push_back(std::move(j));
  }
  ordered_json doc{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  return doc.dump(1) + "\n";
}

Status TraceRecorder::write(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{ErrorCode::Io, "cannot open trace file '" + path + "' for writing"};
  out << to_json();
  if (!out) return Error{ErrorCode::Io, "cannot write trace file '" + path + "'"};
  return ok_status();
}

}  // namespace tenact
