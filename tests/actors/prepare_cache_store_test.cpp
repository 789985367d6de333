// The prepare-cache store (the CAF-free core of the cache actor): hits,
// joins of in-flight productions, what is cached (Ready, Redirect,
// deterministic failures) and what is not (transient failures, anything
// with cache_in_flight off), the byte budget with least-recently-used
// eviction (by every use, also uses marked by shortcuts outside the store)
// and shared roots counted once, epoch retirement, clear, stats, and use
// stamps marked from several threads while the store evicts.
//
// Keys and programs are real: made by the planning API over a scripted
// CPU engine. Expected byte totals are sums of the accounting inputs the
// store's contract names (key.retained_bytes(), PreparedProgram and
// PreparedRoot retained_bytes, requirements_retained_bytes, message sizes).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "../planning/planning_world.hpp"
#include "actors/cache/prepare_cache_store.hpp"
#include "planning/retained_bytes.hpp"
#include "planning/specialization.hpp"

using namespace tenact;
using namespace tenact::testing;

namespace {

// Requirements that fix input x's batch axis: keys for different batch
// sizes are different entries.
SpecializationRequirements concrete_batch() {
  InputRequirement x;
  x.concrete_dims = {0};
  return SpecializationRequirements{{x, {}}};
}

// One preparation context (over a scripted engine 'cpu') to make keys and
// entries with. `epoch_bumps` advances the configuration's epoch first.
struct Planning {
  World world;
  std::shared_ptr<ScriptedEngine> cpu;
  std::shared_ptr<const SemanticProgram> program;
  std::shared_ptr<const PreparationContext> context;

  explicit Planning(int epoch_bumps = 0) {
    cpu = world.add("cpu", {"host"});
    for (int i = 0; i < epoch_bumps; ++i) {
      auto next = world.config->with_policy(world.config->policy());
      REQUIRE(next.ok());
      world.config = *next;
    }
    program = program_of(kBatched);
    auto resolved = resolve_preparation_context(world.config, program, batch(2), {});
    REQUIRE(resolved.ok());
    context = std::make_shared<const PreparationContext>(std::move(*resolved));
  }

  uint64_t epoch() const { return context->root_identity->epoch; }

  PreparedEntryKey polymorphic_key() const {
    auto projection = project(*program, {}, batch(2));
    REQUIRE(projection.ok());
    auto key = PreparedEntryKey::make(context->root_identity, {}, *projection);
    REQUIRE(key.ok());
    return *key;
  }

  PreparedEntryKey batch_key(int64_t b, RootAccounting accounting = RootAccounting::CountedByKey) const {
    auto projection = project(*program, concrete_batch(), batch(b));
    REQUIRE(projection.ok());
    auto key = PreparedEntryKey::make(context->root_identity, concrete_batch(), *projection, accounting);
    REQUIRE(key.ok());
    return *key;
  }

  ProducedEntry produce(const PreparedEntryKey& key, int64_t b,
                        std::shared_ptr<const PreparedRoot> root = nullptr) const {
    return produce_prepared_entry(*context, key, std::move(root), batch(b), world.lookup());
  }

  // A Ready entry of the batch-`b` key; a new root unless `root` is given.
  std::shared_ptr<const PreparedProgram> ready(const PreparedEntryKey& key, int64_t b,
                                               std::shared_ptr<const PreparedRoot> root = nullptr) const {
    ProducedEntry entry = produce(key, b, std::move(root));
    REQUIRE(std::holds_alternative<EntryReady>(entry));
    return std::get<EntryReady>(entry).program;
  }
};

uint64_t key_bytes(const PreparedEntryKey& key) {
  auto bytes = key.retained_bytes();
  REQUIRE(bytes.ok());
  return *bytes;
}

// Bytes of a Ready entry whose root no other stored entry holds.
uint64_t alone(const PreparedEntryKey& key, const std::shared_ptr<const PreparedProgram>& program) {
  return key_bytes(key) + program->retained_bytes + program->root->retained_bytes;
}

// A deterministic failure without a root whose entry under `key` counts
// exactly `total` bytes: key + sizeof(Error) + message.
EntryFailed failure_of_size(const PreparedEntryKey& key, uint64_t total) {
  const uint64_t fixed = key_bytes(key) + sizeof(Error);
  REQUIRE(total >= fixed);
  return EntryFailed{Error{ErrorCode::Unsupported, std::string(total - fixed, 'm')}, true, nullptr};
}

bool hits(PrepareCacheStore& store, const PreparedEntryKey& key) {
  // cache_in_flight off: a miss registers nothing.
  return std::holds_alternative<CacheHit>(store.lookup(key, 999, false));
}

const PreparedProgram* hit_program(const CacheLookup& lookup) {
  const auto* hit = std::get_if<CacheHit>(&lookup);
  if (!hit) return nullptr;
  const auto* ready = std::get_if<EntryReady>(&hit->outcome);
  return ready ? ready->program.get() : nullptr;
}

bool registered_produce(const CacheLookup& lookup) {
  const auto* produce = std::get_if<CacheProduce>(&lookup);
  return produce && produce->registered;
}

constexpr uint64_t kLarge = uint64_t{1} << 40;

}  // namespace

