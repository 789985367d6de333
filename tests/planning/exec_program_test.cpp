// Staging a semantic program into an exec program: one slot per value,
// instructions in program order with their semantic-op index, last-use
// flags (at most one per slot, never for program outputs), constants and
// output shapes with their extents. Expected values are derived by hand
// from the programs below.
#include <catch2/catch.hpp>

#include "core/builder.hpp"
#include "core/program_json.hpp"
#include "planning/exec_program.hpp"
#include "staged_programs.hpp"

using namespace tenact;
using tenact::testing::load;
using tenact::testing::stage_ok;
using tenact::testing::slot_named;

namespace {

// x, y: inputs. s = x + y; m = s * s; n = -x; c = 1; z = m + c.
// Outputs: z, y (an input passed through), n.
const char* kProgram = R"({"format": "tenact.program/1",
  "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 4]},
             {"name": "y", "dtype": "f32", "shape": ["B", 4]}],
  "ops": [{"op": "add", "in": ["x", "y"], "out": "s"},
          {"op": "multiply", "in": ["s", "s"], "out": "m"},
          {"op": "negate", "in": ["x"], "out": "n"},
          {"op": "constant", "out": "c", "dtype": "f32", "shape": ["B", 4], "value": 1},
          {"op": "add", "in": ["m", "c"], "out": "z"}],
  "outputs": ["z", "y", "n"]})";

}  // namespace

TEST_CASE("staging gives every value a slot and keeps inputs in theirs", "[staging]") {
  const SemanticProgram p = load(kProgram);
  const ExecProgram e = stage_ok(p);
  REQUIRE(e.slots.size() == 7);  // x y s m n c z
  REQUIRE(e.input_slots.size() == 2);
  CHECK(e.slots[e.input_slots[0]].name == "x");
  CHECK(e.slots[e.input_slots[1]].name == "y");
  CHECK_FALSE(e.slots[e.input_slots[0]].producer.has_value());
  // Slot ids are the program's value ids.
  for (SlotId s = 0; s < e.slots.size(); ++s) CHECK(e.slots[s].name == p.value(s).name);
  CHECK(e.slots[slot_named(e, "m")].producer == std::optional<uint32_t>{1});
  CHECK(e.slots[slot_named(e, "z")].producer == std::optional<uint32_t>{4});
  REQUIRE(e.output_slots.size() == 3);
  CHECK(e.output_slots[0] == slot_named(e, "z"));
  CHECK(e.output_slots[1] == e.input_slots[1]);
  CHECK(e.output_slots[2] == slot_named(e, "n"));
  CHECK(e.dropped_ops.empty());
  CHECK(e.describe_slot(slot_named(e, "m")) ==
        "slot " + std::to_string(slot_named(e, "m")) + " ('m')");
}

TEST_CASE("instructions follow the ops with their kinds, slots and semantic-op index", "[staging]") {
  const ExecProgram e = stage_ok(load(kProgram));
  REQUIRE(e.instructions.size() == 5);
  const OpKind kinds[] = {OpKind::Add, OpKind::Multiply, OpKind::Negate, OpKind::Constant,
                          OpKind::Add};
  for (size_t i = 0; i < 5; ++i) {
    CHECK(e.instructions[i].kind == kinds[i]);
    CHECK(e.instructions[i].semantic_op == i);
  }
  const SlotId x = slot_named(e, "x"), y = slot_named(e, "y"), s = slot_named(e, "s");
  CHECK(e.instructions[0].inputs == std::vector<SlotId>{x, y});
  CHECK(e.instructions[0].outputs == std::vector<SlotId>{s});
  CHECK(e.instructions[1].inputs == std::vector<SlotId>{s, s});
  CHECK(e.instructions[3].inputs.empty());
}

TEST_CASE("last-use flags mark the final read of each slot once", "[staging]") {
  const ExecProgram e = stage_ok(load(kProgram));
  // add(x, y): x is read again by negate; y is a program output.
  CHECK(e.instructions[0].last_use == std::vector<bool>{false, false});
  // multiply(s, s): s read twice by its last reader: only the later read.
  CHECK(e.instructions[1].last_use == std::vector<bool>{false, true});
  // negate(x): the last read of x.
  CHECK(e.instructions[2].last_use == std::vector<bool>{true});
  // add(m, c): last reads of both.
  CHECK(e.instructions[4].last_use == std::vector<bool>{true, true});
  CHECK(e.released_after(0).empty());
  CHECK(e.released_after(1) == std::vector<SlotId>{slot_named(e, "s")});
  CHECK(e.released_after(2) == std::vector<SlotId>{slot_named(e, "x")});
  std::vector<SlotId> mc{slot_named(e, "m"), slot_named(e, "c")};
  std::sort(mc.begin(), mc.end());
  CHECK(e.released_after(4) == mc);
  CHECK(e.released_after(99).empty());
}

TEST_CASE("program outputs are never freed, even when read later", "[staging]") {
  // s is an output and is read by the op after it; x is an output read twice.
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "i32", "shape": [3]}],
    "ops": [{"op": "add", "in": ["x", "x"], "out": "s"},
            {"op": "multiply", "in": ["s", "x"], "out": "t"}],
    "outputs": ["s", "x", "t", "s"]})"));
  for (const ExecInstruction& ins : e.instructions)
    for (bool flag : ins.last_use) CHECK_FALSE(flag);
  for (const ExecInstruction& ins : e.instructions)
    for (bool flag : ins.unread_output) CHECK_FALSE(flag);
  CHECK(e.output_slots.size() == 4);
  CHECK(e.output_slots[0] == e.output_slots[3]);
  CHECK(e.is_output(slot_named(e, "x")));
}

