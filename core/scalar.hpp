// A single value as written in a document (a JSON number, bool, the strings
// "nan"/"inf"/"-inf", or a [re, im] pair) before or after it meets a dtype.
#pragma once

#include <complex>
#include <cstdint>
#include <string>

#include "core/dtype.hpp"
#include "core/error.hpp"

namespace tenact {

struct Scalar {
  enum class Kind : uint8_t { Bool, Int, UInt, Float, Complex };
  Kind kind = Kind::Int;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double re = 0;  // Float and Complex
  double im = 0;  // Complex

  static Scalar of_bool(bool v) { Scalar s; s.kind = Kind::Bool; s.b = v; return s; }
  static Scalar of_int(int64_t v) { Scalar s; s.kind = Kind::Int; s.i = v; return s; }
  static Scalar of_uint(uint64_t v) { Scalar s; s.kind = Kind::UInt; s.u = v; return s; }
  static Scalar of_float(double v) { Scalar s; s.kind = Kind::Float; s.re = v; return s; }
  static Scalar of_complex(double r, double i) {
    Scalar s; s.kind = Kind::Complex; s.re = r; s.im = i; return s;
  }

  /// Checks that the value is representable as `dtype` as a literal: bools
  /// only for bool; integers within range for integer types (no fraction);
  /// any real for floats (rounded to nearest even); reals or pairs for
  /// complex. The error names the value and the dtype.
  Status check_fits(DType dtype) const;

  /// Writes the value converted to `dtype` into `dst` (size_of(dtype)
  /// bytes). Precondition: check_fits(dtype) succeeded.
  void store(DType dtype, void* dst) const;

  /// Reads one element of `dtype` from `src`.
  static Scalar load(DType dtype, const void* src);

  /// JSON-ish text: "true", "3", "2.5", "nan", "[1, 2]".
  std::string to_string() const;

  friend bool operator==(const Scalar& a, const Scalar& b);
};

}  // namespace tenact
