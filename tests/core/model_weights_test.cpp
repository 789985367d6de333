// A model's weight data: load_weights_folder reads one .npy per weight
// without inline data, by its escaped name, inside the folder only;
// check_weights checks what a C++ caller passes.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/model_weights.hpp"
#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "file_test_support.hpp"

using namespace tenact;
namespace fs = std::filesystem;

namespace {

using tenact::testing::TempDir;

// A model whose weights are `weights` (JSON entries), read by no op.
SemanticProgram weights_model(const std::string& weights) {
  auto p = load_program(R"({"format": "tenact.program/1", "name": "net", "inputs": [], "weights": [)" + weights +
                        R"(], "ops": [], "outputs": []})");
  if (!p.ok()) FAIL(p.error().to_string());
  return std::move(*p);
}

// A dense tensor of `dtype` and `shape` holding `values` (as doubles).
HostTensor tensor_of(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  auto t = HostTensor::zeros(dtype, std::move(shape));
  REQUIRE(t.ok());
  REQUIRE(static_cast<size_t>(t->element_count()) == values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F32) t->data_as<float>()[i] = static_cast<float>(values[i]);
    else if (dtype == DType::F64) t->data_as<double>()[i] = values[i];
    else if (dtype == DType::I32) t->data_as<int32_t>()[i] = static_cast<int32_t>(values[i]);
    else FAIL("tensor_of: unsupported dtype");
  }
  return *t;
}

void write_npy(const fs::path& path, const HostTensor& t) {
  REQUIRE(write_tensor_file(path.string(), t).ok());
}

const char* kTwoWeights =
    R"({"name": "w", "dtype": "f32", "shape": [2, 2]}, {"name": "layer1/w", "dtype": "f64", "shape": [3]},
       {"name": "b", "dtype": "i32", "shape": [2], "data": {"dtype": "i32", "shape": [2], "data": [7, -7]}})";

}  // namespace

TEST_CASE("weights load from their escaped .npy files, inline data from the program", "[model_weights]") {
  TempDir dir;
  const HostTensor w = tensor_of(DType::F32, {2, 2}, {1, 2, 3, 4});
  const HostTensor lw = tensor_of(DType::F64, {3}, {0.25, -0.5, 8});
  write_npy(dir.path / "w.npy", w);
  write_npy(dir.path / "layer1%2Fw.npy", lw);
  // A stale b.npy is not read: b has inline data.
  write_npy(dir.path / "b.npy", tensor_of(DType::I32, {2}, {0, 0}));
  const SemanticProgram p = weights_model(kTwoWeights);
  auto loaded = load_weights_folder(p, dir.path.string());
  REQUIRE(loaded.ok());
  REQUIRE(loaded->size() == 3);
  CHECK(loaded->at("w").bitwise_equal(w));
  CHECK(loaded->at("layer1/w").bitwise_equal(lw));
  CHECK(loaded->at("b").bitwise_equal(tensor_of(DType::I32, {2}, {7, -7})));
  CHECK(check_weights(p, *loaded).ok());
  // The folder's path may end with a separator.
  auto again = load_weights_folder(p, dir.path.string() + "/");
  REQUIRE(again.ok());
  CHECK(again->at("w").bitwise_equal(w));
}

TEST_CASE("a missing or unreadable weight file is an Io error naming the weight and path", "[model_weights]") {
  TempDir dir;
  const SemanticProgram p = weights_model(kTwoWeights);
  write_npy(dir.path / "w.npy", tensor_of(DType::F32, {2, 2}, {1, 2, 3, 4}));
  auto missing = load_weights_folder(p, dir.path.string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code() == ErrorCode::Io);
  CHECK_THAT(missing.error().message(), Catch::StartsWith("weight 'layer1/w': "));
  CHECK_THAT(missing.error().message(), Catch::Contains((dir.path / "layer1%2Fw.npy").string()));
  // A folder where the file should be.
  fs::create_directory(dir.path / "layer1%2Fw.npy");
  auto folder = load_weights_folder(p, dir.path.string());
  REQUIRE_FALSE(folder.ok());
  CHECK(folder.error().code() == ErrorCode::Io);
  CHECK_THAT(folder.error().message(), Catch::Contains("weight 'layer1/w'"));
  // A malformed file: the .npy reader's error after the weight and the path.
  fs::remove(dir.path / "layer1%2Fw.npy");
  REQUIRE(write_file((dir.path / "layer1%2Fw.npy").string(), "not a numpy file").ok());
  auto malformed = load_weights_folder(p, dir.path.string());
  REQUIRE_FALSE(malformed.ok());
  CHECK_THAT(malformed.error().message(),
             Catch::StartsWith("weight 'layer1/w': " + (dir.path / "layer1%2Fw.npy").string() + ": "));
}

TEST_CASE("a weight file of another dtype or shape is an InputMismatch", "[model_weights]") {
  TempDir dir;
  const SemanticProgram p = weights_model(R"({"name": "w", "dtype": "f32", "shape": [16, 16]})");
  const std::string path = (dir.path / "w.npy").string();
  write_npy(path, tensor_of(DType::F64, {16, 16}, std::vector<double>(256, 1.0)));
  auto dtype = load_weights_folder(p, dir.path.string());
  REQUIRE_FALSE(dtype.ok());
  CHECK(dtype.error().code() == ErrorCode::InputMismatch);
  CHECK(dtype.error().message() == "weight 'w' is f32[16, 16]; " + path + " holds f64[16, 16]");
  write_npy(path, tensor_of(DType::F32, {16, 8}, std::vector<double>(128, 1.0)));
  auto shape = load_weights_folder(p, dir.path.string());
  REQUIRE_FALSE(shape.ok());
  CHECK(shape.error().code() == ErrorCode::InputMismatch);
  CHECK(shape.error().message() == "weight 'w' is f32[16, 16]; " + path + " holds f32[16, 8]");
}

