// The elementwise family's kernel entry point (run_elementwise): checks the
// operands' shapes, then runs the op as a one-op fused region, so the
// single-op and fused paths share every per-element function, tile loop
// and strided read (fused_elementwise.hpp, elementwise_functions.hpp).
//
// Decisions the spec leaves to the runtime (docs/program-format.md, "Decisions
// where StableHLO leaves a choice"), as implemented in
// elementwise_functions.hpp:
// - Integer divide by zero: all ones, i.e. -1 for signed types and the
//   maximum for unsigned ones (as XLA). x % 0 = x. INT_MIN / -1 = INT_MIN
//   (wraps), INT_MIN % -1 = 0. Never a trap (no SIGFPE).
// - Integer arithmetic (add, subtract, multiply, negate, abs, power) wraps
//   in two's complement; abs(INT_MIN) = INT_MIN.
// - power on integers: by squaring, wrapping; a negative exponent gives 1
//   for base 1, ±1 for base -1 by parity, 0 otherwise (spec). Floats:
//   std::pow; complex: std::pow.
// - maximum/minimum: NaN propagates (the first operand's NaN when both are
//   NaN); maximum(-0, +0) = +0 and minimum(-0, +0) = -0 in either order
//   (IEEE 754-2019 maximum/minimum). Complex: lexicographic, a NaN in
//   either component propagates that operand; equal operands give the
//   first. clamp(lo, x, hi) = minimum(maximum(x, lo), hi).
// - compare: NaN is unordered (false except NE); complex EQ/NE compare
//   both parts, LT/LE/GT/GE are lexicographic.
// - sign(±0) = ±0, sign(NaN) = NaN; sign of complex z is z/|z| (computed
//   without overflow; an infinite part counts as ±1), 0 for 0, (NaN, NaN)
//   when a part is NaN.
// - round_nearest_afz is std::round, round_nearest_even std::nearbyint
//   (the default round-to-nearest-even mode). remainder on floats is
//   std::fmod (sign of the dividend; exact, so f16/bf16 through f32 too).
// - logistic = 1/(1+e^-x), evaluated as e^x/(1+e^x) for x < 0 so that it
//   neither overflows nor flushes subnormal results; complex:
//   1/(1+exp(-z)).
// - rsqrt on f32 is 1/sqrt computed in f64 and rounded once; f64 and
//   complex: 1/sqrt. expm1/log1p of complex use cancellation-free
//   formulas near 0 and std::exp/std::log elsewhere; every other complex
//   function is std::complex's (spec: special values follow std::complex).
// - convert: exactly the spec's rule (float -> int truncates toward zero
//   and saturates, NaN -> 0; int -> int wraps; anything -> float rounds
//   once, f16/bf16 from f64 or 64-bit integers through half.hpp's exact
//   constructors; -> bool is x != 0, NaN included; complex -> real takes
//   the real part; real -> complex has imaginary part 0).
// - bool is stored as one byte; any nonzero byte reads as true, results
//   are written as 0/1.
//
// Precision (measured; tests state the bound per op): + - * / sqrt are
// IEEE operations, correctly rounded (f16/bf16: computed in f32, which is
// wide enough for one correct rounding). f32 exp/log/tanh/logistic use the
// vectorized vector_math.hpp (<= 1, 1, 2, 3 ulps from the correctly
// rounded result; measured over all f32: 1, 1, 1, 2); f32 sin/cos/expm1/
// log1p the vectorized vector_math_via_f64.hpp (<= 1 ulp over all f32);
// f64 exp/log/tanh/logistic/expm1/log1p the vectorized vector_math_f64.hpp
// (<= 0.93, 1.21, 2.52, 2.23, 1.88, 1.33 ulps from the exact value over its
// test's dense samples); f32 pow is glibc's powf, f64 sin/cos/pow glibc's
// double functions (<= 1 ulp on the fixtures);
// f16/bf16 transcendental ops compute in f32 and round once more (<= 1
// ulp). Complex ops are std::complex's (norm-wise within 3 eps, power 12).
#include <algorithm>
#include <array>
#include <string>

#include "engines/cpu/kernels/elementwise_kernels.hpp"
#include "engines/cpu/kernels/fused_elementwise.hpp"
#include "engines/cpu/kernels/kernel.hpp"

