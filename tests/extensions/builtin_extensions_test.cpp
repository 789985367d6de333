// The built-in module's families as a whole: the list, result inference
// (dtype and shape, symbolic shapes included), every inference error with
// the words its message must carry, prepare's errors, and the work
// estimates.
#include "tests/extensions/extension_test_support.hpp"

namespace tenact {
namespace {

using namespace ext_test;

ValueType vt(DType dtype, Shape shape) { return ValueType{dtype, std::move(shape)}; }

Result<std::vector<ValueType>> infer(const std::string& name, std::vector<ValueType> operands,
                                     const std::string& attrs) {
  return family(name).infer(operands, attrs);
}

/// The inference error's code, and each of `words` in its message.
void expect_error(const std::string& name, std::vector<ValueType> operands, const std::string& attrs,
                  ErrorCode code, std::vector<std::string> words) {
  INFO(name << " " << attrs);
  const auto r = infer(name, std::move(operands), attrs);
  REQUIRE_FALSE(r.ok());
  INFO("message: " << r.error().message());
  CHECK(r.error().code() == code);
  for (const std::string& w : words) CHECK(r.error().message().find(w) != std::string::npos);
}

const Shape kShape = exact_shape({4, 5, 6});

TEST_CASE("the module lists its five families in the format's order, each with every hook",
          "[extensions]") {
  const auto& families = builtin_extension_families();
  REQUIRE(families.size() == 5);
  const char* names[] = {"tenact.softmax", "tenact.log_softmax", "tenact.layer_norm",
                         "tenact.rms_norm", "tenact.gelu"};
  for (size_t i = 0; i < 5; ++i) {
    CHECK(families[i]->name == names[i]);
    CHECK(families[i]->infer);
    CHECK(families[i]->prepare_host);
    CHECK(families[i]->estimate);
  }
  CHECK(&builtin_extension_families() == &families);  // made once
  const ExtensionRegistry registry = builtin_extension_registry();
  CHECK(registry.families().size() == 5);
}

TEST_CASE("inference gives x's dtype and shape, symbolic extents included", "[extensions]") {
  const Shape sym{ShapeExtent::exact(DimExpr::symbol("B")), ShapeExtent::upper_bound(DimExpr::constant(7)),
                  ShapeExtent::exact(DimExpr::constant(16))};
  for (DType t : kFloatTypes) {
    const auto check = [&](const std::string& name, std::vector<ValueType> ops, const std::string& attrs) {
      INFO(name << " " << to_string(t));
      const auto r = infer(name, ops, attrs);
      REQUIRE(r.ok());
      REQUIRE(r->size() == 1);
      CHECK((*r)[0] == ops[0]);
    };
    check("tenact.softmax", {vt(t, sym)}, R"({"dimension":2})");
    check("tenact.log_softmax", {vt(t, sym)}, R"({"dimension":0})");
    check("tenact.layer_norm", {vt(t, sym)}, R"({"dimensions":[1,2]})");
    check("tenact.layer_norm", {vt(t, sym), vt(t, {sym[2]}), vt(t, {sym[2]})},
          R"({"dimensions":[2],"epsilon":0.001})");
    check("tenact.rms_norm", {vt(t, sym), vt(t, {sym[0], sym[2]})}, R"({"dimensions":[0,2]})");
    check("tenact.rms_norm", {vt(t, {})}, R"({"dimensions":[]})");
    check("tenact.gelu", {vt(t, sym)}, "{}");
    check("tenact.gelu", {vt(t, {})}, R"({"approximate":"tanh"})");
  }
}

TEST_CASE("attribute errors name the attribute and what is wrong with it", "[extensions]") {
  const std::vector<ValueType> x{vt(DType::F32, kShape)};
  const std::string sm = "tenact.softmax", ln = "tenact.layer_norm", rms = "tenact.rms_norm",
                    gelu = "tenact.gelu";
  expect_error(sm, x, R"({"dimension":1,"dimesion":2})", ErrorCode::Schema,
               {"unknown attribute 'dimesion'", "'dimension'"});
  expect_error(ln, x, R"({"dimensions":[1],"epsilon":1e-5,"eps":1})", ErrorCode::Schema,
               {"unknown attribute 'eps'", "'dimensions', 'epsilon'"});
  expect_error(gelu, x, R"({"approximation":"tanh"})", ErrorCode::Schema,
               {"unknown attribute 'approximation'", "'approximate'"});
  expect_error(sm, x, "{}", ErrorCode::Schema, {"missing attribute 'dimension'"});
  expect_error(ln, x, R"({"epsilon":0.1})", ErrorCode::Schema, {"missing attribute 'dimensions'"});
  expect_error(sm, x, R"({"dimension":1.0})", ErrorCode::Schema, {"'dimension'", "integer", "1.0"});
  expect_error(sm, x, R"({"dimension":"1"})", ErrorCode::Schema, {"'dimension'", "integer"});
  expect_error(sm, x, R"({"dimension":3})", ErrorCode::InvalidAttribute,
               {"'dimension'", "3", "out of range", "rank 3"});
  expect_error(sm, x, R"({"dimension":-1})", ErrorCode::InvalidAttribute, {"'dimension'", "-1", "out of range"});
  expect_error(sm, x, R"({"dimension":18446744073709551615})", ErrorCode::InvalidAttribute,
               {"'dimension'", "out of range"});
  expect_error(ln, x, R"({"dimensions":1})", ErrorCode::Schema, {"'dimensions'", "list of integers"});
  expect_error(ln, x, R"({"dimensions":[0,"1"]})", ErrorCode::Schema, {"'dimensions'", "entry 1", "integer"});
  expect_error(ln, x, R"({"dimensions":[0,5]})", ErrorCode::InvalidAttribute,
               {"'dimensions'", "entry 1", "5", "out of range"});
  expect_error(ln, x, R"({"dimensions":[2,1]})", ErrorCode::InvalidAttribute,
               {"'dimensions'", "increasing", "1 follows 2"});
  expect_error(rms, x, R"({"dimensions":[1,1]})", ErrorCode::InvalidAttribute,
               {"'dimensions'", "distinct", "1 follows 1"});
  expect_error(ln, x, R"({"dimensions":[1],"epsilon":-1e-5})", ErrorCode::InvalidAttribute,
               {"'epsilon'", "negative"});
  // JSON has no infinite numbers: 1e999 is refused as text, a dumped
  // infinity ("null") by its type.
  expect_error(rms, x, R"({"dimensions":[1],"epsilon":1e999})", ErrorCode::Parse, {"not valid JSON"});
  expect_error(rms, x, R"({"dimensions":[1],"epsilon":null})", ErrorCode::Schema,
               {"'epsilon'", "number", "null"});
  expect_error(rms, x, R"({"dimensions":[1],"epsilon":"small"})", ErrorCode::Schema,
               {"'epsilon'", "number"});
  expect_error(gelu, x, R"({"approximate":"fast"})", ErrorCode::InvalidAttribute,
               {"'approximate'", "\"none\" or \"tanh\"", "fast"});
  expect_error(gelu, x, R"({"approximate":true})", ErrorCode::Schema, {"'approximate'", "string"});
  expect_error(gelu, x, "[1]", ErrorCode::Schema, {"attributes", "JSON object"});
  expect_error(gelu, x, "{\"approximate\":", ErrorCode::Parse, {"not valid JSON"});
}

TEST_CASE("operand errors name the operand and what is wrong with it", "[extensions]") {
  const ValueType x = vt(DType::F32, kShape);
  const ValueType s56 = vt(DType::F32, exact_shape({5, 6}));
  expect_error("tenact.softmax", {}, R"({"dimension":0})", ErrorCode::Schema, {"expects 1 operand", "got 0"});
  expect_error("tenact.gelu", {x, x}, "{}", ErrorCode::Schema, {"expects 1 operand", "got 2"});
  expect_error("tenact.layer_norm", {x, s56}, R"({"dimensions":[1,2]})", ErrorCode::Schema,
               {"1 operand [x] or 3 operands [x, scale, bias]", "got 2"});
  expect_error("tenact.rms_norm", {x, s56, s56}, R"({"dimensions":[1,2]})", ErrorCode::Schema,
               {"1 operand [x] or 2 operands [x, scale]", "got 3"});
  for (DType bad : {DType::I32, DType::Bool, DType::C64, DType::U8})
    expect_error("tenact.gelu", {vt(bad, kShape)}, "{}", ErrorCode::TypeMismatch,
                 {"x (operand 0)", std::string{to_string(bad)}, "f16, bf16, f32 or f64"});
  expect_error("tenact.layer_norm", {x, vt(DType::F16, exact_shape({5, 6})), s56},
               R"({"dimensions":[1,2]})", ErrorCode::TypeMismatch,
               {"scale (operand 1)", "f16", "x has f32"});
  expect_error("tenact.layer_norm", {x, s56, vt(DType::F64, exact_shape({5, 6}))},
               R"({"dimensions":[1,2]})", ErrorCode::TypeMismatch, {"bias (operand 2)", "f64"});
  expect_error("tenact.layer_norm", {x, s56, vt(DType::F32, exact_shape({6, 5}))},
               R"({"dimensions":[1,2]})", ErrorCode::ShapeMismatch,
               {"bias (operand 2)", "[6, 5]", "restricted to dimensions [1, 2]", "[5, 6]"});
  expect_error("tenact.rms_norm", {x, vt(DType::F32, exact_shape({30}))}, R"({"dimensions":[1,2]})",
               ErrorCode::ShapeMismatch, {"scale (operand 1)", "[30]", "[5, 6]"});
  // Symbolic extents are compared as expressions: B and N differ.
  const Shape sym{ShapeExtent::exact(DimExpr::symbol("B")), ShapeExtent::exact(DimExpr::symbol("N"))};
  expect_error("tenact.rms_norm", {vt(DType::F32, sym), vt(DType::F32, {sym[0]})}, R"({"dimensions":[1]})",
               ErrorCode::ShapeMismatch, {"scale (operand 1)", "[B]", "[N]", "symbolic"});
}

TEST_CASE("prepare checks what inference checks, and the kernel refuses inputs it was not prepared for",
          "[extensions]") {
  const ExtensionFamily& f = family("tenact.softmax");
  const std::vector<ValueType> ops{vt(DType::F32, exact_shape({2, 3}))};
  const ExtensionAttrs bad{"tenact.softmax", R"({"dimension":2})"};
  const auto r = f.prepare_host(ExtensionPrepareCall{bad, ops, ops, "cpu", ""});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::InvalidAttribute);

