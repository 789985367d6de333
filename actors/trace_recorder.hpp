// Chrome trace-event recording (the JSON that chrome://tracing and
// Perfetto's JSON importer read): complete events ("ph": "X") for spans,
// instant events ("ph": "i") for points, counters ("ph": "C": runs in
// flight per engine), and thread_name metadata naming
// each track. One track per engine worker thread or stream, per transfer
// link, per planning thread and one for the prepare cache.
//
// Thread-safe: every member may be called from any thread; recording takes
// one mutex for an append (tracing is off unless a recorder is installed).
// Timestamps are steady-clock nanoseconds (engines/engine.hpp
// steady_now_ns), written as microseconds since the recorder was made; a
// simulated device's spans are in its virtual nanoseconds, written as
// microseconds of virtual time from 0.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace tenact {

class TraceRecorder {
 public:
  TraceRecorder();

  /// The track named `name` (created on first use).
  uint32_t track(const std::string& name);
  /// A span [begin_ns, end_ns) on `track`; `args` are extra string fields.
  /// `virtual_time`: the times are a simulated device's virtual
  /// nanoseconds (written as they are, not from the recorder's origin).
  void span(uint32_t track, std::string name, std::string category, uint64_t begin_ns, uint64_t end_ns,
            std::map<std::string, std::string> args = {}, bool virtual_time = false);
  /// A counter sample ("ph": "C"): the counter `name` is `value` from
  /// `at_ns` on (steady-clock nanoseconds).
  void counter(const std::string& name, uint64_t at_ns, int64_t value);
  void instant(uint32_t track, std::string name, std::string category, uint64_t at_ns,
               std::map<std::string, std::string> args = {});

  size_t event_count() const;
  /// {"traceEvents": [...], "displayTimeUnit": "ms"}.
  std::string to_json() const;
  /// Writes to_json() to `path`. Errors: Io naming the path.
  Status write(const std::string& path) const;

 private:
  struct Event {
    char phase = 'X';
    uint32_t track = 0;
    std::string name, category;
    uint64_t begin_ns = 0, end_ns = 0;
    std::map<std::string, std::string> args;
    bool virtual_time = false;
    int64_t value = 0;  // counters
  };
  uint64_t origin_ns_;
  mutable std::mutex mutex_;
  std::map<std::string, uint32_t> tracks_;
  std::vector<Event> events_;
};

}  // namespace tenact
