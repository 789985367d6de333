// The CAF-free core of the prepare-cache actor (DESIGN.md, "The flow of
// one request", step 4; seed 000's RuntimeCacheSet / CacheLookup /
// CacheProduced / SharedRetention): stored outcomes by prepared-entry key,
// in-flight records that concurrent requests join, a byte budget with
// least-recently-used eviction, epoch retirement, and a published index of
// ready programs that other threads read without asking the actor.
//
// Threads: PrepareCacheStore is single-threaded — its owner (the cache
// actor) serializes every call. The one exception is the ReadyIndex it
// publishes: find() is safe from any number of threads at any time, also
// while the store changes it.
//
// Accounting (logical bytes, checked: an overflow is an error, never a
// wrap). A stored entry counts
//   key.retained_bytes()                       (planning/prepared_key.hpp)
// + the outcome's bytes:
//     Ready:                 program->retained_bytes
//     Redirect:              requirements_retained_bytes(requirements)
//                            + asked_by.size() + reason.size()
//     deterministic failure: sizeof(Error) + error.message().size()
// and, once per distinct shared PreparedRoot (by pointer) however many
// stored entries hold it, root->retained_bytes. The root's bytes leave the
// total with its last entry. The store's own bookkeeping (map and list
// nodes, the ready index) and in-flight records are not counted.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/error.hpp"
#include "planning/prepared_key.hpp"
#include "planning/prepared_program.hpp"

namespace tenact {

/// Who is waiting for an answer: an id the actor maps to its response
/// promise. The store only keeps and returns them.
using WaiterId = uint64_t;

/// The key is stored: `outcome` is a Ready, a Redirect or a deterministic
/// EntryFailed (never a transient one), shared with the stored entry.
struct CacheHit {
  ProducedEntry outcome;
};
/// The key is being produced: the waiter was appended to its record and
/// will be among the waiters complete() returns.
struct CacheJoined {};
/// A miss: the caller produces the entry (off the actor's thread) and then
/// calls complete(key, outcome, /*retain=*/registered).
struct CacheProduce {
  /// True: the key is now in flight with the caller's waiter as its first
  /// waiter (cache_in_flight on). False: nothing was retained; the caller
  /// produces alone and answers its own requester.
  bool registered = false;
};
using CacheLookup = std::variant<CacheHit, CacheJoined, CacheProduce>;

/// What happened to a completed outcome.
enum class Retention : uint8_t {
  /// Stored (possibly after evicting least-recently-used entries).
  Stored,
  /// retain=false: the producer ran without an in-flight record.
  NotRetained,
  /// A transient failure: answered, never cached.
  Transient,
  /// The key's epoch was retired while it was in flight.
  EpochRetired,
  /// The entry (with its root's full bytes) exceeds the whole budget.
  TooLarge,
  /// Counting its bytes overflowed (`Completion::error` says where).
  AccountingError,
};

struct Completion {
  /// Everyone to answer with the outcome, in arrival order: the
  /// registered producer's waiter first, then each joined waiter. Empty
  /// for retain=false (the producer answers its own requester).
  std::vector<WaiterId> waiters;
  Retention retention = Retention::NotRetained;
  /// Set exactly when retention is AccountingError.
  std::optional<Error> error;
};

/// Counters since the store was made (clear() does not reset them) and
/// gauges of what is stored now.
struct CacheStats {
  /// Every answer from a stored entry: lookups that hit (whatever the
  /// outcome) plus index_hits.
  uint64_t hits = 0;
  /// Lookups answered CacheProduce.
  uint64_t misses = 0;
  /// Lookups answered CacheJoined.
  uint64_t in_flight_joins = 0;
  /// complete() calls, whatever the outcome or retention.
  uint64_t productions = 0;
  /// Completions whose outcome was a Redirect / a deterministic failure /
  /// a transient failure.
  uint64_t redirects = 0;
  uint64_t deterministic_failures = 0;
  uint64_t transient_failures = 0;
  /// Hits (part of `hits`) that served a stored deterministic failure / a
  /// stored redirect.
  uint64_t deterministic_failures_served = 0;
  uint64_t redirects_served = 0;
  /// Hits (part of `hits`) served by ReadyIndex::find.
  uint64_t index_hits = 0;
  /// Entries dropped to fit the budget (not those dropped by clear() or
  /// retire_epochs_before()).
  uint64_t evictions = 0;
  /// Gauges: stored entries, their bytes (roots included), distinct
  /// shared roots counted, keys in flight.
  uint64_t entries = 0;
  uint64_t bytes = 0;
  uint64_t roots = 0;
  uint64_t in_flight = 0;
};

/// The ready programs the store holds, published for lookups from any
/// thread. Always a subset of the store's Ready entries: an entry enters
/// when it is stored and leaves before (eviction, retirement, clear) the
/// store forgets it. Sharded readers-writer locks: find() takes one
/// shard's shared lock for a hash lookup and a shared_ptr copy.
class ReadyIndex {
 public:
  ReadyIndex() = default;
  ReadyIndex(const ReadyIndex&) = delete;
  ReadyIndex& operator=(const ReadyIndex&) = delete;

  /// The ready program stored under `key` (exact equality), or null.
  /// Thread-safe. A hit is counted (stats().hits and index_hits) and marks
  /// the entry recently used: it gets a second chance before eviction.
  std::shared_ptr<const PreparedProgram> find(const PreparedEntryKey& key) const;

  /// Finds so far that returned a program. Thread-safe.
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }

 private:
  friend class PrepareCacheStore;