namespace tenact::cpu {

namespace {

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Status same_shape(OpKind kind, std::span<const HostTensor> in, size_t a, size_t b) {
  if (in[a].shape() == in[b].shape()) return ok_status();
  return Error{ErrorCode::InputMismatch,
               std::string{to_string(kind)} + " operand " + std::to_string(b) + " has shape " +
                   shape_text(in[b].shape()) + ", but operand " + std::to_string(a) + " has " +
                   shape_text(in[a].shape())};
}

/// Operand `b` is a scalar (rank 0) or of operand a's shape.
Status scalar_or_same_shape(OpKind kind, std::span<const HostTensor> in, size_t a, size_t b) {
  if (in[b].rank() == 0) return ok_status();
  return same_shape(kind, in, a, b);
}

/// The shape rules of docs/program-format.md: no implicit broadcasting, except
/// select's predicate and clamp's bounds, which may be scalars.
Status check_shapes(OpKind kind, std::span<const HostTensor> in) {
  switch (kind) {
    case OpKind::Select:
      TENACT_TRY(same_shape(kind, in, 1, 2));
      return scalar_or_same_shape(kind, in, 1, 0);
    case OpKind::Clamp:
      TENACT_TRY(scalar_or_same_shape(kind, in, 1, 0));
      return scalar_or_same_shape(kind, in, 1, 2);
    default:
      for (size_t i = 1; i < in.size(); ++i) TENACT_TRY(same_shape(kind, in, 0, i));
      return ok_status();
  }
}

/// The operand whose shape is the result's: select's and clamp's operand 1
/// (their others may be scalars), every other op's operand 0.
size_t shaping_operand(OpKind kind) { return kind == OpKind::Select || kind == OpKind::Clamp ? 1 : 0; }

/// Every operand dense row-major with the result's shape (no scalar
/// broadcast, no strided read), and few enough elements that the pool
/// would not split them: the tile function then runs on the operands in
/// place, with none of a region's per-call setup.
bool runs_in_place(std::span<const HostTensor> in, size_t shaping, int64_t n) {
  if (n > kElementwiseGrain) return false;
  for (const HostTensor& t : in) {
    if (t.shape() != in[shaping].shape() || !t.is_contiguous()) return false;
    if (n > 0 && t.buffer() == nullptr) return false;
  }
  return true;
}

/// The tile function over [0, n) in tiles of kFusedTileElements, as a
/// one-op region walks them (so the results are the region's bits).
Result<std::vector<HostTensor>> run_direct(const KernelCall& call, const ElementwiseKernel& kernel,
                                           size_t shaping, int64_t n) {
  TENACT_ASSIGN_OR_RETURN(HostTensor out, output_tensor(call, 0, kernel.result, call.inputs[shaping].shape(),
                                                        BufferFill::Unspecified));
  std::array<const std::byte*, kMaxFusedOperands> operands{};
  std::array<size_t, kMaxFusedOperands> sizes{};
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    operands[i] = call.inputs[i].data();
    sizes[i] = size_of(call.inputs[i].dtype());
  }
  std::byte* dst = out.data();
  const size_t out_size = size_of(kernel.result);
  for (int64_t t = 0; t < n; t += kFusedTileElements) {
    const int64_t len = std::min(kFusedTileElements, n - t);
    kernel.fn(operands.data(), dst, len);
    for (size_t i = 0; i < call.inputs.size(); ++i) operands[i] += static_cast<size_t>(len) * sizes[i];
    dst += static_cast<size_t>(len) * out_size;
  }
  return single_result(call, std::move(out));
}

/// The tile function an op resolved to for its operand dtypes (what a
/// KernelKeep holds between runs of one op: its kind and attributes are
/// the op's own, so the dtypes decide).
struct KeptKernel {
  std::array<DType, kMaxFusedOperands> dtypes{};
  size_t count = 0;
  ElementwiseKernel kernel;
};

/// Names KeptKernel objects in a KernelKeep.
constexpr char kKeptKernelOwner = 0;

/// find_elementwise_kernel, answered from the call's keep when it was
/// resolved for these dtypes, and kept when the call has a keep.
Result<ElementwiseKernel> kernel_for(const KernelCall& call, std::span<const DType> dtypes) {
  if (const KeptKernel* kept = call.keep ? call.keep->find<KeptKernel>(&kKeptKernelOwner) : nullptr)
    if (kept->count == dtypes.size() && std::equal(dtypes.begin(), dtypes.end(), kept->dtypes.begin()))
      return kept->kernel;
  TENACT_ASSIGN_OR_RETURN(ElementwiseKernel kernel, find_elementwise_kernel(call.kind, call.attrs, dtypes));
  if (call.keep && dtypes.size() <= kMaxFusedOperands) {
    auto made = std::make_shared<KeptKernel>();
    std::copy(dtypes.begin(), dtypes.end(), made->dtypes.begin());
    made->count = dtypes.size();
    made->kernel = kernel;
    call.keep->keep(&kKeptKernelOwner, std::move(made));
  }
  return kernel;
}

}  // namespace

Result<std::vector<HostTensor>> run_elementwise(const KernelCall& call) {
  // Operand dtypes without a heap allocation (ops read at most three;
  // find_elementwise_kernel refuses more).
  std::array<DType, kMaxFusedOperands> dtype_store{};
  std::vector<DType> many;
  std::span<const DType> dtypes;
  if (call.inputs.size() <= kMaxFusedOperands) {
    for (size_t i = 0; i < call.inputs.size(); ++i) dtype_store[i] = call.inputs[i].dtype();
    dtypes = std::span<const DType>(dtype_store.data(), call.inputs.size());
  } else {
    for (const HostTensor& t : call.inputs) many.push_back(t.dtype());
    dtypes = many;
  }
  TENACT_ASSIGN_OR_RETURN(ElementwiseKernel kernel, kernel_for(call, dtypes));
  TENACT_TRY(check_shapes(call.kind, call.inputs));
  if (!call.result_types.empty() && call.result_types[0].dtype != kernel.result)
    return Error{ErrorCode::InputMismatch,
                 std::string{to_string(call.kind)} + " yields " +
                     std::string{to_string(kernel.result)} + ", but the program expects " +
                     std::string{to_string(call.result_types[0].dtype)}};

  const size_t shaping = shaping_operand(call.kind);
  TENACT_ASSIGN_OR_RETURN(const int64_t n, checked_element_count(call.inputs[shaping].shape()));
  if (runs_in_place(call.inputs, shaping, n)) return run_direct(call, kernel, shaping, n);

  FusedRegion region;
  region.input_dtypes.assign(dtypes.begin(), dtypes.end());
  FusedOp op;
  op.kind = call.kind;
  op.attrs = call.attrs;
  op.result_dtype = kernel.result;
  for (uint32_t i = 0; i < call.inputs.size(); ++i) op.operands.push_back(FusedOperand::input(i));
  region.ops.push_back(std::move(op));
  region.outputs.push_back(0);
  return run_fused_region(region, call.inputs, call.pool, nullptr, call.destinations);
}

}  // namespace tenact::cpu
