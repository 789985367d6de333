#include "engines/cpu/batch_work_estimate.hpp"

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

bool linear_family(OpKind kind) {
  switch (family_of(kind)) {
    case OpFamily::Elementwise:
    case OpFamily::Layout:
    case OpFamily::Indexing:
    case OpFamily::Reduction:
      return true;
    case OpFamily::Dot:
    case OpFamily::Extension:
      return false;
  }
  return false;
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
    if (!op.op || !linear_family(op.op->kind)) return std::nullopt;
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
  }
  return total;
}

}  // namespace tenact::cpu
