// The CPU engine's worker pool: std::threads running one asio::io_context
// (see worker_pool.hpp). The pool starts its threads itself, rather than
// through asio::thread_pool, so that a thread that cannot be started is an
// error the pool recovers from: asio::thread_pool's constructor throws
// half-way, with threads already running that nobody then stops.
//
// parallel_for: the range [0, n) is cut into `chunks` ranges fixed by
// (n, grain, thread_count) alone (chunk_count below); the caller and up to
// chunks - 1 helper tasks posted to the pool claim chunks through one
// atomic counter until none is left, and the caller then waits for the
// claimed ones to finish. A helper that starts after every chunk is claimed
// only touches the shared counter and leaves, so the caller never waits for
// a task that has not started: a nested call, or a call while every pool
// thread is busy, finishes on the caller's own thread if need be.
#include "util/worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>

namespace tenact {

namespace {

/// Chunks of at least `grain` items (the last one too, since the n items
/// are split evenly): at most n / grain, at most 4 per thread (caller
/// included) for load balance, at least 1.
int64_t chunk_count(int64_t n, int64_t grain, size_t threads) {
  const int64_t by_grain = std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
  const int64_t by_threads = 4 * (static_cast<int64_t>(threads) + 1);
  return std::min(by_grain, by_threads);
}

/// [begin, end) of chunk i of `chunks` over n items: the first n % chunks
/// chunks hold one item more.
std::pair<int64_t, int64_t> chunk_range(int64_t n, int64_t chunks, int64_t i) {
  const int64_t base = n / chunks;
  const int64_t extra = n % chunks;
  const int64_t begin = i * base + std::min(i, extra);
  return {begin, begin + base + (i < extra ? 1 : 0)};
}

/// One parallel_for call, shared by the caller and its helper tasks (which
/// may outlive the call: they hold it by shared_ptr and never touch `fn`
/// once every chunk is claimed).
struct ForState {
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0;
  int64_t chunks = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};

  /// Claims and runs chunks until none is left.
  void work() {
    while (true) {
      const int64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= chunks) return;
      const auto [begin, end] = chunk_range(n, chunks, i);
      (*fn)(begin, end);
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) done.notify_all();
    }
  }
};

}  // namespace

struct WorkerPool::Impl {
  asio::io_context context;
  asio::executor_work_guard<asio::io_context::executor_type> guard{context.get_executor()};
  /// Written only by create() and finish(), which no thread runs at once.
  std::vector<std::thread> threads;

  /// Lets run() return once the queue is empty, then joins every thread:
  /// every task posted so far runs first (join, not stop). On one of the
  /// pool's own threads (a task is running here, so no run() can return)
  /// the threads are detached instead: each holds this state, so the last
  /// one to leave run() frees it.
  bool runs_here() const {
    const std::thread::id here = std::this_thread::get_id();
    return std::any_of(threads.begin(), threads.end(), [&](const std::thread& t) { return t.get_id() == here; });
  }

  void finish() {
    guard.reset();
    const bool on_own_thread = runs_here();
    for (std::thread& t : threads) {
      if (!t.joinable()) continue;
      if (on_own_thread) t.detach();
      else t.join();
    }
    if (!on_own_thread) threads.clear();
  }
};

Result<std::unique_ptr<WorkerPool>> WorkerPool::create(size_t threads) {
  if (threads == 0) threads = std::max<size_t>(1, std::thread::hardware_concurrency());
  if (threads > kMaxThreads)
    return Error{ErrorCode::LimitExceeded, "a worker pool of " + std::to_string(threads) +
                                               " threads is over the limit of " + std::to_string(kMaxThreads)};
  std::shared_ptr<Impl> impl;
  try {
    impl = std::make_shared<Impl>();
    impl->threads.reserve(threads);
    for (size_t i = 0; i < threads; ++i) impl->threads.emplace_back([impl] { impl->context.run(); });
    return std::unique_ptr<WorkerPool>(new WorkerPool(std::move(impl)));
  } catch (const std::exception& e) {  // std::system_error (thread) or std::bad_alloc
    const size_t started = impl ? impl->threads.size() : 0;
    if (impl) impl->finish();
    return Error{ErrorCode::ResourceExhausted, "cannot start worker thread " + std::to_string(started + 1) +
                                                   " of " + std::to_string(threads) + ": " + e.what()};
  }
}

WorkerPool::WorkerPool(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

WorkerPool::~WorkerPool() { impl_->finish(); }

size_t WorkerPool::thread_count() const { return impl_->threads.size(); }

bool WorkerPool::runs_here() const { return impl_->runs_here(); }

void destroy_off_pool(const WorkerPool& pool, const std::function<void()>& destroy) {
  if (pool.runs_here()) {
    try {
      std::thread(destroy).detach();
      return;
    } catch (const std::system_error&) {
      // No thread to be had: destroyed here, the pool detaches its threads.
    }
  }
  destroy();
}

void WorkerPool::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t chunks = chunk_count(n, grain, impl_->threads.size());
  if (chunks == 1) {
    fn(0, n);
    return;
  }
  auto state = std::make_shared<ForState>();
  state->fn = &fn;
  state->n = n;
  state->chunks = chunks;
  const int64_t helpers = std::min<int64_t>(chunks - 1, static_cast<int64_t>(impl_->threads.size()));
  for (int64_t h = 0; h < helpers; ++h) asio::post(impl_->context, [state] { state->work(); });
  state->work();
  // Every chunk is claimed; wait for those still running elsewhere.
  int64_t finished = state->done.load(std::memory_order_acquire);
  while (finished != chunks) {
    state->done.wait(finished, std::memory_order_acquire);
    finished = state->done.load(std::memory_order_acquire);
  }
}

void WorkerPool::post(std::function<void()> task) { asio::post(impl_->context, std::move(task)); }

}  // namespace tenact
