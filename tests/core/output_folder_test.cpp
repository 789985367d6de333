// OutputFolder: files land inside the folder only, complete or not at all;
// a planted symbolic link is replaced, never followed; nothing temporary is
// left behind after a failure or an early return.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "core/output_folder.hpp"
#include "file_test_support.hpp"

using namespace tenact;
namespace fs = std::filesystem;

namespace {

using tenact::testing::slurp;
using tenact::testing::TempDir;

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

}  // namespace

TEST_CASE("staged files appear under their names only when committed", "[output_folder]") {
  TempDir t;
  const fs::path dir = t.path / "new" / "nested";  // created with its parents
  auto folder = OutputFolder::open(dir.string());
  REQUIRE(folder.ok());
  REQUIRE(folder->stage("a.npy", "first").ok());
  REQUIRE(folder->stage("b.npy", std::string(1 << 20, 'x')).ok());
  // Before commit only hidden temporaries exist.
  for (const std::string& name : entries(dir)) CHECK(name.front() == '.');
  CHECK(entries(dir).size() == 2);
  REQUIRE(folder->commit().ok());
  CHECK(entries(dir) == std::set<std::string>{"a.npy", "b.npy"});
  CHECK(slurp(dir / "a.npy") == "first");
  CHECK(slurp(dir / "b.npy").size() == (1u << 20));
}

TEST_CASE("an existing file is replaced whole", "[output_folder]") {
  TempDir t;
  { std::ofstream(t.path / "y.npy") << "old contents that are longer"; }
  auto folder = OutputFolder::open(t.path.string());
  REQUIRE(folder.ok());
  REQUIRE(folder->stage("y.npy", "new").ok());
  REQUIRE(folder->commit().ok());
  CHECK(slurp(t.path / "y.npy") == "new");
}

TEST_CASE("a symbolic link planted at a file's name is replaced, not followed", "[output_folder]") {
  TempDir t;
  const fs::path outside = t.path / "outside.txt";
  { std::ofstream(outside) << "precious"; }
  const fs::path dir = t.path / "out";
  fs::create_directories(dir);
  fs::create_symlink(outside, dir / "y.npy");
  fs::create_symlink(t.path, dir / "sub");  // a link to a folder, too
  auto folder = OutputFolder::open(dir.string());
  REQUIRE(folder.ok());
  REQUIRE(folder->stage("y.npy", "result").ok());
  REQUIRE(folder->commit().ok());
  CHECK(slurp(outside) == "precious");
  CHECK_FALSE(fs::is_symlink(dir / "y.npy"));
  CHECK(fs::is_regular_file(dir / "y.npy"));
  CHECK(slurp(dir / "y.npy") == "result");
}

TEST_CASE("names that are not plain file names are refused", "[output_folder]") {
  TempDir t;
  auto folder = OutputFolder::open(t.path.string());
  REQUIRE(folder.ok());
  for (const std::string bad : {"", ".", "..", "../x", "a/b", "/etc/passwd", ".hidden"}) {
    auto s = folder->stage(bad, "x");
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code() == ErrorCode::InvalidAttribute);
  }
  CHECK(entries(t.path).empty());
}

TEST_CASE("a failed commit leaves neither temporaries nor later files", "[output_folder]") {
  TempDir t;
  fs::create_directories(t.path / "blocked.npy" / "inside");  // a non-empty folder: rename fails
  {
    auto folder = OutputFolder::open(t.path.string());
    REQUIRE(folder.ok());
    REQUIRE(folder->stage("first.npy", "1").ok());
    REQUIRE(folder->stage("blocked.npy", "2").ok());
    REQUIRE(folder->stage("third.npy", "3").ok());
    auto s = folder->commit();
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code() == ErrorCode::Io);
    CHECK_THAT(s.error().message(), Catch::Contains("'blocked.npy'"));
  }
  // first.npy was in place before the failure; nothing else was added.
  CHECK(entries(t.path) == std::set<std::string>{"blocked.npy", "first.npy"});
}

TEST_CASE("files staged and never committed are removed", "[output_folder]") {
  TempDir t;
  {
    auto folder = OutputFolder::open(t.path.string());
    REQUIRE(folder.ok());
    REQUIRE(folder->stage("a.npy", "1").ok());
    CHECK(entries(t.path).size() == 1);
  }
  CHECK(entries(t.path).empty());
}

TEST_CASE("a folder that cannot be made is an Io error naming it", "[output_folder]") {
  TempDir t;
  { std::ofstream(t.path / "file") << "x"; }
  auto folder = OutputFolder::open((t.path / "file" / "sub").string());
  REQUIRE_FALSE(folder.ok());
  CHECK(folder.error().code() == ErrorCode::Io);
  CHECK_THAT(folder.error().message(), Catch::Contains("file/sub"));
}
