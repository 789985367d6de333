// Values for the conformance matrix (deterministic, special values mixed
// in) and the comparison of results: bit for bit, or within a number of
// ulps per element.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/half.hpp"
#include "tests/engines/conformance/conformance.hpp"

namespace tenact::conformance {

namespace {

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

struct FloatFormat {
  int exp_bits = 0;
  int mant_bits = 0;
  int total() const { return 1 + exp_bits + mant_bits; }
  uint64_t mant_mask() const { return (uint64_t{1} << mant_bits) - 1; }
  uint64_t emax() const { return (uint64_t{1} << exp_bits) - 1; }
  uint64_t bias() const { return (uint64_t{1} << (exp_bits - 1)) - 1; }
  uint64_t bits(uint64_t sign, uint64_t exp, uint64_t mant) const {
    return (sign << (total() - 1)) | (exp << mant_bits) | (mant & mant_mask());
  }
  bool is_nan(uint64_t b) const { return ((b >> mant_bits) & emax()) == emax() && (b & mant_mask()) != 0; }
};

FloatFormat format_of(DType t) {
  switch (t) {
    case DType::F16: return {5, 10};
    case DType::BF16: return {8, 7};
    case DType::F32: case DType::C64: return {8, 23};
    case DType::F64: case DType::C128: return {11, 52};
    default: return {};
  }
}

/// Bits of one real float element (or complex component) of format `f`.
uint64_t float_bits(const FloatFormat& f, uint64_t& state, int special_every) {
  const uint64_t r = splitmix(state);
  if (special_every > 0 && r % static_cast<uint64_t>(special_every) == 0) {
    const uint64_t pick = (r >> 8) % 22, noise = r >> 20;
    const uint64_t e = f.emax(), b = f.bias(), m = f.mant_bits;
    switch (pick) {
      case 0: return f.bits(0, 0, 0);                                    // +0
      case 1: return f.bits(1, 0, 0);                                    // -0
      case 2: return f.bits(0, e, 0);                                    // +inf
      case 3: return f.bits(1, e, 0);                                    // -inf
      case 4: return f.bits(0, e, uint64_t{1} << (m - 1));               // quiet NaN
      case 5: return f.bits(1, e, (uint64_t{1} << (m - 1)) | 0x5);       // -NaN with a payload
      case 6: return f.bits(0, e, 1);                                    // signalling NaN
      case 7: return f.bits(0, 0, 1);                                    // smallest denormal
      case 8: return f.bits(1, 0, f.mant_mask());                        // -largest denormal
      case 9: return f.bits(0, 0, noise);                                // a denormal
      case 10: return f.bits(0, 1, 0);                                   // smallest normal
      case 11: return f.bits(0, e - 1, f.mant_mask());                   // largest finite
      case 12: return f.bits(1, e - 1, f.mant_mask());                   // lowest finite
      case 13: return f.bits(0, b, 0);                                   // 1
      case 14: return f.bits(1, b, 0);                                   // -1
      case 15: return f.bits(0, b - 1, 0);                               // 0.5
      case 16: return f.bits(1, b + 1, uint64_t{1} << (m - 2));          // -2.5 (a tie)
      case 17: return f.bits(0, b + 1, uint64_t{3} << (m - 2));          // 3.5 (a tie)
      case 18: return f.bits(0, b, 1);                                   // 1 + ulp
      case 19: return f.bits(noise & 1, e - 2, noise >> 1);              // large
      case 20: return f.bits(noise & 1, 2, noise >> 1);                  // tiny normal
      default: return f.bits(1, b - 1, 0);                               // -0.5 (a tie)
    }
  }
  const uint64_t sign = (r >> 1) & 1;
  const uint64_t mant = r >> 11;
  uint64_t exp;
  if ((r >> 2) % 8 == 0) {
    exp = 1 + (r >> 5) % (f.emax() - 1);  // any normal magnitude
  } else {
    const int64_t offset = static_cast<int64_t>((r >> 5) % 13) - 6;  // 2^-6 .. 2^7
    exp = static_cast<uint64_t>(static_cast<int64_t>(f.bias()) + offset);
  }
  return f.bits(sign, exp, mant);
}

uint64_t integer_bits(DType t, uint64_t& state) {
  const int width = static_cast<int>(size_of(t)) * 8;
  const bool is_signed = is_signed_integer(t);
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const uint64_t r = splitmix(state);
  const uint64_t min_signed = uint64_t{1} << (width - 1);
  switch (r % 16) {
    case 0: return 0;
    case 1: return 1;
    case 2: return mask;                                         // -1 / the maximum
    case 3: return is_signed ? min_signed : mask - 1;            // the minimum / max - 1
    case 4: return is_signed ? min_signed - 1 : min_signed;      // the maximum / 2^(w-1)
    case 5: return is_signed ? min_signed + 1 : 2;               // min + 1
    case 6: case 7: case 8: return (r >> 8) & mask;              // anything
    default: {
      const int64_t small = static_cast<int64_t>((r >> 8) % 41) - (is_signed ? 20 : 0);
      return static_cast<uint64_t>(small) & mask;
    }
  }
}

/// The low `bytes` (at most 8) of `bits` at `at`, little-endian.
void store_bits(std::byte* at, size_t bytes, uint64_t bits) { std::memcpy(at, &bits, std::min(bytes, sizeof bits)); }

uint64_t load_bits(const std::byte* at, size_t bytes) {
  uint64_t bits = 0;
  std::memcpy(&bits, at, std::min(bytes, sizeof bits));
  return bits;
}

double real_value(DType component, uint64_t bits) {
  switch (component) {
    case DType::F16: return half_detail::f16_bits_to_float(static_cast<uint16_t>(bits));
    case DType::BF16: return half_detail::bf16_bits_to_float(static_cast<uint16_t>(bits));
    case DType::F32: { float f; uint32_t u = static_cast<uint32_t>(bits); std::memcpy(&f, &u, 4); return f; }
    case DType::F64: { double d; std::memcpy(&d, &bits, 8); return d; }
    default: return 0;
  }
}

std::string hex(uint64_t bits, size_t bytes) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "0x%0*llx", static_cast<int>(bytes * 2), static_cast<unsigned long long>(bits));
  return buf;
}

