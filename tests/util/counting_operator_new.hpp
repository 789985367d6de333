// Replaces the global operator new/delete of the test binary that includes
// this header (include it in exactly one of the binary's source files) with
// ones that count, per thread, the operator new calls (plain malloc/free
// underneath): g_operator_new_calls, for tests of what a call allocates.
//
// TENACT_COUNTS_OPERATOR_NEW is 0, and nothing is replaced, under
// AddressSanitizer, whose own operator new still serves allocations made
// inside the sanitizer's runtime and libstdc++ (this delete would free them
// with free(): alloc-dealloc-mismatch), and under clang's ThreadSanitizer,
// whose static runtime defines operator new itself (the link would see
// two). The release variant runs the tests that count.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define TENACT_COUNTS_OPERATOR_NEW 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TENACT_COUNTS_OPERATOR_NEW 0
#endif
#endif
#ifndef TENACT_COUNTS_OPERATOR_NEW
#define TENACT_COUNTS_OPERATOR_NEW 1
#endif

#if TENACT_COUNTS_OPERATOR_NEW
namespace {
thread_local int64_t g_operator_new_calls = 0;
}  // namespace
void* operator new(std::size_t bytes) {
  ++g_operator_new_calls;
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
// g++ pairs operator new with operator delete, not with the free() these
// replacements call on what their operator new got from malloc.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif
