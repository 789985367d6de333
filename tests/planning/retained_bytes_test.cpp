// Retained-bytes accounting: hand-derived sizes, monotone in program size,
// and overflow reported as an error, never wrapped.
#include <catch2/catch.hpp>

#include "core/program_json.hpp"
#include "planning/retained_bytes.hpp"

using namespace tenact;

namespace {

SemanticProgram chain(int negates) {
  std::string ops;
  std::string prev = "x";
  for (int i = 0; i < negates; ++i) {
    const std::string out = "v" + std::to_string(i);
    ops += std::string{i ? ", " : ""} + R"({"op": "negate", "in": [")" + prev + R"("], "out": ")" + out + "\"}";
    prev = out;
  }
  auto p = load_program(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 4]}], "ops": [)" + ops +
                        R"(], "outputs": [")" + prev + "\"]}");
  REQUIRE(p.ok());
  return std::move(*p);
}

uint64_t value(const Result<uint64_t>& r) {
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

TEST_CASE("checked sums and products report overflow instead of wrapping", "[retained_bytes]") {
  CHECK(value(checked_sum({1, 2, 3})) == 6);
  CHECK(value(checked_sum({})) == 0);
  CHECK(value(array_bytes(3, 8)) == 24);
  auto sum = checked_sum({UINT64_MAX, 1});
  REQUIRE_FALSE(sum.ok());
  CHECK(sum.error().code() == ErrorCode::Overflow);
  CHECK(sum.error().message() == "retained-byte accounting overflows 64 bits");
  auto product = array_bytes(UINT64_MAX / 2 + 1, 2);
  REQUIRE_FALSE(product.ok());
  CHECK(product.error().code() == ErrorCode::Overflow);
  CHECK(value(checked_sum({UINT64_MAX - 1, 1})) == UINT64_MAX);
}

TEST_CASE("a byte count keeps its first error", "[retained_bytes]") {
  ByteCount c;
  c.add(10).add_array(uint64_t{1} << 62, 8).add(5);
  auto t = c.total();
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().code() == ErrorCode::Overflow);
  ByteCount d;
  d.add(Result<uint64_t>{Error{ErrorCode::Internal, "first"}}).add(Result<uint64_t>{Error{ErrorCode::Io, "second"}});
  CHECK(d.total().error() == Error{ErrorCode::Internal, "first"});
  ByteCount e;
  e.add(4).add_array(2, 3).add(Result<uint64_t>{uint64_t{5}});
  CHECK(value(e.total()) == 15);
}

TEST_CASE("owned bytes of expressions, shapes and attributes by hand", "[retained_bytes]") {
  CHECK(value(dim_expr_retained_bytes(DimExpr::constant(7))) == 0);
  CHECK(value(dim_expr_retained_bytes(DimExpr::symbol("B"))) == kDimExprNodeBytes + 1);
  const DimExpr bt = DimExpr::symbol("B") * DimExpr::symbol("T");
  CHECK(value(dim_expr_retained_bytes(bt)) == kDimExprNodeBytes + 3);  // "B*T"
  const Shape shape{ShapeExtent::exact(DimExpr::symbol("B")), ShapeExtent::exact(DimExpr::constant(4)),
                    ShapeExtent::unknown()};
  CHECK(value(shape_retained_bytes(shape)) == 3 * sizeof(ShapeExtent) + kDimExprNodeBytes + 1);
  CHECK(value(op_attrs_retained_bytes(NoAttrs{})) == 0);
  CHECK(value(op_attrs_retained_bytes(TransposeAttrs{{1, 0}})) == 16);
  CHECK(value(op_attrs_retained_bytes(ExtensionAttrs{"ab", "{}"})) == 4);
  ConstantAttrs dense;
  dense.dtype = DType::F32;
  dense.shape = {DimExpr::constant(2), DimExpr::constant(3)};
  auto t = HostTensor::zeros(DType::F32, {2, 3});
  REQUIRE(t.ok());
  dense.dense = *t;
  // Two constant dims, then shape+strides (2 axes × 16) and 6 f32 elements.
  CHECK(value(op_attrs_retained_bytes(dense)) == 2 * sizeof(DimExpr) + 32 + 24);
  ReshapeAttrs reshape{{bt}};
  CHECK(value(op_attrs_retained_bytes(reshape)) == sizeof(DimExpr) + kDimExprNodeBytes + 3);
}

TEST_CASE("requirements, projections and descriptors by hand", "[retained_bytes]") {
  InputRequirement r;
  r.concrete_dims = {0, 1, 2};
  CHECK(value(requirements_retained_bytes({{r, {}}})) ==
        sizeof(SpecializationRequirements) + 2 * sizeof(InputRequirement) + 3 * sizeof(size_t));
  InputProjection p;
  p.concrete_dims = {{0, 4}};
  p.storage_class = "host";
  p.engine = "cpu";
  p.strides = std::vector<int64_t>{4, 1};
  CHECK(value(projection_retained_bytes({{p}})) ==
        sizeof(SpecializationProjection) + sizeof(InputProjection) + sizeof(ConcreteDim) + 4 + 3 + 16);
  const InputDescriptor d[] = {{DType::F32, {2, 4}, {"cpu", "host"}, {4, 1}, 6}};
  CHECK(value(input_descriptors_retained_bytes(d)) == sizeof(InputDescriptor) + 16 + 16 + 3 + 4);
}

TEST_CASE("retained bytes grow with the program", "[retained_bytes]") {
  uint64_t last_exec = 0, last_semantic = 0;
  for (int n : {0, 1, 2, 4, 8}) {
    INFO("negates: " << n);
    const SemanticProgram p = chain(n);
    auto staged = stage(p);
    REQUIRE(staged.ok());
    const uint64_t exec = value(exec_program_retained_bytes(*staged));
    const uint64_t semantic = value(semantic_program_retained_bytes(p));
    CHECK(exec > last_exec);
    CHECK(semantic > last_semantic);
    last_exec = exec;
    last_semantic = semantic;
  }
}

TEST_CASE("an exec program counts its slots and instructions", "[retained_bytes]") {
  // x: f32[B, 4] -> v0 = negate(x): 2 slots, 1 instruction with 1 input and
  // 1 output and no attributes.
  auto staged = stage(chain(1));
  REQUIRE(staged.ok());
  const uint64_t slot = sizeof(ExecSlot) + 2 * sizeof(ShapeExtent) + kDimExprNodeBytes + 1;  // [B, 4]
  const uint64_t expected = sizeof(ExecProgram) + 2 * slot + 1 + 2  // names "x", "v0"
                            + sizeof(SlotId) * 2                     // input and output slots
                            + sizeof(ExecInstruction) + sizeof(SlotId) * 2 + 1 + 1;  // flags
  CHECK(value(exec_program_retained_bytes(*staged)) == expected);
}
