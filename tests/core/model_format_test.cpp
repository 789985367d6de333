// Weights, states and state updates in the program format
// (docs/program-format.md, "Weights and states"): a model document loads
// with its roles, value numbering and capacities; every rule of the
// section is an error naming what is wrong; the builder and JSON give
// equal programs; save/load keeps the fingerprint.
#include <catch2/catch.hpp>

#include <fstream>
#include <span>
#include <sstream>
#include <string>

#include "core/builder.hpp"
#include "core/program_json.hpp"
#include "program_test_support.hpp"

using namespace tenact;

namespace {

using tenact::testing::load_error;

// A model document: `sections` holds the weights, states and state
// updates (with their keys and a trailing comma), between inputs and ops.
std::string model_doc(const std::string& inputs, const std::string& sections, const std::string& ops,
                  const std::string& outputs) {
  return R"({"format": "tenact.program/1", "name": "m", "inputs": [)" + inputs + "], " + sections +
         R"( "ops": [)" + ops + R"(], "outputs": [)" + outputs + "]}";
}

// The brief's decoder step: a KV cache row written at `pos`, a counter.
const char* kDecoder = R"({
  "format": "tenact.program/1",
  "name": "decoder",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [1, 16]}, {"name": "pos", "dtype": "i32", "shape": []}],
  "weights": [
    {"name": "w", "dtype": "f32", "shape": [16, 16]},
    {"name": "b", "dtype": "f32", "shape": [2], "data": {"dtype": "f32", "shape": [2], "data": [0.5, -1]}}
  ],
  "states": [
    {"name": "k_cache", "dtype": "f32", "shape": [64, 16], "capacity": {"elements": 2048}},
    {"name": "count", "dtype": "i64", "shape": []}
  ],
  "ops": [
    {"op": "dot_general", "in": ["x", "w"], "out": "row",
     "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
    {"op": "constant", "out": "zero", "dtype": "i32", "shape": [], "value": 0},
    {"op": "dynamic_update_slice", "in": ["k_cache", "row", "pos", "zero"], "out": "k_next"},
    {"op": "constant", "out": "one", "dtype": "i64", "shape": [], "value": 1},
    {"op": "add", "in": ["count", "one"], "out": "count_next"},
    {"op": "reduce_sum", "in": ["k_next"], "out": "y", "dimensions": [0]}
  ],
  "state_updates": [{"state": "k_cache", "value": "k_next"}, {"state": "count", "value": "count_next"}],
  "outputs": ["y"]
})";

SemanticProgram load_model_ok(const std::string& text) {
  auto p = load_program(text);
  INFO(text);
  if (!p.ok()) FAIL(p.error().to_string());
  return std::move(*p);
}

// Replaces the one occurrence of `from` in `text` with `to`.
std::string swap_text(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(text.find(from, at + 1) == std::string::npos);
  return text.replace(at, from.size(), to);
}

// The error's code and that its message holds every one of `phrases`.
void check_model_error(const Error& e, ErrorCode code, std::initializer_list<std::string> phrases) {
  INFO(e.to_string());
  CHECK(e.code() == code);
  for (const auto& phrase : phrases) CHECK_THAT(e.message(), Catch::Contains(phrase));
}

// Every field of an update, in one line for comparing.
std::string update_text(const StateUpdate& u) {
  return "state " + std::to_string(u.state) + " <- value " + std::to_string(u.value) + ": op " +
         std::to_string(u.op) + " result " + std::to_string(u.result) + ", operand " + std::to_string(u.operand);
}

// One weight "w" and one state "s" of f32[4]; `ops`, `updates` and
// `outputs` complete it (x is an f32[4] input).
std::string small_model(const std::string& ops, const std::string& updates, const std::string& outputs,
                        const std::string& states = R"({"name": "s", "dtype": "f32", "shape": [4]})") {
  return model_doc(R"({"name": "x", "dtype": "f32", "shape": [4]})",
               R"("weights": [{"name": "w", "dtype": "f32", "shape": [4]}], "states": [)" + states +
                   R"(], "state_updates": [)" + updates + "],",
               ops, outputs);
}

}  // namespace

// -- loading ----------------------------------------------------------------

