// Value names as file names: the escaping documented in
// core/value_file_name.hpp (and `tenact run --help`), checked against
// hand-written expected texts, plus properties over many names: every
// result is a plain file name and decoding gives the name back.
#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <string>

#include "core/value_file_name.hpp"

using namespace tenact;

TEST_CASE("value names escape to plain file names, as documented", "[value_file_name]") {
  CHECK(escape_value_name("y") == "y");
  CHECK(escape_value_name("Layer_1-out.v2") == "Layer_1-out.v2");
  CHECK(escape_value_name("layer1/w") == "layer1%2Fw");
  CHECK(escape_value_name("../../x") == "%2E.%2F..%2Fx");
  CHECK(escape_value_name("/etc/passwd") == "%2Fetc%2Fpasswd");
  CHECK(escape_value_name(".") == "%2E");
  CHECK(escape_value_name("..") == "%2E.");
  CHECK(escape_value_name(".hidden") == "%2Ehidden");
  CHECK(escape_value_name("a b") == "a%20b");
  CHECK(escape_value_name("%") == "%25");
  CHECK(escape_value_name("%2F") == "%252F");  // an escape-looking name stays distinct
  CHECK(escape_value_name("\xC3\xBC") == "%C3%BC");    // u with diaeresis, UTF-8
  CHECK(escape_value_name("a=b\\c") == "a%3Db%5Cc");
  CHECK(escape_value_name("") == "");
}

TEST_CASE("decoding inverts the escaping and refuses what it never produces", "[value_file_name]") {
  CHECK(unescape_value_name("layer1%2Fw") == std::optional<std::string>{"layer1/w"});
  CHECK(unescape_value_name("%2E.") == std::optional<std::string>{".."});
  CHECK(unescape_value_name("%C3%BC") == std::optional<std::string>{"\xC3\xBC"});
  CHECK_FALSE(unescape_value_name("a/b"));    // '/' is always escaped
  CHECK_FALSE(unescape_value_name(".x"));     // a leading '.' is always escaped
  CHECK_FALSE(unescape_value_name("%2"));     // truncated escape
  CHECK_FALSE(unescape_value_name("%2f"));    // lower-case hex is never produced
  CHECK_FALSE(unescape_value_name("%41"));    // 'A' stands for itself
  CHECK_FALSE(unescape_value_name("a b"));
}

TEST_CASE("every name gives a plain, distinct file name that decodes back", "[value_file_name]") {
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<int> length(1, 12);
  // Bytes that matter most ('.', '/', '%', letters), then any byte.
  const std::string interesting = "./%aZ9_-\\= \xC3\xBC";
  std::set<std::string> names, files;
  for (int k = 0; k < 20000; ++k) {
    std::string name;
    const int n = length(rng);
    for (int i = 0; i < n; ++i)
      name.push_back(rng() % 2 ? interesting[rng() % interesting.size()] : static_cast<char>(1 + rng() % 255));
    if (!names.insert(name).second) continue;
    const std::string file = escape_value_name(name);
    INFO("name bytes: " << name.size());
    REQUIRE(!file.empty());
    CHECK(file != ".");
    CHECK(file != "..");
    CHECK(file.front() != '.');
    CHECK(file.find('/') == std::string::npos);
    CHECK(file.find('\0') == std::string::npos);
    CHECK(unescape_value_name(file) == std::optional<std::string>{name});
    files.insert(file);
  }
  CHECK(files.size() == names.size());
}

TEST_CASE("a name too long for a file name is an error naming the value", "[value_file_name]") {
  CHECK(value_file_name("w", ".npy").value() == "w.npy");
  CHECK(value_file_name(std::string(251, 'a'), ".npy").value().size() == 255);
  auto too_long = value_file_name(std::string(252, 'a'), ".npy");
  REQUIRE_FALSE(too_long.ok());
  CHECK(too_long.error().code() == ErrorCode::LimitExceeded);
  CHECK_THAT(too_long.error().message(), Catch::Contains("needs a file name of 256 bytes"));
  // 86 slashes escape to 258 bytes.
  auto slashes = value_file_name(std::string(86, '/'), "");
  REQUIRE_FALSE(slashes.ok());
  CHECK_THAT(slashes.error().message(), Catch::Contains("258 bytes"));
  CHECK(value_file_name("", ".npy").error().code() == ErrorCode::Schema);
}