/// "3.5 (0x4060)" for one element at `at`.
std::string describe_element(DType t, const std::byte* at) {
  std::ostringstream out;
  const size_t bytes = size_of(t);
  if (is_complex(t)) {
    const DType c = real_component(t);
    const size_t half = bytes / 2;
    const uint64_t re = load_bits(at, half), im = load_bits(at + half, half);
    out << "(" << real_value(c, re) << ", " << real_value(c, im) << ") (" << hex(re, half) << ", " << hex(im, half)
        << ")";
  } else if (is_float(t)) {
    const uint64_t b = load_bits(at, bytes);
    out.precision(17);
    out << real_value(t, b) << " (" << hex(b, bytes) << ")";
  } else {
    const uint64_t b = load_bits(at, bytes);
    if (is_bool(t)) out << (b ? "true" : "false");
    else if (is_signed_integer(t)) {
      const int shift = 64 - static_cast<int>(bytes) * 8;
      out << (static_cast<int64_t>(b << shift) >> shift);
    } else out << b;
    out << " (" << hex(b, bytes) << ")";
  }
  return out.str();
}

std::string index_text(int64_t linear, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? linear % shape[d] : 0;
    linear = shape[d] ? linear / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

/// One component (real element, or half of a complex one) within `ulps`.
bool component_within(DType component, uint64_t e, uint64_t a, uint32_t ulps) {
  const FloatFormat f = format_of(component);
  if (f.is_nan(e) || f.is_nan(a)) return f.is_nan(e) && f.is_nan(a);
  const auto d = ulp_distance(component, e, a);
  return d && *d <= ulps;
}

}  // namespace

const char* to_string(Accuracy a) {
  switch (a) {
    case Accuracy::Exact: return "exact";
    case Accuracy::Approximate: return "approximate";
    case Accuracy::Sum: return "sum";
    case Accuracy::Product: return "product";
  }
  return "?";
}

const char* to_string(Layout layout) {
  switch (layout) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Transposed: return "transposed";
    case Layout::Sliced: return "sliced";
    case Layout::Broadcast: return "broadcast";
    case Layout::Empty: return "empty";
  }
  return "?";
}

std::string Case::label() const {
  std::string s = op + " " + std::string{tenact::to_string(dtype)};
  if (to) s += "->" + std::string{tenact::to_string(*to)};
  return s + " " + to_string(layout);
}

