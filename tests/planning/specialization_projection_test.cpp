// Projection of a signature through specialization requirements: equal for
// signatures that agree on what the requirements fix, different otherwise,
// field by field; canonical requirements; errors naming input and axis.
#include <catch2/catch.hpp>

#include "core/program_json.hpp"
#include "planning/specialization_projection.hpp"

using namespace tenact;

namespace {

SemanticProgram program() {
  auto p = load_program(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 4]},
               {"name": "y", "dtype": "f32", "shape": [4]}],
    "ops": [], "outputs": ["x", "y"]})");
  REQUIRE(p.ok());
  return std::move(*p);
}

InputDescriptor x_input(int64_t b, std::optional<uint8_t> align = 6) {
  return InputDescriptor{DType::F32, {b, 4}, {"cpu", "host"}, {4, 1}, align};
}
InputDescriptor y_input() { return InputDescriptor{DType::F32, {4}, {"cpu", "host"}, {1}, 6}; }

SpecializationRequirements only_x(InputRequirement r) {
  return SpecializationRequirements{{std::move(r), InputRequirement{}}};
}

SpecializationProjection proj(const SpecializationRequirements& req, InputDescriptor x) {
  static const SemanticProgram p = program();
  const InputDescriptor in[] = {std::move(x), y_input()};
  auto r = project(p, req, in);
  REQUIRE(r.ok());
  return std::move(*r);
}

}  // namespace

TEST_CASE("polymorphic requirements project every signature alike", "[projection]") {
  const SpecializationRequirements none{};
  InputDescriptor other = x_input(9, 2);
  other.placement = {"sim:0", "device"};
  other.strides = {1, 9};
  const auto a = proj(none, x_input(2));
  const auto b = proj(none, other);
  CHECK(a == b);
  CHECK(hash_of(a) == hash_of(b));
  CHECK(a == proj(polymorphic_requirements(2), x_input(2)));
  REQUIRE(a.inputs.size() == 2);
  CHECK(a.inputs[0] == InputProjection{});
  CHECK(to_string(a) == "[-; -]");
}

TEST_CASE("concrete dimensions fix the extents of the named axes only", "[projection]") {
  InputRequirement r;
  r.concrete_dims = {0};
  const auto req = only_x(r);
  const auto b2 = proj(req, x_input(2));
  CHECK(b2.inputs[0].concrete_dims == std::vector<ConcreteDim>{{0, 2}});
  CHECK(b2 != proj(req, x_input(3)));
  CHECK(hash_of(b2) != hash_of(proj(req, x_input(3))));
  InputDescriptor strided = x_input(2);
  strided.strides = {1, 2};
  CHECK(b2 == proj(req, strided));  // layout is not fixed
}

TEST_CASE("dtype and rank requirements fix dtype and rank", "[projection]") {
  InputRequirement r;
  r.dtype = true;
  const auto d = proj(only_x(r), x_input(2));
  CHECK(d.inputs[0].dtype == std::optional<DType>{DType::F32});
  InputDescriptor f64 = x_input(2);
  f64.dtype = DType::F64;
  CHECK(d != proj(only_x(r), f64));
  CHECK(d == proj(only_x(r), x_input(5)));
  r = InputRequirement{};
  r.rank = true;
  const auto k = proj(only_x(r), x_input(2));
  CHECK(k.inputs[0].rank == std::optional<uint32_t>{2});
  CHECK(k == proj(only_x(r), f64));
}

TEST_CASE("placement fixes the storage class, or the whole endpoint for a device", "[projection]") {
  InputDescriptor on_sim = x_input(2);
  on_sim.placement = {"sim:0", "host"};
  InputDescriptor on_device = x_input(2);
  on_device.placement = {"sim:0", "device"};
  InputRequirement r;
  r.placement = PlacementSpecialization::StorageClass;
  const auto sc = proj(only_x(r), x_input(2));
  CHECK(sc.inputs[0].storage_class == std::optional<std::string>{"host"});
  CHECK_FALSE(sc.inputs[0].engine.has_value());
  CHECK(sc == proj(only_x(r), on_sim));
  CHECK(sc != proj(only_x(r), on_device));
  r.placement = PlacementSpecialization::Device;
  const auto dev = proj(only_x(r), x_input(2));
  CHECK(dev.inputs[0].engine == std::optional<std::string>{"cpu"});
  CHECK(dev != proj(only_x(r), on_sim));
  CHECK(to_string(dev) == "[at cpu/host; -]");
}

