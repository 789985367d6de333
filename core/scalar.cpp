// Scalar literals: range checks, conversion into and out of every dtype.
//
// Conversions round once from the literal's own value: an integer literal
// into f16/bf16 goes through half.hpp's int64/uint64 constructors, a float
// literal through the double ones, f32 through static_cast (one rounding).
#include "core/scalar.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/half.hpp"

namespace tenact {

namespace {

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  return std::string(buf, res.ptr);
}

struct IntRange {
  int64_t min;
  uint64_t max;
};

IntRange int_range(DType t) {
  switch (t) {
    case DType::I8: return {INT8_MIN, INT8_MAX};
    case DType::I16: return {INT16_MIN, INT16_MAX};
    case DType::I32: return {INT32_MIN, INT32_MAX};
    case DType::I64: return {INT64_MIN, INT64_MAX};
    case DType::U8: return {0, UINT8_MAX};
    case DType::U16: return {0, UINT16_MAX};
    case DType::U32: return {0, UINT32_MAX};
    case DType::U64: return {0, UINT64_MAX};
    default: return {0, 0};
  }
}

// True when the finite, integral double `v` lies in [r.min, r.max].
bool double_in_range(double v, IntRange r) {
  // 2^63 and 2^64 are exact doubles; every narrower bound is exact too.
  if (r.max == UINT64_MAX) return v >= 0.0 && v < 18446744073709551616.0;
  if (r.max == static_cast<uint64_t>(INT64_MAX))
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
  return v >= static_cast<double>(r.min) && v <= static_cast<double>(r.max);
}

// Saturating double -> int64 / uint64 (NaN -> 0). Only reached with a
// literal check_fits accepted, where it is exact; saturation keeps a
// violated precondition free of undefined behaviour.
int64_t saturate_i64(double v) {
  if (std::isnan(v)) return 0;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  return static_cast<int64_t>(v);
}
uint64_t saturate_u64(double v) {
  if (!(v > 0)) return 0;
  if (v >= 18446744073709551616.0) return UINT64_MAX;
  return static_cast<uint64_t>(v);
}

template <class T>
void put(void* dst, T v) {
  std::memcpy(dst, &v, sizeof v);
}
template <class T>
T get(const void* src) {
  T v;
  std::memcpy(&v, src, sizeof v);
  return v;
}

}  // namespace

Status Scalar::check_fits(DType dtype) const {
  // Kind mismatches (bool vs number, pair vs real) are TypeMismatch; a
  // number of the right kind but out of range or fractional is
  // InvalidAttribute.
  auto fail = [&](const std::string& why, ErrorCode code = ErrorCode::InvalidAttribute) {
    return Error{code,
                 "value " + to_string() + " does not fit " + std::string(tenact::to_string(dtype)) +
                     ": " + why};
  };
  if (dtype == DType::Bool) {
    if (kind != Kind::Bool) return fail("bool takes only true or false", ErrorCode::TypeMismatch);
    return ok_status();
  }
  if (kind == Kind::Bool) return fail("true and false are only for bool", ErrorCode::TypeMismatch);
  if (kind == Kind::Complex && !is_complex(dtype))
    return fail("a [re, im] pair is only for complex types", ErrorCode::TypeMismatch);
  if (is_integer(dtype)) {
    const IntRange r = int_range(dtype);
    const std::string range =
        "the range is " + std::to_string(r.min) + " to " + std::to_string(r.max);
    switch (kind) {
      case Kind::Int:
        if (i < r.min || (i > 0 && static_cast<uint64_t>(i) > r.max)) return fail(range);
        return ok_status();
      case Kind::UInt:
        if (u > r.max) return fail(range);
        return ok_status();
      case Kind::Float:
        if (!std::isfinite(re) || std::trunc(re) != re) return fail("not an integer");
        if (!double_in_range(re, r)) return fail(range);
        return ok_status();
      default: break;
    }
  }
  return ok_status();  // floats take any real; complex any real or pair
}

