// Timing, statistics and the result table shared by the benchmarks.
//
// Contract: single-threaded use (the benchmark's main thread); variants may
// use worker pools internally. Times are wall-clock (steady_clock) seconds.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace tenact::bench {

enum class Statistic { Median, Best };

inline const char* statistic_name(Statistic s) {
  return s == Statistic::Median ? "median" : "best";
}

struct BenchOptions {
  bool quick = false;
  /// Best-of-N by default: on a shared machine interference only adds
  /// time, so the minimum is the estimate least disturbed by it.
  Statistic statistic = Statistic::Best;
  /// Worker threads of the engine; 0 = hardware concurrency.
  size_t threads = 0;

  /// Repetitions for a figure that takes `full` repetitions in a full run.
  int reps(int full) const { return quick ? std::max(3, full / 4) : full; }
};

/// Wall-clock samples of one variant.
class Samples {
 public:
  void add(double seconds) { seconds_.push_back(seconds); }
  size_t count() const { return seconds_.size(); }

  /// Median (mean of the middle two for an even count). Precondition: count() > 0.
  double median() const {
    std::vector<double> s = seconds_;
    std::sort(s.begin(), s.end());
    const size_t m = s.size() / 2;
    return s.size() % 2 == 1 ? s[m] : 0.5 * (s[m - 1] + s[m]);
  }
  double best() const { return *std::min_element(seconds_.begin(), seconds_.end()); }
  double pick(Statistic st) const { return st == Statistic::Median ? median() : best(); }

 private:
  std::vector<double> seconds_;
};

using Variant = std::function<Status()>;

/// Runs each variant once untimed (warm-up), then `reps` timed rounds; round
/// r starts with variant r % k and runs the others in rotation, so slow
/// phases of a noisy machine spread over all variants. Stops at the first
/// error and returns it.
inline Result<std::vector<Samples>> run_interleaved(int reps, std::span<const Variant> variants) {
  using Clock = std::chrono::steady_clock;
  const size_t k = variants.size();
  for (const auto& v : variants) TENACT_TRY(v());
  std::vector<Samples> samples(k);
  for (int r = 0; r < reps; ++r) {
    for (size_t j = 0; j < k; ++j) {
      const size_t idx = (static_cast<size_t>(r) + j) % k;
      const auto t0 = Clock::now();
      Status st = variants[idx]();
      const auto t1 = Clock::now();
      if (!st.ok()) return std::move(st).error();
      samples[idx].add(std::chrono::duration<double>(t1 - t0).count());
    }
  }
  return samples;
}

/// One line of the result table. `ratio` is the figure divided by its
/// reference (named in `note`); `target` applies to the ratio, or to the
/// value when `target_on_value` is set. No target: informational line.
struct Figure {
  std::string name;
  double value = 0;
  std::string unit;
  std::optional<double> ratio;
  std::optional<double> target;
  bool target_on_value = false;
  std::string note;
  /// The target is a ceiling (<=) instead of a floor (>=).
  bool target_is_ceiling = false;
};

class Table {
 public:
  void add(Figure f) { rows_.push_back(std::move(f)); }

  int misses() const {
    int n = 0;
    for (const auto& f : rows_)
      if (verdict(f) == std::string{"MISS"}) ++n;
    return n;
  }

  void print(std::FILE* out) const {
    std::fprintf(out, "%-40s %10s %-7s %7s %8s %-6s %s\n", "figure", "value", "unit", "ratio",
                 "target", "", "note");
    for (const auto& f : rows_) {
      char ratio[32] = "-";
      if (f.ratio) std::snprintf(ratio, sizeof ratio, "%.3f", *f.ratio);
      char target[32] = "-";
      if (f.target) std::snprintf(target, sizeof target, "%s %g", f.target_is_ceiling ? "<=" : ">=", *f.target);
      std::fprintf(out, "%-40s %10.2f %-7s %7s %8s %-6s %s\n", f.name.c_str(), f.value,
                   f.unit.c_str(), ratio, target, verdict(f), f.note.c_str());
    }
  }

 private:
  static const char* verdict(const Figure& f) {
    if (!f.target) return "";
    const std::optional<double> measured = f.target_on_value ? std::optional{f.value} : f.ratio;
    if (!measured) return "";
    const bool met = f.target_is_ceiling ? *measured <= *f.target : *measured >= *f.target;
    return met ? "PASS" : "MISS";
  }

  std::vector<Figure> rows_;
};

/// Records failed checks (kernel errors, mismatching results); the
/// benchmark exits 1 when any was recorded.
class Checks {
 public:
  void pass(const std::string& what) { lines_.push_back("ok       " + what); }
  void fail(const std::string& what) {
    lines_.push_back("FAILED   " + what);
    ++failures_;
  }
  void check(bool ok, const std::string& what) { ok ? pass(what) : fail(what); }
  int failures() const { return failures_; }
  void print(std::FILE* out) const {
    for (const auto& l : lines_) std::fprintf(out, "  %s\n", l.c_str());
  }

 private:
  std::vector<std::string> lines_;
  int failures_ = 0;
};

inline constexpr double kGB = 1e9;  // figures use decimal GB and GFLOP

}  // namespace tenact::bench
