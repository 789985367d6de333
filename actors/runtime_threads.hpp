// Which threads belong to a runtime. Threads the runtime runs its own work
// on (CAF's scheduler and timer threads, the planning pool and the providers' copy threads,
// the completions of direct single-batch runs on engine threads) are
// marked, so a request issued from one of them never runs kernels inline;
// a client's own thread may (BatchWork::caller_may_run).
//
// Thread-local state only: safe from any thread, no locks, no allocation.
#pragma once

namespace tenact {

/// True on a thread marked for the whole of its life (CAF's threads, via a
/// thread hook) or inside a RuntimeThreadScope.
bool on_runtime_thread() noexcept;

/// Marks the calling thread for the rest of its life.
void mark_runtime_thread() noexcept;

/// Marks the calling thread while it lives (nests; restores on exit).
class RuntimeThreadScope {
 public:
  RuntimeThreadScope() noexcept;
  ~RuntimeThreadScope();
  RuntimeThreadScope(const RuntimeThreadScope&) = delete;
  RuntimeThreadScope& operator=(const RuntimeThreadScope&) = delete;

 private:
  bool previous_;
};

}  // namespace tenact
