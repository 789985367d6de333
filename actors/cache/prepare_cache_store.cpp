#include "actors/cache/prepare_cache_store.hpp"

#include <iterator>
#include <utility>

#include "core/checked.hpp"
#include "planning/retained_bytes.hpp"

namespace tenact {

namespace {

// The shared root an outcome holds (null: none).
std::shared_ptr<const PreparedRoot> root_of(const ProducedEntry& outcome) {
  if (const auto* ready = std::get_if<EntryReady>(&outcome))
    return ready->program ? ready->program->root : nullptr;
  if (const auto* redirect = std::get_if<EntryRedirect>(&outcome)) return redirect->root;
  return std::get<EntryFailed>(outcome).root;
}

// The outcome's own bytes (the header's table); the root is not included.
Result<uint64_t> outcome_bytes(const ProducedEntry& outcome) {
  if (const auto* ready = std::get_if<EntryReady>(&outcome)) {
    if (!ready->program)
      return Error{ErrorCode::Internal, "a Ready outcome without a prepared program"};
    return ready->program->retained_bytes;
  }
  if (const auto* redirect = std::get_if<EntryRedirect>(&outcome)) {
    ByteCount c;
    c.add(requirements_retained_bytes(redirect->requirements));
    c.add(redirect->asked_by.size()).add(redirect->reason.size());
    return c.total();
  }
  const auto& failed = std::get<EntryFailed>(outcome);
  return checked_sum({sizeof(Error), failed.error.message().size()});
}

Error overflow(const char* what) {
  return Error{ErrorCode::Overflow, std::string{"prepare cache: "} + what +
                                        " does not fit 64 bits"};
}

}  // namespace

// -- PrepareCacheStore ----------------------------------------------------------

namespace {

// The Ready program of an outcome (null for a redirect or a failure).
const PreparedProgram* ready_program(const ProducedEntry& outcome) {
  const auto* ready = std::get_if<EntryReady>(&outcome);
  return ready ? ready->program.get() : nullptr;
}

}  // namespace

PrepareCacheStore::PrepareCacheStore(uint64_t byte_budget, std::shared_ptr<UseClock> clock)
    : budget_(byte_budget), clock_(clock ? std::move(clock) : std::make_shared<UseClock>()) {}

void PrepareCacheStore::refile(EntryMap::iterator it, uint64_t stamp) {
  recency_.erase(it->second.filed_at);
  it->second.filed_at = stamp;
  recency_.emplace(stamp, &it->first);
  if (const PreparedProgram* program = ready_program(it->second.outcome)) program->last_use.mark(stamp);
}

CacheLookup PrepareCacheStore::lookup(const PreparedEntryKey& key, WaiterId waiter,
                                      bool cache_in_flight) {
  if (auto it = entries_.find(key); it != entries_.end()) {
    refile(it, clock_->tick());
    ++counters_.hits;
    if (std::holds_alternative<EntryRedirect>(it->second.outcome)) ++counters_.redirects_served;
    if (std::holds_alternative<EntryFailed>(it->second.outcome))
      ++counters_.deterministic_failures_served;
    return CacheHit{it->second.outcome};
  }
  if (cache_in_flight) {
    if (auto it = in_flight_.find(key); it != in_flight_.end()) {
      it->second.push_back(waiter);
      ++counters_.in_flight_joins;
      return CacheJoined{};
    }
    in_flight_.emplace(key, std::vector<WaiterId>{waiter});
  }
  ++counters_.misses;
  return CacheProduce{cache_in_flight};
}

Completion PrepareCacheStore::complete(const PreparedEntryKey& key, const ProducedEntry& outcome,
                                       bool retain) {
  ++counters_.productions;
  const auto* failed = std::get_if<EntryFailed>(&outcome);
  if (std::holds_alternative<EntryRedirect>(outcome)) ++counters_.redirects;
  if (failed) ++(failed->deterministic ? counters_.deterministic_failures
                                       : counters_.transient_failures);
  if (!retain) return Completion{{}, Retention::NotRetained, std::nullopt};

  std::vector<WaiterId> waiters;
  if (auto it = in_flight_.find(key); it != in_flight_.end()) {
    waiters = std::move(it->second);
    in_flight_.erase(it);
  }
  if (failed && !failed->deterministic)
    return Completion{std::move(waiters), Retention::Transient, std::nullopt};
  if (key.root().epoch < min_epoch_)
    return Completion{std::move(waiters), Retention::EpochRetired, std::nullopt};
  return store(key, outcome, std::move(waiters));
}

Completion PrepareCacheStore::store(const PreparedEntryKey& key, const ProducedEntry& outcome,
                                    std::vector<WaiterId> waiters) {
  auto fail = [&](Error error) {
    return Completion{std::move(waiters), Retention::AccountingError, std::move(error)};
  };
  ByteCount count;
  count.add(key.retained_bytes());
  count.add(outcome_bytes(outcome));
  auto entry_bytes = count.total();
  if (!entry_bytes.ok()) return fail(entry_bytes.error());
  std::shared_ptr<const PreparedRoot> root = root_of(outcome);
  const auto whole = checked_add_u(*entry_bytes, root ? root->retained_bytes : 0);
  if (!whole) return fail(overflow("an entry's bytes with its root's"));

  // An outcome already stored under the key (a duplicate completion) is
  // replaced: forget it first so its bytes do not count against the new one.
  if (auto old = entries_.find(key); old != entries_.end()) erase(old);
  if (*whole > budget_) return Completion{std::move(waiters), Retention::TooLarge, std::nullopt};
  if (!make_room(*entry_bytes, root.get()))
    return Completion{std::move(waiters), Retention::TooLarge, std::nullopt};

  // make_room guarantees the sums below stay within the budget.
  const uint64_t stamp = clock_->tick();
  auto it = entries_.emplace(key, Stored{outcome, *entry_bytes, root, stamp}).first;
  recency_.emplace(stamp, &it->first);
  if (const PreparedProgram* program = ready_program(outcome)) program->last_use.mark(stamp);
  bytes_ += *entry_bytes;
  if (root) {
    RootUse& use = roots_[root.get()];
    if (use.entries++ == 0) {
      use.bytes = root->retained_bytes;
      bytes_ += use.bytes;
    }
  }
  return Completion{std::move(waiters), Retention::Stored, std::nullopt};
}

uint64_t PrepareCacheStore::counted_root_bytes(const PreparedRoot* root) const {
  if (!root) return 0;
  auto it = roots_.find(root);
  return it == roots_.end() ? 0 : it->second.bytes;
}

bool PrepareCacheStore::make_room(uint64_t entry_bytes, const PreparedRoot* root) {
  while (true) {
    // What storing adds now: the entry, and the root unless an entry
    // still stored counts it. Checked by the caller: entry + root <= budget.
    const uint64_t root_adds = root && !counted_root_bytes(root) ? root->retained_bytes : 0;
    const uint64_t adds = entry_bytes + root_adds;
    if (adds <= budget_ - bytes_) return true;
    if (entries_.empty()) return false;
    erase(pick_victim());
    ++counters_.evictions;
  }
}

PrepareCacheStore::EntryMap::iterator PrepareCacheStore::pick_victim() {
  // The oldest filed stamp is the oldest use the store knows of. Its entry
  // is the victim unless its program was served since (a newer stamp):
  // every other entry was last used no earlier than it was filed, so an
  // entry whose own stamp is still its filed one is the least recent.
  for (size_t refiled = 0;; ++refiled) {
    auto oldest = entries_.find(*recency_.begin()->second);
    const PreparedProgram* program = ready_program(oldest->second.outcome);
    const uint64_t used = program ? program->last_use.load() : 0;
    if (used <= oldest->second.filed_at || refiled >= entries_.size()) return oldest;
    refile(oldest, used);
  }
}

void PrepareCacheStore::erase(EntryMap::iterator it) {
  Stored& stored = it->second;
  bytes_ -= stored.bytes;
  if (stored.root) {
    auto use = roots_.find(stored.root.get());
    if (--use->second.entries == 0) {
      bytes_ -= use->second.bytes;
      roots_.erase(use);
    }
  }
  recency_.erase(stored.filed_at);
  entries_.erase(it);
}

uint64_t PrepareCacheStore::retire_epochs_before(uint64_t epoch) {
  if (epoch > min_epoch_) min_epoch_ = epoch;
  uint64_t dropped = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->first.root().epoch < min_epoch_) {
      erase(it);
      ++dropped;
    }
    it = next;
  }
  return dropped;
}

void PrepareCacheStore::clear() {
  entries_.clear();
  recency_.clear();
  roots_.clear();
  bytes_ = 0;
}

CacheStats PrepareCacheStore::stats() const {
  CacheStats s = counters_;
  s.entries = entries_.size();
  s.bytes = bytes_;
  s.roots = roots_.size();
  s.in_flight = in_flight_.size();
  return s;
}

}  // namespace tenact
