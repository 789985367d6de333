// tenact::Error and tenact::Result<T>: the one error type and the one result
// type of the whole runtime, from core/ to the public API.
//
// Contract: every fallible function returns Result<T> (or Status, which is
// Result<void>). Errors carry a code that tells the class of failure and a
// message that names what is wrong (the op, the input, the engine, the
// route). Messages are complete sentences fragments meant for a person; code
// is what programs branch on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tenact {

enum class ErrorCode : uint16_t {
  /// Malformed text: JSON syntax, a dimension expression, a .npy header.
  Parse = 1,
  /// Well-formed document whose structure is wrong: missing or unknown key,
  /// wrong JSON type, unknown format version.
  Schema,
  /// An op name that is not part of the format.
  UnknownOp,
  /// A value name used before (or without) being defined.
  UndefinedName,
  /// A value name defined twice.
  DuplicateName,
  /// An attribute has a wrong or out-of-range value.
  InvalidAttribute,
  /// An element type is not admitted where it is used.
  TypeMismatch,
  /// Shapes that must agree do not, or a shape is invalid for the op.
  ShapeMismatch,
  /// A symbol used in an attribute or guard that no input binds.
  UnboundSymbol,
  /// Integer arithmetic on sizes or dimensions overflowed.
  Overflow,
  /// A dimension expression divided by zero during evaluation.
  DivisionByZero,
  /// A size exceeds a documented limit (tensor bytes, nesting depth).
  LimitExceeded,
  /// A shape guard or a deferred shape constraint does not hold.
  GuardViolated,
  /// Caller inputs do not fit the program (count, name, dtype, shape).
  InputMismatch,
  /// A file could not be read or written.
  Io,
  /// An extension family that is not registered.
  MissingExtension,
  /// The op, dtype or feature is not supported by the engine asked.
  Unsupported,
  // -- preparation and execution (planning/, engines/, actors/) --------------
  /// No registered engine allowed by the placement constraint serves the
  /// program (or every op of it).
  NoEligibleEngine,
  NoExecutableEngine,
  DispatchSearchBudgetExceeded,
  NoInputIngress,
  MissingTransferProvider,
  SpecializationRetryLimitExceeded,
  NonWideningSpecialization,
  BindingMismatch,
  ProjectionMismatch,
  WrongOperationFamily,
  DeterminismUnsupported,
  ProviderContract,
  /// An engine failed while running a prepared op.
  ExecutionFailed,
  /// A peer (engine actor, remote node) died while a request depended on it.
  EngineDown,
  /// A request ran past its deadline.
  Timeout,
  /// The runtime was shut down while the request was pending or after it.
  Shutdown,
  /// A request was cancelled because an earlier step failed.
  Cancelled,
  /// The machine refused a resource a request needed: memory or a thread
  /// (distinct from LimitExceeded, a documented limit of Tenact's own).
  ResourceExhausted,
  /// A failure that may not happen again (an injected fault of a
  /// simulated device or link, a device hiccup): the same work may be
  /// retried.
  TransientFailure,
  /// A model's plan cannot be compiled as asked: a provider contract the
  /// tensors violate, an ambiguity that needs an explicit tensor, options
  /// that name what the program lacks (planning/model/).
  InvalidPlan,
  /// A broken internal invariant; always a bug in Tenact.
  Internal,
};

/// Stable lower-case name of an error code, e.g. "shape_mismatch".
std::string_view to_string(ErrorCode code) noexcept;

class Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  /// "code: message", the form tools print.
  std::string to_string() const;

  /// Returns a copy whose message is `prefix + ": " + message`, same code.
  /// Used by callers that add context (the op, the input) on the way up.
  Error with_context(std::string_view prefix) const;

  friend bool operator==(const Error& a, const Error& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  ErrorCode code_;
  std::string message_;
};

/// A value of type T or an Error. Cheap to move; copyable when T is.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : data_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const noexcept { return data_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return std::get<0>(data_); }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return std::get<1>(data_); }
  Error&& error() && { return std::get<1>(std::move(data_)); }

 private:
  std::variant<T, Error> data_;
};

/// Success without a value, or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::in_place, std::move(error)) {}

  bool ok() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  const Error& error() const& { return *error_; }
  Error&& error() && { return std::move(*error_); }

 private:
  std::optional<Error> error_;
};

using Status = Result<void>;

inline Status ok_status() { return Status{}; }

}  // namespace tenact

// Propagates the error of a Result-returning expression to the caller.
#define TENACT_TRY(expr)                                      \
  do {                                                        \
    auto&& tenact_try_result_ = (expr);                       \
    if (!tenact_try_result_.ok())                             \
      return std::move(tenact_try_result_).error();           \
  } while (false)

#define TENACT_CONCAT_INNER_(a, b) a##b
#define TENACT_CONCAT_(a, b) TENACT_CONCAT_INNER_(a, b)
// TENACT_ASSIGN_OR_RETURN(auto x, expr): binds the value or returns the error.
#define TENACT_ASSIGN_OR_RETURN(decl, expr)                                   \
  auto TENACT_CONCAT_(tenact_aor_, __LINE__) = (expr);                        \
  if (!TENACT_CONCAT_(tenact_aor_, __LINE__).ok())                            \
    return std::move(TENACT_CONCAT_(tenact_aor_, __LINE__)).error();          \
  decl = std::move(TENACT_CONCAT_(tenact_aor_, __LINE__)).value()