TEST_CASE("a model document loads with roles, value numbering and capacities", "[model_format]") {
  const SemanticProgram p = load_model_ok(kDecoder);
  CHECK(p.is_model());
  // Inputs, then weights, then states, then op results.
  const std::vector<std::pair<std::string, ValueRole>> expected = {
      {"x", ValueRole::Input},       {"pos", ValueRole::Input},     {"w", ValueRole::Weight},
      {"b", ValueRole::Weight},      {"k_cache", ValueRole::State}, {"count", ValueRole::State},
      {"row", ValueRole::Result},    {"zero", ValueRole::Result},   {"k_next", ValueRole::Result},
      {"one", ValueRole::Result},    {"count_next", ValueRole::Result}, {"y", ValueRole::Result}};
  REQUIRE(p.values().size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("value " << i);
    CHECK(p.value(static_cast<ValueId>(i)).name == expected[i].first);
    CHECK(p.value(static_cast<ValueId>(i)).role == expected[i].second);
    CHECK((p.value(static_cast<ValueId>(i)).producer == -1) == (expected[i].second != ValueRole::Result));
  }
  CHECK(p.inputs() == std::vector<ValueId>{0, 1});
  REQUIRE(p.weights().size() == 2);
  CHECK(p.weights()[0].value == 2);
  CHECK_FALSE(p.weights()[0].inline_data.has_value());
  CHECK(p.weights()[1].value == 3);
  REQUIRE(p.weights()[1].inline_data.has_value());
  const HostTensor& b = *p.weights()[1].inline_data;
  CHECK(b.dtype() == DType::F32);
  CHECK(b.shape() == std::vector<int64_t>{2});
  CHECK(b.data_as<float>()[0] == 0.5f);
  CHECK(b.data_as<float>()[1] == -1.0f);
  CHECK(p.value(2).type.to_string() == "f32[16, 16]");
  REQUIRE(p.states().size() == 2);
  CHECK(p.states()[0].value == 4);
  CHECK(p.states()[0].capacity_bytes == 2048 * 4);  // elements x sizeof(f32)
  CHECK(p.states()[1].value == 5);
  CHECK(p.states()[1].capacity_bytes == 8);  // absent: the shape's bytes, one i64
  REQUIRE(p.state_updates().size() == 2);
  CHECK(update_text(p.state_updates()[0]) == "state 4 <- value 8: op 2 result 0, operand 0");
  CHECK(update_text(p.state_updates()[1]) == "state 5 <- value 10: op 4 result 0, operand 0");
  CHECK(p.outputs() == std::vector<ValueId>{11});
  CHECK(p.value(11).type.to_string() == "f32[16]");
}

TEST_CASE("a program without weights and states is no model", "[model_format]") {
  const SemanticProgram p = load_model_ok(
      R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}],
          "weights": [], "states": [], "state_updates": [],
          "ops": [{"op": "negate", "in": ["x"], "out": "y"}], "outputs": ["y"]})");
  CHECK_FALSE(p.is_model());
  CHECK(p.value(0).role == ValueRole::Input);
  CHECK(p.value(1).role == ValueRole::Result);
  CHECK(p.value(1).producer == 0);
  // Empty sections are absent ones: the saved text has none of them.
  const std::string saved = save_program_json(p);
  CHECK(saved.find("weights") == std::string::npos);
  CHECK(saved.find("states") == std::string::npos);
  CHECK(saved.find("state_updates") == std::string::npos);
}

TEST_CASE("state capacities in bytes and elements, rounded up to whole elements", "[model_format]") {
  auto capacity = [](const std::string& dtype, const std::string& shape, const std::string& cap) {
    const SemanticProgram p = load_model_ok(model_doc(
        "", R"("states": [{"name": "s", "dtype": ")" + dtype + R"(", "shape": )" + shape +
                (cap.empty() ? "" : R"(, "capacity": )" + cap) + "}],",
        "", ""));
    REQUIRE(p.states().size() == 1);
    return p.states()[0].capacity_bytes;
  };
  CHECK(capacity("f32", "[2]", "") == 8);
  CHECK(capacity("f32", "[2]", R"({"bytes": 8})") == 8);
  CHECK(capacity("f32", "[2]", R"({"bytes": 10})") == 12);   // 2.5 elements -> 3
  CHECK(capacity("f32", "[2]", R"({"bytes": 13})") == 16);   // 3.25 elements -> 4
  CHECK(capacity("f64", "[]", R"({"bytes": 9})") == 16);
  CHECK(capacity("c128", "[3]", R"({"elements": 5})") == 80);
  CHECK(capacity("bool", "[3]", R"({"bytes": 7})") == 7);
  CHECK(capacity("f16", "[0]", R"({"elements": 0})") == 0);  // an empty state
  CHECK(capacity("f16", "[0]", R"({"bytes": 3})") == 4);
  CHECK(capacity("u8", "[4]", R"({"bytes": 1099511627776})") == 1099511627776);  // the limit
}

TEST_CASE("weights and states are operands of any op, like inputs", "[model_format]") {
  const SemanticProgram p = load_model_ok(small_model(
      R"({"op": "add", "in": ["w", "s"], "out": "t"}, {"op": "multiply", "in": ["t", "x"], "out": "y"})",
      "", R"("y")"));
  REQUIRE(p.ops().size() == 2);
  CHECK(p.ops()[0].inputs == std::vector<ValueId>{1, 2});  // x = 0, w = 1, s = 2
  CHECK(p.state_updates().empty());
  CHECK(p.is_model());
}

// -- errors -----------------------------------------------------------------