TEST_CASE("a miss is produced once and then served from the cache", "[cache_store]") {
  Planning plan;
  PrepareCacheStore store(kLarge);
  const auto key = plan.batch_key(3);
  CHECK(registered_produce(store.lookup(key, 1, true)));
  const auto program = plan.ready(key, 3);
  Completion done = store.complete(key, EntryReady{program}, true);
  CHECK(done.waiters == std::vector<WaiterId>{1});
  CHECK(done.retention == Retention::Stored);
  CHECK_FALSE(done.error);

  CHECK(hit_program(store.lookup(key, 2, true)) == program.get());
  // An equal key made afresh finds the same entry (exact equality).
  CHECK(hit_program(store.lookup(plan.batch_key(3), 3, true)) == program.get());
  CHECK(plan.cpu->calls == 3);  // one production of three ops
  const CacheStats s = store.stats();
  CHECK(s.hits == 2);
  CHECK(s.misses == 1);
  CHECK(s.productions == 1);
  CHECK(s.entries == 1);
  CHECK(s.roots == 1);
  CHECK(s.in_flight == 0);
  CHECK(s.bytes == alone(key, program));
}

TEST_CASE("requests joining an in-flight key all receive the one result", "[cache_store]") {
  Planning plan;
  PrepareCacheStore store(kLarge);
  const auto key = plan.batch_key(4);
  CHECK(registered_produce(store.lookup(key, 10, true)));
  CHECK(std::holds_alternative<CacheJoined>(store.lookup(key, 11, true)));
  CHECK(std::holds_alternative<CacheJoined>(store.lookup(key, 12, true)));
  CHECK(store.stats().in_flight == 1);
  Completion done = store.complete(key, EntryReady{plan.ready(key, 4)}, true);
  CHECK(done.waiters == std::vector<WaiterId>{10, 11, 12});
  CHECK(done.retention == Retention::Stored);
  const CacheStats s = store.stats();
  CHECK(s.in_flight_joins == 2);
  CHECK(s.misses == 1);
  CHECK(s.in_flight == 0);
  CHECK(s.productions == 1);
}

TEST_CASE("joined requests receive a deterministic failure, which is then served without work",
          "[cache_store]") {
  Planning plan;
  plan.cpu->answer = [](const OpPrepareRequest&) -> PrepareAnswer { return Unsupported{"no f32 here"}; };
  PrepareCacheStore store(kLarge);
  const auto key = plan.batch_key(2);
  CHECK(registered_produce(store.lookup(key, 1, true)));
  CHECK(std::holds_alternative<CacheJoined>(store.lookup(key, 2, true)));
  ProducedEntry outcome = plan.produce(key, 2);
  REQUIRE(std::holds_alternative<EntryFailed>(outcome));
  const EntryFailed& failed = std::get<EntryFailed>(outcome);
  REQUIRE(failed.deterministic);
  REQUIRE(failed.root);
  Completion done = store.complete(key, outcome, true);
  CHECK(done.waiters == std::vector<WaiterId>{1, 2});
  CHECK(done.retention == Retention::Stored);

  const int calls = plan.cpu->calls;
  CacheLookup again = store.lookup(key, 3, true);
  REQUIRE(std::holds_alternative<CacheHit>(again));
  const auto& served = std::get<CacheHit>(again).outcome;
  REQUIRE(std::holds_alternative<EntryFailed>(served));
  CHECK(std::get<EntryFailed>(served).error == failed.error);
  CHECK(std::get<EntryFailed>(served).deterministic);
  CHECK(plan.cpu->calls == calls);
  const CacheStats s = store.stats();
  CHECK(s.deterministic_failures == 1);
  CHECK(s.deterministic_failures_served == 1);
  CHECK(s.hits == 1);
  CHECK(s.entries == 1);
  // The failure keeps the root it was made with.
  CHECK(s.roots == 1);
  CHECK(s.bytes == key_bytes(key) + sizeof(Error) + failed.error.message().size() +
                       failed.root->retained_bytes);
}

