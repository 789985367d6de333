#include "planning/specialization.hpp"

#include <algorithm>

#include "core/checked.hpp"

namespace tenact {

namespace {

std::string input_label(const SemanticProgram& program, size_t i) {
  if (i < program.inputs().size()) return "input '" + program.value(program.inputs()[i]).name + "'";
  return "input #" + std::to_string(i);
}

bool contains(const std::vector<size_t>& axes, size_t axis) {
  return std::find(axes.begin(), axes.end(), axis) != axes.end();
}

/// What `next` drops or narrows of `previous` ("" when it covers it).
std::string narrowing(const InputRequirement& previous, const InputRequirement& next) {
  if (previous.dtype && !next.dtype) return "drops the dtype requirement";
  if (previous.rank && !next.rank) return "drops the rank requirement";
  for (size_t axis : previous.concrete_dims)
    if (!contains(next.concrete_dims, axis))
      return "drops the concrete extent of axis " + std::to_string(axis);
  if (next.placement < previous.placement)
    return "narrows placement from " + std::string{to_string(previous.placement)} + " to " +
           std::string{to_string(next.placement)};
  if (next.layout < previous.layout)
    return "narrows layout from " + std::string{to_string(previous.layout)} + " to " +
           std::string{to_string(next.layout)};
  if (previous.alignment_log2 && !next.alignment_log2)
    return "drops the alignment requirement 2^" + std::to_string(*previous.alignment_log2);
  if (previous.alignment_log2 && *next.alignment_log2 < *previous.alignment_log2)
    return "lowers alignment from 2^" + std::to_string(*previous.alignment_log2) + " to 2^" +
           std::to_string(*next.alignment_log2);
  return "";
}

struct CanonicalPair {
  SpecializationRequirements previous, next;
};

/// Both lists in canonical form of a common length, or nullopt when their
/// lengths are different and non-zero.
std::optional<CanonicalPair> canonical_pair(const SpecializationRequirements& previous,
                                            const SpecializationRequirements& next) {
  const size_t n = std::max(previous.inputs.size(), next.inputs.size());
  auto p = canonical_requirements(previous, n);
  auto q = canonical_requirements(next, n);
  if (!p.ok() || !q.ok()) return std::nullopt;
  return CanonicalPair{std::move(*p), std::move(*q)};
}

}  // namespace

bool strictly_widens(const SpecializationRequirements& previous,
                     const SpecializationRequirements& next) {
  auto pair = canonical_pair(previous, next);
  if (!pair) return false;
  for (size_t i = 0; i < pair->next.inputs.size(); ++i)
    if (!narrowing(pair->previous.inputs[i], pair->next.inputs[i]).empty()) return false;
  return pair->previous != pair->next;
}

Status check_widening(const SemanticProgram& program, const SpecializationRequirements& previous,
                      const SpecializationRequirements& next) {
  const size_t n = program.inputs().size();
  TENACT_ASSIGN_OR_RETURN(auto p, canonical_requirements(previous, n));
  TENACT_ASSIGN_OR_RETURN(auto q, canonical_requirements(next, n));
  for (size_t i = 0; i < n; ++i) {
    std::string what = narrowing(p.inputs[i], q.inputs[i]);
    if (!what.empty())
      return Error{ErrorCode::NonWideningSpecialization,
                   "specialization does not widen: the next requirements of " +
                       input_label(program, i) + " " + what};
  }
  if (p == q)
    return Error{ErrorCode::NonWideningSpecialization,
                 "specialization does not widen: the next requirements equal the current ones (" +
                     describe_requirements(program, q) + ")"};
  return ok_status();
}

Result<SpecializationRequirements> merge_requirements(const SpecializationRequirements& a,
                                                      const SpecializationRequirements& b,
                                                      size_t inputs) {
  TENACT_ASSIGN_OR_RETURN(auto first, canonical_requirements(a, inputs));
  TENACT_ASSIGN_OR_RETURN(auto other, canonical_requirements(b, inputs));
  std::vector<InputRequirement> out = first.inputs.items();
  for (size_t i = 0; i < inputs; ++i) {
    InputRequirement& r = out[i];
    const InputRequirement& s = other.inputs[i];
    r.dtype = r.dtype || s.dtype;
    r.rank = r.rank || s.rank;
    r.concrete_dims.insert(r.concrete_dims.end(), s.concrete_dims.begin(), s.concrete_dims.end());
    r.placement = std::max(r.placement, s.placement);
    r.layout = std::max(r.layout, s.layout);
    if (s.alignment_log2)
      r.alignment_log2 = r.alignment_log2 ? std::max(*r.alignment_log2, *s.alignment_log2)
                                          : *s.alignment_log2;
  }
  return canonical_requirements(SpecializationRequirements{std::move(out)}, inputs);  // sorts, dedups axes
}

std::optional<uint64_t> input_retry_bound(const InputRequirement& requirement, size_t rank,
                                          std::optional<uint8_t> alignment_log2) {
  if (requirement.concrete_dims.size() > rank) return std::nullopt;
  auto edges = [](uint8_t level) -> uint64_t { return 2u - level; };  // None 2, middle 1, top 0
  uint64_t alignment = 0;
  if (alignment_log2) {
    if (!requirement.alignment_log2) {
      alignment = 64;  // none -> 2^0 -> ... -> 2^63
    } else {
      const uint8_t required = std::min(*requirement.alignment_log2, *alignment_log2);
      if (required > 63) return std::nullopt;
      alignment = 63u - required;
    }
  }
  uint64_t total = 0;
  for (uint64_t part : {uint64_t{!requirement.dtype}, uint64_t{!requirement.rank},
                        uint64_t{rank - requirement.concrete_dims.size()},
                        edges(static_cast<uint8_t>(requirement.placement)),
                        edges(static_cast<uint8_t>(requirement.layout)), alignment}) {
    auto sum = checked_add_u(total, part);
    if (!sum) return std::nullopt;
    total = *sum;
  }
  return total;
}

Result<uint64_t> retry_bound(const SemanticProgram& program,
                             const SpecializationRequirements& requirements,
                             std::span<const InputDescriptor> inputs) {
  const size_t n = program.inputs().size();
  if (inputs.size() != n)
    return Error{ErrorCode::InputMismatch, "program expects " + std::to_string(n) +
                                               " inputs, got " + std::to_string(inputs.size())};
  TENACT_ASSIGN_OR_RETURN(auto canonical, canonical_requirements(requirements, n));
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    auto bound = input_retry_bound(canonical.inputs[i], inputs[i].shape.size(),
                                   inputs[i].alignment_log2);
    if (!bound)
      return Error{ErrorCode::ProviderContract,
                   "specialization requirements of " + input_label(program, i) + " (" +
                       describe_requirements(program, canonical) +
                       ") do not fit an input of rank " + std::to_string(inputs[i].shape.size())};
    auto sum = checked_add_u(total, *bound);
    if (!sum) return Error{ErrorCode::Overflow, "specialization retry bound overflows"};
    total = *sum;
  }
  return total;
}