void Scalar::store(DType dtype, void* dst) const {
  // The literal's real value as double (exact for Float; used for Bool too).
  const double real = kind == Kind::Bool ? (b ? 1.0 : 0.0)
                      : kind == Kind::Int ? static_cast<double>(i)
                      : kind == Kind::UInt ? static_cast<double>(u)
                                           : re;
  auto as_i64 = [&]() -> int64_t {
    switch (kind) {
      case Kind::Bool: return b ? 1 : 0;
      case Kind::Int: return i;
      case Kind::UInt: return static_cast<int64_t>(u);  // wraps; precondition excludes it
      default: return saturate_i64(re);
    }
  };
  auto as_u64 = [&]() -> uint64_t {
    switch (kind) {
      case Kind::Bool: return b ? 1 : 0;
      case Kind::Int: return static_cast<uint64_t>(i);
      case Kind::UInt: return u;
      default: return saturate_u64(re);
    }
  };
  // One rounding from the literal's value into float.
  auto as_f32 = [&]() -> float {
    switch (kind) {
      case Kind::Int: return static_cast<float>(i);
      case Kind::UInt: return static_cast<float>(u);
      default: return static_cast<float>(real);
    }
  };
  auto as_f16 = [&]() -> f16 {
    switch (kind) {
      case Kind::Int: return f16(i);
      case Kind::UInt: return f16(u);
      default: return f16(real);
    }
  };
  auto as_bf16 = [&]() -> bf16 {
    switch (kind) {
      case Kind::Int: return bf16(i);
      case Kind::UInt: return bf16(u);
      default: return bf16(real);
    }
  };
  const double imag = kind == Kind::Complex ? im : 0.0;
  switch (dtype) {
    case DType::Bool: {
      // A complex value drops its imaginary part first, as convert does.
      bool v = kind == Kind::Bool ? b : real != 0;
      put<uint8_t>(dst, v ? 1 : 0);
      break;
    }
    case DType::I8: put(dst, static_cast<int8_t>(as_i64())); break;
    case DType::I16: put(dst, static_cast<int16_t>(as_i64())); break;
    case DType::I32: put(dst, static_cast<int32_t>(as_i64())); break;
    case DType::I64: put(dst, as_i64()); break;
    case DType::U8: put(dst, static_cast<uint8_t>(as_u64())); break;
    case DType::U16: put(dst, static_cast<uint16_t>(as_u64())); break;
    case DType::U32: put(dst, static_cast<uint32_t>(as_u64())); break;
    case DType::U64: put(dst, as_u64()); break;
    case DType::F16: put(dst, as_f16().bits); break;
    case DType::BF16: put(dst, as_bf16().bits); break;
    case DType::F32: put(dst, as_f32()); break;
    case DType::F64: put(dst, real); break;
    case DType::C64: {
      const float parts[2] = {as_f32(), static_cast<float>(imag)};
      std::memcpy(dst, parts, sizeof parts);
      break;
    }
    case DType::C128: {
      const double parts[2] = {real, imag};
      std::memcpy(dst, parts, sizeof parts);
      break;
    }
  }
}

Scalar Scalar::load(DType dtype, const void* src) {
  switch (dtype) {
    case DType::Bool: return of_bool(get<uint8_t>(src) != 0);
    case DType::I8: return of_int(get<int8_t>(src));
    case DType::I16: return of_int(get<int16_t>(src));
    case DType::I32: return of_int(get<int32_t>(src));
    case DType::I64: return of_int(get<int64_t>(src));
    case DType::U8: return of_uint(get<uint8_t>(src));
    case DType::U16: return of_uint(get<uint16_t>(src));
    case DType::U32: return of_uint(get<uint32_t>(src));
    case DType::U64: return of_uint(get<uint64_t>(src));
    case DType::F16: return of_float(f16::from_bits(get<uint16_t>(src)).to_float());
    case DType::BF16: return of_float(bf16::from_bits(get<uint16_t>(src)).to_float());
    case DType::F32: return of_float(get<float>(src));
    case DType::F64: return of_float(get<double>(src));
    case DType::C64: {
      float parts[2];
      std::memcpy(parts, src, sizeof parts);
      return of_complex(parts[0], parts[1]);
    }
    case DType::C128: {
      double parts[2];
      std::memcpy(parts, src, sizeof parts);
      return of_complex(parts[0], parts[1]);
    }
  }
  return Scalar{};
}

std::string Scalar::to_string() const {
  switch (kind) {
    case Kind::Bool: return b ? "true" : "false";
    case Kind::Int: return std::to_string(i);
    case Kind::UInt: return std::to_string(u);
    case Kind::Float: return format_double(re);
    case Kind::Complex: {
      // Appended piecewise: GCC 12 -O3 reports a false -Wrestrict on the
      // chained operator+ form.
      std::string out = "[";
      out += format_double(re);
      out += ", ";
      out += format_double(im);
      out += "]";
      return out;
    }
  }
  return "?";
}

bool operator==(const Scalar& a, const Scalar& b) {
  if (a.kind != b.kind) return false;
  auto same_bits = [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; };
  switch (a.kind) {
    case Scalar::Kind::Bool: return a.b == b.b;
    case Scalar::Kind::Int: return a.i == b.i;
    case Scalar::Kind::UInt: return a.u == b.u;
    case Scalar::Kind::Float: return same_bits(a.re, b.re);
    case Scalar::Kind::Complex: return same_bits(a.re, b.re) && same_bits(a.im, b.im);
  }
  return false;
}

}  // namespace tenact