TEST_CASE("a transient failure is answered to every waiter but not cached", "[cache_store]") {
  Planning plan;
  plan.cpu->answer = [](const OpPrepareRequest&) -> PrepareAnswer {
    return Error{ErrorCode::LimitExceeded, "workspace does not fit right now"};
  };
  PrepareCacheStore store(kLarge);
  const auto key = plan.batch_key(2);
  CHECK(registered_produce(store.lookup(key, 1, true)));
  CHECK(std::holds_alternative<CacheJoined>(store.lookup(key, 2, true)));
  ProducedEntry outcome = plan.produce(key, 2);
  REQUIRE(std::holds_alternative<EntryFailed>(outcome));
  REQUIRE_FALSE(std::get<EntryFailed>(outcome).deterministic);
  Completion done = store.complete(key, outcome, true);
  CHECK(done.waiters == std::vector<WaiterId>{1, 2});
  CHECK(done.retention == Retention::Transient);
  CHECK(store.stats().entries == 0);
  CHECK(store.stats().bytes == 0);

  // The next request produces again.
  CHECK(registered_produce(store.lookup(key, 3, true)));
  plan.cpu->answer = nullptr;
  CHECK(store.complete(key, plan.produce(key, 2), true).retention == Retention::Stored);
  const CacheStats s = store.stats();
  CHECK(s.misses == 2);
  CHECK(s.productions == 2);
  CHECK(s.transient_failures == 1);
  CHECK(s.deterministic_failures == 0);
  CHECK(s.entries == 1);
}

TEST_CASE("a redirect is cached with its root, which the wider entry shares", "[cache_store]") {
  Planning plan;
  plan.cpu->answer = [](const OpPrepareRequest& r) -> PrepareAnswer {
    if (!r.specialization.inputs.empty() && !r.specialization.inputs[0].concrete_dims.empty())
      return ScriptedEngine::echo(r);
    return NeedsSpecialization{concrete_batch(), "needs a concrete batch"};
  };
  PrepareCacheStore store(kLarge);
  const auto narrow = plan.polymorphic_key();
  CHECK(registered_produce(store.lookup(narrow, 1, true)));
  ProducedEntry outcome = plan.produce(narrow, 5);
  REQUIRE(std::holds_alternative<EntryRedirect>(outcome));
  const EntryRedirect redirect = std::get<EntryRedirect>(outcome);
  REQUIRE(redirect.root);
  CHECK(store.complete(narrow, outcome, true).retention == Retention::Stored);
  const uint64_t redirect_bytes = key_bytes(narrow) +
                                  *requirements_retained_bytes(redirect.requirements) +
                                  redirect.asked_by.size() + redirect.reason.size();
  CHECK(store.stats().bytes == redirect_bytes + redirect.root->retained_bytes);

  CacheLookup again = store.lookup(narrow, 2, true);
  REQUIRE(std::holds_alternative<CacheHit>(again));
  const auto& served = std::get<CacheHit>(again).outcome;
  REQUIRE(std::holds_alternative<EntryRedirect>(served));
  CHECK(std::get<EntryRedirect>(served).requirements == redirect.requirements);
  CHECK(std::get<EntryRedirect>(served).root == redirect.root);

  // The retry with the wider key reuses the root: counted once.
  const auto wide = plan.batch_key(5, RootAccounting::CountedBySharedRoot);
  CHECK(registered_produce(store.lookup(wide, 3, true)));
  const auto program = plan.ready(wide, 5, redirect.root);
  REQUIRE(program->root == redirect.root);
  CHECK(store.complete(wide, EntryReady{program}, true).retention == Retention::Stored);
  const CacheStats s = store.stats();
  CHECK(s.roots == 1);
  CHECK(s.entries == 2);
  CHECK(s.bytes == redirect_bytes + key_bytes(wide) + program->retained_bytes +
                       redirect.root->retained_bytes);
  CHECK(s.redirects == 1);
  CHECK(s.redirects_served == 1);
  CHECK(s.hits == 1);
}

