// .npy reading and writing. Oracles: files NumPy wrote with what NumPy says
// they hold (tests/fixtures/gen_npy.py), NumPy loading the files we write
// (tests/fixtures/check_npy_written.py), and hand-made headers for the
// malformed cases.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/tensor_io.hpp"
#include "file_test_support.hpp"

using namespace tenact;
namespace fs = std::filesystem;

namespace {

using tenact::testing::slurp;
using tenact::testing::TempDir;

const std::string kDataDir = std::string(TENACT_TEST_DATA_DIR) + "/npy";

std::string to_hex(const void* data, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

std::string dense_hex(const HostTensor& t) {
  auto c = t.contiguous();
  REQUIRE(c.ok());
  return to_hex(c->data(), static_cast<size_t>(c->element_count()) * size_of(c->dtype()));
}

// A .npy image from a header dict text and data bytes (version 1.0 unless
// told), with the header padded by spaces and ended by a newline.
std::string npy_image(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const size_t len = header.size();
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (major != 1) {
    out += static_cast<char>((len >> 16) & 0xff);
    out += static_cast<char>((len >> 24) & 0xff);
  }
  return out + header + data;
}

std::string f32_bytes(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

Error npy_error(const std::string& image) {
  auto r = parse_npy(image);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

}  // namespace

TEST_CASE("parse_npy reads every file NumPy wrote as NumPy reads it", "[npy]") {
  const std::string manifest_path = kDataDir + "/manifest.json";
  INFO("fixtures from tests/fixtures/gen_npy.py; run generate_fixtures.py first");
  REQUIRE(fs::exists(manifest_path));
  const auto manifest = nlohmann::json::parse(slurp(manifest_path));
  size_t checked = 0, canonical = 0;
  for (const auto& c : manifest.at("cases")) {
    const std::string file = c.at("file");
    INFO(file);
    const std::string bytes = slurp(kDataDir + "/" + file);
    auto t = parse_npy(bytes);
    if (!t.ok()) INFO(t.error().to_string());
    REQUIRE(t.ok());
    CHECK(to_string(t->dtype()) == c.at("dtype").get<std::string>());
    CHECK(t->shape() == c.at("shape").get<std::vector<int64_t>>());
    CHECK(t->is_contiguous());
    CHECK(dense_hex(*t) == c.at("hex").get<std::string>());
    if (c.at("canonical").get<bool>()) {
      // a C-order little-endian array: we write exactly what np.save wrote
      CHECK(tensor_to_npy(*t) == bytes);
      ++canonical;
    }
    ++checked;
  }
  CHECK(checked > 100);
  CHECK(canonical > 70);
}

TEST_CASE("tensor_to_npy output reads back to the same bits for every dtype and layout",
          "[npy]") {
  // 96 bytes: at least six elements of every type, NaN and subnormal bit
  // patterns included for the float types
  uint8_t pattern[96];
  for (int k = 0; k < 96; ++k) pattern[k] = static_cast<uint8_t>(k * 37 + 11);
  const uint8_t specials[] = {0x00, 0x80, 0x01, 0x7f, 0xff, 0x7f, 0xc0, 0x7f, 0x01, 0x00};
  std::memcpy(pattern, specials, sizeof specials);
  for (DType t : kAllDTypes) {
    INFO(to_string(t));
    const int64_t n = static_cast<int64_t>(96 / size_of(t));
    auto src = HostTensor::zeros(t, {n});
    REQUIRE(src.ok());
    std::memcpy(src->data(), pattern, static_cast<size_t>(n) * size_of(t));
    if (t == DType::Bool)
      for (int64_t k = 0; k < n; ++k) src->data_as<uint8_t>()[k] &= 1;
    auto back = parse_npy(tensor_to_npy(*src));
    REQUIRE(back.ok());
    CHECK(back->bitwise_equal(*src));

    // a non-contiguous view is written in C order
    auto buf = src->buffer();
    auto view = HostTensor::view(buf, t, {3, 2}, {1, 3}, 0);
    REQUIRE(view.ok());
    auto vback = parse_npy(tensor_to_npy(*view));
    REQUIRE(vback.ok());
    CHECK(vback->shape() == std::vector<int64_t>{3, 2});
    CHECK(vback->bitwise_equal(*view));

    auto empty = HostTensor::zeros(t, {2, 0, 3});
    auto eback = parse_npy(tensor_to_npy(*empty));
    REQUIRE(eback.ok());
    CHECK(eback->shape() == std::vector<int64_t>{2, 0, 3});
  }
}

TEST_CASE("tensor_to_npy writes version 1.0 with data at a multiple of 64 bytes", "[npy]") {
  const std::vector<std::vector<int64_t>> shapes{{}, {7}, {1, 2, 3, 4, 5, 6, 7, 8}};
  for (const auto& shape : shapes) {
    auto t = HostTensor::zeros(DType::C128, shape);
    REQUIRE(t.ok());
    const std::string bytes = tensor_to_npy(*t);
    CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    const size_t hlen = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    CHECK((10 + hlen) % 64 == 0);
    CHECK(bytes[10 + hlen - 1] == '\n');
    CHECK(bytes.size() == 10 + hlen + static_cast<size_t>(t->element_count()) * 16);
  }
}

TEST_CASE("files written by tensor_to_npy load in NumPy with the expected values", "[npy]") {
  TempDir dir;
  nlohmann::json cases = nlohmann::json::array();
  auto add = [&](const std::string& name, const HostTensor& t, const std::string& descr,
                 std::vector<int64_t> shape, const std::string& hex) {
    const std::string path = (dir.path / (name + ".npy")).string();
    REQUIRE(write_tensor_file(path, t).ok());
    cases.push_back({{"file", path}, {"descr", descr}, {"shape", shape}, {"hex", hex}});
  };
  auto filled = [](DType dt, std::vector<int64_t> shape, const void* data, size_t bytes) {
    auto t = HostTensor::zeros(dt, std::move(shape));
    REQUIRE(t.ok());
    if (bytes) std::memcpy(t->data(), data, bytes);
    return *t;
  };

  const float f[6] = {0.0f, 1.5f, -2.0f, std::numeric_limits<float>::infinity(), -0.0f, 1e-45f};
  HostTensor tf = filled(DType::F32, {2, 3}, f, sizeof f);
  add("f32", tf, "<f4", {2, 3}, to_hex(f, sizeof f));
  // transposed view: NumPy must see the transposed values in C order
  const float ft[6] = {f[0], f[3], f[1], f[4], f[2], f[5]};
  const std::vector<int64_t> perm{1, 0};
  add("f32_transposed", tf.transposed(perm), "<f4", {3, 2}, to_hex(ft, sizeof ft));

  const uint8_t b[3] = {1, 0, 1};
  add("bool", filled(DType::Bool, {3}, b, 3), "|b1", {3}, "010001");
  const int8_t i8[2] = {-128, 127};
  add("i8", filled(DType::I8, {2}, i8, 2), "|i1", {2}, "807f");
  const uint8_t u8[1] = {200};
  add("u8_scalar", filled(DType::U8, {}, u8, 1), "|u1", {}, "c8");
  const int16_t i16[2] = {-2, 300};
  add("i16", filled(DType::I16, {2}, i16, 4), "<i2", {2}, "feff2c01");
  const uint16_t u16[1] = {0xbeef};
  add("u16", filled(DType::U16, {1, 1}, u16, 2), "<u2", {1, 1}, "efbe");
  const int32_t i32[1] = {-1};
  add("i32", filled(DType::I32, {1}, i32, 4), "<i4", {1}, "ffffffff");
  const uint32_t u32[1] = {0x01020304};
  add("u32", filled(DType::U32, {1}, u32, 4), "<u4", {1}, "04030201");
  const int64_t i64[1] = {INT64_MIN};
  add("i64", filled(DType::I64, {1}, i64, 8), "<i8", {1}, "0000000000000080");
  const uint64_t u64[1] = {UINT64_MAX};
  add("u64", filled(DType::U64, {1}, u64, 8), "<u8", {1}, "ffffffffffffffff");
  const uint16_t h[3] = {0x3c00, 0x7e00, 0x8001};
  add("f16", filled(DType::F16, {3}, h, 6), "<f2", {3}, "003c007e0180");
  const uint16_t bf[2] = {0x3f80, 0xff80};
  add("bf16", filled(DType::BF16, {2}, bf, 4), "|V2", {2}, "803f80ff");
  const double d[2] = {0.1, -1e300};
  add("f64", filled(DType::F64, {2}, d, 16), "<f8", {2}, to_hex(d, 16));
  const float c64[4] = {1, 2, 3, 4};
  add("c64", filled(DType::C64, {2}, c64, 16), "<c8", {2}, to_hex(c64, 16));
  const double c128[2] = {-0.5, 0.25};
  add("c128", filled(DType::C128, {1}, c128, 16), "<c16", {1}, to_hex(c128, 16));
  add("f32_empty", filled(DType::F32, {2, 0, 4}, nullptr, 0), "<f4", {2, 0, 4}, "");

  const std::string manifest = (dir.path / "manifest.json").string();
  nlohmann::json doc = nlohmann::json::object();
  doc["cases"] = cases;
  REQUIRE(write_file(manifest, doc.dump()).ok());
  const std::string cmd = "/usr/bin/python3 " + std::string(TENACT_SOURCE_DIR) +
                          "/tests/fixtures/check_npy_written.py " + manifest;
  INFO(cmd);
  CHECK(std::system(cmd.c_str()) == 0);
}

TEST_CASE("parse_npy accepts header dicts in any NumPy-compatible spelling", "[npy]") {
  const std::string data = f32_bytes({1, 2, 3, 4, 5, 6});
  for (const std::string dict :
       {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
        "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,3,)}",
        "{ 'descr' : '<f4' ,\t'fortran_order':False,'shape':( 2 , 3 ) , }",
        "{'descr': '=f4', 'fortran_order': False, 'shape': (2L, 3L)}"}) {
    INFO(dict);
    auto t = parse_npy(npy_image(dict, data));
    if (!t.ok()) INFO(t.error().to_string());
    REQUIRE(t.ok());
    CHECK(t->shape() == std::vector<int64_t>{2, 3});
    CHECK(dense_hex(*t) == to_hex(data.data(), data.size()));
  }
  auto v2 = parse_npy(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (6,)}", data, 2));
  REQUIRE(v2.ok());
  CHECK(v2->shape() == std::vector<int64_t>{6});
  auto scalar = parse_npy(npy_image("{'descr': '<f4', 'fortran_order': True, 'shape': ()}",
                                    f32_bytes({7})));
  REQUIRE(scalar.ok());
  CHECK(scalar->rank() == 0);
}

TEST_CASE("parse_npy transposes Fortran-ordered data into C order", "[npy]") {
  // column-major 2x3 [[1, 2, 3], [4, 5, 6]] is stored 1 4 2 5 3 6
  auto t = parse_npy(npy_image("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                               f32_bytes({1, 4, 2, 5, 3, 6})));
  REQUIRE(t.ok());
  const std::string expected = f32_bytes({1, 2, 3, 4, 5, 6});
  CHECK(dense_hex(*t) == to_hex(expected.data(), expected.size()));
}

TEST_CASE("parse_npy byte-swaps big-endian data per component", "[npy]") {
  auto t = parse_npy(npy_image("{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }",
                               std::string("\x01\x02\xff\xfe", 4)));
  REQUIRE(t.ok());
  CHECK(dense_hex(*t) == "0201feff");
  // complex: each 4-byte component is swapped on its own
  auto c = parse_npy(npy_image("{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }",
                               std::string("\x3f\x80\x00\x00\x40\x00\x00\x00", 8)));
  REQUIRE(c.ok());
  CHECK(dense_hex(*c) == "0000803f00000040");  // 1.0f, 2.0f
}

TEST_CASE("parse_npy reads nonzero bool bytes as true", "[npy]") {
  auto t = parse_npy(npy_image("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                               std::string("\x00\x02\xff", 3)));
  REQUIRE(t.ok());
  CHECK(dense_hex(*t) == "000101");
}

TEST_CASE("parse_npy rejects bad magic, versions and header lengths", "[npy]") {
  const std::string good =
      npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f32_bytes({1}));
  REQUIRE(parse_npy(good).ok());

  std::string bad_magic = good;
  bad_magic[1] = 'M';
  CHECK(npy_error(bad_magic).code() == ErrorCode::Parse);
  CHECK_THAT(npy_error(bad_magic).message(), Catch::Contains("magic"));
  CHECK(npy_error("").code() == ErrorCode::Parse);
  CHECK(npy_error("\x93NUMPY").code() == ErrorCode::Parse);
  CHECK(npy_error(good.substr(0, 9)).code() == ErrorCode::Parse);  // inside the length field
  CHECK(npy_error(good.substr(0, 11)).code() == ErrorCode::Parse);  // header cut short
  CHECK(npy_error(std::string("\x93NUMPY\x02\x00\x10\x00", 10)).code() == ErrorCode::Parse);

  std::string v4 = good;
  v4[6] = 4;
  CHECK(npy_error(v4).code() == ErrorCode::Schema);
  CHECK_THAT(npy_error(v4).message(), Catch::Contains("4.0"));
  std::string v11 = good;
  v11[7] = 1;
  CHECK_FALSE(parse_npy(v11).ok());

  // header length field pointing past the end of the file
  std::string past = good;
  past[8] = '\xff';
  past[9] = '\xff';
  auto e = npy_error(past);
  CHECK(e.code() == ErrorCode::Parse);
  CHECK_THAT(e.message(), Catch::Contains("65535") && Catch::Contains("past the end"));

  // version 2.0 with a 4 GiB header length field
  std::string huge = std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + "{}";
  const auto start = std::chrono::steady_clock::now();
  CHECK(npy_error(huge).code() == ErrorCode::Parse);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

TEST_CASE("parse_npy rejects malformed header dicts", "[npy]") {
  const std::string data = f32_bytes({1});
  for (const std::string dict :
       {"", "garbage", "{", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
        "{'descr': '<f4', 'fortran_order': False}",
        "{'descr': '<f4', 'shape': (1,)}", "{'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4', 'fortran_order': maybe, 'shape': (1,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': [1]}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (a,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1.0,)}",
        "{'descr': {'a': 1}, 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': ((1,),)}",
        "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}}",
        "{'descr: '<f4', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<\\f4', 'fortran_order': False, 'shape': (1,)}"}) {
    INFO(dict);
    auto e = npy_error(npy_image(dict, data));
    CHECK(e.code() == ErrorCode::Parse);
    CHECK_THAT(e.message(), Catch::StartsWith("npy: "));
  }
}

TEST_CASE("parse_npy rejects unknown, object and structured dtypes naming them", "[npy]") {
  const std::string data(16, '\0');
  for (const std::string descr : {"<f16", "<U4", "|S4", "<M8[s]", "<V4", ">V2", "|i4", "xyz", ""}) {
    INFO(descr);
    auto e = npy_error(
        npy_image("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,), }", data));
    CHECK(e.code() == ErrorCode::Unsupported);
    CHECK_THAT(e.message(), Catch::Contains("'" + descr + "'"));
  }
  auto obj = npy_error(npy_image("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", data));
  CHECK_THAT(obj.message(), Catch::Contains("object"));
  auto structured = npy_error(npy_image(
      "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }", data));
  CHECK(structured.code() == ErrorCode::Unsupported);
  CHECK_THAT(structured.message(), Catch::Contains("structured"));
}

TEST_CASE("parse_npy rejects negative, overflowing and oversized shapes", "[npy]") {
  const std::string data = f32_bytes({1, 2});
  auto neg = npy_error(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data));
  CHECK(neg.code() == ErrorCode::ShapeMismatch);
  auto digits = npy_error(npy_image(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", data));
  CHECK(digits.code() == ErrorCode::Overflow);
  auto product = npy_error(npy_image(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", data));
  CHECK(product.code() == ErrorCode::Overflow);
  std::string many_axes = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 1000; ++i) many_axes += "1, ";
  CHECK_FALSE(parse_npy(npy_image(many_axes + "), }", f32_bytes({1}))).ok());
}

TEST_CASE("parse_npy checks declared sizes against the data before allocating", "[npy]") {
  const auto start = std::chrono::steady_clock::now();
  // 10^12 f32 elements: over the 1 TiB limit
  auto limit = npy_error(npy_image(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }", f32_bytes({1})));
  CHECK(limit.code() == ErrorCode::LimitExceeded);
  // 10^12 one-byte elements: under the limit, but the file has 4 bytes
  auto missing = npy_error(npy_image(
      "{'descr': '|u1', 'fortran_order': False, 'shape': (1000000, 1000000), }", f32_bytes({1})));
  CHECK(missing.code() == ErrorCode::Parse);
  CHECK_THAT(missing.message(),
             Catch::Contains("declares 1000000000000 bytes, the file has 4"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));

  auto truncated = npy_error(npy_image(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f32_bytes({1, 2, 3, 4, 5})));
  CHECK_THAT(truncated.message(), Catch::Contains("declares 24 bytes, the file has 20"));

  auto trailing = npy_error(npy_image(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f32_bytes({1, 2})));
  CHECK(trailing.code() == ErrorCode::Parse);
  CHECK_THAT(trailing.message(), Catch::Contains("trailing"));
}

TEST_CASE("tensor files are chosen by extension and errors name the path", "[npy]") {
  TempDir dir;
  auto t = HostTensor::zeros(DType::I16, {2});
  REQUIRE(t.ok());
  t->data_as<int16_t>()[1] = -9;
  for (const char* name : {"a.npy", "a.json"}) {
    const std::string path = (dir.path / name).string();
    REQUIRE(write_tensor_file(path, *t).ok());
    auto back = read_tensor_file(path);
    REQUIRE(back.ok());
    CHECK(back->bitwise_equal(*t));
  }
  CHECK(slurp((dir.path / "a.json").string()) ==
        R"({"dtype": "i16", "shape": [2], "data": [0,-9]})");

  const std::string txt = (dir.path / "a.txt").string();
  auto w = write_tensor_file(txt, *t);
  REQUIRE_FALSE(w.ok());
  CHECK(w.error().code() == ErrorCode::Io);
  CHECK_THAT(w.error().message(), Catch::Contains(txt) && Catch::Contains(".npy"));
  REQUIRE(write_file(txt, "x").ok());
  auto r = read_tensor_file(txt);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::Io);

  const std::string missing = (dir.path / "missing.npy").string();
  auto m = read_tensor_file(missing);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().code() == ErrorCode::Io);
  CHECK_THAT(m.error().message(), Catch::Contains(missing));

  const std::string bad = (dir.path / "bad.npy").string();
  REQUIRE(write_file(bad, "not numpy").ok());
  auto b = read_tensor_file(bad);
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().code() == ErrorCode::Parse);
  CHECK_THAT(b.error().message(), Catch::StartsWith(bad + ": npy: "));

  auto dir_read = read_file(dir.path.string());
  CHECK_FALSE(dir_read.ok());

  REQUIRE(write_file(txt, std::string(100, 'x')).ok());
  auto capped = read_file(txt, 99);
  REQUIRE_FALSE(capped.ok());
  CHECK(capped.error().code() == ErrorCode::LimitExceeded);
  auto whole = read_file(txt, 100);
  REQUIRE(whole.ok());
  CHECK(*whole == std::string(100, 'x'));

  CHECK_FALSE(write_file((dir.path / "no/such/dir.npy").string(), "x").ok());
}
