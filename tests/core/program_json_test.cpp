// The JSON program loader: the spec's own example, every document-level
// error, constants, extensions, guards, symbols, and the save/load round trip.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <span>

#include "core/program_json.hpp"
#include "program_test_support.hpp"

using namespace tenact;

namespace {

using tenact::testing::load_error;

// Wraps ops/inputs into a complete document.
std::string doc(const std::string& inputs, const std::string& ops, const std::string& outputs,
                const std::string& extra = "") {
  return R"({"format": "tenact.program/1", )" + extra + R"("inputs": [)" + inputs +
         R"(], "ops": [)" + ops + R"(], "outputs": [)" + outputs + "]}";
}

const ValueInfo& value_named(const SemanticProgram& p, const std::string& name) {
  for (const auto& v : p.values())
    if (v.name == name) return v;
  FAIL("no value named " << name);
  return p.values().front();
}

std::string type_of(const SemanticProgram& p, const std::string& name) {
  return value_named(p, name).type.to_string();
}

// The example of docs/program-format.md, verbatim.
const char* kSpecExample = R"({
  "format": "tenact.program/1",
  "name": "mlp",
  "inputs": [
    {"name": "x",  "dtype": "f32", "shape": ["B", 784]},
    {"name": "w1", "dtype": "f32", "shape": [784, 128]},
    {"name": "b1", "dtype": "f32", "shape": [128]}
  ],
  "guards": ["B <= 65536"],
  "ops": [
    {"op": "dot_general", "in": ["x", "w1"], "out": "h",
     "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
    {"op": "broadcast_in_dim", "in": ["b1"], "out": "bb",
     "shape": ["B", 128], "broadcast_dimensions": [1]},
    {"op": "add", "in": ["h", "bb"], "out": "z"},
    {"op": "constant", "out": "zero", "dtype": "f32", "shape": ["B", 128], "value": 0},
    {"op": "maximum", "in": ["z", "zero"], "out": "y"}
  ],
  "outputs": ["y"]
})";

}  // namespace

TEST_CASE("the format's example program loads with every type inferred", "[program_json]") {
  auto p = load_program(kSpecExample);
  REQUIRE(p.ok());
  CHECK(p->name() == "mlp");
  CHECK(type_of(*p, "h") == "f32[B, 128]");
  CHECK(type_of(*p, "bb") == "f32[B, 128]");
  CHECK(type_of(*p, "z") == "f32[B, 128]");
  CHECK(type_of(*p, "zero") == "f32[B, 128]");
  CHECK(type_of(*p, "y") == "f32[B, 128]");
  REQUIRE(p->outputs().size() == 1);
  CHECK(p->value(p->outputs()[0]).name == "y");
  REQUIRE(p->symbols().size() == 1);
  CHECK(p->symbols()[0].symbol == "B");
  CHECK(p->symbols()[0].input == 0);
  CHECK(p->symbols()[0].axis == 0);
  REQUIRE(p->constraints().size() == 1);  // only the guard: every op check is decided
  CHECK(p->constraints()[0].lhs.to_string() == "B");
  CHECK(p->constraints()[0].rel == Relation::Le);
  CHECK(p->constraints()[0].rhs.to_string() == "65536");
}

TEST_CASE("save then load gives an equal program with the same fingerprint", "[program_json]") {
  auto p = load_program(kSpecExample);
  REQUIRE(p.ok());
  const std::string saved = save_program_json(*p);
  auto q = load_program(saved);
  REQUIRE(q.ok());
  CHECK(*p == *q);
  CHECK(p->fingerprint() == q->fingerprint());
  CHECK(save_program_json(*q) == saved);  // the saved text is a fixed point
}

