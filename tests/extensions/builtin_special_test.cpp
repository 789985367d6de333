// The built-in module's kernels on what the NumPy fixtures do not reach:
// empty extents, empty `dimensions`, signed zeros and limits, results that
// do not depend on the input's strides, on the thread split (inputs large
// enough to be split) or on the instruction set the f32 loops were
// compiled for.
#include "tests/extensions/extension_test_support.hpp"

#include "extensions/builtin_attrs.hpp"
#include "extensions/host_kernels.hpp"

namespace tenact {
namespace {

using namespace ext_test;

/// One op of each family, on x of rank 3 (and its parameters).
struct Op {
  std::string family, attrs;
  int parameters;  // scale (and bias) of x's shape restricted to `axes`
  std::vector<int64_t> axes;
};

std::vector<Op> ops_over(const std::vector<int64_t>& axes) {
  std::string list;
  for (int64_t a : axes) list += (list.empty() ? "" : ",") + std::to_string(a);
  const std::string dims = R"({"dimensions":[)" + list + "]}";
  std::vector<Op> ops{{"tenact.layer_norm", dims, 0, axes}, {"tenact.layer_norm", dims, 2, axes},
                      {"tenact.rms_norm", dims, 0, axes},   {"tenact.rms_norm", dims, 1, axes}};
  if (axes.size() == 1) {
    const std::string dim = R"({"dimension":)" + list + "}";
    ops.push_back({"tenact.softmax", dim, 0, axes});
    ops.push_back({"tenact.log_softmax", dim, 0, axes});
  }
  return ops;
}

std::vector<HostTensor> inputs_for(const Op& op, DType t, const std::vector<int64_t>& shape, uint64_t seed,
                                   double scale = 3.0) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<HostTensor> in{tensor_of(t, shape, noise(static_cast<size_t>(n), scale, seed))};
  std::vector<int64_t> pshape;
  int64_t pn = 1;
  for (int64_t a : op.axes) {
    pshape.push_back(shape[static_cast<size_t>(a)]);
    pn *= shape[static_cast<size_t>(a)];
  }
  for (int i = 0; i < op.parameters; ++i)
    in.push_back(tensor_of(t, pshape, noise(static_cast<size_t>(pn), 1.0, seed + 1 + i)));
  return in;
}

TEST_CASE("an axis of extent 0 gives an empty result of x's dtype and shape", "[extensions]") {
  for (DType t : kFloatTypes)
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{0, 4, 5}, {3, 0, 5}, {3, 4, 0}})
      for (int64_t axis = 0; axis < 3; ++axis)
        for (const Op& op : ops_over({axis})) {
          INFO(op.family << " " << op.attrs << " " << op.parameters << " " << to_string(t));
          const HostTensor y = run_ok(op.family, op.attrs, inputs_for(op, t, shape, 1));
          CHECK(y.dtype() == t);
          CHECK(y.shape() == shape);
          CHECK(y.element_count() == 0);
        }
  for (DType t : kFloatTypes) {
    const HostTensor empty = Tensor::zeros(t, {2, 0}).value();
    CHECK(run_ok("tenact.gelu", "{}", {empty}).shape() == std::vector<int64_t>{2, 0});
  }
}

TEST_CASE("empty dimensions reduce over no axes: layer_norm gives 0, rms_norm x/sqrt(x*x+eps)",
          "[extensions]") {
  // Decision (docs/program-format.md is silent): each group is one element,
  // so the mean is x, the variance 0 and layer_norm (x - x)/sqrt(0 + eps)
  // is +0 for finite x and NaN for infinite or NaN x; rms_norm is
  // x/sqrt(x*x + eps), sign(x) * ~1 for |x| >> sqrt(eps).
  for (DType t : kFloatTypes) {
    INFO(to_string(t));
    const HostTensor x = tensor_of(t, {2, 3}, {1.5, -2.0, 0.0, 1e3, NAN, INFINITY});
    const HostTensor ln = run_ok("tenact.layer_norm", R"({"dimensions":[]})", {x});
    for (int64_t i = 0; i < 4; ++i) {
      CHECK(value_at(ln, i) == 0.0);
      CHECK_FALSE(std::signbit(value_at(ln, i)));
    }
    CHECK(std::isnan(value_at(ln, 4)));
    CHECK(std::isnan(value_at(ln, 5)));
    const HostTensor rms = run_ok("tenact.rms_norm", R"({"dimensions":[],"epsilon":0.0})", {x});
    CHECK(value_at(rms, 0) == 1.0);  // 1.5 / sqrt(2.25) exactly
    CHECK(value_at(rms, 1) == -1.0);
    CHECK(std::isnan(value_at(rms, 2)));  // 0 / sqrt(0) with epsilon 0, as written
    CHECK(std::isnan(value_at(rms, 4)));
    const HostTensor scalar = tensor_of(t, {}, {4.0});
    CHECK(value_at(run_ok("tenact.layer_norm", R"({"dimensions":[]})", {scalar}), 0) == 0.0);
    CHECK(value_at(run_ok("tenact.rms_norm", R"({"dimensions":[],"epsilon":0})", {scalar}), 0) == 1.0);
  }
}