TEST_CASE("a weight's or state's shape is concrete", "[model_format]") {
  check_model_error(load_error(model_doc(R"({"name": "x", "dtype": "f32", "shape": ["B", 16]})",
                               R"("weights": [{"name": "w", "dtype": "f32", "shape": [16, "B"]}],)",
                               "", R"("x")")),
              ErrorCode::ShapeMismatch,
              {"weight #0 'w' axis 1: a weight's shape must be an integer, got 'B'"});
  check_model_error(load_error(model_doc(R"({"name": "x", "dtype": "f32", "shape": ["N"]})",
                               R"("states": [{"name": "s", "dtype": "f32", "shape": ["N", 2]}],)", "",
                               R"("x")")),
              ErrorCode::ShapeMismatch, {"state #0 's' axis 0: a state's shape must be an integer, got 'N'"});
  check_model_error(load_error(model_doc("", R"("weights": [{"name": "w", "dtype": "f32", "shape": [2, -3]}],)", "", "")),
              ErrorCode::ShapeMismatch, {"weight #0 'w' axis 1 has negative size -3"});
  // An expression with one value is that value.
  CHECK(load_model_ok(model_doc("", R"("weights": [{"name": "w", "dtype": "f32", "shape": ["2*3", 4]}],)", "", ""))
            .value(0)
            .type.to_string() == "f32[6, 4]");
  // A symbol no input binds is still only "not an integer" (no second error).
  auto report = load_program_all(model_doc("", R"("weights": [{"name": "w", "dtype": "f32", "shape": ["Q"]}],)", "", ""));
  REQUIRE(report.errors.size() == 1);
  check_model_error(report.errors[0], ErrorCode::ShapeMismatch, {"weight #0 'w' axis 0", "got 'Q'"});
  // Past kMaxTensorBytes (1 TiB): 2^38 f64 elements are 2 TiB.
  check_model_error(load_error(model_doc("", R"("weights": [{"name": "big", "dtype": "f64", "shape": [274877906944]}],)", "", "")),
              ErrorCode::LimitExceeded, {"weight #0 'big'", "over the 1 TiB limit"});
  check_model_error(load_error(model_doc("", R"("states": [{"name": "big", "dtype": "f64", "shape": [274877906944]}],)", "", "")),
              ErrorCode::LimitExceeded, {"state #0 'big'", "over the 1 TiB limit"});
}

TEST_CASE("inline weight data has the weight's dtype and shape", "[model_format]") {
  auto weight = [](const std::string& data) {
    return model_doc("", R"("weights": [{"name": "b", "dtype": "f32", "shape": [2], "data": )" + data + "}],", "", "");
  };
  check_model_error(load_error(weight(R"({"dtype": "f32", "shape": [3], "data": [1, 2, 3]})")),
              ErrorCode::ShapeMismatch, {"weight #0 'b': its inline data is f32[3], the weight is f32[2]"});
  check_model_error(load_error(weight(R"({"dtype": "f64", "shape": [2], "data": [1, 2]})")),
              ErrorCode::TypeMismatch, {"weight #0 'b': its inline data is f64[2], the weight is f32[2]"});
  // The list is counted against the data's own shape before anything is allocated.
  check_model_error(load_error(weight(R"({"dtype": "f32", "shape": [2], "data": [1, 2, 3]})")),
              ErrorCode::ShapeMismatch, {"weight #0 'b' 'data'", "shape [2] holds 2 elements, the list has 3"});
  check_model_error(load_error(weight(R"({"dtype": "f32", "shape": [1000000, 1000000], "data": [1, 2]})")),
              ErrorCode::ShapeMismatch, {"weight #0 'b' 'data'", "holds 1000000000000 elements, the list has 2"});
  check_model_error(load_error(weight(R"({"dtype": "f32", "shape": [2], "data": [1, 2], "scale": 3})")),
              ErrorCode::Schema, {"weight #0 'b' 'data'", "unknown key \"scale\""});
  check_model_error(load_error(weight(R"([1, 2])")), ErrorCode::Schema, {"weight #0 'b' 'data'", "expected an object"});
  check_model_error(load_error(weight(R"({"dtype": "f32", "shape": [2], "data": [1, "x"]})")),
              ErrorCode::Schema, {"weight #0 'b' 'data'", "element 1"});
}