TEST_CASE("attributes of every kind survive the round trip", "[program_json]") {
  const std::string text = doc(
      R"({"name": "x", "dtype": "f32", "shape": ["N", 6]},
         {"name": "i", "dtype": "i32", "shape": []},
         {"name": "ids", "dtype": "i64", "shape": [3, 1]},
         {"name": "c", "dtype": "c64", "shape": [2]})",
      R"({"op": "transpose", "in": ["x"], "out": "t", "permutation": [1, 0]},
         {"op": "reshape", "in": ["x"], "out": "r", "shape": ["2*N", 3]},
         {"op": "slice", "in": ["x"], "out": "s", "start_indices": [0, 1], "limit_indices": ["N", 5], "strides": [1, 2]},
         {"op": "constant", "out": "pv", "dtype": "f32", "shape": [], "value": "-inf"},
         {"op": "pad", "in": ["x", "pv"], "out": "pd", "edge_padding_low": [1, -1], "edge_padding_high": [0, 2], "interior_padding": [1, 0]},
         {"op": "dynamic_slice", "in": ["x", "i", "i"], "out": "ds", "slice_sizes": [1, 6]},
         {"op": "reduce_max", "in": ["x"], "out": "m", "dimensions": [1]},
         {"op": "compare", "in": ["x", "x"], "out": "lt", "direction": "LT"},
         {"op": "iota", "out": "io", "dtype": "c64", "shape": [2], "iota_dimension": 0},
         {"op": "constant", "out": "k", "dtype": "c64", "shape": [2], "value": [[1, 2], ["nan", "-inf"]]},
         {"op": "tril", "in": ["x"], "out": "tl", "k": -1},
         {"op": "gather", "in": ["x", "ids"], "out": "g", "offset_dims": [1], "collapsed_slice_dims": [0],
          "start_index_map": [0], "index_vector_dim": 1, "slice_sizes": [1, 6]},
         {"op": "dot_general", "in": ["c", "k"], "out": "d", "lhs_contracting_dimensions": [0],
          "rhs_contracting_dimensions": [0], "conj_lhs": true},
         {"op": "pad_to_match", "in": ["c", "k"], "out": "pm", "value": [0, 1]},
         {"op": "convert", "in": ["x"], "out": "h", "dtype": "bf16"})",
      R"("t", "r", "s", "pd", "ds", "m", "lt", "io", "tl", "g", "d", "pm", "h", "x")",
      R"("guards": ["N >= 5"], )");
  auto p = load_program(text);
  REQUIRE(p.ok());
  CHECK(type_of(*p, "t") == "f32[6, N]");
  CHECK(type_of(*p, "r") == "f32[2*N, 3]");
  CHECK(type_of(*p, "s") == "f32[N, 2]");
  CHECK(type_of(*p, "m") == "f32[N]");
  CHECK(type_of(*p, "lt") == "bool[N, 6]");
  CHECK(type_of(*p, "g") == "f32[3, 6]");
  CHECK(type_of(*p, "d") == "c64[]");
  CHECK(type_of(*p, "h") == "bf16[N, 6]");
  {
    // rows: low 1 + N + interior 1 * max(N - 1, 0); columns: 6 - 1 + 2.
    const Shape& pd = value_named(*p, "pd").type.shape;
    REQUIRE(pd.size() == 2);
    CHECK(*pd[0].expr.evaluate({{"N", 5}}) == 10);
    CHECK(*pd[0].expr.evaluate({{"N", 0}}) == 1);
    CHECK(pd[1].expr.to_string() == "7");
  }
  CHECK(type_of(*p, "pm") == "c64[2]");
  const std::string saved = save_program_json(*p);
  auto q = load_program(saved);
  REQUIRE(q.ok());
  CHECK(*p == *q);
  CHECK(save_program_json(*q) == saved);
}