  /// What the index and the store share per Ready entry.
  struct Slot {
    std::shared_ptr<const PreparedProgram> program;
    /// Set by find(), cleared by the store when it grants the second chance.
    mutable std::atomic<bool> touched{false};
  };
  static constexpr size_t kShards = 16;
  struct Shard {
    mutable std::shared_mutex mutex;
    std::unordered_map<PreparedEntryKey, std::shared_ptr<const Slot>, PreparedEntryKeyHash> slots;
  };

  const Shard& shard_of(const PreparedEntryKey& key) const;
  Shard& shard_of(const PreparedEntryKey& key);
  void insert(const PreparedEntryKey& key, std::shared_ptr<const Slot> slot);
  void erase(const PreparedEntryKey& key);
  void clear();

  std::array<Shard, kShards> shards_;
  mutable std::atomic<uint64_t> hits_{0};
};

class PrepareCacheStore {
 public:
  /// A store that keeps at most `byte_budget` bytes of entries (the
  /// accounting above). A budget of 0 keeps nothing.
  explicit PrepareCacheStore(uint64_t byte_budget);
  PrepareCacheStore(const PrepareCacheStore&) = delete;
  PrepareCacheStore& operator=(const PrepareCacheStore&) = delete;

  /// Answers one request for `key`, in this order:
  ///  - stored: CacheHit (counts hits; the entry becomes most recently
  ///    used). A stored entry is served whatever cache_in_flight says —
  ///    reading retains nothing;
  ///  - in flight and cache_in_flight: CacheJoined, `waiter` appended
  ///    (counts in_flight_joins). With cache_in_flight off an in-flight
  ///    key is not joined: the request produces alone;
  ///  - otherwise CacheProduce (counts misses), registering `key` in
  ///    flight with `waiter` when cache_in_flight.
  /// Cost: one hash lookup (O(key) exact comparison on a digest match).
  CacheLookup lookup(const PreparedEntryKey& key, WaiterId waiter, bool cache_in_flight);

  /// Records the outcome produced for `key`. `retain` must be the
  /// CacheProduce::registered the producer got.
  ///  - retain=true: takes the key's in-flight record (its waiters are
  ///    returned; none when there is no record) and stores a Ready,
  ///    Redirect or deterministic failure — unless the key's epoch was
  ///    retired meanwhile (EpochRetired), its bytes alone exceed the
  ///    budget (TooLarge) or counting them overflows (AccountingError).
  ///    Storing first evicts least-recently-used entries (second chance
  ///    for those found through the ReadyIndex since) until it fits. An
  ///    outcome already stored under the key is replaced.
  ///  - retain=false: touches no in-flight record (another request may
  ///    own one) and stores nothing; returns no waiters.
  /// Transient failures are answered, never stored. Every call counts
  /// productions and, by outcome, redirects / deterministic_failures /
  /// transient_failures.
  Completion complete(const PreparedEntryKey& key, const ProducedEntry& outcome, bool retain);

  /// Drops every stored entry whose key's root epoch is older than
  /// `epoch` and reclaims its bytes; keys of those epochs completed later
  /// are not stored (EpochRetired). In-flight records stay and complete
  /// normally (their waiters are answered). Retiring an older epoch than
  /// before changes nothing. Returns the entries dropped (not evictions).
  uint64_t retire_epochs_before(uint64_t epoch);

  /// Drops every stored entry (bytes and roots go to 0); in-flight
  /// records and the counters stay.
  void clear();

  CacheStats stats() const;
  uint64_t byte_budget() const { return budget_; }

  /// The published index of this store's ready programs; shareable with
  /// other threads, lives as long as any holder.
  std::shared_ptr<const ReadyIndex> ready_index() const { return index_; }

 private:
  struct Stored {
    ProducedEntry outcome;
    /// key + outcome bytes (the root is counted in roots_).
    uint64_t bytes = 0;
    /// The shared root this entry holds (null: none), counted once in roots_.
    std::shared_ptr<const PreparedRoot> root;
    /// Set for Ready entries: what the ReadyIndex publishes.
    std::shared_ptr<const ReadyIndex::Slot> slot;
    /// This entry's place in recency_.
    std::list<const PreparedEntryKey*>::iterator recency;
  };
  struct RootUse {
    uint64_t entries = 0;
    uint64_t bytes = 0;
  };
  using EntryMap = std::unordered_map<PreparedEntryKey, Stored, PreparedEntryKeyHash>;

  Completion store(const PreparedEntryKey& key, const ProducedEntry& outcome,
                   std::vector<WaiterId> waiters);
  /// Frees room for `entry_bytes` plus the root's bytes when `root` is not
  /// counted yet; false when the entry cannot fit even in an empty store.
  bool make_room(uint64_t entry_bytes, const PreparedRoot* root);
  /// The next victim: the least recently used entry not found through the
  /// index since its last second chance (at most one chance per entry and
  /// call, so the walk is bounded).
  EntryMap::iterator pick_victim(uint64_t& chances_left);
  void erase(EntryMap::iterator it);
  /// Bytes counted now for `root` (0 when not counted).
  uint64_t counted_root_bytes(const PreparedRoot* root) const;

  uint64_t budget_;
  uint64_t bytes_ = 0;
  /// Keys of older epochs are not stored (retire_epochs_before).
  uint64_t min_epoch_ = 0;
  EntryMap entries_;
  /// Most recently used first; the pointers are the keys in entries_
  /// (stable: unordered_map never moves its elements).
  std::list<const PreparedEntryKey*> recency_;
  std::unordered_map<const PreparedRoot*, RootUse> roots_;
  std::unordered_map<PreparedEntryKey, std::vector<WaiterId>, PreparedEntryKeyHash> in_flight_;
  std::shared_ptr<ReadyIndex> index_ = std::make_shared<ReadyIndex>();
  CacheStats counters_;
};

}  // namespace tenact