void fill(Tensor& t, uint64_t seed, int special_every) {
  uint64_t state = seed * 0x2545f4914f6cdd1dull + 0x1234567ull;
  const DType dtype = t.dtype();
  const int64_t n = t.element_count();
  std::byte* data = t.data();
  const size_t bytes = size_of(dtype);
  for (int64_t i = 0; i < n; ++i) {
    std::byte* at = data + static_cast<size_t>(i) * bytes;
    if (is_bool(dtype)) {
      store_bits(at, 1, splitmix(state) >> 63);
    } else if (is_integer(dtype)) {
      store_bits(at, bytes, integer_bits(dtype, state));
    } else if (is_float(dtype)) {
      store_bits(at, bytes, float_bits(format_of(dtype), state, special_every));
    } else {
      const FloatFormat f = format_of(dtype);
      store_bits(at, bytes / 2, float_bits(f, state, special_every));
      store_bits(at + bytes / 2, bytes / 2, float_bits(f, state, special_every));
    }
  }
}

Tensor random_tensor(DType dtype, std::vector<int64_t> shape, uint64_t seed, int special_every) {
  Tensor t = Tensor::zeros(dtype, std::move(shape)).value();
  fill(t, seed, special_every);
  return t;
}

Tensor integer_tensor(DType dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  Tensor t = Tensor::zeros(dtype, std::move(shape)).value();
  const size_t bytes = size_of(dtype);
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.element_count(); ++i) {
    const uint64_t v = is_bool(dtype) ? (values[i] != 0 ? 1 : 0) : static_cast<uint64_t>(values[i]);
    store_bits(t.data() + i * bytes, bytes, v);
  }
  return t;
}

std::optional<uint64_t> ulp_distance(DType dtype, uint64_t a_bits, uint64_t b_bits) {
  const FloatFormat f = format_of(dtype);
  if (f.is_nan(a_bits) != f.is_nan(b_bits)) return std::nullopt;
  if (f.is_nan(a_bits)) return 0;
  const int top = f.total() - 1;
  const auto ordered = [&](uint64_t b) {
    const int64_t magnitude = static_cast<int64_t>(b & ~(uint64_t{1} << top));
    return (b >> top) & 1 ? -magnitude : magnitude;
  };
  const int64_t d = ordered(a_bits) - ordered(b_bits);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

std::string compare(const Tensor& expected, const Tensor& actual, Tolerance tolerance) {
  if (expected.dtype() != actual.dtype())
    return std::string{"dtype "} + std::string{tenact::to_string(actual.dtype())} + ", expected " +
           std::string{tenact::to_string(expected.dtype())};
  if (expected.shape() != actual.shape())
    return "shape " + shape_text(actual.shape()) + ", expected " + shape_text(expected.shape());
  if (!expected.is_host() || !actual.is_host()) return "a tensor to compare is not host addressable";
  if (tolerance.ulps == 0 && expected.bitwise_equal(actual)) return "";
  auto e = expected.contiguous(), a = actual.contiguous();
  if (!e.ok() || !a.ok()) return "cannot make the tensors dense to compare them";
  const DType t = expected.dtype();
  const size_t bytes = size_of(t);
  const bool approximate = tolerance.ulps > 0 && (is_float(t) || is_complex(t));
  std::ostringstream diff;
  int64_t differing = 0;
  const int64_t n = expected.element_count();
  for (int64_t i = 0; i < n; ++i) {
    const std::byte* pe = e->data() + static_cast<size_t>(i) * bytes;
    const std::byte* pa = a->data() + static_cast<size_t>(i) * bytes;
    bool same;
    if (!approximate) {
      same = std::memcmp(pe, pa, bytes) == 0;
    } else if (is_float(t)) {
      same = component_within(t, load_bits(pe, bytes), load_bits(pa, bytes), tolerance.ulps);
    } else {
      const size_t half = bytes / 2;
      const DType c = real_component(t);
      same = component_within(c, load_bits(pe, half), load_bits(pa, half), tolerance.ulps) &&
             component_within(c, load_bits(pe + half, half), load_bits(pa + half, half), tolerance.ulps);
    }
    if (same) continue;
    if (++differing <= 4)
      diff << (differing > 1 ? "; " : "") << "at " << index_text(i, expected.shape()) << " "
           << describe_element(t, pa) << ", expected " << describe_element(t, pe);
  }
  if (differing == 0) return "";
  std::ostringstream out;
  out << differing << " of " << n << " elements differ"
      << (approximate ? " by more than " + std::to_string(tolerance.ulps) + " ulps" : std::string{" bitwise"})
      << ": " << diff.str();
  return out.str();
}

}  // namespace tenact::conformance