TEST_CASE("document-level errors name what is wrong", "[program_json]") {
  SECTION("format") {
    auto e = load_error(R"({"inputs": [], "ops": [], "outputs": []})");
    CHECK(e.code() == ErrorCode::Schema);
    CHECK_THAT(e.message(), Catch::Contains("missing 'format'"));
    e = load_error(R"({"format": "tenact.program/2", "inputs": [], "ops": [], "outputs": []})");
    CHECK_THAT(e.message(), Catch::Contains("tenact.program/2"));
  }
  SECTION("unknown top-level key") {
    auto e = load_error(doc("", "", "", R"("output": [], )"));
    CHECK(e.code() == ErrorCode::Schema);
    CHECK_THAT(e.message(), Catch::Contains("unknown key 'output'"));
  }
  SECTION("missing or mistyped lists") {
    auto e = load_error(R"({"format": "tenact.program/1", "inputs": [], "ops": {}, "outputs": []})");
    CHECK_THAT(e.message(), Catch::Contains("'ops' must be a list"));
    e = load_error(R"({"format": "tenact.program/1", "inputs": [], "ops": []})");
    CHECK_THAT(e.message(), Catch::Contains("missing 'outputs'"));
  }
  SECTION("not an object") {
    CHECK(load_error("[1, 2]").code() == ErrorCode::Schema);
    CHECK(load_error("").code() == ErrorCode::Parse);
  }
  SECTION("input declarations") {
    auto e = load_error(doc(R"({"name": "x", "dtype": "float", "shape": [2]})", "", ""));
    CHECK_THAT(e.message(), Catch::Contains("unknown element type 'float'"));
    e = load_error(doc(R"({"name": "x", "dtype": "f32", "shape": [2], "layout": "nhwc"})", "", ""));
    CHECK_THAT(e.message(), Catch::Contains("unknown key 'layout'"));
    e = load_error(doc(R"({"name": "x", "dtype": "f32", "shape": [2.5]})", "", ""));
    CHECK_THAT(e.message(), Catch::Contains("shape element 0"));
    e = load_error(doc(R"({"name": "x", "dtype": "f32", "shape": [-2]})", "", ""));
    CHECK(e.code() == ErrorCode::ShapeMismatch);
  }
}

TEST_CASE("op-level schema errors name the op and the key", "[program_json]") {
  const std::string in = R"({"name": "x", "dtype": "f32", "shape": [4]})";
  auto e = load_error(doc(in, R"({"op": "frobnicate", "in": ["x"], "out": "y"})", R"("y")"));
  CHECK(e.code() == ErrorCode::UnknownOp);
  CHECK_THAT(e.message(), Catch::Contains("op #0 (frobnicate -> 'y')"));
  e = load_error(doc(in, R"({"op": "negate", "in": ["x"], "out": "y", "dimension": 1})", R"("y")"));
  CHECK(e.code() == ErrorCode::Schema);
  CHECK_THAT(e.message(), Catch::Contains("op #0 (negate -> 'y'): unknown attribute 'dimension'"));
  e = load_error(doc(in, R"({"op": "transpose", "in": ["x"], "out": "y"})", R"("y")"));
  CHECK_THAT(e.message(), Catch::Contains("missing attribute 'permutation'"));
  e = load_error(doc(in, R"({"op": "transpose", "in": ["x"], "out": "y", "permutation": "0"})", R"("y")"));
  CHECK_THAT(e.message(), Catch::Contains("expected a list of integers"));
  e = load_error(doc(in, R"({"op": "compare", "in": ["x", "x"], "out": "y", "direction": "LESS"})", R"("y")"));
  CHECK(e.code() == ErrorCode::InvalidAttribute);
  CHECK_THAT(e.message(), Catch::Contains("'LESS'"));
  e = load_error(doc(in, R"({"op": "negate", "in": ["x"]})", ""));
  CHECK_THAT(e.message(), Catch::Contains("missing 'out'"));
  e = load_error(doc(in, R"({"op": "negate", "in": "x", "out": "y"})", R"("y")"));
  CHECK_THAT(e.message(), Catch::Contains("expected a list of strings"));
}

TEST_CASE("names are SSA: defined once, above their uses", "[program_json]") {
  const std::string in = R"({"name": "x", "dtype": "f32", "shape": [4]})";
  auto e = load_error(doc(in, R"({"op": "negate", "in": ["w"], "out": "y"})", R"("y")"));
  CHECK(e.code() == ErrorCode::UndefinedName);
  CHECK_THAT(e.message(), Catch::Contains("operand 'w' is not defined"));
  e = load_error(doc(in, R"({"op": "negate", "in": ["x"], "out": "x"})", R"("x")"));
  CHECK(e.code() == ErrorCode::DuplicateName);
  CHECK_THAT(e.message(), Catch::Contains("name 'x' is already defined"));
  e = load_error(doc(in, R"({"op": "negate", "in": ["z"], "out": "y"}, {"op": "negate", "in": ["x"], "out": "z"})",
                     R"("y")"));
  CHECK(e.code() == ErrorCode::UndefinedName);
  e = load_error(doc(in, "", R"("nothing")"));
  CHECK_THAT(e.message(), Catch::Contains("output 'nothing' is not defined"));
  // An output may be an input and may repeat.
  auto p = load_program(doc(in, "", R"("x", "x")"));
  REQUIRE(p.ok());
  CHECK(p->outputs().size() == 2);
}