TEST_CASE("with cache_in_flight off nothing is retained and nobody joins", "[cache_store]") {
  Planning plan;
  PrepareCacheStore store(kLarge);
  const auto key = plan.batch_key(3);
  const auto program = plan.ready(key, 3);
  CacheLookup first = store.lookup(key, 1, false);
  REQUIRE(std::holds_alternative<CacheProduce>(first));
  CHECK_FALSE(std::get<CacheProduce>(first).registered);
  CacheLookup second = store.lookup(key, 2, false);  // no join: produces alone too
  REQUIRE(std::holds_alternative<CacheProduce>(second));
  CHECK_FALSE(std::get<CacheProduce>(second).registered);
  CHECK(store.stats().in_flight == 0);
  Completion done = store.complete(key, EntryReady{program}, false);
  CHECK(done.waiters.empty());
  CHECK(done.retention == Retention::NotRetained);
  CHECK(store.stats().entries == 0);
  CHECK(store.stats().bytes == 0);

  // Next to a request that registered the key, an unretained request
  // neither joins nor takes the record when it completes.
  CHECK(registered_produce(store.lookup(key, 3, true)));
  CHECK(std::holds_alternative<CacheProduce>(store.lookup(key, 4, false)));
  CHECK(store.complete(key, EntryReady{plan.ready(key, 3)}, false).waiters.empty());
  CHECK(store.stats().in_flight == 1);
  CHECK(std::holds_alternative<CacheJoined>(store.lookup(key, 5, true)));
  Completion owner = store.complete(key, EntryReady{program}, true);
  CHECK(owner.waiters == std::vector<WaiterId>{3, 5});
  CHECK(owner.retention == Retention::Stored);
  // A stored entry is served whatever cache_in_flight says.
  CHECK(hit_program(store.lookup(key, 6, false)) == program.get());
  const CacheStats s = store.stats();
  CHECK(s.misses == 4);
  CHECK(s.in_flight_joins == 1);
  CHECK(s.productions == 3);
  CHECK(s.hits == 1);
  CHECK(s.entries == 1);
}

TEST_CASE("the least recently used entries are evicted to fit the byte budget", "[cache_store]") {
  Planning plan;
  const auto ka = plan.batch_key(2), kb = plan.batch_key(3), kc = plan.batch_key(4), kd = plan.batch_key(5);
  const auto pa = plan.ready(ka, 2), pb = plan.ready(kb, 3), pc = plan.ready(kc, 4), pd = plan.ready(kd, 5);
  // Each entry has its own root.
  REQUIRE(pa->root != pb->root);
  const uint64_t a = alone(ka, pa), b = alone(kb, pb), c = alone(kc, pc), d = alone(kd, pd);
  // Room for any two entries, not three.
  REQUIRE(std::max({a, b, c, d}) < std::min({a, b, c, d}) * 2);
  PrepareCacheStore store(a + b + c - 1);

  CHECK(store.complete(ka, EntryReady{pa}, true).retention == Retention::Stored);
  CHECK(store.complete(kb, EntryReady{pb}, true).retention == Retention::Stored);
  CHECK(store.stats().bytes == a + b);
  CHECK(store.stats().evictions == 0);
  // Recency (newest first): b, a. Storing c evicts a.
  CHECK(store.complete(kc, EntryReady{pc}, true).retention == Retention::Stored);
  CHECK(store.stats().bytes == b + c);
  CHECK(store.stats().evictions == 1);
  // A hit makes b the most recent: c, the least, goes for d.
  CHECK(hits(store, kb));
  CHECK(store.complete(kd, EntryReady{pd}, true).retention == Retention::Stored);
  const CacheStats s = store.stats();
  CHECK(s.bytes == b + d);
  CHECK(s.evictions == 2);
  CHECK(s.entries == 2);
  CHECK(s.roots == 2);
  CHECK_FALSE(hits(store, ka));
  CHECK_FALSE(hits(store, kc));
  CHECK(hits(store, kb));
  CHECK(hits(store, kd));
}

