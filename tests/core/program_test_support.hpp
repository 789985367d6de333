// Helpers shared by the program loader tests: the error a document that
// must not load gives. Test-only; every definition is inline so several test
// files can include it (and, in a unity build, share one translation unit).
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "core/program_json.hpp"

namespace tenact::testing {

/// The error of loading `text` (the test fails when it loads).
inline Error load_error(const std::string& text, const ExtensionRegistry& extensions = {}) {
  auto r = load_program(text, extensions);
  INFO(text);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

}  // namespace tenact::testing