TEST_CASE("unknown keys and wrong types in the new sections are schema errors", "[model_format]") {
  check_model_error(load_error(model_doc("", R"("weights": [{"name": "w", "dtype": "f32", "shape": [2], "init": 0}],)", "", "")),
              ErrorCode::Schema, {"weight #0: unknown key 'init'"});
  check_model_error(load_error(model_doc("", R"("states": [{"name": "s", "dtype": "f32", "shape": [2], "size": 8}],)", "", "")),
              ErrorCode::Schema, {"state #0: unknown key 'size'"});
  check_model_error(load_error(model_doc("", R"("state_updates": [{"state": "s", "value": "t", "op": 0}],)", "", "")),
              ErrorCode::Schema, {"state update #0: unknown key 'op'"});
  check_model_error(load_error(model_doc("", R"("state_updates": [{"state": "s"}],)", "", "")), ErrorCode::Schema,
              {"state update #0: 'value' must be a string"});
  check_model_error(load_error(model_doc("", R"("state_updates": [{"state": 3, "value": "t"}],)", "", "")), ErrorCode::Schema,
              {"state update #0: 'state' must be a string"});
  check_model_error(load_error(model_doc("", R"("weights": {"w": 1},)", "", "")), ErrorCode::Schema,
              {"program: 'weights' must be a list, got an object"});
  check_model_error(load_error(model_doc("", R"("states": "s",)", "", "")), ErrorCode::Schema,
              {"program: 'states' must be a list, got a string"});
  check_model_error(load_error(model_doc("", R"("weights": [{"name": "w", "dtype": "f17", "shape": [2]}],)", "", "")),
              ErrorCode::Schema, {"weight #0 'w': unknown element type 'f17'"});
  check_model_error(load_error(model_doc("", R"("weights": [{"dtype": "f32", "shape": [2]}],)", "", "")), ErrorCode::Schema,
              {"weight #0: 'name' must be a string"});
  auto state = [](const std::string& capacity) {
    return model_doc("", R"("states": [{"name": "s", "dtype": "f32", "shape": [2], "capacity": )" + capacity + "}],",
                 "", "");
  };
  check_model_error(load_error(state(R"({"words": 3})")), ErrorCode::Schema,
              {"state #0 's': 'capacity' has the unknown key 'words'"});
  check_model_error(load_error(state(R"({"bytes": 8, "elements": 2})")), ErrorCode::Schema,
              {"state #0 's': 'capacity' must be an object with one key, bytes or elements, got 2 keys"});
  check_model_error(load_error(state(R"({})")), ErrorCode::Schema, {"got 0 keys"});
  check_model_error(load_error(state("8")), ErrorCode::Schema, {"state #0 's': 'capacity' must be an object", "got an integer"});
  check_model_error(load_error(state(R"({"bytes": "8"})")), ErrorCode::Schema,
              {"state #0 's': 'capacity' 'bytes' must be a non-negative integer, got a string"});
  check_model_error(load_error(state(R"({"elements": 2.5})")), ErrorCode::Schema,
              {"'capacity' 'elements' must be a non-negative integer, got a number"});
  check_model_error(load_error(state(R"({"bytes": -8})")), ErrorCode::InvalidAttribute,
              {"state #0 's': 'capacity' 'bytes' is -8, must be non-negative"});
}

TEST_CASE("a state's capacity holds its shape and stays within the limit", "[model_format]") {
  auto state = [](const std::string& capacity) {
    return model_doc("", R"("states": [{"name": "k", "dtype": "f32", "shape": [64, 16], "capacity": )" + capacity +
                         "}],",
                 "", "");
  };
  check_model_error(load_error(state(R"({"bytes": 4095})")), ErrorCode::InvalidAttribute,
              {"state #0 'k': capacity of 4095 bytes is less than the 4096 bytes of its shape f32[64, 16]"});
  check_model_error(load_error(state(R"({"elements": 1023})")), ErrorCode::InvalidAttribute,
              {"state #0 'k': capacity of 1023 elements of f32 is less than the 4096 bytes"});
  check_model_error(load_error(state(R"({"bytes": 1099511627777})")), ErrorCode::LimitExceeded,
              {"state #0 'k': capacity of 1099511627777 bytes is over the limit of 1099511627776 bytes"});
  // 2^62 elements of 4 bytes overflow 64 bits; the largest count, too.
  check_model_error(load_error(state(R"({"elements": 4611686018427387904})")), ErrorCode::LimitExceeded,
              {"capacity of 4611686018427387904 elements of f32 is over the limit"});
  check_model_error(load_error(state(R"({"elements": 18446744073709551615})")), ErrorCode::LimitExceeded,
              {"capacity of 18446744073709551615 elements of f32 is over the limit"});
  check_model_error(load_error(state(R"({"elements": 274877906945})")), ErrorCode::LimitExceeded,
              {"elements of f32 is over the limit"});  // 2^38 + 1 elements: 4 bytes past 1 TiB
}

TEST_CASE("names are unique across inputs, weights, states and op results", "[model_format]") {
  check_model_error(load_error(small_model("", "", "", R"({"name": "x", "dtype": "f32", "shape": [4]})")),
              ErrorCode::DuplicateName, {"state #0 'x': name 'x' is already defined"});
  check_model_error(load_error(small_model("", "", "", R"({"name": "w", "dtype": "f32", "shape": [4]})")),
              ErrorCode::DuplicateName, {"state #0 'w': name 'w' is already defined"});
  check_model_error(load_error(model_doc(R"({"name": "w", "dtype": "f32", "shape": [4]})",
                               R"("weights": [{"name": "w", "dtype": "f32", "shape": [4]}],)", "", "")),
              ErrorCode::DuplicateName, {"weight #0 'w': name 'w' is already defined"});
  check_model_error(load_error(small_model(R"({"op": "negate", "in": ["x"], "out": "s"})", "", "")),
              ErrorCode::DuplicateName, {"op #0 (negate -> 's'): name 's' is already defined"});
  check_model_error(load_error(model_doc("", R"("weights": [{"name": "", "dtype": "f32", "shape": [4]}],)", "", "")),
              ErrorCode::Schema, {"weight #0 '': a value name must not be empty"});
  check_model_error(load_error(model_doc("", "\"states\": [{\"name\": \"a\\u0001\", \"dtype\": \"f32\", \"shape\": [4]}],", "", "")),
              ErrorCode::Schema, {"state #0 'a\\u0001'", "control character"});
}

