#include "core/error.hpp"

namespace tenact {

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::Parse: return "parse_error";
    case ErrorCode::Schema: return "schema_error";
    case ErrorCode::UnknownOp: return "unknown_op";
    case ErrorCode::UndefinedName: return "undefined_name";
    case ErrorCode::DuplicateName: return "duplicate_name";
    case ErrorCode::InvalidAttribute: return "invalid_attribute";
    case ErrorCode::TypeMismatch: return "type_mismatch";
    case ErrorCode::ShapeMismatch: return "shape_mismatch";
    case ErrorCode::UnboundSymbol: return "unbound_symbol";
    case ErrorCode::Overflow: return "overflow";
    case ErrorCode::DivisionByZero: return "division_by_zero";
    case ErrorCode::LimitExceeded: return "limit_exceeded";
    case ErrorCode::GuardViolated: return "guard_violated";
    case ErrorCode::InputMismatch: return "input_mismatch";
    case ErrorCode::Io: return "io_error";
    case ErrorCode::MissingExtension: return "missing_extension";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::NoEligibleEngine: return "no_eligible_engine";
    case ErrorCode::NoExecutableEngine: return "no_executable_engine";
    case ErrorCode::DispatchSearchBudgetExceeded: return "dispatch_search_budget_exceeded";
    case ErrorCode::NoInputIngress: return "no_input_ingress";
    case ErrorCode::MissingTransferProvider: return "missing_transfer_provider";
    case ErrorCode::SpecializationRetryLimitExceeded: return "specialization_retry_limit_exceeded";
    case ErrorCode::NonWideningSpecialization: return "non_widening_specialization";
    case ErrorCode::BindingMismatch: return "binding_mismatch";
    case ErrorCode::ProjectionMismatch: return "projection_mismatch";
    case ErrorCode::WrongOperationFamily: return "wrong_operation_family";
    case ErrorCode::DeterminismUnsupported: return "determinism_unsupported";
    case ErrorCode::ProviderContract: return "provider_contract";
    case ErrorCode::ExecutionFailed: return "execution_failed";
    case ErrorCode::EngineDown: return "engine_down";
    case ErrorCode::Timeout: return "timeout";
    case ErrorCode::Shutdown: return "shutdown";
    case ErrorCode::Cancelled: return "cancelled";
    case ErrorCode::ResourceExhausted: return "resource_exhausted";
    case ErrorCode::TransientFailure: return "transient_failure";
    case ErrorCode::InvalidPlan: return "invalid_plan";
    case ErrorCode::Internal: return "internal_error";
  }
  return "unknown_error";
}

std::string Error::to_string() const {
  std::string out{tenact::to_string(code_)};
  out += ": ";
  out += message_;
  return out;
}

Error Error::with_context(std::string_view prefix) const {
  std::string msg{prefix};
  msg += ": ";
  msg += message_;
  return Error{code_, std::move(msg)};
}

}  // namespace tenact
