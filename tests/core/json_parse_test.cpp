// parse_json (core/json_parse.cpp): the DOM it builds is the one
// nlohmann's plain parser builds, value for value and type for type; it
// refuses duplicate keys at every depth and nesting past kMaxJsonDepth;
// documents of many objects load (the cost per object is the benchmark's:
// bench/load_bench.cpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/json_internal.hpp"
#include "core/program_json.hpp"
#include "core/tensor_io.hpp"

using namespace tenact;
using json_io::Json;

namespace {

// Equal type for type (nlohmann's == calls 1, 1u and 1.0 equal) and float
// for float bit for bit (-0.0 is not 0.0).
bool same_dom(const Json& a, const Json& b) {
  if (a.type() != b.type() || a.size() != b.size()) return false;
  switch (a.type()) {
    case Json::value_t::object: {
      auto ib = b.begin();
      for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib)
        if (ia.key() != ib.key() || !same_dom(*ia, *ib)) return false;
      return true;
    }
    case Json::value_t::array:
      for (size_t i = 0; i < a.size(); ++i)
        if (!same_dom(a[i], b[i])) return false;
      return true;
    case Json::value_t::number_float: {
      const double x = a.get<double>(), y = b.get<double>();
      return std::memcmp(&x, &y, sizeof x) == 0;
    }
    default: return a == b;
  }
}

void check_same_as_nlohmann(const std::string& text) {
  INFO("document: " << text.substr(0, 300));
  auto ours = json_io::parse_json(text, "doc");
  if (!ours.ok()) INFO(ours.error().to_string());
  REQUIRE(ours.ok());
  const Json theirs = Json::parse(text);
  CHECK(same_dom(*ours, theirs));
  CHECK(ours->dump() == theirs.dump());
}

Error parse_error_of(const std::string& text) {
  auto r = json_io::parse_json(text, "doc");
  INFO("document: " << text.substr(0, 300));
  REQUIRE_FALSE(r.ok());
  return r.error();
}

// A deterministic generator of JSON texts: every value kind, nesting up to
// `depth`, object keys distinct within an object (the plain parser keeps
// the last of a duplicate, ours refuses it).
class DocumentMaker {
 public:
  explicit DocumentMaker(uint64_t seed) : state_(seed) {}

  std::string value(int depth) {
    switch (next() % (depth > 0 ? 9 : 6)) {
      case 0: return pick({"null", "true", "false"});
      case 1: return integer();
      case 2: return floating();
      case 3: return string();
      case 4: return pick({"[]", "{}", "[ ]", "{ }", "\"\""});
      case 5: return integer();
      case 6:
      case 7: return array(depth - 1);
      default: return object(depth - 1);
    }
  }

 private:
  uint64_t next() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return state_ >> 33;
  }
  std::string pick(std::initializer_list<const char*> options) {
    return *(options.begin() + next() % options.size());
  }
  std::string integer() {
    switch (next() % 5) {
      case 0: return pick({"0", "-0", "1", "-1", "9223372036854775807", "-9223372036854775808"});
      case 1: return pick({"9223372036854775808", "18446744073709551615", "18446744073709551616",
                           "-9223372036854775809", "123456789012345678901234567890"});
      default: return std::to_string(static_cast<int64_t>(next()) - (int64_t{1} << 30));
    }
  }
  std::string floating() {
    switch (next() % 4) {
      case 0: return pick({"0.0", "-0.0", "-0e0", "1e308", "-1e-308", "5e-324", "2.2250738585072014e-308"});
      case 1: return pick({"1.5", "1E3", "1e+2", "-2.5E-3", "0.1", "3.141592653589793", "1e-400"});
      default: return std::to_string(next() % 100000) + "." + std::to_string(next() % 1000) + "e" +
                      std::to_string(static_cast<int>(next() % 40) - 20);
    }
  }
  std::string string() {
    return pick({"\"\"", "\"abc\"", "\"\\u00e9t\\u00E9\"", "\"\\ud83d\\ude00\"", "\"\\u0000x\"",
                 "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
                 "\"[{not a bracket}]\"", "\"\\\\\"", "\"k\""});
  }
  std::string array(int depth) {
    std::string s = "[";
    const uint64_t n = next() % 5;
    for (uint64_t i = 0; i < n; ++i) s += (i ? ", " : "") + value(depth);
    return s + "]";
  }
  std::string object(int depth) {
    std::string s = "{";
    const uint64_t n = next() % 5;
    for (uint64_t i = 0; i < n; ++i) {
      // Distinct keys, written in an order the object does not keep
      // (nlohmann's objects are sorted maps), some spelled with escapes.
      const std::string key = (next() % 3 == 0) ? "\\u006b" + std::to_string(n - i) : "k" + std::to_string(n - i);
      s += (i ? ", \"" : "\"") + key + "\": " + value(depth);
    }
    return s + "}";
  }

  uint64_t state_;
};