TEST_CASE("a state update names a state and an op result", "[model_format]") {
  const std::string negate_s = R"({"op": "negate", "in": ["s"], "out": "t"})";
  check_model_error(load_error(small_model(negate_s, R"({"state": "nope", "value": "t"})", "")),
              ErrorCode::UndefinedName, {"state update #0: state 'nope' is not defined"});
  check_model_error(load_error(small_model(negate_s, R"({"state": "s", "value": "nope"})", "")),
              ErrorCode::UndefinedName, {"state update #0: value 'nope' is not defined"});
  check_model_error(load_error(small_model(R"({"op": "negate", "in": ["w"], "out": "t"})",
                                     R"({"state": "w", "value": "t"})", "")),
              ErrorCode::InvalidAttribute, {"state update #0: 'w' is a weight, not a state"});
  check_model_error(load_error(small_model(negate_s, R"({"state": "t", "value": "t"})", "")),
              ErrorCode::InvalidAttribute, {"state update #0: 't' is an op's result, not a state"});
  check_model_error(load_error(small_model(negate_s, R"({"state": "s", "value": "x"})", "")),
              ErrorCode::InvalidAttribute,
              {"state update #0: the value 'x' is an input; an update is the result of an op"});
  check_model_error(load_error(small_model(negate_s, R"({"state": "s", "value": "w"})", "")),
              ErrorCode::InvalidAttribute, {"state update #0: the value 'w' is a weight"});
  check_model_error(load_error(small_model(negate_s, R"({"state": "s", "value": "s"})", "")),
              ErrorCode::InvalidAttribute, {"state update #0: the value 's' is a state"});
}

TEST_CASE("an update has exactly the state's dtype and concrete shape", "[model_format]") {
  check_model_error(load_error(small_model(R"({"op": "convert", "in": ["s"], "out": "t", "dtype": "f64"})",
                                     R"({"state": "s", "value": "t"})", "")),
              ErrorCode::TypeMismatch,
              {"state update #0: the value 't' is f64[4], the state 's' is f32[4]; an update has exactly the "
               "state's dtype and shape"});
  check_model_error(load_error(small_model(R"({"op": "slice", "in": ["s"], "out": "t", "start_indices": [0],
                                        "limit_indices": [2]})",
                                     R"({"state": "s", "value": "t"})", "")),
              ErrorCode::ShapeMismatch, {"state update #0: the value 't' is f32[2], the state 's' is f32[4]"});
  // A symbolic extent is not the state's, even when it may equal it at run time.
  check_model_error(load_error(model_doc(R"({"name": "x", "dtype": "f32", "shape": ["N"]})",
                               R"("states": [{"name": "s", "dtype": "f32", "shape": [4]}],
                                  "state_updates": [{"state": "s", "value": "t"}],)",
                               R"({"op": "pad_to_match", "in": ["s", "x"], "out": "t"})", "")),
              ErrorCode::ShapeMismatch, {"state update #0: the value 't' is f32[N], the state 's' is f32[4]"});
}

TEST_CASE("an update is computed by an op that reads the state last", "[model_format]") {
  check_model_error(load_error(small_model(R"({"op": "negate", "in": ["x"], "out": "t"})",
                                     R"({"state": "s", "value": "t"})", "")),
              ErrorCode::InvalidAttribute,
              {"state update #0: op #0 (negate -> 't'), which computes the value 't', does not read state 's'"});
  check_model_error(load_error(small_model(R"({"op": "negate", "in": ["s"], "out": "t"},
                                        {"op": "abs", "in": ["x"], "out": "u"},
                                        {"op": "add", "in": ["u", "s"], "out": "v"})",
                                     R"({"state": "s", "value": "t"})", R"("v")")),
              ErrorCode::InvalidAttribute,
              {"state update #0: state 's' is read by op #2 (add -> 'v') after its update by op #0 (negate -> "
               "'t'): an update must be the state's last reader"});
  // Reads before the update, and reads of the update itself, are fine; the
  // operand is the first one naming the state.
  const SemanticProgram p = load_model_ok(small_model(
      R"({"op": "abs", "in": ["s"], "out": "a"}, {"op": "add", "in": ["a", "s"], "out": "t"},
         {"op": "add", "in": ["s", "t"], "out": "t2"}, {"op": "negate", "in": ["t2"], "out": "y"})",
      R"({"state": "s", "value": "t2"})", R"("y")"));
  REQUIRE(p.state_updates().size() == 1);
  CHECK(update_text(p.state_updates()[0]) == "state 2 <- value 5: op 2 result 0, operand 0");
  const SemanticProgram q = load_model_ok(small_model(R"({"op": "add", "in": ["x", "s"], "out": "t"})",
                                                R"({"state": "s", "value": "t"})", ""));
  REQUIRE(q.state_updates().size() == 1);
  CHECK(update_text(q.state_updates()[0]) == "state 2 <- value 3: op 0 result 0, operand 1");
}