TEST_CASE("validation collects every error without cascades", "[program_json]") {
  const std::string in = R"({"name": "x", "dtype": "f32", "shape": [4]}, {"name": "k", "dtype": "i32", "shape": [4]})";
  ValidationReport r = load_program_all(doc(in,
      R"({"op": "add", "in": ["x", "k"], "out": "a"},
         {"op": "negate", "in": ["a"], "out": "b"},
         {"op": "sqrt", "in": ["k"], "out": "c"},
         {"op": "negate", "in": ["missing"], "out": "d"})",
      R"("b", "c", "d")"));
  REQUIRE(r.errors.size() == 3);  // a's dtype mismatch, c's dtype, d's undefined operand; b is not reported
  CHECK(r.errors[0].code() == ErrorCode::TypeMismatch);
  CHECK_THAT(r.errors[0].message(), Catch::StartsWith("op #0 (add -> 'a')"));
  CHECK(r.errors[1].code() == ErrorCode::TypeMismatch);
  CHECK_THAT(r.errors[1].message(), Catch::StartsWith("op #2 (sqrt -> 'c')"));
  CHECK(r.errors[2].code() == ErrorCode::UndefinedName);
  auto first = load_program(doc(in, R"({"op": "add", "in": ["x", "k"], "out": "a"}, {"op": "sqrt", "in": ["k"], "out": "c"})", R"("c")"));
  REQUIRE_FALSE(first.ok());
  CHECK_THAT(first.error().message(), Catch::Contains("(and 1 more errors)"));
}

TEST_CASE("symbols are bound by an input dimension naming them alone", "[program_json]") {
  SECTION("a symbol used only inside an expression is unbound") {
    auto e = load_error(doc(R"({"name": "x", "dtype": "f32", "shape": ["2*B"]})", "", R"("x")"));
    CHECK(e.code() == ErrorCode::UnboundSymbol);
    CHECK_THAT(e.message(), Catch::Contains("symbol 'B'"));
  }
  SECTION("an expression over a bound symbol is fine") {
    auto p = load_program(doc(R"({"name": "x", "dtype": "f32", "shape": ["B"]}, {"name": "y", "dtype": "f32", "shape": ["2*B"]})",
                              "", R"("y")"));
    CHECK(p.ok());
  }
  SECTION("an attribute symbol bound by no input") {
    auto e = load_error(doc(R"({"name": "x", "dtype": "f32", "shape": ["N"]})",
                            R"({"op": "reshape", "in": ["x"], "out": "y", "shape": ["M"]})", R"("y")"));
    CHECK(e.code() == ErrorCode::UnboundSymbol);
    CHECK_THAT(e.message(), Catch::Contains("op #0 (reshape -> 'y')"));
    CHECK_THAT(e.message(), Catch::Contains("symbol 'M'"));
  }
  SECTION("the same symbol in two inputs is an equality of their dimensions") {
    auto p = load_program(doc(R"({"name": "x", "dtype": "f32", "shape": ["N"]}, {"name": "y", "dtype": "f32", "shape": ["N"]})",
                              R"({"op": "add", "in": ["x", "y"], "out": "z"})", R"("z")"));
    REQUIRE(p.ok());
    CHECK(p->constraints().empty());
    CHECK(p->symbols().size() == 1);
  }
  SECTION("a check that depends on a symbol is deferred to signature time") {
    auto p = load_program(doc(R"({"name": "x", "dtype": "f32", "shape": ["B"]}, {"name": "y", "dtype": "f32", "shape": [4]})",
                              R"({"op": "add", "in": ["x", "y"], "out": "z"})", R"("z")"));
    REQUIRE(p.ok());
    REQUIRE(p->constraints().size() == 1);
    CHECK(p->constraints()[0].origin == "op #0 (add -> 'z')");
  }
}