TEST_CASE("gelu keeps signed zeros, NaN, and the limits at the infinities", "[extensions][gelu]") {
  for (DType t : kFloatTypes)
    for (const char* attrs : {"{}", R"({"approximate":"tanh"})"}) {
      INFO(to_string(t) << " " << attrs);
      const HostTensor y =
          run_ok("tenact.gelu", attrs, {tensor_of(t, {5}, {-0.0, 0.0, -INFINITY, INFINITY, NAN})});
      CHECK(value_at(y, 0) == 0.0);
      CHECK(std::signbit(value_at(y, 0)));
      CHECK(value_at(y, 1) == 0.0);
      CHECK_FALSE(std::signbit(value_at(y, 1)));
      CHECK(value_at(y, 2) == 0.0);  // the limit, where the formula gives -inf * 0
      CHECK(std::signbit(value_at(y, 2)));
      CHECK(value_at(y, 3) == INFINITY);
      CHECK(std::isnan(value_at(y, 4)));
    }
}

TEST_CASE("softmax of a single element is 1 and log_softmax 0, whatever the value", "[extensions][softmax]") {
  for (DType t : kFloatTypes) {
    const HostTensor x = tensor_of(t, {4, 1}, {-3.0, 0.0, 6e4, -6e4});
    const HostTensor s = run_ok("tenact.softmax", R"({"dimension":1})", {x});
    const HostTensor l = run_ok("tenact.log_softmax", R"({"dimension":1})", {x});
    for (int64_t i = 0; i < 4; ++i) {
      CHECK(value_at(s, i) == 1.0);
      CHECK(value_at(l, i) == 0.0);
    }
  }
}

TEST_CASE("results depend on the values, not on the input's strides", "[extensions]") {
  // x is built transposed (a strided view) and as a dense copy of that view.
  const std::vector<int64_t> base_shape{6, 20, 9};
  const std::vector<int64_t> perm{2, 0, 1};  // view shape [9, 6, 20]
  for (DType t : kFloatTypes)
    for (const std::vector<int64_t>& axes : {std::vector<int64_t>{2}, {0}, {1}, {0, 2}, {1, 2}})
      for (const Op& op : ops_over(axes)) {
        INFO(op.family << " " << op.attrs << " " << to_string(t));
        std::vector<HostTensor> strided = inputs_for(op, t, base_shape, 7);
        strided[0] = strided[0].transposed(perm);
        for (int i = 0; i < op.parameters; ++i) {  // parameters of the view's shape
          std::vector<int64_t> pshape;
          for (int64_t a : axes) pshape.push_back(strided[0].shape()[static_cast<size_t>(a)]);
          int64_t pn = 1;
          for (int64_t d : pshape) pn *= d;
          strided[1 + i] = tensor_of(t, pshape, noise(static_cast<size_t>(pn), 1.0, 40 + i));
        }
        std::vector<HostTensor> dense = strided;
        dense[0] = strided[0].clone().value();
        REQUIRE(dense[0].is_contiguous());
        REQUIRE_FALSE(strided[0].is_contiguous());
        CHECK(run_ok(op.family, op.attrs, strided).bitwise_equal(run_ok(op.family, op.attrs, dense)));
      }
}

