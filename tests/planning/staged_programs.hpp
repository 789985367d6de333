// Programs from JSON text and their staged form, for the planning tests
// (and the CPU runner's): load, stage, and find slots by value name. Each
// helper fails the current test on an error.
#pragma once

#include <catch2/catch.hpp>

#include <initializer_list>
#include <string>
#include <vector>

#include "core/program_json.hpp"
#include "planning/exec_program.hpp"

namespace tenact::testing {

inline SemanticProgram load(const std::string& text) {
  auto p = load_program(text);
  REQUIRE(p.ok());
  return std::move(*p);
}

inline ExecProgram stage_ok(const SemanticProgram& p) {
  auto e = stage(p);
  REQUIRE(e.ok());
  return std::move(*e);
}

inline SlotId slot_named(const ExecProgram& e, const std::string& name) {
  for (SlotId s = 0; s < e.slots.size(); ++s)
    if (e.slots[s].name == name) return s;
  FAIL("no slot named " << name);
  return 0;
}

inline std::vector<SlotId> slots_named(const ExecProgram& e, std::initializer_list<const char*> names) {
  std::vector<SlotId> out;
  for (const char* n : names) out.push_back(slot_named(e, n));
  return out;
}

}  // namespace tenact::testing