TEST_CASE("uses served outside the store count: A, B, A x1000 (memo), C evicts B", "[cache_store]") {
  Planning plan;
  const auto ka = plan.batch_key(2), kb = plan.batch_key(3), kc = plan.batch_key(4);
  const auto pa = plan.ready(ka, 2), pb = plan.ready(kb, 3), pc = plan.ready(kc, 4);
  const uint64_t a = alone(ka, pa), b = alone(kb, pb), c = alone(kc, pc);
  REQUIRE(std::max({a, b, c}) < std::min({a, b, c}) * 2);
  PrepareCacheStore store(a + b + c - 1);  // room for two entries
  CHECK(store.complete(ka, EntryReady{pa}, true).retention == Retention::Stored);
  CHECK(store.complete(kb, EntryReady{pb}, true).retention == Retention::Stored);
  // A is served 1000 times by a shortcut in front of the store (the
  // runtime's memo does exactly this): the store never sees those uses.
  for (int i = 0; i < 1000; ++i) pa->last_use.mark(store.clock()->tick());
  CHECK(store.stats().hits == 0);
  CHECK(store.complete(kc, EntryReady{pc}, true).retention == Retention::Stored);
  const CacheStats s = store.stats();
  CHECK(s.evictions == 1);
  CHECK(s.bytes == a + c);
  CHECK(hits(store, ka));  // the hot entry stayed
  CHECK_FALSE(hits(store, kb));
  CHECK(hits(store, kc));
}

TEST_CASE("eviction orders store hits and outside uses by when they happened", "[cache_store]") {
  Planning plan;
  std::vector<PreparedEntryKey> k;
  std::vector<std::shared_ptr<const PreparedProgram>> p;
  for (int64_t b = 2; b <= 6; ++b) {
    k.push_back(plan.batch_key(b));
    p.push_back(plan.ready(k.back(), b));
  }
  const uint64_t each = alone(k[0], p[0]);
  for (size_t i = 1; i < k.size(); ++i) REQUIRE(alone(k[i], p[i]) == each);
  PrepareCacheStore store(3 * each);  // room for three entries
  for (size_t i = 0; i < 3; ++i) CHECK(store.complete(k[i], EntryReady{p[i]}, true).retention == Retention::Stored);
  // Uses after storing 0, 1, 2: 1 served outside, 0 hit in the store, 2
  // served outside. The least recent is now 1.
  p[1]->last_use.mark(store.clock()->tick());
  CHECK(hits(store, k[0]));
  p[2]->last_use.mark(store.clock()->tick());
  CHECK(store.complete(k[3], EntryReady{p[3]}, true).retention == Retention::Stored);
  CHECK(store.stats().evictions == 1);
  CHECK_FALSE(hits(store, k[1]));  // a miss: changes no recency
  // Last uses now: 0 (store hit), 2 (outside), 3 (stored). Storing 4 evicts 0.
  CHECK(store.complete(k[4], EntryReady{p[4]}, true).retention == Retention::Stored);
  CHECK(store.stats().evictions == 2);
  CHECK_FALSE(hits(store, k[0]));
  CHECK(hits(store, k[2]));
  CHECK(hits(store, k[3]));
  CHECK(hits(store, k[4]));
}

