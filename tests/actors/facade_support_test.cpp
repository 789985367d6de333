// The facade's CAF-free helpers: the request memo (exact matching on
// program, descriptors apart from alignment, options and epoch; alignment
// through the projection; clear; many threads) and the
// pending-request registry (exactly-once completion, shutdown failing
// what is pending, racing completions).
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "actors/pending_requests.hpp"
#include "actors/request_memo.hpp"
#include "core/program_json.hpp"

using namespace tenact;

namespace {

// Programs with different ops differ semantically (names do not count).
std::shared_ptr<const SemanticProgram> program(const char* op) {
  auto p = load_program(std::string{R"({"format": "tenact.program/1", "name": "p",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["n"]}],
    "ops": [{"op": ")"} + op + R"(", "in": ["x"], "out": "y"}], "outputs": ["y"]})");
  REQUIRE(p.ok());
  return std::make_shared<const SemanticProgram>(std::move(*p));
}

InputDescriptor desc(int64_t n) { return InputDescriptor{DType::F32, {n}, {}, {1}, 6}; }

}  // namespace

TEST_CASE("the memo answers exactly the request it stored", "[request_memo]") {
  RequestMemo memo{std::make_shared<UseClock>()};
  auto p = program("negate");
  auto prepared = std::make_shared<const PreparedProgram>();
  memo.insert(p, {desc(4)}, "", MemoStamp{3, 0}, prepared);
  const std::vector<InputDescriptor> same{desc(4)};
  CHECK(memo.find(*p, same, "", MemoStamp{3, 0}) == prepared);
  // An equal program loaded again matches structurally.
  CHECK(memo.find(*program("negate"), same, "", MemoStamp{3, 0}) == prepared);
  CHECK(memo.find(*program("abs"), same, "", MemoStamp{3, 0}) == nullptr);  // another program
  const std::vector<InputDescriptor> other{desc(5)};
  CHECK(memo.find(*p, other, "", MemoStamp{3, 0}) == nullptr);                // another shape
  CHECK(memo.find(*p, same, "engines=3:cpu", MemoStamp{3, 0}) == nullptr);    // other options
  CHECK(memo.find(*p, same, "", MemoStamp{4, 0}) == nullptr);                 // another epoch
  CHECK(memo.find(*p, same, "", MemoStamp{3, 1}) == nullptr);  // after a clear_cache
  std::vector<InputDescriptor> placed{desc(4)};
  placed[0].placement = Endpoint{"cpu", "host"};
  CHECK(memo.find(*p, placed, "", MemoStamp{3, 0}) == nullptr);               // another placement
  CHECK(memo.hits() == 2);
  memo.clear();
  CHECK(memo.find(*p, same, "", MemoStamp{3, 0}) == nullptr);
}

TEST_CASE("the memo's version moves after every change and only then, and its serial names it", "[request_memo]") {
  RequestMemo memo{std::make_shared<UseClock>()};
  RequestMemo other{std::make_shared<UseClock>()};
  CHECK(memo.serial() != other.serial());
  auto p = program("negate");
  const std::vector<InputDescriptor> four{desc(4)};
  uint64_t seen = memo.version();
  memo.insert(p, four, "", MemoStamp{1, 0}, std::make_shared<const PreparedProgram>());
  CHECK(memo.version() > seen);
  seen = memo.version();
  CHECK(memo.find(*p, four, "", MemoStamp{1, 0}) != nullptr);  // a find changes nothing
  CHECK(memo.find(*p, std::vector<InputDescriptor>{desc(5)}, "", MemoStamp{1, 0}) == nullptr);
  CHECK(memo.version() == seen);
  auto replacement = std::make_shared<const PreparedProgram>();
  memo.insert(p, four, "", MemoStamp{1, 0}, replacement);  // the same request answered anew
  CHECK(memo.version() > seen);
  CHECK(memo.find(*p, four, "", MemoStamp{1, 0}) == replacement);
  seen = memo.version();
  memo.clear();
  CHECK(memo.version() > seen);
  CHECK(other.version() == 0);
}