TEST_CASE("results are the same bits whatever the thread split", "[extensions]") {
  // Large enough to be split (the kernels stay serial below 2^15 elements of
  // work); rows, column tiles, the transposed path, and a long reduction.
  struct Layout {
    std::vector<int64_t> shape, axes;
  };
  const Layout layouts[] = {{{300, 257}, {1}}, {{257, 300}, {0}}, {{40, 50, 30}, {1}},
                            {{80, 100, 5}, {1}}, {{16, 60, 40}, {0, 2}}, {{4, 70000}, {1}}};
  ThreadedParallel fine(4, 1), coarse(3, 7);
  for (DType t : {DType::BF16, DType::F32, DType::F64})
    for (const Layout& l : layouts)
      for (const Op& op : ops_over(l.axes)) {
        INFO(op.family << " " << op.attrs << " " << op.parameters << " " << to_string(t));
        const auto in = inputs_for(op, t, l.shape, 11);
        const HostTensor serial = run_ok(op.family, op.attrs, in);
        const int before = fine.calls.load();
        CHECK(run_ok(op.family, op.attrs, in, &fine).bitwise_equal(serial));
        CHECK(fine.calls.load() > before);  // it was split
        CHECK(run_ok(op.family, op.attrs, in, &coarse).bitwise_equal(serial));
      }
  for (DType t : kFloatTypes)
    for (const char* attrs : {"{}", R"({"approximate":"tanh"})"}) {
      const HostTensor x = tensor_of(t, {100003}, noise(100003, 8.0, 5));
      CHECK(run_ok("tenact.gelu", attrs, {x}, &fine).bitwise_equal(run_ok("tenact.gelu", attrs, {x})));
    }
}

TEST_CASE("every instruction set's f32 and f64 loops give the baseline's bits", "[extensions]") {
  using builtin::LoopIsa;
  const auto kernel_for = [](const Op& op, const std::vector<HostTensor>& in, LoopIsa isa) {
    const std::vector<ValueType> types = types_of(in);
    const builtin::BuiltinAttrs attrs = [&] {
      const auto kind = op.family == "tenact.softmax"      ? builtin::BuiltinOp::Softmax
                        : op.family == "tenact.log_softmax" ? builtin::BuiltinOp::LogSoftmax
                        : op.family == "tenact.layer_norm"  ? builtin::BuiltinOp::LayerNorm
                        : op.family == "tenact.rms_norm"    ? builtin::BuiltinOp::RmsNorm
                                                            : builtin::BuiltinOp::Gelu;
      auto a = builtin::check_builtin_op(kind, types, op.attrs);
      REQUIRE(a.ok());
      return a.value();
    }();
    const SymbolBindings symbols;
    auto r = builtin::make_host_kernel(attrs, isa)(HostKernelArgs{in, types, symbols, nullptr});
    REQUIRE(r.ok());
    return r.value()[0];
  };
  std::vector<double> special = noise(3 * 47 * 41, 30.0, 3);
  for (size_t i = 0; i < special.size(); i += 13) special[i] = i % 3 ? -1e-41 : 0.0;
  special[100] = NAN;
  special[2000] = INFINITY;
  special[3000] = -INFINITY;
  int isas = 0;
  for (LoopIsa isa : {LoopIsa::Avx2, LoopIsa::Avx512}) {
    if (!builtin::cpu_runs(isa)) continue;
    ++isas;
    for (DType dtype : {DType::F32, DType::F64}) {
      INFO("isa " << builtin::to_string(isa) << ", " << to_string(dtype));
      for (const std::vector<int64_t>& axes : {std::vector<int64_t>{2}, {0}, {1}, {0, 2}})
        for (Op op : ops_over(axes)) {
          INFO(op.family << " " << op.attrs << " " << op.parameters);
          auto in = inputs_for(op, dtype, {3, 47, 41}, 9);
          in[0] = tensor_of(dtype, {3, 47, 41}, special);
          CHECK(kernel_for(op, in, isa).bitwise_equal(kernel_for(op, in, LoopIsa::Baseline)));
        }
      std::vector<double> wide = noise(5000, 12.0, 4);
      wide.insert(wide.end(), special.begin(), special.end());
      const HostTensor x = tensor_of(dtype, {static_cast<int64_t>(wide.size())}, wide);
      for (const char* attrs : {"{}", R"({"approximate":"tanh"})"})
        CHECK(kernel_for(Op{"tenact.gelu", attrs, 0, {}}, {x}, isa)
                  .bitwise_equal(kernel_for(Op{"tenact.gelu", attrs, 0, {}}, {x}, LoopIsa::Baseline)));
    }
  }
  WARN("instruction sets compared against the baseline: " << isas);
}

}  // namespace
}  // namespace tenact