std::string nested(int levels, const std::string& inner) {
  // Alternates objects and arrays: {"k": [{"k": [ ... inner ... ]}]}.
  std::string open, close;
  for (int i = 0; i < levels; ++i) {
    if (i % 2 == 0) {
      open += "{\"k\": ";
      close = "}" + close;
    } else {
      open += "[";
      close = "]" + close;
    }
  }
  return open + inner + close;
}

std::string empty_objects(size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += i ? ",{}" : "{}";
  return s + "]";
}

}  // namespace

TEST_CASE("parse_json builds the DOM nlohmann's plain parser builds", "[json_parse]") {
  const char* corpus[] = {
      "null", "true", "false", "0", "-0", "0.0", "-0.0", "1", "-1", " 7 ",
      "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
      "18446744073709551615", "18446744073709551616", "123456789012345678901234567890",
      "1e308", "-1e-308", "5e-324", "1e-400", "1.5", "1E3", "1e+2", "-2.5E-3",
      "\"\"", "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\"\\u0000\"", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
      "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
      "[]", "{}", "[[]]", "[{}]", "{\"a\": {}}", "{\"a\": []}", "[1, [2, [3, []]]]",
      "{\"b\": 1, \"a\": 2, \"c\": {\"z\": null, \"y\": [true, false]}}",
      "{\"\\u0041\": 1, \"a\": 2, \"\\u00e9\": 3, \"\xc3\xa9x\": 4}",
      " \t\n\r[ 1 ,\n 2 ]\r\n ",
      "[\"[\", \"{\", \"]\", \"}\", \"\\\"[\"]",
      "{\"a\": {\"a\": {\"a\": 1}}}",  // one key at several depths is no duplicate
      "[{\"k\": 1}, {\"k\": 2}]",       // nor in sibling objects
  };
  for (const char* doc : corpus) check_same_as_nlohmann(doc);
  check_same_as_nlohmann(nested(json_io::kMaxJsonDepth - 1, "[]"));
  check_same_as_nlohmann(nested(json_io::kMaxJsonDepth - 1, "{\"x\": -0.0, \"y\": 18446744073709551615}"));

  DocumentMaker maker{20240611};
  for (int i = 0; i < 300; ++i) check_same_as_nlohmann(maker.value(6));
}

TEST_CASE("parse_json refuses a duplicate key at every depth", "[json_parse]") {
  const std::string expected = "doc: duplicate key 'k' in a JSON object";
  const std::string docs[] = {
      R"({"k": 1, "k": 2})",
      R"({"a": 1, "k": [], "b": 2, "k": {}})",
      R"({"outer": {"k": 1, "k": 1}})",
      R"([1, {"x": {"k": 1, "k": 2}}])",
      R"([[[{"a": [{"k": null, "j": 0, "k": null}]}]]])",
      R"({"k": 1, "\u006b": 2})",  // the same key once unescaped
      nested(60, R"({"k": 1, "k": 2})"),
      R"({"k": 1, "k": 2, ,})",  // found before the syntax error after it
  };
  for (const std::string& doc : docs) {
    const Error e = parse_error_of(doc);
    CHECK(e.code() == ErrorCode::Parse);
    CHECK(e.message() == expected);
  }
  // Through the loaders, whose documents name themselves.
  auto program = load_program(R"({"format": "tenact.program/1", "inputs": [], "outputs": [],
    "ops": [{"op": "iota", "out": "y", "dtype": "i32", "shape": [3], "iota_dimension": 0, "dtype": "f32"}]})");
  REQUIRE_FALSE(program.ok());
  CHECK(program.error().message() == "program: duplicate key 'dtype' in a JSON object");
  auto tensor = parse_tensor_json(R"({"dtype": "f32", "shape": [1], "data": [1], "shape": [1]})");
  REQUIRE_FALSE(tensor.ok());
  CHECK(tensor.error().message() == "tensor: duplicate key 'shape' in a JSON object");
}