  const ExtensionAttrs good{"tenact.softmax", R"({"dimension":1})"};
  const auto kernel = f.prepare_host(ExtensionPrepareCall{good, ops, ops, "cpu", ""});
  REQUIRE(kernel.ok());
  const SymbolBindings symbols;
  const std::vector<HostTensor> rank1{tensor_of(DType::F32, {3}, {1, 2, 3})};
  const auto wrong_rank = (*kernel)(HostKernelArgs{rank1, ops, symbols, nullptr});
  REQUIRE_FALSE(wrong_rank.ok());
  CHECK(wrong_rank.error().code() == ErrorCode::InputMismatch);
  const std::vector<HostTensor> ints{Tensor::zeros(DType::I32, {2, 3}).value()};
  const auto wrong_type = (*kernel)(HostKernelArgs{ints, ops, symbols, nullptr});
  REQUIRE_FALSE(wrong_type.ok());
  CHECK(wrong_type.error().code() == ErrorCode::InputMismatch);
}

ExtensionWork estimate(const std::string& name, const std::string& attrs,
                       const std::vector<std::vector<int64_t>>& shapes, DType dtype = DType::F32) {
  std::vector<ValueExtent> ops;
  for (const auto& s : shapes) ops.push_back(ValueExtent{dtype, s});
  const ExtensionAttrs op{name, attrs};
  return family(name).estimate(ExtensionWorkCall{op, ops, std::span<const ValueExtent>(ops.data(), 1)});
}

TEST_CASE("work estimates count the loops' arithmetic and the bytes read and written", "[extensions]") {
  const std::vector<int64_t> x{64, 128};
  // softmax: 26 operations an element, 2 a row; f32 in and out.
  auto w = estimate("tenact.softmax", R"({"dimension":1})", {x});
  CHECK(w.ops == 64u * 128 * 26 + 64 * 2);
  CHECK(w.bytes == 2u * 64 * 128 * 4);
  w = estimate("tenact.log_softmax", R"({"dimension":0})", {x});
  CHECK(w.ops == 64u * 128 * 27 + 128 * 31);
  const std::vector<int64_t> p{128};
  w = estimate("tenact.layer_norm", R"({"dimensions":[1]})", {x, p, p});
  CHECK(w.ops == 64u * 128 * 8 + 64 * 4);
  CHECK(w.bytes == (2u * 64 * 128 + 2 * 128) * 4);
  w = estimate("tenact.rms_norm", R"({"dimensions":[1]})", {x}, DType::BF16);
  CHECK(w.ops == 64u * 128 * 3 + 64 * 3);
  CHECK(w.bytes == 2u * 64 * 128 * 2 + 16u * 64 * 128);  // + the f32 blocks
  CHECK(estimate("tenact.gelu", "{}", {x}).ops == 64u * 128 * 49);
  CHECK(estimate("tenact.gelu", R"({"approximate":"tanh"})", {x}).ops == 64u * 128 * 33);
  // An op validation would refuse: one operation an element.
  CHECK(estimate("tenact.softmax", R"({"dimension":5})", {x}).ops == 64u * 128);
  CHECK(estimate("tenact.softmax", R"({"dimension":1})", {{0, 128}}).ops == 0);
}

}  // namespace
}  // namespace tenact
