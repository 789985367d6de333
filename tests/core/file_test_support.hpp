// Helpers shared by the tests that write and read files: a fresh temporary
// folder that is removed with everything in it when the test ends, and the
// whole contents of a file as a string. Test-only; every definition is
// inline so several test files can include it (and, in a unity build, share
// one translation unit).
#pragma once

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace tenact::testing {

/// A new, empty folder under the system's temporary folder (mkdtemp: its
/// name is unique), removed with its contents on destruction.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "tenact_test_XXXXXX").string();
    REQUIRE(mkdtemp(templ.data()) != nullptr);
    path = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

/// The bytes of the file at `path` (the test fails when it cannot be read).
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace tenact::testing