TEST_CASE("a root shared by several entries is counted once and released with the last",
          "[cache_store]") {
  Planning plan;
  const auto k2 = plan.batch_key(2);
  const auto p2 = plan.ready(k2, 2);
  const auto root = p2->root;
  const auto k3 = plan.batch_key(3, RootAccounting::CountedBySharedRoot);
  const auto p3 = plan.ready(k3, 3, root);
  REQUIRE(p3->root == root);
  const uint64_t s2 = key_bytes(k2) + p2->retained_bytes;
  const uint64_t s3 = key_bytes(k3) + p3->retained_bytes;
  const uint64_t r = root->retained_bytes;
  // Exactly both entries and one root: a second count of the root would evict.
  PrepareCacheStore store(s2 + s3 + r);
  CHECK(store.complete(k2, EntryReady{p2}, true).retention == Retention::Stored);
  CHECK(store.complete(k3, EntryReady{p3}, true).retention == Retention::Stored);
  CHECK(store.stats().bytes == s2 + s3 + r);
  CHECK(store.stats().roots == 1);
  CHECK(store.stats().evictions == 0);

  // A rootless entry of exactly s2 bytes evicts only the entry of k2 (the
  // least recent); the root stays with k3's.
  const auto k4 = plan.batch_key(4);
  CHECK(store.complete(k4, failure_of_size(k4, s2), true).retention == Retention::Stored);
  CHECK(store.stats().bytes == s3 + r + s2);
  CHECK(store.stats().roots == 1);
  CHECK(store.stats().evictions == 1);
  CHECK_FALSE(hits(store, k2));

  // One of exactly s3 + r bytes evicts k3's entry (now the least recent:
  // the hit above was a miss) and the root with it.
  const auto k5 = plan.batch_key(5);
  CHECK(store.complete(k5, failure_of_size(k5, s3 + r), true).retention == Retention::Stored);
  const CacheStats s = store.stats();
  CHECK(s.bytes == s2 + s3 + r);
  CHECK(s.roots == 0);
  CHECK(s.evictions == 2);
  CHECK(s.entries == 2);
  CHECK_FALSE(hits(store, k3));
  CHECK(hits(store, k4));
  CHECK(hits(store, k5));
}

TEST_CASE("an entry larger than the whole budget is answered but not kept", "[cache_store]") {
  Planning plan;
  const auto ka = plan.batch_key(2);
  const auto pa = plan.ready(ka, 2);
  const uint64_t a = alone(ka, pa);
  // Exactly the budget fits.
  PrepareCacheStore store(a);
  CHECK(store.complete(ka, EntryReady{pa}, true).retention == Retention::Stored);
  CHECK(store.stats().bytes == a);

  // One byte more does not, and evicts nothing.
  const auto kb = plan.batch_key(3);
  CHECK(registered_produce(store.lookup(kb, 7, true)));
  CHECK(std::holds_alternative<CacheJoined>(store.lookup(kb, 8, true)));
  Completion done = store.complete(kb, failure_of_size(kb, a + 1), true);
  CHECK(done.waiters == std::vector<WaiterId>{7, 8});
  CHECK(done.retention == Retention::TooLarge);
  CHECK(store.stats().bytes == a);
  CHECK(store.stats().evictions == 0);
  CHECK(hits(store, ka));

  // A ready entry that its root's bytes push over: refused without
  // evicting what is stored.
  PrepareCacheStore small(a - 1);
  const auto kf = plan.batch_key(4);
  const uint64_t f = key_bytes(kf) + sizeof(Error) + 1;
  CHECK(small.complete(kf, failure_of_size(kf, f), true).retention == Retention::Stored);
  REQUIRE(key_bytes(ka) + pa->retained_bytes <= a - 1);
  CHECK(small.complete(ka, EntryReady{pa}, true).retention == Retention::TooLarge);
  CHECK(small.stats().bytes == f);
  CHECK(small.stats().roots == 0);
  CHECK(small.stats().evictions == 0);
  CHECK(hits(small, kf));
}