TEST_CASE("parse_json accepts 64 levels of nesting and refuses 65", "[json_parse]") {
  const int limit = json_io::kMaxJsonDepth;
  REQUIRE(limit == 64);
  CHECK(json_io::parse_json(nested(limit, "1"), "doc").ok());
  CHECK(json_io::parse_json(nested(limit - 1, "{}"), "doc").ok());
  CHECK(json_io::parse_json(nested(limit - 1, "[]"), "doc").ok());

  // The 65th opening bracket is named by its byte position.
  const std::string over = nested(limit, "{}");
  const size_t at = over.find("{}");
  const Error e = parse_error_of(over);
  CHECK(e.code() == ErrorCode::LimitExceeded);
  CHECK(e.message() == "doc: JSON nesting deeper than 64 levels at byte " + std::to_string(at));

  // Brackets inside strings do not count, escaped quotes included.
  CHECK(json_io::parse_json(nested(limit, "\"[[[{{{\\\"[[[{{{\""), "doc").ok());
  CHECK(json_io::parse_json(nested(limit, "[\"]]]}}}\"]"), "doc").error().code() == ErrorCode::LimitExceeded);
  // Closing brackets free their level for siblings.
  std::string siblings = "[" + nested(limit - 1, "0") + ", " + nested(limit - 1, "1") + "]";
  CHECK(json_io::parse_json(siblings, "doc").ok());
}

TEST_CASE("parse_json keeps nlohmann's messages for syntax errors and overflow", "[json_parse]") {
  Error e = parse_error_of("[1, 2,]");
  CHECK(e.code() == ErrorCode::Parse);
  CHECK(e.message() ==
        "doc: JSON syntax error at byte 7: parse error at line 1, column 7: syntax error while parsing value - "
        "unexpected ']'; expected '[', '{', or a literal");
  e = parse_error_of("{} x");
  CHECK_THAT(e.message(), Catch::StartsWith("doc: JSON syntax error at byte 4: "));
  e = parse_error_of("[1e999]");
  CHECK(e.code() == ErrorCode::Parse);
  CHECK(e.message() == "doc: JSON could not be parsed: number overflow parsing '1e999'");
  CHECK(parse_error_of("").code() == ErrorCode::Parse);
  CHECK(parse_error_of("\"\xff\"").code() == ErrorCode::Parse);
}

TEST_CASE("parse_json loads an array of 200k empty objects", "[json_parse]") {
  const size_t n = 200000;
  auto doc = json_io::parse_json(empty_objects(n), "doc");
  REQUIRE(doc.ok());
  REQUIRE(doc->is_array());
  REQUIRE(doc->size() == n);
  size_t empty = 0;
  for (const Json& item : *doc) empty += item.is_object() && item.empty();
  CHECK(empty == n);

  // An object of 200k members, each an empty object: every key checked
  // against the others.
  std::string members = "{";
  for (size_t i = 0; i < n; ++i) members += (i ? ",\"" : "\"") + std::to_string(i) + "\":{}";
  members += "}";
  auto object = json_io::parse_json(members, "doc");
  REQUIRE(object.ok());
  CHECK(object->size() == n);
  CHECK(parse_error_of(members.substr(0, members.size() - 1) + ",\"123456\":{}}").message() ==
        "doc: duplicate key '123456' in a JSON object");
}

TEST_CASE("documents of 200k empty objects get their schema errors", "[json_parse]") {
  const size_t n = 200000;
  // A JSON tensor whose data are objects: the first element is named.
  auto tensor = parse_tensor_json(R"({"dtype": "f32", "shape": [)" + std::to_string(n) + R"(], "data": )" +
                                  empty_objects(n) + "}");
  REQUIRE_FALSE(tensor.ok());
  CHECK(tensor.error().code() == ErrorCode::Schema);
  CHECK_THAT(tensor.error().message(), Catch::StartsWith("tensor data element 0: expected a number"));

  // A program whose ops are empty objects: every op is named, once.
  auto report = parse_program_draft(R"({"format": "tenact.program/1", "inputs": [], "outputs": [], "ops": )" +
                                    empty_objects(n) + "}");
  REQUIRE(report.errors.size() == n);
  CHECK(report.errors.front().message() == "op #0: 'op' must be a string");
  CHECK(report.errors.back().message() == "op #" + std::to_string(n - 1) + ": 'op' must be a string");

  // The issue's document as a program: refused as not an object.
  auto program = load_program(empty_objects(n));
  REQUIRE_FALSE(program.ok());
  CHECK(program.error().code() == ErrorCode::Schema);
}