TEST_CASE("a state is updated once and a value updates one state", "[model_format]") {
  check_model_error(load_error(small_model(R"({"op": "negate", "in": ["s"], "out": "t"})",
                                     R"({"state": "s", "value": "t"}, {"state": "s", "value": "t"})", "")),
              ErrorCode::InvalidAttribute,
              {"state update #1: state 's' is already updated by state update #0; a state is updated at most once"});
  check_model_error(load_error(small_model(R"({"op": "add", "in": ["s", "s2"], "out": "t"})",
                                     R"({"state": "s", "value": "t"}, {"state": "s2", "value": "t"})", "",
                                     R"({"name": "s", "dtype": "f32", "shape": [4]},
                                        {"name": "s2", "dtype": "f32", "shape": [4]})")),
              ErrorCode::InvalidAttribute,
              {"state update #1: the value 't' already updates state 's'; a value updates at most one state"});
}

TEST_CASE("an op with several results may update several states it reads", "[model_format]") {
  ExtensionRegistry extensions;
  extensions.add("t.pair", [](std::span<const ValueType> in, const std::string&) -> Result<std::vector<ValueType>> {
    return std::vector<ValueType>{in[0], in[1]};
  });
  auto p = load_program(model_doc("", R"("states": [{"name": "s1", "dtype": "f32", "shape": [2]},
                                                   {"name": "s2", "dtype": "i32", "shape": [3]}],
                                        "state_updates": [{"state": "s2", "value": "b"}, {"state": "s1", "value": "a"}],)",
                                  R"({"op": "extension", "family": "t.pair", "in": ["s1", "s2"], "out": ["a", "b"]})",
                                  ""),
                        extensions);
  REQUIRE(p.ok());
  REQUIRE(p->state_updates().size() == 2);  // document order
  CHECK(update_text(p->state_updates()[0]) == "state 1 <- value 3: op 0 result 1, operand 1");
  CHECK(update_text(p->state_updates()[1]) == "state 0 <- value 2: op 0 result 0, operand 0");
}

TEST_CASE("outputs are op results, never weights, states or updates", "[model_format]") {
  const std::string ops = R"({"op": "add", "in": ["s", "w"], "out": "t"})";
  const std::string update = R"({"state": "s", "value": "t"})";
  check_model_error(load_error(small_model(ops, update, R"("w")")), ErrorCode::InvalidAttribute,
              {"output 'w' is a weight"});
  check_model_error(load_error(small_model(ops, update, R"("s")")), ErrorCode::InvalidAttribute,
              {"output 's' is a state: read states with Model::state"});
  check_model_error(load_error(small_model(ops, update, R"("t")")), ErrorCode::InvalidAttribute,
              {"output 't' is the update of state 's': read states with Model::state"});
  // An input may still pass through.
  const SemanticProgram p = load_model_ok(small_model(ops, update, R"("x")"));
  CHECK(p.outputs() == std::vector<ValueId>{0});
}

TEST_CASE("model errors are collected with the others, without cascades", "[model_format]") {
  const ValidationReport report = load_program_all(model_doc(
      R"({"name": "x", "dtype": "f32", "shape": [4]})",
      R"("weights": [{"name": "w", "dtype": "f32", "shape": ["B"]}],
         "states": [{"name": "s", "dtype": "f32", "shape": [4], "capacity": {"bytes": 3}}],
         "state_updates": [{"state": "s", "value": "t"}, {"state": "x", "value": "u"}],)",
      R"({"op": "add", "in": ["w", "x"], "out": "u"}, {"op": "negate", "in": ["s"], "out": "t"})", R"("x")"));
  // The weight and the state fail; ops and updates that use them add nothing;
  // updating an input is reported (its value 'u' failed, so only once).
  REQUIRE(report.errors.size() == 2);
  CHECK_THAT(report.errors[0].message(), Catch::Contains("weight #0 'w' axis 0"));
  CHECK_THAT(report.errors[1].message(), Catch::Contains("state #0 's': capacity of 3 bytes is less"));
}

// -- builder, saving, fingerprint -------------------------------------------

namespace {

// kDecoder through the builder.
Result<SemanticProgram> build_decoder(uint64_t k_capacity_elements = 2048) {
  ProgramBuilder b{"decoder"};
  auto x = b.input("x", DType::F32, {1, 16});
  auto pos = b.input("pos", DType::I32, {});
  auto w = b.weight("w", DType::F32, {16, 16});
  auto data = HostTensor::zeros(DType::F32, {2});
  REQUIRE(data.ok());
  data->data_as<float>()[0] = 0.5f;
  data->data_as<float>()[1] = -1.0f;
  b.weight("b", DType::F32, {2}, *data);
  auto k = b.state("k_cache", DType::F32, {64, 16}, CapacityUnit::Elements, k_capacity_elements);
  auto count = b.state("count", DType::I64, {});
  DotGeneralAttrs contract;
  contract.lhs_contracting_dimensions = {1};
  contract.rhs_contracting_dimensions = {0};
  auto row = b.dot_general(x, w, contract, "row");
  auto zero = b.constant(DType::I32, {}, Scalar::of_int(0), "zero");
  auto k_next = b.op(OpKind::DynamicUpdateSlice, {k, row, pos, zero}, NoAttrs{}, "k_next");
  auto one = b.constant(DType::I64, {}, Scalar::of_int(1), "one");
  auto count_next = b.binary(OpKind::Add, count, one, "count_next");
  auto y = b.reduce(OpKind::ReduceSum, k_next, {0}, "y");
  b.state_update(k, k_next);
  b.state_update(count, count_next);
  b.output(y);
  return b.build();
}

}  // namespace

