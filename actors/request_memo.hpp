// The facade's fast path to ready programs: a request (program, input
// descriptors, prepare options, configuration epoch and cache generation)
// that was answered Ready before is answered again without resolving its
// preparation context and without a message to the cache actor.
//
// Sound because preparation is deterministic in exactly these inputs: the
// same program, descriptors and options under the same configuration
// snapshot resolve to the same prepared-entry key. A buffer's alignment is
// the one part of a descriptor that changes between fresh allocations of
// the same tensor, and it only matters through the specialization
// projection: descriptors that differ only in alignment match an entry
// whose plan relies on no alignment, or whose projection they reproduce.
// The memo is only a shortcut to entries the cache holds. The cache actor
// alone changes it: it inserts what it answered Ready and clears it
// whenever it drops entries (eviction, clear, a new epoch). A lookup names
// the epoch and generation it reads under, so an entry of an older epoch,
// or from before a clear_cache, is never served even before the cache
// actor has cleared it. Every hit marks the program's UseStamp with a tick
// of the cache's UseClock, so the cache's eviction sees the uses it never
// answered itself.
//
// Thread-safe: find() and insert() from any thread (sharded
// readers-writer locks); find() costs one hash of the descriptors and a
// shared lock. Bounded: a shard past its share of `max_entries` is emptied.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/cache/prepare_cache_store.hpp"
#include "core/program.hpp"
#include "planning/input_signature.hpp"
#include "planning/prepared_program.hpp"

namespace tenact {

/// What a memo entry is valid under: the configuration epoch and the cache
/// generation (bumped by every Runtime::clear_cache).
struct MemoStamp {
  uint64_t epoch = 0;
  uint64_t generation = 0;
  bool operator==(const MemoStamp&) const = default;
};

class RequestMemo {
 public:
  /// `clock`: the prepare cache's use clock (hits mark programs with it).
  explicit RequestMemo(std::shared_ptr<UseClock> clock, size_t max_entries = 4096);

  /// The program prepared for this request, or null. `count`: the hit is
  /// counted (hits()) and marked on the program's UseStamp now; a caller
  /// that may still go another way (and look again) passes false and calls
  /// count_hit() once it uses the answer.
  std::shared_ptr<const PreparedProgram> find(const SemanticProgram& program,
                                              std::span<const InputDescriptor> inputs,
                                              const std::string& options, MemoStamp stamp, bool count = true) const;
  /// Counts a hit of find(..., count = false) that was used.
  void count_hit(const PreparedProgram& prepared) const;
  void insert(std::shared_ptr<const SemanticProgram> program, std::vector<InputDescriptor> inputs,
              std::string options, MemoStamp stamp, std::shared_ptr<const PreparedProgram> prepared);
  void clear();
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }

  /// Names this memo among every memo of the process (never reused).
  uint64_t serial() const { return serial_; }
  /// Moves on after every insert and clear has changed the entries (read
  /// it before a find(): an unchanged version afterwards means find() would
  /// answer the same request the same way).
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

 private:
  struct Entry {
    std::shared_ptr<const SemanticProgram> program;
    std::vector<InputDescriptor> inputs;
    std::string options;
    MemoStamp stamp;
    std::shared_ptr<const PreparedProgram> prepared;
  };
  static constexpr size_t kShards = 16;
  struct Shard {
    mutable std::shared_mutex mutex;
    std::unordered_multimap<uint64_t, Entry> entries;
  };
  static uint64_t hash_of(const SemanticProgram& program, std::span<const InputDescriptor> inputs,
                          const std::string& options, MemoStamp stamp);

  std::shared_ptr<UseClock> clock_;
  size_t per_shard_;
  std::array<Shard, kShards> shards_;
  mutable std::atomic<uint64_t> hits_{0};
  const uint64_t serial_;
  std::atomic<uint64_t> version_{0};
};

}  // namespace tenact
