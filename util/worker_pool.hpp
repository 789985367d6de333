// A worker pool: a fixed set of threads running an Asio
// io_context, and a blocking parallel_for for kernels. Shared by the engines
// (the CPU engine's kernels) and the runtime's own pools (planning, transfers).
//
// Contract:
// - create() is the only way to make one: starting a thread can fail (the
//   machine's thread or memory limits), and that is an error value
//   (ResourceExhausted naming how many threads started), never an
//   exception or an abort; the threads already started are stopped.
// - parallel_for(n, grain, fn) calls fn(begin, end) on disjoint ranges that
//   cover [0, n), each of at least `grain` items except the last, and
//   returns when all are done. The calling thread takes part in the work,
//   so a nested or re-entrant call cannot deadlock.
// - Ranges are fixed by (n, grain, thread_count) only, never by timing, so
//   a kernel that reduces per range gets the same bits on every run.
// - Never call it from a CAF scheduler thread (it blocks): engines call it
//   from their own worker threads.
// - Thread-safe: any number of threads may call parallel_for at once.
// - Destruction waits for every task posted so far (then joins the threads),
//   except when it runs on one of the pool's own threads — the last owner of
//   an engine can be a callback that a pool task runs. A thread cannot wait
//   for itself, and the others cannot finish while it runs a task, so then
//   the threads are detached: they run what is queued and exit, and the
//   last of them frees the pool's state. Never an abort. Objects that own
//   a pool and whose queued work uses them (the engines) are held through
//   owned_off_pool, so that they are never destroyed on their pool's
//   threads in the first place.
// - OpenBLAS runs its own threads; the pool and OpenBLAS together must not
//   oversubscribe the cores (see set_blas_threads in dot_general.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/error.hpp"

namespace tenact {

class WorkerPool {
 public:
  /// The most threads one pool takes (more is LimitExceeded): far above any
  /// machine's useful concurrency, low enough that a typo is not an attempt
  /// to start a million threads.
  static constexpr size_t kMaxThreads = 1024;

  /// `threads` == 0 means std::thread::hardware_concurrency(). Errors:
  /// LimitExceeded above kMaxThreads; ResourceExhausted when a thread (or
  /// the pool's memory) cannot be had.
  static Result<std::unique_ptr<WorkerPool>> create(size_t threads = 0);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  size_t thread_count() const;

  /// See the file comment. fn must not throw.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  /// Posts a task to run on a pool thread (asynchronous; for engines).
  void post(std::function<void()> task);

  /// Whether the calling thread is one of this pool's threads.
  bool runs_here() const;

 private:
  struct Impl;
  explicit WorkerPool(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;  // shared with its threads (see destruction)
};

/// Runs `destroy` (the deletion of an object that owns `pool`) on the calling
/// thread, unless that is one of `pool`'s threads: then on a fresh detached
/// thread, so that the pool's destructor joins its threads after the work
/// still queued (which may use the object's other members) instead of
/// detaching them. If no thread can be started, `destroy` runs here.
void destroy_off_pool(const WorkerPool& pool, const std::function<void()>& destroy);

/// A shared_ptr owning `object`, which owns `pool`, whose deletion goes
/// through destroy_off_pool: an engine whose last owner is a callback its
/// own pool runs is destroyed after its queued work, never during it.
template <class T>
std::shared_ptr<T> owned_off_pool(T* object, const WorkerPool& pool) {
  return std::shared_ptr<T>(object, [at = &pool](T* o) { destroy_off_pool(*at, [o] { delete o; }); });
}

/// Runs fn over [0, n) on `pool` when it is non-null and n is at least
/// 2 * grain, serially otherwise. fn is never copied to the heap: the
/// serial case calls it directly (no allocation at all), and the pool
/// receives it by reference (a std::function holding a reference_wrapper
/// stays within its small buffer; the pool's own call state is the only
/// allocation of a parallel call).
template <class Fn>
void parallel_for(WorkerPool* pool, int64_t n, int64_t grain, Fn&& fn) {
  if (n <= 0) return;
  if (pool == nullptr || n < 2 * grain) {
    fn(int64_t{0}, n);
    return;
  }
  pool->parallel_for(n, grain, std::function<void(int64_t, int64_t)>(std::ref(fn)));
}

}  // namespace tenact
