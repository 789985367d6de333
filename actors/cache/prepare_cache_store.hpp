// The CAF-free core of the prepare-cache actor (docs/design.md, "The flow
// of one request", step 4): stored outcomes by prepared-entry key,
// in-flight records that concurrent requests join, a byte budget with
// least-recently-used eviction, epoch retirement.
//
// Recency counts every use of an entry, also the uses that never reach the
// store: a shortcut that serves Ready programs itself (the runtime's
// request memo) marks the program's UseStamp with a tick of the store's
// UseClock, and eviction reads those stamps. Eviction is exact LRU over
// the stamps: the victim is the entry whose last use is the oldest.
//
// Threads: PrepareCacheStore is single-threaded — its owner (the cache
// actor) serializes every call. The UseClock and the programs' UseStamps
// are the exceptions: any thread may tick and mark at any time.
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

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
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
  /// outcome). (The runtime adds the hits its memo answered.)
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

/// Strictly increasing use stamps, shared by a store and the shortcuts that
/// serve its entries. Thread-safe; tick() is one relaxed fetch_add.
class UseClock {
 public:
  uint64_t tick() noexcept { return last_.fetch_add(1, std::memory_order_relaxed) + 1; }

 private:
  std::atomic<uint64_t> last_{0};
};

class PrepareCacheStore {
 public:
  /// A store that keeps at most `byte_budget` bytes of entries (the
  /// accounting above). A budget of 0 keeps nothing. `clock` stamps uses;
  /// shortcuts that serve this store's Ready programs mark them with it.
  explicit PrepareCacheStore(uint64_t byte_budget, std::shared_ptr<UseClock> clock = std::make_shared<UseClock>());
  PrepareCacheStore(const PrepareCacheStore&) = delete;
  PrepareCacheStore& operator=(const PrepareCacheStore&) = delete;

  /// Answers one request for `key`, in this order:
  ///  - stored: CacheHit (counts hits; the entry becomes the most
  ///    recently used). A stored entry is served whatever cache_in_flight says —
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
  ///    Storing first evicts the least recently used entries (by their
  ///    last use, however it was served) until it fits. An outcome already
  ///    stored under the key is replaced.
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
  /// The clock this store stamps uses with.
  const std::shared_ptr<UseClock>& clock() const { return clock_; }

 private:
  struct Stored {
    ProducedEntry outcome;
    /// key + outcome bytes (the root is counted in roots_).
    uint64_t bytes = 0;
    /// The shared root this entry holds (null: none), counted once in roots_.
    std::shared_ptr<const PreparedRoot> root;
    /// The use stamp this entry is filed under in recency_ (its last use
    /// the store knows of; a Ready program's own stamp may be newer).
    uint64_t filed_at = 0;
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
  /// The least recently used entry. Entries whose program was used since
  /// they were filed are re-filed under that use on the way (each at most
  /// once per call, so the walk is bounded by the number of entries).
  EntryMap::iterator pick_victim();
  /// Files `it` under `stamp` (and marks a Ready program with it).
  void refile(EntryMap::iterator it, uint64_t stamp);
  void erase(EntryMap::iterator it);
  /// Bytes counted now for `root` (0 when not counted).
  uint64_t counted_root_bytes(const PreparedRoot* root) const;

  uint64_t budget_;
  std::shared_ptr<UseClock> clock_;
  uint64_t bytes_ = 0;
  /// Keys of older epochs are not stored (retire_epochs_before).
  uint64_t min_epoch_ = 0;
  EntryMap entries_;
  /// Entries by the stamp they are filed under, oldest first; the pointers
  /// are the keys in entries_ (stable: unordered_map never moves its
  /// elements). Stamps are unique (UseClock).
  std::map<uint64_t, const PreparedEntryKey*> recency_;
  std::unordered_map<const PreparedRoot*, RootUse> roots_;
  std::unordered_map<PreparedEntryKey, std::vector<WaiterId>, PreparedEntryKeyHash> in_flight_;
  CacheStats counters_;
};

}  // namespace tenact
