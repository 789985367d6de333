// Weight materializers: the panel layout for rhs-only f32 matrices, every
// other weight as declared, the packed bytes where the layout puts them.
#include <catch2/catch.hpp>
#include <cstring>

#include "tests/planning/model_test_support.hpp"

using namespace tenact;
using namespace tenact::model_test;

namespace {

/// w f32[3, 20] and p f32[3, 16]: rhs of plain products only; v f32[3, 16]:
/// rhs, but also negated; u f16[3, 4]: rhs, not f32; t f32[2, 3]: lhs;
/// k f32[20, 3]: rhs of a product contracting its axis 1.
std::shared_ptr<const SemanticProgram> readers_model() {
  return program_of(R"({"format": "tenact.program/1", "name": "panels",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3]}, {"name": "xh", "dtype": "f16", "shape": [2, 3]},
               {"name": "m", "dtype": "f32", "shape": [3, 4]}],
    "weights": [{"name": "w", "dtype": "f32", "shape": [3, 20]}, {"name": "p", "dtype": "f32", "shape": [3, 16]},
                {"name": "v", "dtype": "f32", "shape": [3, 16]}, {"name": "u", "dtype": "f16", "shape": [3, 4]},
                {"name": "t", "dtype": "f32", "shape": [2, 3]}, {"name": "k", "dtype": "f32", "shape": [20, 3]}],
    "ops": [
      {"op": "dot_general", "in": ["x", "w"], "out": "xw", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
      {"op": "dot_general", "in": ["x", "p"], "out": "xp", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
      {"op": "dot_general", "in": ["x", "w"], "out": "xw2", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
      {"op": "dot_general", "in": ["x", "v"], "out": "xv", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
      {"op": "negate", "in": ["v"], "out": "nv"},
      {"op": "dot_general", "in": ["xh", "u"], "out": "xu", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
      {"op": "dot_general", "in": ["t", "m"], "out": "tm", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
      {"op": "dot_general", "in": ["x", "k"], "out": "xk", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [1]}],
    "outputs": ["xw", "xp", "xw2", "xv", "nv", "xu", "tm", "xk"]})");
}

ResolvedTensorSpec physical(const WeightMaterializer& m, const SemanticProgram& p, const char* weight) {
  auto made = m.physical(p, value_named(p, weight));
  REQUIRE(made.ok());
  return *made;
}

}  // namespace

TEST_CASE("pack_panels stores rhs-only f32 matrices in panels of 16 columns", "[model][materializer]") {
  const auto program = readers_model();
  auto selected = WeightMaterializerRegistry::builtin().select("tenact.pack_panels");
  REQUIRE(selected.ok());
  const WeightMaterializer& panels = **selected;
  const BlockedLayout layout{{1, 16}, {1, 0}};
  const ResolvedTensorSpec w = physical(panels, *program, "w");
  CHECK(w.dims == std::vector<uint64_t>{3, 20});
  CHECK(w.layout.kind == ResolvedTensorLayout::Kind::Blocked);
  CHECK(w.layout.blocked == layout);
  // 20 columns pad to 32: in axis order [1, 0] the padded extents are [32, 3].
  CHECK(w.layout.zero_fill_physical_dims == std::vector<uint64_t>{32, 3});
  CHECK(w.minimum_storage_bytes().value() == 32 * 3 * 4);
  const ResolvedTensorSpec p = physical(panels, *program, "p");
  CHECK(p.layout.kind == ResolvedTensorLayout::Kind::Blocked);
  CHECK(p.layout.zero_fill_physical_dims.empty());
  for (const char* declared : {"v", "u", "t", "k"}) {
    INFO(declared);
    const ResolvedTensorSpec s = physical(panels, *program, declared);
    CHECK(s.layout.kind == ResolvedTensorLayout::Kind::Contiguous);
  }
  CHECK(physical(panels, *program, "u").dtype == DType::F16);
}

TEST_CASE("identity keeps every weight as declared", "[model][materializer]") {
  const auto program = readers_model();
  auto identity = WeightMaterializerRegistry::identity_only().select("identity");
  REQUIRE(identity.ok());
  CHECK(WeightMaterializerRegistry::identity_only().ids() == std::vector<std::string>{"identity"});
  for (const WeightInfo& w : program->weights()) {
    const ValueInfo& v = program->value(w.value);
    INFO(v.name);
    const ResolvedTensorSpec s = physical(**identity, *program, v.name.c_str());
    CHECK(s.layout.kind == ResolvedTensorLayout::Kind::Contiguous);
    CHECK(s.dtype == v.type.dtype);
    CHECK(s.dims.size() == v.type.rank());
  }
  auto err = WeightMaterializerRegistry::identity_only().select("tenact.pack_panels");
  REQUIRE_FALSE(err.ok());
  CHECK(err.error().message() == "unknown weight materializer `tenact.pack_panels` (registered: identity)");
}

TEST_CASE("materialized panel bytes put element (k, n) at ((n / 16) * K + k) * 16 + n % 16", "[model][materializer]") {
  const auto program = readers_model();
  // The selected materializer is held for as long as the test uses it.
  const auto selected = WeightMaterializerRegistry::builtin().select("tenact.pack_panels");
  REQUIRE(selected.ok());
  const WeightMaterializer& panels = **selected;
  const ResolvedTensorSpec w = physical(panels, *program, "w");
  // Logical w[k][n] = 100 k + n + 1, from a transposed (strided) view.
  auto source = Tensor::zeros(DType::F32, {20, 3}).value();
  for (int64_t n = 0; n < 20; ++n)
    for (int64_t k = 0; k < 3; ++k) source.data_as<float>()[n * 3 + k] = static_cast<float>(100 * k + n + 1);
  const std::vector<int64_t> swap{1, 0};
  const Tensor logical = source.transposed(swap);
  auto bytes = panels.materialize(logical, w);
  REQUIRE(bytes.ok());
  REQUIRE(bytes->shape() == std::vector<int64_t>{96});
  const float* out = bytes->data_as<float>();
  for (uint64_t k = 0; k < 3; ++k)
    for (uint64_t n = 0; n < 32; ++n) {
      const float want = n < 20 ? static_cast<float>(100 * k + n + 1) : 0.0f;
      CHECK(out[((n / 16) * 3 + k) * 16 + n % 16] == want);
    }
  auto packed = pack_blocked(logical, w.layout.blocked);
  REQUIRE(packed.ok());
  CHECK(std::memcmp(packed->data(), bytes->data(), 96 * sizeof(float)) == 0);
  // A weight kept as declared is its dense bytes.
  const ResolvedTensorSpec t = physical(panels, *program, "t");
  auto dense_bytes =
      panels.materialize(source.transposed(swap).contiguous().value().transposed(swap), dense(DType::F32, {20, 3}));
  REQUIRE(dense_bytes.ok());
  CHECK(std::memcmp(dense_bytes->data(), source.data(), 60 * sizeof(float)) == 0);
  auto wrong = panels.materialize(source, t);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().code() == ErrorCode::InputMismatch);
}

TEST_CASE("the registry refuses malformed and repeated materializers", "[model][materializer]") {
  auto r = WeightMaterializerRegistry::builtin();
  CHECK(r.ids() == std::vector<std::string>{"identity", "tenact.pack_panels"});
  CHECK(r.add(WeightMaterializer{}).error().message() == "a weight materializer needs an id");
  CHECK(r.add(WeightMaterializer{"identity", "", {}, {}}).error().message() ==
        "weight materializer `identity` is registered already");
  CHECK(r.add(WeightMaterializer{"mine", "", {}, {}}).error().message() ==
        "weight materializer `mine` lacks its physical or materialize function");
  const auto& identity = **r.select("identity");
  REQUIRE(r.add(WeightMaterializer{"mine", "a copy", identity.physical, identity.materialize}).ok());
  CHECK(r.select("mine").ok());
}
