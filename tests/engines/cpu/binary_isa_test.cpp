// The per-instruction-set copies of the f32/f64 add, subtract, multiply,
// divide, maximum and minimum tile loops (binary_float_tile in
// elementwise_tiles_vmath.hpp): every copy this CPU runs gives the bits of
// the baseline loop binary_tile<Op, T> (compiled here, with the project's
// flags) on every pair of special values (NaN with payloads, infinities,
// signed zeros, subnormals, extremes; NaN results agree as NaNs, their
// payloads free), on pseudo-random bit patterns, and
// at every length up to a few vectors at unaligned starts; and the kernel
// finder hands out the widest copy. Accuracy is not the question (one
// IEEE operation each): the contract is "same bits at every width".
#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "engines/cpu/kernels/elementwise_functions.hpp"
#include "engines/cpu/kernels/elementwise_tile_loops.hpp"
#include "engines/cpu/kernels/elementwise_tiles_vmath.hpp"

namespace tenact::cpu {
namespace {

using ew::VmathIsa;

template <class T> using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <class T>
std::vector<T> specials() {
  using L = std::numeric_limits<T>;
  std::vector<T> s = {T(0),          -T(0),          L::infinity(),  -L::infinity(), L::quiet_NaN(),
                      L::denorm_min(), -L::denorm_min(), L::min(),   -L::min(),      L::max(),
                      -L::max(),     L::lowest(),    T(1),           T(-1),          T(0.5),
                      T(3),          T(-7.25),       L::epsilon(),   T(1e-30),       T(-1e30)};
  s.push_back(std::bit_cast<T>(static_cast<Bits<T>>(~Bits<T>{0} - 1)));  // negative NaN, payload
  s.push_back(std::bit_cast<T>(std::bit_cast<Bits<T>>(L::quiet_NaN()) | 1));
  return s;
}

/// out = fn(a, b) over n elements from `offset`.
template <class T>
std::vector<T> apply(TileFn fn, const std::vector<T>& a, const std::vector<T>& b, size_t offset, size_t n) {
  std::vector<T> out(n);
  const std::byte* operands[2] = {reinterpret_cast<const std::byte*>(a.data() + offset),
                                  reinterpret_cast<const std::byte*>(b.data() + offset)};
  fn(operands, reinterpret_cast<std::byte*>(out.data()), static_cast<int64_t>(n));
  return out;
}

/// Elements that differ: in bits, except that two NaNs agree whatever their
/// payloads (when both operands are NaN, which one's payload the result
/// carries is the instruction's choice, and vector code may commute add and
/// multiply; the format fixes that the result is NaN, not which payload).
template <class T>
int64_t bit_differences(const std::vector<T>& x, const std::vector<T>& y) {
  int64_t differ = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] != x[i] && y[i] != y[i]) continue;
    differ += std::bit_cast<Bits<T>>(x[i]) != std::bit_cast<Bits<T>>(y[i]);
  }
  return differ;
}

template <class Op, class T>
int check_copies(OpKind kind, DType dtype) {
  int checked = 0;
  const TileFn base = &ew::binary_tile<Op, T>;
  // Every ordered pair of specials.
  const std::vector<T> s = specials<T>();
  std::vector<T> a, b;
  for (T x : s)
    for (T y : s) {
      a.push_back(x);
      b.push_back(y);
    }
  // Pseudo-random bit patterns (every exponent, NaNs and subnormals among them).
  std::mt19937_64 rng{static_cast<uint64_t>(kind) * 977 + sizeof(T)};
  for (int i = 0; i < 20000; ++i) {
    a.push_back(std::bit_cast<T>(static_cast<Bits<T>>(rng())));
    b.push_back(std::bit_cast<T>(static_cast<Bits<T>>(rng())));
  }
  for (VmathIsa isa : {VmathIsa::Avx2, VmathIsa::Avx512}) {
    if (!ew::cpu_runs(isa)) {
      WARN("this CPU does not run " << ew::to_string(isa) << ": that copy is not checked here");
      continue;
    }
    INFO(to_string(kind) << " " << to_string(dtype) << " " << ew::to_string(isa));
    const TileFn wide = ew::binary_float_tile(kind, dtype, isa);
    REQUIRE(wide != nullptr);
    CHECK(bit_differences(apply<T>(wide, a, b, 0, a.size()), apply<T>(base, a, b, 0, a.size())) == 0);
    int64_t tail_differ = 0;
    for (size_t offset = 0; offset < 4; ++offset)
      for (size_t n = 0; n <= 70; ++n)
        tail_differ += bit_differences(apply<T>(wide, a, b, offset, n), apply<T>(base, a, b, offset, n));
    CHECK(tail_differ == 0);
    ++checked;
  }
  return checked;
}

template <class T>
int check_all(DType dtype) {
  return check_copies<ew::Add, T>(OpKind::Add, dtype) + check_copies<ew::Subtract, T>(OpKind::Subtract, dtype) +
         check_copies<ew::Multiply, T>(OpKind::Multiply, dtype) + check_copies<ew::Divide, T>(OpKind::Divide, dtype) +
         check_copies<ew::Maximum, T>(OpKind::Maximum, dtype) + check_copies<ew::Minimum, T>(OpKind::Minimum, dtype);
}

TEST_CASE("every f32/f64 arithmetic, maximum and minimum copy this CPU runs gives the baseline loop's bits",
          "[elementwise][isa]") {
  const int checked = check_all<float>(DType::F32) + check_all<double>(DType::F64);
  if (ew::cpu_runs(VmathIsa::Avx2)) CHECK(checked >= 12);
}

TEST_CASE("the kernel finder hands out the widest f32/f64 arithmetic copy the CPU runs", "[elementwise][isa]") {
  const VmathIsa best = ew::best_vmath_isa();
  for (DType dtype : {DType::F32, DType::F64}) {
    const DType operands[2] = {dtype, dtype};
    for (OpKind kind : {OpKind::Add, OpKind::Subtract, OpKind::Multiply, OpKind::Divide, OpKind::Maximum,
                        OpKind::Minimum}) {
      auto k = find_elementwise_kernel(kind, NoAttrs{}, operands);
      REQUIRE(k.ok());
      if (best == VmathIsa::Baseline) CHECK(ew::binary_float_tile(kind, dtype, best) == nullptr);
      else CHECK(k->fn == ew::binary_float_tile(kind, dtype, best));
    }
  }
  // other ops and dtypes keep their generic loops
  CHECK(ew::binary_float_tile(OpKind::Power, DType::F32, VmathIsa::Avx512) == nullptr);
  CHECK(ew::binary_float_tile(OpKind::Add, DType::I32, VmathIsa::Avx512) == nullptr);
  CHECK(ew::binary_float_tile(OpKind::Add, DType::F32, VmathIsa::Baseline) == nullptr);
}

}  // namespace
}  // namespace tenact::cpu
