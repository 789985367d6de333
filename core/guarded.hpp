// The boundary between code that may throw (the standard library: an
// allocation, a thread) and Tenact's errors-as-values: guarded() runs a
// Result-returning function and turns what escapes it into an Error.
//
// Where it stands: at every place a request's work starts on a thread of
// its own (engine tasks, planning and transfer tasks, the facade's calls
// on the caller's thread, the command's main), so running out of memory or
// threads answers that request with ResourceExhausted instead of ending the
// process. Cost: a try block (zero-cost on the path that does not throw).
#pragma once

#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <system_error>

#include "core/error.hpp"

namespace tenact {

/// The Error for an exception caught while doing `what` ("running op #2").
inline Error error_from_exception(std::string_view what, const std::exception_ptr& caught) noexcept {
  try {
    try {
      std::rethrow_exception(caught);
    } catch (const std::bad_alloc&) {
      return Error{ErrorCode::ResourceExhausted, std::string{what} + ": out of memory"};
    } catch (const std::system_error& e) {
      return Error{ErrorCode::ResourceExhausted, std::string{what} + ": " + e.what()};
    } catch (const std::exception& e) {
      return Error{ErrorCode::Internal, std::string{what} + ": unexpected exception: " + e.what()};
    } catch (...) {
      return Error{ErrorCode::Internal, std::string{what} + ": unexpected exception"};
    }
  } catch (...) {  // building the message itself ran out of memory
    return Error{ErrorCode::ResourceExhausted, std::string{}};
  }
}

/// f() (a Result<T> or Status), or the Error for what it threw.
template <class F>
auto guarded(std::string_view what, F&& f) noexcept -> decltype(f()) {
  try {
    return f();
  } catch (...) {
    return error_from_exception(what, std::current_exception());
  }
}

}  // namespace tenact