TEST_CASE("ops whose results nothing reads are dropped, with what only they read", "[staging]") {
  // a = x + x and b = a * a feed only d = -b, which nothing reads: all three
  // are dead; c = tanh(x) is the output. e = exp(x) is read by nothing
  // either. Dropped: ops 0, 1, 3, 4.
  const SemanticProgram p = load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "add", "in": ["x", "x"], "out": "a"},
            {"op": "multiply", "in": ["a", "a"], "out": "b"},
            {"op": "tanh", "in": ["x"], "out": "c"},
            {"op": "negate", "in": ["b"], "out": "d"},
            {"op": "exponential", "in": ["x"], "out": "e"}],
    "outputs": ["c"]})");
  const ExecProgram e = stage_ok(p);
  CHECK(e.dropped_ops == std::vector<size_t>{0, 1, 3, 4});
  REQUIRE(e.instructions.size() == 1);
  CHECK(e.instructions[0].kind == OpKind::Tanh);
  CHECK(e.instructions[0].semantic_op == 2);
  CHECK(e.instructions[0].last_use == std::vector<bool>{true});  // tanh is x's only remaining reader
  CHECK(e.instructions[0].unread_output == std::vector<bool>{false});
  CHECK(e.slots[slot_named(e, "c")].producer == std::optional<uint32_t>{0});
  for (const char* dead : {"a", "b", "d", "e"}) CHECK_FALSE(e.slots[slot_named(e, dead)].producer.has_value());
  CHECK(e.slots.size() == 6);  // slots stay numbered as the program's values
}

TEST_CASE("an op read only by a dead op stays when it is an output", "[staging]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "add", "in": ["x", "x"], "out": "a"},
            {"op": "negate", "in": ["a"], "out": "dead"}],
    "outputs": ["a"]})"));
  CHECK(e.dropped_ops == std::vector<size_t>{1});
  REQUIRE(e.instructions.size() == 1);
  CHECK(e.instructions[0].semantic_op == 0);
  CHECK(e.constant_instructions.empty());
}

TEST_CASE("a dead constant is dropped and the constants are renumbered", "[staging]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "ops": [{"op": "constant", "out": "unused", "dtype": "f32", "shape": [4], "value": 2},
            {"op": "constant", "out": "one", "dtype": "f32", "shape": [4], "value": 1},
            {"op": "add", "in": ["x", "one"], "out": "y"}],
    "outputs": ["y"]})"));
  CHECK(e.dropped_ops == std::vector<size_t>{0});
  CHECK(e.constant_instructions == std::vector<uint32_t>{0});
  REQUIRE(e.instructions.size() == 2);
  CHECK(e.instructions[1].inputs[1] == slot_named(e, "one"));
}

TEST_CASE("constant instructions are listed", "[staging]") {
  const ExecProgram e = stage_ok(load(kProgram));
  CHECK(e.constant_instructions == std::vector<uint32_t>{3});
  CHECK(e.instructions[3].is_constant());
  CHECK_FALSE(e.instructions[4].is_constant());
  CHECK(std::holds_alternative<ConstantAttrs>(e.instructions[3].attrs));
}

TEST_CASE("output shapes are dimension expressions with their extents", "[staging]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", "T"]},
               {"name": "n", "dtype": "i64", "shape": []}],
    "ops": [{"op": "reshape", "in": ["x"], "out": "r", "shape": ["B*T"]},
            {"op": "dynamic_truncate", "in": ["x", "n"], "out": "d", "dimension": 1}],
    "outputs": ["r", "d", "x"]})"));
  REQUIRE(e.output_slots.size() == 3);
  const Shape& r = e.output_shape(0);
  REQUIRE(r.size() == 1);
  CHECK(r[0].kind == ExtentKind::Exact);
  CHECK(r[0].expr.to_string() == "B*T");
  const Shape& d = e.output_shape(1);
  REQUIRE(d.size() == 2);
  CHECK(d[0].kind == ExtentKind::Exact);
  CHECK(d[0].expr.to_string() == "B");
  CHECK(d[1].kind == ExtentKind::UpperBound);
  CHECK(d[1].expr.to_string() == "T");
  CHECK(to_string(e.output_shape(2)) == "[B, T]");
  CHECK(e.slot_type(e.output_slots[1]).dtype == DType::F32);
}

TEST_CASE("equal programs stage to equal exec programs", "[staging]") {
  const ExecProgram a = stage_ok(load(kProgram));
  const ExecProgram b = stage_ok(load(kProgram));
  CHECK(a == b);
  ProgramBuilder builder;
  auto x = builder.input("x", DType::F32, {"B", 4});
  builder.output(builder.unary(OpKind::Negate, x, "n"));
  auto c = builder.build();
  REQUIRE(c.ok());
  CHECK_FALSE(a == stage_ok(*c));
}

TEST_CASE("a program without ops stages to inputs passed through", "[staging]") {
  const ExecProgram e = stage_ok(load(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}], "ops": [], "outputs": ["x"]})"));
  CHECK(e.instructions.empty());
  CHECK(e.output_slots == e.input_slots);
  CHECK(e.constant_instructions.empty());
}