TEST_CASE("retiring old epochs drops their entries and refuses their late results", "[cache_store]") {
  Planning old_plan;
  Planning new_plan(1);
  REQUIRE(new_plan.epoch() == old_plan.epoch() + 1);
  PrepareCacheStore store(kLarge);
  const auto old_key = old_plan.batch_key(2), new_key = new_plan.batch_key(2);
  REQUIRE_FALSE(old_key == new_key);
  const auto old_program = old_plan.ready(old_key, 2), new_program = new_plan.ready(new_key, 2);
  CHECK(store.complete(old_key, EntryReady{old_program}, true).retention == Retention::Stored);
  CHECK(store.complete(new_key, EntryReady{new_program}, true).retention == Retention::Stored);
  const auto late_key = old_plan.batch_key(3);
  CHECK(registered_produce(store.lookup(late_key, 4, true)));

  CHECK(store.retire_epochs_before(new_plan.epoch()) == 1);
  CacheStats s = store.stats();
  CHECK(s.entries == 1);
  CHECK(s.bytes == alone(new_key, new_program));
  CHECK(s.roots == 1);
  CHECK(s.evictions == 0);
  CHECK(s.in_flight == 1);

  // The in-flight production of the old epoch completes: answered, not stored.
  CHECK(std::holds_alternative<CacheJoined>(store.lookup(late_key, 5, true)));
  Completion late = store.complete(late_key, EntryReady{old_plan.ready(late_key, 3)}, true);
  CHECK(late.waiters == std::vector<WaiterId>{4, 5});
  CHECK(late.retention == Retention::EpochRetired);
  CHECK(store.stats().entries == 1);
  CHECK_FALSE(hits(store, old_key));
  // Retiring an older epoch again changes nothing.
  CHECK(store.retire_epochs_before(old_plan.epoch()) == 0);
  CHECK(hits(store, new_key));
}

TEST_CASE("clear drops stored entries but keeps counters and in-flight records", "[cache_store]") {
  Planning plan;
  PrepareCacheStore store(kLarge);
  const auto ka = plan.batch_key(2), kb = plan.batch_key(3), kc = plan.batch_key(4);
  CHECK(store.complete(ka, EntryReady{plan.ready(ka, 2)}, true).retention == Retention::Stored);
  CHECK(store.complete(kb, EntryReady{plan.ready(kb, 3)}, true).retention == Retention::Stored);
  CHECK(hits(store, ka));
  CHECK(registered_produce(store.lookup(kc, 7, true)));
  store.clear();
  CacheStats s = store.stats();
  CHECK(s.entries == 0);
  CHECK(s.bytes == 0);
  CHECK(s.roots == 0);
  CHECK(s.hits == 1);
  CHECK(s.misses == 1);
  CHECK(s.productions == 2);
  CHECK(s.in_flight == 1);
  CHECK_FALSE(hits(store, kb));

  CHECK(std::holds_alternative<CacheJoined>(store.lookup(kc, 8, true)));
  const auto pc = plan.ready(kc, 4);
  Completion done = store.complete(kc, EntryReady{pc}, true);
  CHECK(done.waiters == std::vector<WaiterId>{7, 8});
  CHECK(done.retention == Retention::Stored);
  CHECK(store.stats().bytes == alone(kc, pc));
}

TEST_CASE("keys with colliding digests are distinct entries", "[cache_store]") {
  Planning plan;
  PrepareCacheStore store(kLarge);
  const auto k2 = plan.batch_key(2);
  const auto k3 = plan.batch_key(3).with_digest_for_testing(k2.compact_digest());
  REQUIRE(PreparedEntryKeyHash{}(k2) == PreparedEntryKeyHash{}(k3));
  const auto p2 = plan.ready(k2, 2), p3 = plan.ready(k3, 3);
  CHECK(store.complete(k2, EntryReady{p2}, true).retention == Retention::Stored);
  CHECK(registered_produce(store.lookup(k3, 1, true)));
  CHECK(store.complete(k3, EntryReady{p3}, true).retention == Retention::Stored);
  CHECK(hit_program(store.lookup(k2, 2, true)) == p2.get());
  CHECK(hit_program(store.lookup(k3, 3, true)) == p3.get());
  CHECK(store.stats().entries == 2);
}