Result<SpecializationState> begin_specialization(const SemanticProgram& program,
                                                 std::span<const InputDescriptor> inputs) {
  SpecializationState state;
  state.requirements = polymorphic_requirements(program.inputs().size());
  TENACT_ASSIGN_OR_RETURN(state.projection, project(program, state.requirements, inputs));
  TENACT_ASSIGN_OR_RETURN(state.retry_bound, retry_bound(program, state.requirements, inputs));
  return state;
}

Result<SpecializationState> follow_redirect(const SemanticProgram& program,
                                            std::span<const InputDescriptor> inputs,
                                            const SpecializationState& current,
                                            const NeedsSpecialization& answer,
                                            std::string_view asked_by) {
  const size_t n = program.inputs().size();
  const std::string who{asked_by};
  auto now = canonical_requirements(current.requirements, n);
  if (!now.ok()) return now.error().with_context(who);
  auto merged = merge_requirements(*now, answer.requirements, n);
  if (!merged.ok()) return merged.error().with_context(who);
  if (*merged == *now) {
    TENACT_ASSIGN_OR_RETURN(auto asked, canonical_requirements(answer.requirements, n));
    std::string already;
    for (size_t i = 0; i < n; ++i)
      if (asked.inputs[i] != InputRequirement{})
        already += (already.empty() ? "" : "; ") + input_label(program, i) + ": " +
                   describe_requirement(asked.inputs[i]);
    return Error{ErrorCode::NonWideningSpecialization,
                 who + " asked for specialization (" + answer.reason +
                     ") that does not widen the current requirements: " +
                     (already.empty() ? "it asked for nothing"
                                      : "already required: " + already)};
  }
  auto attempts = checked_add_u(current.redirects, 1);
  if (!attempts) return Error{ErrorCode::Overflow, "specialization redirect count overflows"};
  if (*attempts > current.retry_bound)
    return Error{ErrorCode::SpecializationRetryLimitExceeded,
                 who + " asked for specialization (" + answer.reason + "): redirect " +
                     std::to_string(*attempts) + " exceeds the retry bound of " +
                     std::to_string(current.retry_bound) + " for this signature"};
  auto projection = project(program, *merged, inputs);
  if (!projection.ok()) return projection.error().with_context(who);
  return SpecializationState{std::move(*merged), std::move(*projection), *attempts,
                             current.retry_bound};
}

}  // namespace tenact
