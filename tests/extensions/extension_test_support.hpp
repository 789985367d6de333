// Helpers of the built-in module's tests: running a family the way an
// engine does (infer, prepare_host, the kernel), a HostParallel that
// splits over real threads, fixture files (tests/fixtures/
// gen_builtin_extensions.py) and tensors from values. Test-only; inline
// so that several test files (one unity batch) can include it.
#pragma once

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/extension.hpp"
#include "core/half.hpp"
#include "core/tensor_io.hpp"
#include "extensions/builtin_extensions.hpp"
#include "tests/support/fixture_tensors.hpp"

namespace tenact::ext_test {

/// The family called `name` (the test fails when there is none).
inline const ExtensionFamily& family(const std::string& name) {
  for (const ExtensionFamilyPtr& f : builtin_extension_families())
    if (f->name == name) return *f;
  FAIL("no built-in family " << name);
  throw 0;  // unreachable
}

inline ValueType type_of(const HostTensor& t) {
  ValueType v{t.dtype(), {}};
  for (int64_t d : t.shape()) v.shape.push_back(ShapeExtent::exact(DimExpr::constant(d)));
  return v;
}

inline std::vector<ValueType> types_of(const std::vector<HostTensor>& inputs) {
  std::vector<ValueType> types;
  for (const HostTensor& t : inputs) types.push_back(type_of(t));
  return types;
}

/// Splits every range into chunks of `factor` x grain indices (the last
/// shorter) and runs them on `threads` threads, the calling one included.
class ThreadedParallel final : public HostParallel {
 public:
  ThreadedParallel(int threads, int64_t factor) : threads_(threads), factor_(factor) {}
  void for_range(int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)>& body) override {
    calls.fetch_add(1);
    const int64_t chunk = std::max<int64_t>(1, grain * factor_);
    std::atomic<int64_t> next{0};
    auto work = [&] {
      for (int64_t b; (b = next.fetch_add(chunk)) < n;) body(b, std::min(n, b + chunk));
    };
    std::vector<std::thread> pool;
    for (int i = 1; i < threads_; ++i) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
  }
  std::atomic<int> calls{0};

 private:
  int threads_;
  int64_t factor_;
};

/// Infers, prepares and runs one op of `name` on `inputs`.
inline Result<std::vector<HostTensor>> run_op(const std::string& name, const std::string& attrs,
                                              const std::vector<HostTensor>& inputs,
                                              HostParallel* parallel = nullptr) {
  const ExtensionFamily& f = family(name);
  const std::vector<ValueType> operands = types_of(inputs);
  TENACT_ASSIGN_OR_RETURN(std::vector<ValueType> results, f.infer(operands, attrs));
  const ExtensionAttrs op{name, attrs};
  const ExtensionPrepareCall call{op, operands, results, "cpu", ""};
  TENACT_ASSIGN_OR_RETURN(HostExtensionKernel kernel, f.prepare_host(call));
  const SymbolBindings symbols;
  return kernel(HostKernelArgs{inputs, results, symbols, parallel});
}

/// run_op's one result (the test fails on an error).
inline HostTensor run_ok(const std::string& name, const std::string& attrs,
                         const std::vector<HostTensor>& inputs, HostParallel* parallel = nullptr) {
  auto r = run_op(name, attrs, inputs, parallel);
  if (!r.ok()) FAIL(name << " " << attrs << ": " << r.error().to_string());
  REQUIRE(r->size() == 1);
  return r.value()[0];
}

// -- values -----------------------------------------------------------------------

/// Element i (row-major) of a float tensor of any strides, as a double.
inline double value_at(const HostTensor& t, int64_t i) {
  int64_t off = t.offset(), rest = i;
  for (size_t a = t.rank(); a-- > 0;) {
    off += (rest % t.shape()[a]) * t.strides()[a];
    rest /= t.shape()[a];
  }
  const std::byte* p = t.buffer()->data() + off * static_cast<int64_t>(size_of(t.dtype()));
  uint16_t h;
  float f;
  double d;
  switch (t.dtype()) {
    case DType::F16: std::memcpy(&h, p, 2); return f16::from_bits(h).to_float();
    case DType::BF16: std::memcpy(&h, p, 2); return bf16::from_bits(h).to_float();
    case DType::F32: std::memcpy(&f, p, 4); return f;
    case DType::F64: std::memcpy(&d, p, 8); return d;
    default: FAIL("not a float tensor"); return 0;
  }
}

/// A dense tensor of `dtype` and `shape` from values (rounded once).
inline HostTensor tensor_of(DType dtype, std::vector<int64_t> shape, const std::vector<double>& v) {
  auto t = Tensor::zeros(dtype, std::move(shape));
  REQUIRE(t.ok());
  REQUIRE(static_cast<size_t>(t->element_count()) == v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    std::byte* p = t->data() + i * size_of(dtype);
    const float f = static_cast<float>(v[i]);
    uint16_t h;
    switch (dtype) {
      case DType::F16: h = f16(v[i]).bits; std::memcpy(p, &h, 2); break;
      case DType::BF16: h = bf16(v[i]).bits; std::memcpy(p, &h, 2); break;
      case DType::F32: std::memcpy(p, &f, 4); break;
      case DType::F64: std::memcpy(p, &v[i], 8); break;
      default: FAIL("not a float dtype");
    }
  }
  return t.value();
}

/// Deterministic pseudo-random values in [-scale, scale].
inline std::vector<double> noise(size_t n, double scale, uint64_t seed) {
  std::vector<double> v(n);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (double& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = scale * (static_cast<double>(s >> 11) * 0x1p-53 * 2.0 - 1.0);
  }
  return v;
}

inline constexpr DType kFloatTypes[] = {DType::F16, DType::BF16, DType::F32, DType::F64};

// -- fixtures ---------------------------------------------------------------------

/// The folder of the built-in module's fixtures, with a final '/'.
inline std::string fixture_dir() { return test_fixtures::fixture_dir("builtin_extensions"); }
using test_fixtures::load;
using test_fixtures::make_view;
using test_fixtures::parse_ints;

}  // namespace tenact::ext_test
