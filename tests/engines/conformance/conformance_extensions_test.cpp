// The conformance suite's extension cases: every family of the built-in
// module `tenact` on every float dtype, with special values (random_tensor's
// NaN, infinities, signed zeros every third element), run on every engine
// kind and compared with the CPU engine within the kind's bound for
// approximate results (bit for bit on the simulated devices, which run the
// CPU's host kernels), and the transformer block example that uses all five.
#include "tests/engines/conformance/conformance_support.hpp"

#include "core/tensor_io.hpp"
#include "extensions/builtin_extensions.hpp"

using namespace tenact;
using namespace tenact::conformance;
using namespace tenact::conformance::suite;

namespace {

std::string one_op(const std::string& family, DType dtype, const std::string& attributes, bool affine) {
  const std::string t = std::string{to_string(dtype)};
  std::string inputs = R"([{"name": "x", "dtype": ")" + t + R"(", "shape": [5, 33]})";
  std::string in = R"(["x")";
  if (affine) {
    const bool bias = family != "tenact.rms_norm";
    inputs += R"(, {"name": "s", "dtype": ")" + t + R"(", "shape": [33]})";
    if (bias) inputs += R"(, {"name": "b", "dtype": ")" + t + R"(", "shape": [33]})";
    in += bias ? R"(, "s", "b")" : R"(, "s")";
  }
  return R"({"format": "tenact.program/1", "inputs": )" + inputs + R"(],
    "ops": [{"op": "extension", "family": ")" + family + R"(", "in": )" + in + R"(], "out": "y",
             "attributes": )" + attributes + R"(}], "outputs": ["y"]})";
}

}  // namespace

TEST_CASE("conformance: the built-in extension families match the CPU engine on every float dtype",
          "[conformance][extensions]") {
  struct Case {
    std::string family, attributes;
    bool affine = false;
  };
  const std::vector<Case> cases = {
      {"tenact.softmax", R"({"dimension": 1})"},       {"tenact.softmax", R"({"dimension": 0})"},
      {"tenact.log_softmax", R"({"dimension": 1})"},   {"tenact.layer_norm", R"({"dimensions": [1]})"},
      {"tenact.layer_norm", R"({"dimensions": [0, 1]})"}, {"tenact.layer_norm", R"({"dimensions": [1]})", true},
      {"tenact.rms_norm", R"({"dimensions": [1]})", true}, {"tenact.gelu", "{}"},
      {"tenact.gelu", R"({"approximate": "tanh"})"},
  };
  const ExtensionRegistry registry = builtin_extension_registry();
  CheckedRig reference{reference_kind()};
  REQUIRE(register_builtin_extensions(reference->runtime()).ok());
  size_t compared = 0;
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind};
    REQUIRE(register_builtin_extensions(rig->runtime()).ok());
    for (const Case& c : cases)
      for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
        INFO("engine kind '" << kind.name << "', " << c.family << " " << c.attributes << (c.affine ? " affine" : "")
                             << " on " << to_string(dtype));
        auto p = program_of(one_op(c.family, dtype, c.attributes, c.affine), registry);
        std::vector<Tensor> inputs{random_tensor(dtype, {5, 33}, 100 + compared)};
        if (c.affine) {
          inputs.push_back(random_tensor(dtype, {33}, 200 + compared, 0));
          inputs.push_back(random_tensor(dtype, {33}, 300 + compared, 0));
          if (c.family == "tenact.rms_norm") inputs.pop_back();
        }
        auto expected = reference->run(p, inputs);
        REQUIRE(expected.ok());
        auto actual = rig->run(p, inputs);
        if (!actual.ok()) FAIL_CHECK(actual.error().to_string());
        if (!actual.ok()) continue;
        CHECK(compare((*expected)[0], (*actual)[0], kind.tolerance(Accuracy::Approximate)) == "");
        ++compared;
      }
    // The example that uses every family, through the whole pipeline.
    auto text = read_file(std::string{TENACT_SOURCE_DIR} + "/examples/transformer_block/transformer_block.json");
    REQUIRE(text.ok());
    auto block = program_of(*text, registry);
    std::vector<Tensor> inputs;
    for (ValueId id : block->inputs()) {
      const std::string& name = block->value(id).name;
      auto t = read_tensor_file(std::string{TENACT_SOURCE_DIR} + "/examples/transformer_block/inputs/" + name + ".npy");
      REQUIRE(t.ok());
      inputs.push_back(std::move(*t));
    }
    auto expected = reference->run(block, inputs);
    REQUIRE(expected.ok());
    auto actual = rig->run(block, inputs);
    REQUIRE(actual.ok());
    for (size_t i = 0; i < actual->size(); ++i)
      CHECK(compare((*expected)[i], (*actual)[i], kind.tolerance(Accuracy::Sum)) == "");
  }
  CHECK(compared == cases.size() * 4 * engine_kinds().size());
}
