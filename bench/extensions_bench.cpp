// Figures for the built-in module's host kernels (extensions/): ns per
// element of x, one thread, for each family on f32 rows (the last axis),
// f32 column tiles (the first axis), bf16 and f64 rows, with the f32 and
// f64 loops of every instruction set this CPU runs, next to a STREAM-style scale loop
// (y = 0.5 * x, f32, the same element count) measured in the same run: the
// ratio column is a family's f32-rows time over that loop's, the memory
// bound a one-pass kernel cannot beat. Prints figures, not pass/fail.
//
//   extensions_bench [--rows R] [--cols C] [--repeat N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/half.hpp"
#include "extensions/builtin_attrs.hpp"
#include "extensions/host_kernels.hpp"

namespace {

using namespace tenact;
using namespace tenact::builtin;

HostTensor filled(DType dtype, std::vector<int64_t> shape) {
  HostTensor t = Tensor::zeros(dtype, std::move(shape)).value();
  uint64_t s = 88172645463325252ull;
  for (int64_t i = 0; i < t.element_count(); ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const double v = (static_cast<double>(s >> 11) * 0x1p-53 - 0.5) * 8.0;
    std::byte* p = t.data() + i * static_cast<int64_t>(size_of(dtype));
    if (dtype == DType::F32) {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
    } else if (dtype == DType::F64) {
      std::memcpy(p, &v, 8);
    } else {
      const uint16_t b = bf16(static_cast<float>(v)).bits;
      std::memcpy(p, &b, 2);
    }
  }
  return t;
}

ValueType type_of(const HostTensor& t) {
  ValueType v{t.dtype(), {}};
  for (int64_t d : t.shape()) v.shape.push_back(ShapeExtent::exact(DimExpr::constant(d)));
  return v;
}

/// Best of `repeat` runs, in ns per element of x.
double time_op(BuiltinOp op, const std::string& attrs, const std::vector<HostTensor>& in, LoopIsa isa,
               int repeat) {
  std::vector<ValueType> types;
  for (const HostTensor& t : in) types.push_back(type_of(t));
  const auto checked = check_builtin_op(op, types, attrs);
  if (!checked.ok()) {
    std::fprintf(stderr, "%s\n", checked.error().to_string().c_str());
    std::exit(1);
  }
  const HostExtensionKernel kernel = make_host_kernel(checked.value(), isa);
  const SymbolBindings symbols;
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = kernel(HostKernelArgs{in, types, symbols, nullptr});
    const auto t1 = std::chrono::steady_clock::now();
    if (!out.ok()) std::exit(1);
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  return best / static_cast<double>(in[0].element_count());
}

/// Best of `repeat` runs of y[i] = 0.5f * x[i] over `n` floats, ns per element.
double time_scale_loop(int64_t n, int repeat) {
  std::vector<float> x(static_cast<size_t>(n), 1.25f), y(static_cast<size_t>(n));
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    float* __restrict yp = y.data();
    const float* __restrict xp = x.data();
    for (int64_t i = 0; i < n; ++i) yp[i] = 0.5f * xp[i];
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  volatile float sink = y[static_cast<size_t>(n) / 2];
  (void)sink;
  return best / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 2048, cols = 1024;
  int repeat = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--rows") rows = std::atoll(argv[i + 1]);
    else if (a == "--cols") cols = std::atoll(argv[i + 1]);
    else if (a == "--repeat") repeat = std::atoi(argv[i + 1]);
  }
  struct Case {
    const char* label;
    BuiltinOp op;
    std::string attrs_last, attrs_first;
    int parameters;
  };
  const Case cases[] = {
      {"softmax", BuiltinOp::Softmax, R"({"dimension":1})", R"({"dimension":0})", 0},
      {"log_softmax", BuiltinOp::LogSoftmax, R"({"dimension":1})", R"({"dimension":0})", 0},
      {"layer_norm+affine", BuiltinOp::LayerNorm, R"({"dimensions":[1]})", R"({"dimensions":[0]})", 2},
      {"rms_norm+scale", BuiltinOp::RmsNorm, R"({"dimensions":[1]})", R"({"dimensions":[0]})", 1},
      {"gelu", BuiltinOp::Gelu, "{}", "", 0},
      {"gelu tanh", BuiltinOp::Gelu, R"({"approximate":"tanh"})", "", 0},
  };
  std::printf("ns per element, x [%lld, %lld], one thread, best of %d\n", static_cast<long long>(rows),
              static_cast<long long>(cols), repeat);
  const double scale_ns = time_scale_loop(rows * cols, repeat);
  std::printf("STREAM-style scale loop (f32, y = 0.5 * x): %.3f ns per element\n", scale_ns);
  std::printf("%-18s %-9s %10s %10s %10s %10s %12s\n", "family", "isa", "f32 rows", "f32 cols", "bf16 rows",
              "f64 rows", "rows/scale");
  for (LoopIsa isa : {LoopIsa::Baseline, LoopIsa::Avx2, LoopIsa::Avx512}) {
    if (!cpu_runs(isa)) continue;
    for (const Case& c : cases) {
      const auto inputs = [&](DType t, bool first) {
        std::vector<HostTensor> in{filled(t, {rows, cols})};
        for (int p = 0; p < c.parameters; ++p) in.push_back(filled(t, {first ? rows : cols}));
        return in;
      };
      const double f32_rows = time_op(c.op, c.attrs_last, inputs(DType::F32, false), isa, repeat);
      const double f32_cols = c.attrs_first.empty()
                                  ? 0.0
                                  : time_op(c.op, c.attrs_first, inputs(DType::F32, true), isa, repeat);
      const double bf16_rows = time_op(c.op, c.attrs_last, inputs(DType::BF16, false), isa, repeat);
      const double f64_rows = time_op(c.op, c.attrs_last, inputs(DType::F64, false), isa, repeat);
      std::printf("%-18s %-9s %10.3f %10.3f %10.3f %10.3f %11.2fx\n", c.label,
                  std::string{to_string(isa)}.c_str(), f32_rows, f32_cols, bf16_rows, f64_rows,
                  f32_rows / scale_ns);
    }
  }
  return 0;
}