TEST_CASE("layout fixes the class, or the exact strides", "[projection]") {
  // [1, 4] is row-major whatever the stride of its extent-1 axis.
  InputDescriptor a{DType::F32, {1, 4}, {"cpu", "host"}, {4, 1}, 6};
  InputDescriptor b{DType::F32, {1, 4}, {"cpu", "host"}, {99, 1}, 6};
  InputRequirement r;
  r.layout = LayoutSpecialization::Class;
  CHECK(proj(only_x(r), a) == proj(only_x(r), b));
  CHECK(proj(only_x(r), a).inputs[0].layout_class == std::optional<LayoutClass>{LayoutClass::RowMajor});
  InputDescriptor permuted = x_input(3);
  permuted.strides = {1, 3};
  CHECK(proj(only_x(r), x_input(3)) != proj(only_x(r), permuted));
  r.layout = LayoutSpecialization::ExactStrides;
  CHECK(proj(only_x(r), a) != proj(only_x(r), b));
  CHECK(proj(only_x(r), b).inputs[0].strides == std::optional<std::vector<int64_t>>{{99, 1}});
  CHECK(to_string(proj(only_x(r), b)) == "[strides [99, 1]; -]");
}

TEST_CASE("alignment projects to the smaller of required and actual", "[projection]") {
  InputRequirement r;
  r.alignment_log2 = 4;
  const auto six = proj(only_x(r), x_input(2, 6));
  CHECK(six.inputs[0].alignment_log2 == std::optional<uint8_t>{4});
  CHECK(six == proj(only_x(r), x_input(2, 12)));
  const auto two = proj(only_x(r), x_input(2, 2));
  CHECK(two.inputs[0].alignment_log2 == std::optional<uint8_t>{2});
  CHECK(six != two);
  CHECK_FALSE(proj(only_x(r), x_input(2, std::nullopt)).inputs[0].alignment_log2.has_value());
  // Not required: the actual alignment does not matter.
  CHECK(proj(only_x({}), x_input(2, 2)) == proj(only_x({}), x_input(2, 12)));
}

TEST_CASE("requirements have one canonical form", "[projection]") {
  InputRequirement messy;
  messy.concrete_dims = {1, 0, 1};
  auto c = canonical_requirements(SpecializationRequirements{{messy, {}}}, 2);
  REQUIRE(c.ok());
  CHECK(c->inputs[0].concrete_dims == std::vector<size_t>{0, 1});
  auto empty = canonical_requirements(SpecializationRequirements{}, 3);
  REQUIRE(empty.ok());
  CHECK(*empty == polymorphic_requirements(3));
  auto wrong = canonical_requirements(SpecializationRequirements{{messy}}, 2);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().code() == ErrorCode::ProviderContract);
  CHECK(wrong.error().message() == "specialization requirements list 1 inputs, but the program has 2");
}

TEST_CASE("requirements are described per input", "[projection]") {
  const SemanticProgram p = program();
  InputRequirement r;
  r.dtype = r.rank = true;
  r.concrete_dims = {0, 1};
  r.placement = PlacementSpecialization::Device;
  r.layout = LayoutSpecialization::Class;
  r.alignment_log2 = 4;
  CHECK(describe_requirements(p, only_x(r)) ==
        "input 'x': dtype, rank, concrete axes [0, 1], placement device, layout class, "
        "alignment >= 2^4; input 'y': none");
  CHECK(describe_requirements(p, {}) == "none");
}

TEST_CASE("projection errors name the input and the axis", "[projection]") {
  const SemanticProgram p = program();
  const InputDescriptor one[] = {x_input(2)};
  auto count = project(p, {}, one);
  REQUIRE_FALSE(count.ok());
  CHECK(count.error().code() == ErrorCode::InputMismatch);
  CHECK(count.error().message() == "program expects 2 inputs, got 1");

  InputRequirement r;
  r.concrete_dims = {1};
  const InputDescriptor two[] = {x_input(2), y_input()};
  auto axis = project(p, SpecializationRequirements{{{}, r}}, two);
  REQUIRE_FALSE(axis.ok());
  CHECK(axis.error().code() == ErrorCode::ProviderContract);
  CHECK(axis.error().message() ==
        "specialization requires the concrete extent of input 'y' axis 1, but the input has rank 1");
}

TEST_CASE("encodings of requirements differ when any field differs", "[projection]") {
  auto enc = [](const SpecializationRequirements& r) {
    KeyEncoder e;
    encode(e, r);
    return e.bytes();
  };
  InputRequirement base;
  std::vector<InputRequirement> variants(6);
  variants[0].dtype = true;
  variants[1].rank = true;
  variants[2].concrete_dims = {0};
  variants[3].placement = PlacementSpecialization::StorageClass;
  variants[4].layout = LayoutSpecialization::Class;
  variants[5].alignment_log2 = 0;
  const std::string b = enc(only_x(base));
  for (const InputRequirement& v : variants) CHECK(enc(only_x(v)) != b);
}