TEST_CASE("guards are parsed, decided when certain and kept otherwise", "[program_json]") {
  const std::string in = R"({"name": "x", "dtype": "f32", "shape": ["B", 3]})";
  auto p = load_program(doc(in, "", R"("x")", R"("guards": ["B + 1 >= 1", "B*2 <= 64"], )"));
  REQUIRE(p.ok());
  REQUIRE(p->constraints().size() == 1);  // the first always holds
  CHECK(p->constraints()[0].origin == "guard 'B*2 <= 64'");
  auto e = load_error(doc(in, "", R"("x")", R"("guards": ["B + 1 <= 0"], )"));
  CHECK(e.code() == ErrorCode::GuardViolated);
  CHECK_THAT(e.message(), Catch::Contains("guard 'B + 1 <= 0'"));
  e = load_error(doc(in, "", R"("x")", R"("guards": ["B < 3"], )"));
  CHECK(e.code() == ErrorCode::Parse);
  CHECK_THAT(e.message(), Catch::Contains("guard 'B < 3'"));
  e = load_error(doc(in, "", R"("x")", R"("guards": ["C <= 3"], )"));
  CHECK(e.code() == ErrorCode::UnboundSymbol);
}

TEST_CASE("constants: list, scalar fill, special values and their errors", "[program_json]") {
  auto one = [](const std::string& op) { return doc("", op, R"("c")"); };
  SECTION("a list with exactly the shape's element count") {
    auto p = load_program(one(R"({"op": "constant", "out": "c", "dtype": "i32", "shape": [2, 2], "value": [1, 2, 3, 4]})"));
    REQUIRE(p.ok());
    const auto& attrs = std::get<ConstantAttrs>(p->ops()[0].attrs);
    REQUIRE(attrs.dense.has_value());
    CHECK(attrs.dense->data_as<int32_t>()[3] == 4);
  }
  SECTION("a list with the wrong count") {
    auto e = load_error(one(R"({"op": "constant", "out": "c", "dtype": "i32", "shape": [2, 2], "value": [1, 2, 3]})"));
    CHECK_THAT(e.message(), Catch::Contains("op #0 (constant -> 'c')"));
  }
  SECTION("a list needs a constant shape") {
    auto e = load_error(doc(R"({"name": "x", "dtype": "f32", "shape": ["B"]})",
                            R"({"op": "constant", "out": "c", "dtype": "f32", "shape": ["B"], "value": [1, 2]})", R"("c")"));
    CHECK(e.code() == ErrorCode::InvalidAttribute);
    CHECK_THAT(e.message(), Catch::Contains("constant shape"));
  }
  SECTION("a value out of the dtype's range") {
    auto e = load_error(one(R"({"op": "constant", "out": "c", "dtype": "u8", "shape": [], "value": 300})"));
    CHECK_THAT(e.message(), Catch::Contains("300"));
    e = load_error(one(R"({"op": "constant", "out": "c", "dtype": "i32", "shape": [], "value": 2.5})"));
    CHECK_THAT(e.message(), Catch::Contains("2.5"));
    e = load_error(one(R"({"op": "constant", "out": "c", "dtype": "bool", "shape": [], "value": 1})"));
    CHECK_FALSE(e.message().empty());
    e = load_error(one(R"({"op": "constant", "out": "c", "dtype": "i32", "shape": [], "value": "nan"})"));
    CHECK_FALSE(e.message().empty());
  }
  SECTION("special float values and booleans") {
    auto p = load_program(one(R"({"op": "constant", "out": "c", "dtype": "f64", "shape": [3], "value": ["nan", "inf", "-inf"]})"));
    REQUIRE(p.ok());
    const double* d = std::get<ConstantAttrs>(p->ops()[0].attrs).dense->data_as<double>();
    CHECK(std::isnan(d[0]));
    CHECK(d[1] == std::numeric_limits<double>::infinity());
    CHECK(d[2] == -std::numeric_limits<double>::infinity());
    auto b = load_program(one(R"({"op": "constant", "out": "c", "dtype": "bool", "shape": [2], "value": [true, false]})"));
    REQUIRE(b.ok());
  }
  SECTION("a huge declared constant is an error, not an allocation") {
    auto e = load_error(one(R"({"op": "constant", "out": "c", "dtype": "f32", "shape": [1000000, 1000000], "value": [1]})"));
    CHECK_FALSE(e.message().empty());
    e = load_error(one(R"({"op": "constant", "out": "c", "dtype": "f32", "shape": [1000000, 1000000], "value": 1})"));
    CHECK(e.code() == ErrorCode::LimitExceeded);
  }
}

