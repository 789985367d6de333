#include "engines/cpu/batch_work_estimate.hpp"

#include <variant>
#include <vector>

#include "core/checked.hpp"

namespace tenact::cpu {

namespace {

std::optional<uint64_t> elements_of(const ValueType& type, const SymbolBindings& symbols) {
  uint64_t count = 1;
  for (const ShapeExtent& extent : type.shape) {
    if (extent.kind == ExtentKind::Unknown) return std::nullopt;
    auto dim = extent.expr.evaluate(symbols);
    if (!dim.ok() || *dim < 0) return std::nullopt;
    auto next = checked_mul_u(count, static_cast<uint64_t>(*dim));
    if (!next) return std::nullopt;
    count = *next;
  }
  return count;
}

bool estimated_family(OpKind kind) {
  switch (family_of(kind)) {
    case OpFamily::Elementwise:
    case OpFamily::Layout:
    case OpFamily::Indexing:
    case OpFamily::Reduction:
    case OpFamily::Dot:
      return true;
    case OpFamily::Extension:
      return false;
  }
  return false;
}

// Extent `axis` of the value `ref` names (a batch input's shape, or an
// earlier op's result shape under the symbols); nullopt when it has none.
std::optional<uint64_t> extent_of(const BatchWork& work, const BatchRef& ref, int64_t axis) {
  if (axis < 0) return std::nullopt;
  const auto a = static_cast<size_t>(axis);
  if (ref.from == BatchRef::From::Input) {
    const std::vector<int64_t>& shape = work.inputs[ref.index].shape();
    if (a >= shape.size() || shape[a] < 0) return std::nullopt;
    return static_cast<uint64_t>(shape[a]);
  }
  const auto& results = work.ops[ref.index].op->results;
  if (ref.result >= results.size() || a >= results[ref.result].shape.size()) return std::nullopt;
  const ShapeExtent& extent = results[ref.result].shape[a];
  if (extent.kind == ExtentKind::Unknown) return std::nullopt;
  auto dim = extent.expr.evaluate(work.symbols);
  if (!dim.ok() || *dim < 0) return std::nullopt;
  return static_cast<uint64_t>(*dim);
}

// A dot's multiply-adds: its result's elements times the extents of the
// lhs's contracting dimensions. nullopt on overflow or a missing extent.
std::optional<uint64_t> dot_multiply_adds(const BatchWork& work, const BatchOp& op, uint64_t result_elements) {
  const auto* attrs = std::get_if<DotGeneralAttrs>(&op.op->attrs);
  if (!attrs || op.operands.empty()) return std::nullopt;
  uint64_t macs = result_elements;
  for (int64_t d : attrs->lhs_contracting_dimensions) {
    auto extent = extent_of(work, op.operands[0], d);
    if (!extent) return std::nullopt;
    auto next = checked_mul_u(macs, *extent);
    if (!next) return std::nullopt;
    macs = *next;
  }
  return macs;
}

}  // namespace

std::optional<uint64_t> linear_element_work(const BatchWork& work) {
  // Element counts of every op's results, by op index then result index.
  std::vector<std::vector<uint64_t>> results(work.ops.size());
  uint64_t total = 0;
  auto add = [&total](uint64_t n) {
    auto next = checked_add_u(total, n);
    if (next) total = *next;
    return next.has_value();
  };
  for (size_t i = 0; i < work.ops.size(); ++i) {
    const BatchOp& op = work.ops[i];
    if (!op.op || !estimated_family(op.op->kind)) return std::nullopt;
    for (const BatchRef& ref : op.operands) {
      uint64_t n = 0;
      if (ref.from == BatchRef::From::Input) {
        if (ref.index >= work.inputs.size()) return std::nullopt;
        n = static_cast<uint64_t>(work.inputs[ref.index].element_count());
      } else {
        if (ref.index >= i || ref.result >= results[ref.index].size()) return std::nullopt;
        n = results[ref.index][ref.result];
      }
      if (!add(n)) return std::nullopt;
    }
    for (const ValueType& type : op.op->results) {
      auto n = elements_of(type, work.symbols);
      if (!n || !add(*n)) return std::nullopt;
      results[i].push_back(*n);
    }
    if (op.op->kind == OpKind::DotGeneral) {
      auto macs = results[i].empty() ? std::nullopt : dot_multiply_adds(work, op, results[i].front());
      if (!macs || !add(*macs / kMacsPerVisit)) return std::nullopt;
    }
  }
  return total;
}

}  // namespace tenact::cpu
