// Every example program loads (with the built-in extension module registered,
// as the CLI does), round-trips through save/load unchanged, and declares
// outputs whose dtypes match the NumPy reference files beside it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "extensions/builtin_extensions.hpp"

using namespace tenact;
namespace fs = std::filesystem;

namespace {
std::vector<fs::path> example_programs() {
  std::vector<fs::path> out;
  for (const auto& dir : fs::directory_iterator(fs::path{TENACT_SOURCE_DIR} / "examples")) {
    if (!dir.is_directory()) continue;
    fs::path json = dir.path() / (dir.path().filename().string() + ".json");
    if (fs::exists(json)) out.push_back(json);
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST_CASE("the examples include the five the foundation asks for", "[examples]") {
  std::set<std::string> names;
  for (const auto& p : example_programs()) names.insert(p.stem().string());
  for (const char* required : {"mlp", "softmax", "layer_norm", "embedding", "attention"}) {
    INFO(required);
    CHECK(names.count(required) == 1);
  }
}

TEST_CASE("every example loads and round-trips", "[examples]") {
  for (const auto& path : example_programs()) {
    INFO(path.string());
    auto p = load_program_file(path.string(), builtin_extension_registry());
    REQUIRE(p.ok());
    auto again = load_program(save_program_json(*p), builtin_extension_registry());
    REQUIRE(again.ok());
    CHECK(*again == *p);
    CHECK(again->fingerprint() == p->fingerprint());
  }
}

TEST_CASE("example inputs and expected outputs agree with the declared dtypes and ranks", "[examples]") {
  for (const auto& path : example_programs()) {
    INFO(path.string());
    auto p = load_program_file(path.string(), builtin_extension_registry());
    REQUIRE(p.ok());
    const fs::path dir = path.parent_path();
    for (ValueId id : p->inputs()) {
      const ValueInfo& v = p->value(id);
      auto t = read_tensor_file((dir / "inputs" / (v.name + ".npy")).string());
      INFO("input " << v.name);
      REQUIRE(t.ok());
      CHECK(t->dtype() == v.type.dtype);
      CHECK(t->rank() == v.type.rank());
    }
    for (ValueId id : p->outputs()) {
      const ValueInfo& v = p->value(id);
      auto t = read_tensor_file((dir / "expected" / (v.name + ".npy")).string());
      INFO("output " << v.name);
      REQUIRE(t.ok());
      CHECK(t->dtype() == v.type.dtype);
      CHECK(t->rank() == v.type.rank());
    }
  }
}
