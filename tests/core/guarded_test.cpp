// guarded(): what escapes a function becomes an Error value (the mechanism
// every task boundary uses, core/guarded.hpp): out of memory and refused
// threads are ResourceExhausted, anything else Internal, each naming what
// was being done; a function that returns normally passes its result on.
#include <catch2/catch.hpp>

#include <new>
#include <stdexcept>
#include <system_error>

#include "core/guarded.hpp"

using namespace tenact;

TEST_CASE("guarded turns what a function throws into an error naming the work", "[guarded]") {
  auto fine = guarded("adding", []() -> Result<int> { return 3; });
  REQUIRE(fine.ok());
  CHECK(*fine == 3);
  auto own_error = guarded("adding", []() -> Result<int> { return Error{ErrorCode::Overflow, "too big"}; });
  CHECK(own_error.error() == Error{ErrorCode::Overflow, "too big"});

  auto memory = guarded("running a batch", []() -> Result<int> { throw std::bad_alloc{}; });
  CHECK(memory.error() == Error{ErrorCode::ResourceExhausted, "running a batch: out of memory"});

  auto thread = guarded("starting", []() -> Status {
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again), "thread");
  });
  REQUIRE_FALSE(thread.ok());
  CHECK(thread.error().code() == ErrorCode::ResourceExhausted);
  CHECK_THAT(thread.error().message(), Catch::StartsWith("starting: thread: "));

  auto logic = guarded("x", []() -> Status { throw std::logic_error("broken"); });
  CHECK(logic.error() == Error{ErrorCode::Internal, "x: unexpected exception: broken"});
  auto odd = guarded("x", []() -> Status { throw 42; });
  CHECK(odd.error() == Error{ErrorCode::Internal, "x: unexpected exception"});
}