TEST_CASE("the builder and the JSON loader give equal models", "[model_format]") {
  const SemanticProgram loaded = load_model_ok(kDecoder);
  auto built = build_decoder();
  REQUIRE(built.ok());
  CHECK(*built == loaded);
  CHECK(built->fingerprint() == loaded.fingerprint());
  CHECK(built->states()[0].capacity_bytes == 8192);
  auto other = build_decoder(4096);
  REQUIRE(other.ok());
  CHECK_FALSE(*other == loaded);
}

TEST_CASE("builder errors for weights and states surface from build()", "[model_format]") {
  ProgramBuilder b;
  b.weight("w", DType::F32, {"2 +"});
  auto r = b.build();
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message(), Catch::Contains("weight #0 'w' shape element 0"));

  ProgramBuilder c;
  auto s = c.state("s", DType::F32, {4}, CapacityUnit::Bytes, 15);
  auto t = c.unary(OpKind::Negate, s, "t");
  c.state_update(s, t);
  auto e = c.build();
  REQUIRE_FALSE(e.ok());
  check_model_error(e.error(), ErrorCode::InvalidAttribute, {"state #0 's': capacity of 15 bytes is less than the 16"});

  ProgramBuilder d;
  auto data = HostTensor::zeros(DType::I32, {3});
  REQUIRE(data.ok());
  d.weight("w", DType::F32, {3}, *data);
  check_model_error(d.build().error(), ErrorCode::TypeMismatch, {"weight #0 'w': its inline data is i32[3], the weight is f32[3]"});

  // Inline data must be host memory (here a view the host may not address).
  struct KeepMemory : BufferAllocator {
    void release(std::byte*, size_t) noexcept override {}
  };
  static std::byte memory[12];
  auto buffer = Buffer::adopt(memory, sizeof memory, 4, Endpoint{"sim:1", "device"}, false,
                              std::make_shared<KeepMemory>());
  REQUIRE(buffer.ok());
  auto on_device = Tensor::view(*buffer, DType::F32, {3}, {1}, 0);
  REQUIRE(on_device.ok());
  ProgramBuilder f;
  f.weight("w", DType::F32, {3}, *on_device);
  check_model_error(f.build().error(), ErrorCode::InvalidAttribute,
                    {"weight #0 'w' data: not in host memory (sim:1/device)"});
}

