#include "actors/runtime_threads.hpp"

namespace tenact {

namespace {
thread_local bool t_runtime_thread = false;
}  // namespace

bool on_runtime_thread() noexcept { return t_runtime_thread; }

void mark_runtime_thread() noexcept { t_runtime_thread = true; }

RuntimeThreadScope::RuntimeThreadScope() noexcept : previous_(t_runtime_thread) { t_runtime_thread = true; }

RuntimeThreadScope::~RuntimeThreadScope() { t_runtime_thread = previous_; }

}  // namespace tenact