TEST_CASE("descriptors differing only in alignment match unless the plan relies on it", "[request_memo]") {
  RequestMemo memo{std::make_shared<UseClock>()};
  auto p = program("negate");
  InputDescriptor at64 = desc(4), at4096 = desc(4), at16 = desc(4);
  at4096.alignment_log2 = 12;
  at16.alignment_log2 = 4;

  // A plan that relies on no alignment serves any fresh buffer.
  auto free_plan = std::make_shared<PreparedProgram>();
  free_plan->requirements.inputs = {InputRequirement{}};
  free_plan->projection.inputs = {InputProjection{}};
  memo.insert(p, {at64}, "", MemoStamp{1, 0}, free_plan);
  CHECK(memo.find(*p, std::vector<InputDescriptor>{at4096}, "", MemoStamp{1, 0}) == free_plan);
  CHECK(memo.find(*p, std::vector<InputDescriptor>{at16}, "", MemoStamp{1, 0}) == free_plan);

  // A plan that relies on 2^6 bytes: buffers aligned to 2^6 or more project
  // to "align 2^6" like the one it was prepared for; 2^4 does not.
  auto aligned_plan = std::make_shared<PreparedProgram>();
  InputRequirement needs64;
  needs64.alignment_log2 = 6;
  aligned_plan->requirements.inputs = {needs64};
  InputProjection projected;
  projected.alignment_log2 = 6;
  aligned_plan->projection.inputs = {projected};
  memo.insert(p, {at64}, "", MemoStamp{2, 0}, aligned_plan);
  CHECK(memo.find(*p, std::vector<InputDescriptor>{at64}, "", MemoStamp{2, 0}) == aligned_plan);
  CHECK(memo.find(*p, std::vector<InputDescriptor>{at4096}, "", MemoStamp{2, 0}) == aligned_plan);
  CHECK(memo.find(*p, std::vector<InputDescriptor>{at16}, "", MemoStamp{2, 0}) == nullptr);

  // The less aligned request gets its own entry next to the first.
  auto low_plan = std::make_shared<PreparedProgram>(*aligned_plan);
  low_plan->projection.inputs.edit()[0].alignment_log2 = 4;
  memo.insert(p, {at16}, "", MemoStamp{2, 0}, low_plan);
  CHECK(memo.find(*p, std::vector<InputDescriptor>{at16}, "", MemoStamp{2, 0}) == low_plan);
  CHECK(memo.find(*p, std::vector<InputDescriptor>{at4096}, "", MemoStamp{2, 0}) == aligned_plan);
}

TEST_CASE("the memo stays bounded and consistent under many threads", "[request_memo]") {
  RequestMemo memo(std::make_shared<UseClock>(), 64);
  auto p = program("negate");
  std::vector<std::shared_ptr<const PreparedProgram>> programs;
  for (int i = 0; i < 200; ++i) programs.push_back(std::make_shared<const PreparedProgram>());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const int k = (i * 7 + t) % 200;
        const std::vector<InputDescriptor> in{desc(k)};
        if (t % 2 == 0) memo.insert(p, in, "", MemoStamp{1, 0}, programs[k]);
        auto found = memo.find(*p, in, "", MemoStamp{1, 0});
        if (found && found != programs[k]) ++wrong;
        if (i % 500 == 0 && t == 3) memo.clear();
      }
    });
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
}

TEST_CASE("a tracked request completes exactly once, and shutdown fails the rest", "[pending_requests]") {
  PendingRequests pending;
  int calls_a = 0, calls_b = 0;
  std::optional<ErrorCode> b_code;
  auto a = pending.track<int>([&](Result<int> r) { calls_a += r.ok() ? 1 : 100; }, "a");
  auto b = pending.track<int>([&](Result<int> r) { ++calls_b; b_code = r.ok() ? std::nullopt : std::optional{r.error().code()}; }, "b");
  CHECK(pending.size() == 2);
  a(7);
  a(8);  // ignored
  CHECK(calls_a == 1);
  CHECK(pending.size() == 1);
  pending.close(Error{ErrorCode::Shutdown, "closing"});
  CHECK(calls_b == 1);
  CHECK(b_code == ErrorCode::Shutdown);
  b(9);  // too late: ignored
  CHECK(calls_b == 1);
  int calls_c = 0;
  auto c = pending.track<int>([&](Result<int> r) { calls_c += !r.ok() && r.error().code() == ErrorCode::Shutdown; }, "c");
  CHECK(calls_c == 1);  // after close: failed at once
  c(1);
  CHECK(calls_c == 1);
}

TEST_CASE("completion racing shutdown fires each callback once", "[pending_requests]") {
  for (int round = 0; round < 20; ++round) {
    PendingRequests pending;
    std::atomic<int> fired{0};
    std::vector<std::function<void(Result<int>)>> callbacks;
    for (int i = 0; i < 200; ++i) callbacks.push_back(pending.track<int>([&](Result<int>) { ++fired; }, "x"));
    std::thread completer([&] {
      for (auto& cb : callbacks) cb(1);
    });
    pending.close(Error{ErrorCode::Shutdown, "closing"});
    completer.join();
    CHECK(fired == 200);
  }
}

TEST_CASE("requests past their deadline fail with Timeout, the others stay", "[pending_requests]") {
  using namespace std::chrono_literals;
  PendingRequests pending;
  std::optional<Error> short_error, long_error;
  auto a = pending.track<int>([&](Result<int> r) { if (!r.ok()) short_error = r.error(); }, "the short one", 10ms);
  auto b = pending.track<int>([&](Result<int> r) { if (!r.ok()) long_error = r.error(); }, "the long one", 1h);
  auto c = pending.track<int>([&](Result<int>) {}, "no deadline");
  const auto later = std::chrono::steady_clock::now() + 50ms;
  CHECK(pending.expire(later) == 1);
  REQUIRE(short_error);
  CHECK(short_error->code() == ErrorCode::Timeout);
  CHECK(short_error->message() == "the short one passed its deadline of 10 ms");
  CHECK_FALSE(long_error);
  CHECK(pending.size() == 2);
  a(1);  // too late: ignored
  b(2);
  CHECK_FALSE(long_error);
  CHECK(pending.expire(later + 2h) == 0);  // b finished, c has none
  c(3);
  CHECK(pending.size() == 0);
}