TEST_CASE("hostile weight names read their escaped file inside the folder, never outside", "[model_weights]") {
  TempDir root;
  const fs::path dir = root.path / "weights";
  fs::create_directory(dir);
  fs::create_directory(dir / "a");
  // What a name taken as a path would reach: root/x.npy and weights/a/b.npy.
  write_npy(root.path / "x.npy", tensor_of(DType::F32, {1}, {666}));
  write_npy(dir / "a" / "b.npy", tensor_of(DType::F32, {1}, {666}));
  const SemanticProgram p = weights_model(
      R"({"name": "../x", "dtype": "f32", "shape": [1]}, {"name": "a/b", "dtype": "f32", "shape": [1]})");
  // Without their escaped files, the weights are missing: nothing else is read.
  auto absent = load_weights_folder(p, dir.string());
  REQUIRE_FALSE(absent.ok());
  CHECK(absent.error().code() == ErrorCode::Io);
  CHECK_THAT(absent.error().message(), Catch::StartsWith("weight '../x': "));
  CHECK_THAT(absent.error().message(), Catch::Contains((dir / "%2E.%2Fx.npy").string()));
  write_npy(dir / "%2E.%2Fx.npy", tensor_of(DType::F32, {1}, {1}));
  write_npy(dir / "a%2Fb.npy", tensor_of(DType::F32, {1}, {2}));
  auto loaded = load_weights_folder(p, dir.string());
  REQUIRE(loaded.ok());
  CHECK(loaded->at("../x").data_as<float>()[0] == 1.0f);
  CHECK(loaded->at("a/b").data_as<float>()[0] == 2.0f);
}

TEST_CASE("an empty folder path serves only weights with inline data", "[model_weights]") {
  const SemanticProgram inline_only = weights_model(
      R"({"name": "b", "dtype": "f32", "shape": [1], "data": {"dtype": "f32", "shape": [1], "data": [3]}})");
  auto loaded = load_weights_folder(inline_only, "");
  REQUIRE(loaded.ok());
  CHECK(loaded->at("b").data_as<float>()[0] == 3.0f);
  auto none = load_weights_folder(weights_model(kTwoWeights), "");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code() == ErrorCode::InputMismatch);
  CHECK(none.error().message() == "weight 'w' has no inline data and no weights folder was given");
}

namespace {

// Device-like memory the host may not address (for check_weights).
struct NoRelease : BufferAllocator {
  void release(std::byte*, size_t) noexcept override {}
};

}  // namespace

TEST_CASE("check_weights: each weight present with its type, in host memory, nothing else", "[model_weights]") {
  const SemanticProgram p = weights_model(kTwoWeights);
  std::map<std::string, HostTensor> given = {
      {"w", tensor_of(DType::F32, {2, 2}, {1, 2, 3, 4})}, {"layer1/w", tensor_of(DType::F64, {3}, {1, 2, 3})}};
  CHECK(check_weights(p, given).ok());  // b left out: its inline data is used
  given.emplace("b", tensor_of(DType::I32, {2}, {1, 2}));
  CHECK(check_weights(p, given).ok());  // or replaced

  auto without_w = given;
  without_w.erase("w");
  auto missing = check_weights(p, without_w);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code() == ErrorCode::InputMismatch);
  CHECK(missing.error().message() == "weight 'w' is missing (it has no inline data)");

  auto wrong = given;
  wrong["layer1/w"] = tensor_of(DType::F32, {3}, {1, 2, 3});
  auto dtype = check_weights(p, wrong);
  REQUIRE_FALSE(dtype.ok());
  CHECK(dtype.error().code() == ErrorCode::InputMismatch);
  CHECK(dtype.error().message() == "weight 'layer1/w' is f64[3]; the tensor given is f32[3]");
  wrong["layer1/w"] = tensor_of(DType::F64, {1, 3}, {1, 2, 3});
  CHECK(check_weights(p, wrong).error().message() == "weight 'layer1/w' is f64[3]; the tensor given is f64[1, 3]");

  auto extra = given;
  extra.emplace("x", tensor_of(DType::F32, {1}, {0}));
  auto unknown = check_weights(p, extra);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code() == ErrorCode::InputMismatch);
  CHECK(unknown.error().message() == "'x' is not a weight of program 'net'");

  static std::byte device_bytes[16];
  auto buffer = Buffer::adopt(device_bytes, sizeof device_bytes, 16, Endpoint{"sim:0", "device"}, false,
                              std::make_shared<NoRelease>());
  REQUIRE(buffer.ok());
  auto on_device = Tensor::view(*buffer, DType::F32, {2, 2}, {2, 1}, 0);
  REQUIRE(on_device.ok());
  auto device = given;
  device["w"] = *on_device;
  auto not_host = check_weights(p, device);
  REQUIRE_FALSE(not_host.ok());
  CHECK(not_host.error().code() == ErrorCode::InputMismatch);
  CHECK(not_host.error().message() == "weight 'w' is in sim:0/device memory; weights are passed in host memory");
}