TEST_CASE("stats add up over a scripted sequence", "[cache_store]") {
  Planning plan;
  PrepareCacheStore store(kLarge);
  const auto ka = plan.batch_key(2), kb = plan.batch_key(3), kc = plan.batch_key(4);
  const auto pa = plan.ready(ka, 2), pb = plan.ready(kb, 3);
  const EntryFailed transient{Error{ErrorCode::EngineDown, "engine 'cpu' is restarting"}, false, nullptr};
  const EntryFailed refused{Error{ErrorCode::Unsupported, "no"}, true, nullptr};

  CHECK(registered_produce(store.lookup(ka, 1, true)));                   // miss 1
  CHECK(std::holds_alternative<CacheJoined>(store.lookup(ka, 2, true)));  // join 1
  CHECK(store.complete(ka, EntryReady{pa}, true).waiters.size() == 2);    // production 1
  CHECK(hits(store, ka));                                                 // hit 1
  CHECK(registered_produce(store.lookup(kb, 3, true)));                   // miss 2
  CHECK(store.complete(kb, transient, true).retention == Retention::Transient);  // production 2
  CHECK(registered_produce(store.lookup(kb, 4, true)));                   // miss 3
  CHECK(std::holds_alternative<CacheJoined>(store.lookup(kb, 5, true)));  // join 2
  CHECK(std::holds_alternative<CacheJoined>(store.lookup(kb, 6, true)));  // join 3
  CHECK(store.complete(kb, EntryReady{pb}, true).waiters == std::vector<WaiterId>{4, 5, 6});  // production 3
  CHECK(registered_produce(store.lookup(kc, 7, true)));                   // miss 4
  CHECK(store.complete(kc, refused, true).retention == Retention::Stored);  // production 4
  CHECK(hits(store, kc));                                                 // hit 2 (failure served 1)
  CHECK(hits(store, kc));                                                 // hit 3 (failure served 2)
  CHECK(hits(store, kb));                                                 // hit 4

  const CacheStats s = store.stats();
  CHECK(s.hits == 4);
  CHECK(s.misses == 4);
  CHECK(s.in_flight_joins == 3);
  CHECK(s.productions == 4);
  CHECK(s.redirects == 0);
  CHECK(s.deterministic_failures == 1);
  CHECK(s.transient_failures == 1);
  CHECK(s.deterministic_failures_served == 2);
  CHECK(s.redirects_served == 0);
  CHECK(s.evictions == 0);
  CHECK(s.entries == 3);
  CHECK(s.roots == 2);
  CHECK(s.in_flight == 0);
  CHECK(s.bytes == alone(ka, pa) + alone(kb, pb) + key_bytes(kc) + sizeof(Error) + 2);
}

TEST_CASE("use stamps are marked from several threads while the store evicts", "[cache_store]") {
  Planning plan;
  constexpr int kKeys = 24;
  std::vector<PreparedEntryKey> keys;
  std::vector<std::shared_ptr<const PreparedProgram>> programs;
  for (int i = 0; i < kKeys; ++i) {
    keys.push_back(plan.batch_key(i + 1));
    programs.push_back(plan.ready(keys.back(), i + 1));
  }
  const uint64_t each = alone(keys[0], programs[0]);
  // Room for about a third of them: inserting the rest evicts.
  PrepareCacheStore store(each * kKeys / 3);
  std::shared_ptr<UseClock> clock = store.clock();

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> marks{0};
  std::vector<std::thread> markers;
  for (int t = 0; t < 4; ++t) {
    markers.emplace_back([&, t] {
      for (int round = 0; !stop.load(std::memory_order_acquire); ++round) {
        programs[(round * 7 + t) % kKeys]->last_use.mark(clock->tick());
        marks.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (int pass = 0; pass < 20; ++pass) {
    for (int i = 0; i < kKeys; ++i) {
      // No REQUIRE while the markers run: a throw here would skip the joins.
      if (registered_produce(store.lookup(keys[i], static_cast<WaiterId>(i), true)))
        (void)store.complete(keys[i], EntryReady{programs[i]}, true);
    }
    if (pass % 5 == 4) store.clear();
    if (pass % 7 == 6) store.retire_epochs_before(plan.epoch());  // retires nothing
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (marks.load() < 1000 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  stop.store(true, std::memory_order_release);
  for (std::thread& m : markers) m.join();

  CHECK(marks.load() >= 1000);
  const CacheStats s = store.stats();
  CHECK(s.bytes <= store.byte_budget());
  CHECK(s.entries <= kKeys / 3);
  CHECK(s.evictions > 0);
}