TEST_CASE("pad_to_match's value is a JSON bool for bool and defaults to the dtype's zero",
          "[program_json]") {
  auto pad = [](const std::string& dtype, const std::string& value) {
    return doc(R"({"name": "x", "dtype": ")" + dtype +
                   R"(", "shape": [2]}, {"name": "l", "dtype": "f32", "shape": [3]})",
               R"({"op": "negate", "in": ["l"], "out": "n"}, {"op": "pad_to_match", "in": ["x", "l"], "out": "y")" +
                   value + "}",
               R"("y")");
  };
  SECTION("no value for a bool x: false, and saving writes none") {
    auto p = load_program(pad("bool", ""));
    INFO((p.ok() ? std::string("ok") : p.error().to_string()));
    REQUIRE(p.ok());
    CHECK(type_of(*p, "y") == "bool[3]");
    const std::string saved = save_program_json(*p);
    CHECK_THAT(saved, !Catch::Contains("\"value\""));
    auto again = load_program(saved);
    REQUIRE(again.ok());
    CHECK(*again == *p);
  }
  SECTION("true for a bool x") {
    auto p = load_program(pad("bool", R"(, "value": true)"));
    REQUIRE(p.ok());
    CHECK(std::get<PadToMatchAttrs>(p->ops()[1].attrs).value == Scalar::of_bool(true));
  }
  SECTION("a number or a pair for a bool x names the op") {
    for (const char* value : {R"(, "value": 1)", R"(, "value": 0)", R"(, "value": [0, 1])",
                              R"(, "value": "nan")"}) {
      INFO(value);
      auto e = load_error(pad("bool", value));
      CHECK(e.code() == ErrorCode::InvalidAttribute);
      CHECK_THAT(e.message(), Catch::StartsWith("op #1 (pad_to_match -> 'y'): value "));
      CHECK_THAT(e.message(), Catch::Contains("does not fit x's dtype bool"));
    }
  }
  SECTION("a number or a pair for a complex x, a bool for none but bool") {
    CHECK(load_program(pad("c64", R"(, "value": 2)")).ok());
    CHECK(load_program(pad("c64", R"(, "value": [1, -1])")).ok());
    CHECK(load_program(pad("c128", "")).ok());
    auto e = load_error(pad("f32", R"(, "value": true)"));
    CHECK_THAT(e.message(), Catch::StartsWith("op #1 (pad_to_match -> 'y'): value true"));
    e = load_error(pad("i32", R"(, "value": [1, 0])"));
    CHECK_THAT(e.message(), Catch::StartsWith("op #1 (pad_to_match -> 'y')"));
  }
  SECTION("no value and an integer 0 are the same program for a number x") {
    auto none = load_program(pad("f32", ""));
    auto zero = load_program(pad("f32", R"(, "value": 0)"));
    REQUIRE(none.ok());
    REQUIRE(zero.ok());
    CHECK(*none == *zero);
    CHECK(none->fingerprint() == zero->fingerprint());
  }
}

TEST_CASE("extension ops need a registered family that infers their results", "[program_json]") {
  const std::string text = doc(R"({"name": "x", "dtype": "f32", "shape": ["B", 8]})",
      R"({"op": "extension", "family": "tenact.softmax", "in": ["x"], "out": ["y", "lse"], "attributes": {"dimension": 1}})",
      R"("y", "lse")");
  auto e = load_error(text);
  CHECK(e.code() == ErrorCode::MissingExtension);
  CHECK_THAT(e.message(), Catch::Contains("'tenact.softmax'"));

  ExtensionRegistry registry;
  std::string seen_attrs;
  registry.add("tenact.softmax", [&](std::span<const ValueType> in, const std::string& attrs)
                                     -> Result<std::vector<ValueType>> {
    seen_attrs = attrs;
    ValueType lse{in[0].dtype, {in[0].shape[0]}};
    return std::vector<ValueType>{in[0], lse};
  });
  auto p = load_program(text, registry);
  REQUIRE(p.ok());
  CHECK(seen_attrs == R"({"dimension":1})");
  CHECK(type_of(*p, "y") == "f32[B, 8]");
  CHECK(type_of(*p, "lse") == "f32[B]");
  auto q = load_program(save_program_json(*p), registry);
  REQUIRE(q.ok());
  CHECK(*p == *q);
}
