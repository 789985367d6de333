#include "actors/request_memo.hpp"

#include <algorithm>
#include <mutex>

#include "planning/specialization_projection.hpp"

namespace tenact {

namespace {

inline void mix(uint64_t& h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
}

void mix_string(uint64_t& h, const std::string& s) { mix(h, std::hash<std::string>{}(s)); }

bool same_program(const SemanticProgram& a, const SemanticProgram& b) {
  return &a == &b || (a.fingerprint() == b.fingerprint() && a == b);
}

bool same_apart_from_alignment(const InputDescriptor& a, const InputDescriptor& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.strides == b.strides && a.placement == b.placement;
}

bool same_apart_from_alignment(std::span<const InputDescriptor> a, std::span<const InputDescriptor> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const InputDescriptor& x, const InputDescriptor& y) { return same_apart_from_alignment(x, y); });
}

// Whether `prepared` serves inputs that match its request apart from their
// alignment: always when its plan relies on no alignment; otherwise when
// the inputs project onto the same specialization (alignment projects to
// min(required, actual), and requirements only widen, so equal final
// projections mean every step of the preparation saw the same request).
bool alignment_fits(const PreparedProgram& prepared, const SemanticProgram& program,
                    std::span<const InputDescriptor> inputs) {
  const bool relies_on_alignment =
      std::any_of(prepared.requirements.inputs.begin(), prepared.requirements.inputs.end(),
                  [](const InputRequirement& r) { return r.alignment_log2.has_value(); });
  if (!relies_on_alignment) return true;
  auto projection = project(program, prepared.requirements, inputs);
  return projection.ok() && *projection == prepared.projection;
}

}  // namespace

namespace {
std::atomic<uint64_t> g_next_memo_serial{1};
}  // namespace

RequestMemo::RequestMemo(std::shared_ptr<UseClock> clock, size_t max_entries)
    : clock_(std::move(clock)), per_shard_(std::max<size_t>(1, max_entries / kShards)),
      serial_(g_next_memo_serial.fetch_add(1, std::memory_order_relaxed)) {}

uint64_t RequestMemo::hash_of(const SemanticProgram& program, std::span<const InputDescriptor> inputs,
                              const std::string& options, MemoStamp stamp) {
  uint64_t h = program.fingerprint().lo;
  mix(h, stamp.epoch);
  mix(h, stamp.generation);
  mix_string(h, options);
  for (const InputDescriptor& in : inputs) {
    mix(h, static_cast<uint64_t>(in.dtype));
    for (int64_t d : in.shape) mix(h, static_cast<uint64_t>(d));
    mix(h, in.shape.size());
    for (int64_t s : in.strides) mix(h, static_cast<uint64_t>(s));
    mix_string(h, in.placement.engine);
    mix_string(h, in.placement.storage_class);
  }
  return h;
}

std::shared_ptr<const PreparedProgram> RequestMemo::find(const SemanticProgram& program,
                                                         std::span<const InputDescriptor> inputs,
                                                         const std::string& options,
                                                         MemoStamp stamp, bool count) const {
  const uint64_t h = hash_of(program, inputs, options, stamp);
  const Shard& shard = shards_[h % kShards];
  std::shared_lock lock(shard.mutex);
  auto [begin, end] = shard.entries.equal_range(h);
  for (auto it = begin; it != end; ++it) {
    const Entry& e = it->second;
    if (e.stamp == stamp && e.options == options && same_apart_from_alignment(e.inputs, inputs) &&
        same_program(*e.program, program) && alignment_fits(*e.prepared, program, inputs)) {
      if (count) count_hit(*e.prepared);
      return e.prepared;
    }
  }
  return nullptr;
}

void RequestMemo::count_hit(const PreparedProgram& prepared) const {
  hits_.fetch_add(1, std::memory_order_relaxed);
  prepared.last_use.mark(clock_->tick());
}

void RequestMemo::insert(std::shared_ptr<const SemanticProgram> program,
                         std::vector<InputDescriptor> inputs, std::string options, MemoStamp stamp,
                         std::shared_ptr<const PreparedProgram> prepared) {
  const uint64_t h = hash_of(*program, inputs, options, stamp);
  Shard& shard = shards_[h % kShards];
  std::unique_lock lock(shard.mutex);
  auto [begin, end] = shard.entries.equal_range(h);
  for (auto it = begin; it != end; ++it) {
    Entry& e = it->second;
    if (e.stamp == stamp && e.options == options && e.inputs == inputs && same_program(*e.program, *program)) {
      e.prepared = std::move(prepared);
      version_.fetch_add(1, std::memory_order_release);  // after the change (see version())
      return;
    }
  }
  if (shard.entries.size() >= per_shard_) shard.entries.clear();
  shard.entries.emplace(h, Entry{std::move(program), std::move(inputs), std::move(options), stamp,
                                 std::move(prepared)});
  version_.fetch_add(1, std::memory_order_release);
}

void RequestMemo::clear() {
  for (Shard& shard : shards_) {
    std::unique_lock lock(shard.mutex);
    shard.entries.clear();
  }
  version_.fetch_add(1, std::memory_order_release);
}

}  // namespace tenact