TEST_CASE("builder inline data is kept dense, a strided view included", "[model_format]") {
  auto base = HostTensor::zeros(DType::I32, {2, 3});
  REQUIRE(base.ok());
  for (int i = 0; i < 6; ++i) base->data_as<int32_t>()[i] = i;  // [[0 1 2] [3 4 5]]
  const std::vector<int64_t> perm = {1, 0};
  ProgramBuilder b;
  b.weight("w", DType::I32, {3, 2}, base->transposed(perm));
  auto p = b.build();
  REQUIRE(p.ok());
  const HostTensor& w = *p->weights()[0].inline_data;
  CHECK(w.is_contiguous());
  CHECK(std::vector<int32_t>(w.data_as<int32_t>(), w.data_as<int32_t>() + 6) ==
        std::vector<int32_t>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("save then load keeps a model, its capacity units and fingerprint", "[model_format]") {
  const SemanticProgram p = load_model_ok(swap_text(kDecoder, R"("name": "count", "dtype": "i64", "shape": [])",
                                             R"("name": "count", "dtype": "i64", "shape": [], "capacity": {"bytes": 13})"));
  CHECK(p.states()[1].capacity_bytes == 16);
  const std::string saved = save_program_json(p);
  INFO(saved);
  // Each capacity in the unit it was written in; the inline data as a JSON tensor.
  CHECK_THAT(saved, Catch::Contains(R"({"capacity":{"elements":2048},"dtype":"f32","name":"k_cache","shape":[64,16]})"));
  CHECK_THAT(saved, Catch::Contains(R"({"capacity":{"bytes":13},"dtype":"i64","name":"count","shape":[]})"));
  CHECK_THAT(saved, Catch::Contains(R"({"dtype":"f32","name":"w","shape":[16,16]})"));
  CHECK_THAT(saved, Catch::Contains(R"("data":{"data":[0.5,-1.0],"dtype":"f32","shape":[2]})"));
  CHECK_THAT(saved, Catch::Contains(R"("state_updates": [
    {"state":"k_cache","value":"k_next"},
    {"state":"count","value":"count_next"}
  ],)"));
  const SemanticProgram again = load_model_ok(saved);
  CHECK(again == p);
  CHECK(again.fingerprint() == p.fingerprint());
  CHECK(again.canonical_encoding() == p.canonical_encoding());
  CHECK(again.states()[1].capacity_bytes == 16);
  REQUIRE(again.weights()[1].inline_data.has_value());
  CHECK(again.weights()[1].inline_data->bitwise_equal(*p.weights()[1].inline_data));
  const ProgramDraft draft = again.to_draft();
  REQUIRE(draft.states.size() == 2);
  CHECK(draft.states[0].capacity_unit == CapacityUnit::Elements);
  CHECK(draft.states[0].capacity == 2048);
  CHECK(draft.states[1].capacity_unit == CapacityUnit::Bytes);
  CHECK(draft.states[1].capacity == 13);
  REQUIRE(draft.state_updates.size() == 2);
  CHECK(draft.state_updates[1].state == "count");
  CHECK(draft.state_updates[1].value == "count_next");
  // The builder's draft saves to the same document.
  auto built = build_decoder();
  REQUIRE(built.ok());
  CHECK(save_program_json(*built) == save_program_json(load_model_ok(kDecoder)));
}

TEST_CASE("a model's fingerprint changes with its weights, states and updates", "[model_format]") {
  const Fingerprint base = load_model_ok(kDecoder).fingerprint();
  auto fp = [](const std::string& text) { return load_model_ok(text).fingerprint(); };
  // A weight's shape, dtype and name; its inline data, bit for bit, and whether it has any.
  const std::string unused = R"({"name": "w", "dtype": "f32", "shape": [16, 16]})";
  const Fingerprint with_u3 = fp(swap_text(kDecoder, unused, unused + R"(, {"name": "u", "dtype": "f32", "shape": [3]})"));
  CHECK(with_u3 != base);
  CHECK(with_u3 != fp(swap_text(kDecoder, unused, unused + R"(, {"name": "u", "dtype": "f32", "shape": [4]})")));
  CHECK(with_u3 != fp(swap_text(kDecoder, unused, unused + R"(, {"name": "u", "dtype": "f64", "shape": [3]})")));
  CHECK(with_u3 != fp(swap_text(kDecoder, unused, unused + R"(, {"name": "v", "dtype": "f32", "shape": [3]})")));
  CHECK(base != fp(swap_text(kDecoder, "[0.5, -1]", "[0.5, -2]")));
  CHECK(base != fp(swap_text(kDecoder, R"(, "data": {"dtype": "f32", "shape": [2], "data": [0.5, -1]})", "")));
  // A state's capacity (in bytes, whatever unit wrote it) and its name.
  CHECK(base != fp(swap_text(kDecoder, R"({"elements": 2048})", R"({"elements": 2049})")));
  CHECK(base == fp(swap_text(kDecoder, R"({"elements": 2048})", R"({"bytes": 8192})")));
  CHECK(base == fp(swap_text(kDecoder, R"({"elements": 2048})", R"({"bytes": 8190})")));  // rounds up to 8192
  CHECK(base != fp(swap_text(kDecoder, R"({"elements": 2048})", R"({"bytes": 4096})")));
  // An update.
  CHECK(base != fp(swap_text(kDecoder, R"(, {"state": "count", "value": "count_next"})", "")));
}

TEST_CASE("a program without weights and states keeps its encoding and fingerprint", "[model_format]") {
  const SemanticProgram p = load_model_ok(
      R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}],
          "ops": [{"op": "negate", "in": ["x"], "out": "y"}], "outputs": ["y"]})");
  // The encoding as fingerprint.cpp documents it (integers little-endian,
  // 8 bytes; strings and lists length-prefixed), with no model part.
  std::string expected;
  auto u8 = [&](uint64_t v) { expected.push_back(static_cast<char>(v)); };
  auto u64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) u8((v >> (8 * i)) & 0xff);
  };
  auto str = [&](const std::string& text) {
    u64(text.size());
    expected += text;
  };
  auto type_f32_2 = [&] {
    u8(static_cast<uint8_t>(DType::F32));
    u64(1);                                        // rank
    u8(static_cast<uint8_t>(ExtentKind::Exact));
    str("2");
  };
  str("tenact.program/1");
  u64(1);  // inputs: id 0, "x", f32[2]
  u64(0);
  str("x");
  type_f32_2();
  u64(1);  // ops: negate (0) -> 1, no attributes
  u8(static_cast<uint8_t>(OpKind::Negate));
  u64(1);
  u64(0);
  u64(1);
  u64(1);
  type_f32_2();
  u8(0);  // OpAttrs index of NoAttrs
  u64(1);  // outputs: id 1, "y"
  u64(1);
  str("y");
  u64(0);  // constraints
  CHECK(p.canonical_encoding() == expected);
  // The fingerprint the same document had before models were added.
  CHECK(p.fingerprint().to_hex() == "98c95ade75130f3439d6ec4a835036a6");
}

TEST_CASE("the example of docs/program-format.md, \"Weights and states\", loads", "[model_format]") {
  std::ifstream in(std::string{TENACT_SOURCE_DIR} + "/docs/program-format.md");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto section = doc.find("## Weights and states");
  REQUIRE(section != std::string::npos);
  const auto begin = doc.find("```json\n", section);
  REQUIRE(begin != std::string::npos);
  const auto end = doc.find("```", begin + 8);
  REQUIRE(end != std::string::npos);
  const SemanticProgram p = load_model_ok(doc.substr(begin + 8, end - begin - 8));
  CHECK(p.name() == "decoder_step");
  CHECK(p == load_model_ok(kDecoder));  // the same model as the tests' decoder
}
