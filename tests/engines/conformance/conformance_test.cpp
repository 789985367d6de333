// The engine conformance suite: every engine kind (conformance.hpp,
// engine_kinds(): cpu, sim, later cuda) held to the CPU engine's results.
// - the op x dtype x layout matrix: every op of docs/program-format.md on
//   every dtype it admits, with contiguous, transposed, sliced, broadcast
//   and empty operands, bit for bit (or within the ulps an engine kind
//   declares where the spec allows a bound);
// - fused elementwise regions against an unfused CPU engine;
// - allocation and release in every storage class, copies between every
//   pair of storage classes, event waits and stream order at the engine
//   level;
// - refusals: what an engine kind lists as unsupported (or leaves out of
//   its capabilities) is refused at prepare, never run; control engines
//   that refuse, lie, or corrupt results show the checks catch them;
// - after every test, every engine's allocated bytes are back.
#include "tests/engines/conformance/conformance_support.hpp"

using namespace tenact;
using namespace tenact::conformance;
using namespace tenact::conformance::suite;
using namespace std::chrono_literals;


// -- the op table ----------------------------------------------------------------------------

TEST_CASE("conformance: the op table holds every op of the format, and the validator admits exactly its dtypes",
          "[conformance][table]") {
  // Every op of the format's op list, but extension ops (user-registered
  // families; the built-in tenact module has no kernels on cpu or sim).
  std::vector<bool> listed(kOpKindCount, false);
  for (const OpSpec& spec : op_table()) listed[static_cast<size_t>(spec.kind)] = true;
  for (int k = 0; k < kOpKindCount; ++k) {
    const auto kind = static_cast<OpKind>(k);
    INFO("op " << to_string(kind));
    CHECK((listed[static_cast<size_t>(k)] || kind == OpKind::Extension));
  }
  // The spec's dtype sets (the table) against the validator: an admitted
  // dtype loads, every other one is a type_mismatch.
  size_t probes = 0;
  for (const OpSpec& spec : op_table())
    for (DType dtype : kAllDTypes) {
      const bool admitted = std::find(spec.admitted.begin(), spec.admitted.end(), dtype) != spec.admitted.end();
      const std::string json = probe_program(spec.kind, dtype);
      auto loaded = load_program(json);
      INFO("op " << to_string(spec.kind) << ", dtype " << to_string(dtype) << ", admitted by the table: " << admitted
                 << "\n" << json << "\n" << (loaded.ok() ? std::string{"loads"} : loaded.error().to_string()));
      ++probes;
      if (admitted) {
        CHECK(loaded.ok());
      } else {
        REQUIRE_FALSE(loaded.ok());
        CHECK(loaded.error().code() == ErrorCode::TypeMismatch);
      }
    }
  CHECK(probes == op_table().size() * kDTypeCount);
}

// -- the matrix, one test case per group of ops --------------------------------------------------

TEST_CASE("conformance: elementwise unary ops on every admitted dtype and layout match the CPU engine",
          "[conformance][matrix]") {
  check_matrix("elementwise unary", [](const OpSpec& s) { return is_unary_elementwise(s.kind); });
}

TEST_CASE("conformance: elementwise binary ops on every admitted dtype and layout match the CPU engine",
          "[conformance][matrix]") {
  check_matrix("elementwise binary", [](const OpSpec& s) { return is_binary_elementwise(s.kind); });
}

TEST_CASE("conformance: compare, select and clamp match the CPU engine", "[conformance][matrix]") {
  check_matrix("compare/select/clamp", [](const OpSpec& s) {
    return s.kind == OpKind::Compare || s.kind == OpKind::Select || s.kind == OpKind::Clamp;
  });
}

TEST_CASE("conformance: convert between every pair of dtypes matches the CPU engine", "[conformance][matrix]") {
  check_matrix("convert", [](const OpSpec& s) { return s.kind == OpKind::Convert; });
}

TEST_CASE("conformance: layout ops (transpose, reshape, broadcast_in_dim, constant, iota, diagonals, triangles) "
          "match the CPU engine",
          "[conformance][matrix]") {
  check_matrix("layout", [](const OpSpec& s) { return family_of(s.kind) == OpFamily::Layout; });
}

TEST_CASE("conformance: reductions match the CPU engine, empty axes included", "[conformance][matrix]") {
  check_matrix("reductions", [](const OpSpec& s) { return family_of(s.kind) == OpFamily::Reduction; });
}

TEST_CASE("conformance: indexing ops (slices, pads, concatenation, gather, scatter, truncation) match the CPU engine",
          "[conformance][matrix]") {
  check_matrix("indexing", [](const OpSpec& s) { return family_of(s.kind) == OpFamily::Indexing; });
}

TEST_CASE("conformance: dot_general matches the CPU engine, batched, transposed, empty and conjugated",
          "[conformance][matrix]") {
  check_matrix("dot", [](const OpSpec& s) { return s.kind == OpKind::DotGeneral; });
}

TEST_CASE("conformance: the cuda kind is listed, and skipped with its reason where it cannot be installed",
          "[conformance]") {
  const auto& listed = listed_engine_kinds();
  const auto cuda = std::find_if(listed.begin(), listed.end(), [](const ListedKind& k) { return k.kind.name == "cuda"; });
  REQUIRE(cuda != listed.end());
  const auto& tested = engine_kinds();
  const bool under_test =
      std::any_of(tested.begin(), tested.end(), [](const EngineKind& k) { return k.name == "cuda"; });
  CHECK(under_test == !cuda->skipped);
  if (cuda->skipped) {
    // Named, with the reason: no CUDA engine in this build, no device, or
    // (on a machine with one) the engine that runs no programs yet.
    CHECK_THAT(cuda->skipped->message(), Catch::StartsWith("engine 'cuda:0'"));
    WARN("cuda conformance cases skipped: " << cuda->skipped->message());
  }
  CHECK(tested.front().name == "cpu");
}

TEST_CASE("conformance: cases of known engine bugs still fail", "[conformance][known-bug]") {
  if (known_bugs().empty()) {
    SUCCEED("no known engine bugs");
    return;
  }
  const MatrixReport report = run_matrix(engine_kinds(), [](const OpSpec&) { return true; }, BugPolicy::OnlyKnownBugs);
  for (const std::string& failure : report.failures) FAIL_CHECK("known bug: " << failure);
}

// -- large operands -----------------------------------------------------------------------------

TEST_CASE("conformance: operands large enough for tiled, blocked and multi-threaded kernels match the CPU engine",
          "[conformance][large]") {
  // The matrix's operands are small (one tile, one thread); these are not.
  // Sums have finite terms so that a different association would show.
  struct Large {
    std::string name;
    std::string json;
    std::vector<Tensor> inputs;
    Accuracy accuracy;
  };
  const auto program = [](const std::string& inputs, const std::string& ops, const std::string& outputs) {
    return R"({"format": "tenact.program/1", "inputs": [)" + inputs + R"(], "ops": [)" + ops + R"(], "outputs": )" +
           outputs + "}";
  };
  std::vector<Large> cases;
  for (DType dtype : {DType::F16, DType::BF16, DType::F32, DType::F64, DType::C64, DType::I32}) {
    const std::string dt = "\"" + std::string{to_string(dtype)} + "\"";
    cases.push_back({"reduce_sum " + std::string{to_string(dtype)} + " [512, 384]",
                     program(R"({"name": "x", "dtype": )" + dt + R"(, "shape": [512, 384]})",
                             R"({"op": "reduce_sum", "in": ["x"], "out": "r0", "dimensions": [0]},
                                {"op": "reduce_sum", "in": ["x"], "out": "r1", "dimensions": [1]},
                                {"op": "reduce_sum", "in": ["x"], "out": "r", "dimensions": [0, 1]},
                                {"op": "reduce_sum_squares", "in": ["x"], "out": "q", "dimensions": [1]})",
                             R"(["r0", "r1", "r", "q"])"),
                     {random_tensor(dtype, {512, 384}, 11, 0)},
                     Accuracy::Sum});
    cases.push_back({"dot_general " + std::string{to_string(dtype)} + " [96, 200] x [200, 80], rhs transposed",
                     program(R"({"name": "a", "dtype": )" + dt + R"(, "shape": [96, 200]},
                                {"name": "b", "dtype": )" + dt + R"(, "shape": [80, 200]})",
                             R"({"op": "transpose", "in": ["b"], "out": "bt", "permutation": [1, 0]},
                                {"op": "dot_general", "in": ["a", "bt"], "out": "c",
                                 "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
                                {"op": "dot_general", "in": ["a", "b"], "out": "d",
                                 "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [1]})",
                             R"(["c", "d"])"),
                     {random_tensor(dtype, {96, 200}, 12, 0), random_tensor(dtype, {80, 200}, 13, 0)},
                     Accuracy::Sum});
  }
  for (DType dtype : {DType::F16, DType::F32, DType::F64, DType::C128}) {
    const std::string dt = "\"" + std::string{to_string(dtype)} + "\"";
    cases.push_back({"elementwise " + std::string{to_string(dtype)} + " [384, 512]: tanh of a transpose, plus y, max",
                     program(R"({"name": "x", "dtype": )" + dt + R"(, "shape": [512, 384]},
                                {"name": "y", "dtype": )" + dt + R"(, "shape": [384, 512]})",
                             R"({"op": "transpose", "in": ["x"], "out": "xt", "permutation": [1, 0]},
                                {"op": "tanh", "in": ["xt"], "out": "t"}, {"op": "add", "in": ["t", "y"], "out": "s"},
                                {"op": "multiply", "in": ["s", "xt"], "out": "m"},
                                {"op": "reduce_max", "in": ["m"], "out": "mx", "dimensions": [0]},
                                {"op": "reduce_prod", "in": ["y"], "out": "p", "dimensions": [1]})",
                             R"(["m", "mx", "p"])"),
                     {random_tensor(dtype, {512, 384}, 14), random_tensor(dtype, {384, 512}, 15)},
                     Accuracy::Approximate});
  }
  cases.push_back({"convert f64 -> f16, bf16, i8, u64 over 196608 elements",
                   program(R"({"name": "x", "dtype": "f64", "shape": [196608]})",
                           R"({"op": "convert", "in": ["x"], "out": "h", "dtype": "f16"},
                              {"op": "convert", "in": ["x"], "out": "b", "dtype": "bf16"},
                              {"op": "convert", "in": ["x"], "out": "i", "dtype": "i8"},
                              {"op": "convert", "in": ["x"], "out": "u", "dtype": "u64"})",
                           R"(["h", "b", "i", "u"])"),
                   {random_tensor(DType::F64, {196608}, 16)},
                   Accuracy::Exact});
  CheckedRig reference{reference_kind()};
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind};
    for (const Large& c : cases) {
      INFO("engine kind '" << kind.name << "', " << c.name);
      auto p = program_of(c.json);
      auto expected = reference->run(p, c.inputs);
      REQUIRE(expected.ok());
      auto actual = rig->run(p, c.inputs);
      if (!actual.ok()) FAIL_CHECK(actual.error().to_string());
      if (!actual.ok()) continue;
      REQUIRE(actual->size() == expected->size());
      for (size_t i = 0; i < actual->size(); ++i) {
        INFO("output " << i);
        CHECK(compare((*expected)[i], (*actual)[i], kind.tolerance(c.accuracy)) == "");
      }
    }
  }
}

// -- program forms ------------------------------------------------------------------------------

TEST_CASE("conformance: program forms (pass-through and repeated outputs, symbolic shapes, run-time extents, "
          "constants only) match the CPU engine",
          "[conformance][forms]") {
  struct Form {
    std::string name;
    std::string json;
    std::vector<std::vector<Tensor>> runs;  // several signatures for symbolic programs
  };
  const std::vector<Form> forms = {
      {"an input passed through, an output listed twice, an intermediate and the final value of a chain",
       R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [5, 7]}],
          "ops": [{"op": "negate", "in": ["x"], "out": "n"}, {"op": "multiply", "in": ["n", "x"], "out": "m"},
                  {"op": "exponential", "in": ["m"], "out": "e"}],
          "outputs": ["x", "e", "m", "e"]})",
       {{random_tensor(DType::F32, {5, 7}, 21)}}},
      {"no ops at all", R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "c64", "shape": [3]}],
          "ops": [], "outputs": ["x"]})",
       {{random_tensor(DType::C64, {3}, 22)}}},
      {"constants and iota only", R"({"format": "tenact.program/1", "inputs": [],
          "ops": [{"op": "iota", "out": "i", "dtype": "f32", "shape": [4, 3], "iota_dimension": 1},
                  {"op": "constant", "out": "c", "dtype": "f32", "shape": [4, 3], "value": "-inf"},
                  {"op": "maximum", "in": ["i", "c"], "out": "y"}], "outputs": ["y", "c"]})",
       {{}}},
      {"a symbolic batch axis, run with three signatures (one empty)",
       R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "f64", "shape": ["B", 6]},
                                                    {"name": "w", "dtype": "f64", "shape": [6, 4]}],
          "ops": [{"op": "dot_general", "in": ["x", "w"], "out": "h",
                   "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]},
                  {"op": "tanh", "in": ["h"], "out": "t"},
                  {"op": "reduce_sum", "in": ["t"], "out": "s", "dimensions": [0]},
                  {"op": "reshape", "in": ["t"], "out": "r", "shape": ["B * 2", 2]}],
          "outputs": ["t", "s", "r"]})",
       {{random_tensor(DType::F64, {3, 6}, 23, 0), random_tensor(DType::F64, {6, 4}, 24, 0)},
        {random_tensor(DType::F64, {17, 6}, 25, 0), random_tensor(DType::F64, {6, 4}, 26, 0)},
        {random_tensor(DType::F64, {0, 6}, 27, 0), random_tensor(DType::F64, {6, 4}, 28, 0)}}},
      {"a run-time extent (dynamic_truncate) feeding more ops",
       R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "i32", "shape": [9, 4]},
                                                    {"name": "n", "dtype": "i64", "shape": []}],
          "ops": [{"op": "dynamic_truncate", "in": ["x", "n"], "out": "t", "dimension": 0},
                  {"op": "multiply", "in": ["t", "t"], "out": "m"},
                  {"op": "reduce_sum", "in": ["m"], "out": "s", "dimensions": [0]},
                  {"op": "shape_of", "in": ["m"], "out": "shape"}],
          "outputs": ["m", "s", "shape"]})",
       {{random_tensor(DType::I32, {9, 4}, 29), integer_tensor(DType::I64, {}, {5})},
        {random_tensor(DType::I32, {9, 4}, 30), integer_tensor(DType::I64, {}, {0})},
        {random_tensor(DType::I32, {9, 4}, 31), integer_tensor(DType::I64, {}, {40})}}},
      {"a broadcast view as a program output, and a slice of a reversed input",
       R"({"format": "tenact.program/1", "inputs": [{"name": "x", "dtype": "u16", "shape": [6]}],
          "ops": [{"op": "broadcast_in_dim", "in": ["x"], "out": "b", "shape": [3, 6], "broadcast_dimensions": [1]},
                  {"op": "reverse", "in": ["x"], "out": "r", "dimensions": [0]},
                  {"op": "slice", "in": ["r"], "out": "s", "start_indices": [1], "limit_indices": [6], "strides": [2]}],
          "outputs": ["b", "s"]})",
       {{random_tensor(DType::U16, {6}, 32)}}},
  };
  CheckedRig reference{reference_kind()};
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind};
    for (const Form& form : forms) {
      auto p = program_of(form.json);
      for (size_t r = 0; r < form.runs.size(); ++r) {
        INFO("engine kind '" << kind.name << "', " << form.name << ", run " << r);
        auto expected = reference->run(p, form.runs[r]);
        REQUIRE(expected.ok());
        auto actual = rig->run(p, form.runs[r]);
        if (!actual.ok()) FAIL_CHECK(actual.error().to_string());
        if (!actual.ok()) continue;
        REQUIRE(actual->size() == expected->size());
        for (size_t i = 0; i < actual->size(); ++i) {
          INFO("output " << i);
          CHECK(compare((*expected)[i], (*actual)[i], kind.tolerance(Accuracy::Approximate)) == "");
        }
      }
    }
  }
}

// -- fused regions --------------------------------------------------------------------------------

TEST_CASE("conformance: fused elementwise regions give bit for bit what the ops give one by one",
          "[conformance][fused]") {
  struct Chain {
    std::string name;
    std::vector<DType> dtypes;
    std::string ops;  // over inputs a, b, c of the program's shape; output "y" (and "t" for two outputs)
    Accuracy accuracy;
  };
  const std::vector<Chain> chains = {
      {"tanh(a*b+c)*0.5+a",
       {DType::F16, DType::BF16, DType::F32, DType::F64, DType::C64, DType::C128},
       R"({"op": "multiply", "in": ["a", "b"], "out": "m"}, {"op": "add", "in": ["m", "c"], "out": "s"},
          {"op": "tanh", "in": ["s"], "out": "t"}, {"op": "constant", "out": "h", "dtype": "DT", "shape": SHAPE, "value": 0.5},
          {"op": "multiply", "in": ["t", "h"], "out": "u"}, {"op": "add", "in": ["u", "a"], "out": "y"})",
       Accuracy::Approximate},
      {"select(a<b, a*b, c-a) with a max and a negate",
       {DType::I8, DType::U16, DType::I32, DType::U64, DType::F16, DType::F32, DType::F64},
       R"({"op": "compare", "in": ["a", "b"], "out": "p", "direction": "LT"}, {"op": "multiply", "in": ["a", "b"], "out": "m"},
          {"op": "subtract", "in": ["c", "a"], "out": "d"}, {"op": "select", "in": ["p", "m", "d"], "out": "t"},
          {"op": "maximum", "in": ["t", "b"], "out": "x"}, {"op": "negate", "in": ["x"], "out": "y"})",
       Accuracy::Exact},
      {"convert chain f->i->f with abs, exp and a clamp",
       {DType::F16, DType::BF16, DType::F32, DType::F64},
       R"({"op": "abs", "in": ["a"], "out": "r"}, {"op": "exponential", "in": ["r"], "out": "e"},
          {"op": "convert", "in": ["e"], "out": "i", "dtype": "i32"}, {"op": "convert", "in": ["i"], "out": "f", "dtype": "DT"},
          {"op": "clamp", "in": ["b", "f", "c"], "out": "t"}, {"op": "divide", "in": ["t", "a"], "out": "y"})",
       Accuracy::Approximate},
      {"(a xor b) and not c, plus a",
       {DType::Bool, DType::U8, DType::I16, DType::I64},
       R"({"op": "xor", "in": ["a", "b"], "out": "x"}, {"op": "not", "in": ["c"], "out": "n"},
          {"op": "and", "in": ["x", "n"], "out": "t"}, {"op": "add", "in": ["t", "a"], "out": "y"})",
       Accuracy::Exact},
  };
  // a's layout: dense, a transpose, a broadcast (b and c dense).
  const std::vector<std::pair<std::string, std::string>> a_layouts = {
      {"contiguous", R"({"name": "a", "dtype": "DT", "shape": [16, 12]})"},
      {"transposed", R"({"name": "a0", "dtype": "DT", "shape": [12, 16]})"},
      {"broadcast", R"({"name": "a0", "dtype": "DT", "shape": [12]})"},
  };
  CheckedRig reference{unfused_reference_kind()};
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind};
    const std::optional<uint64_t> saved_before = fused_ops_saved(rig->engine());
    size_t runs = 0;
    for (const Chain& chain : chains)
      for (DType dtype : chain.dtypes)
        for (const auto& [layout, a_decl] : a_layouts) {
          const std::string dt{to_string(dtype)};
          std::string ops = chain.ops;
          const auto replace_all = [](std::string& s, const std::string& from, const std::string& to) {
            for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
              s.replace(at, from.size(), to);
          };
          replace_all(ops, "SHAPE", "[16, 12]");
          std::string pre;
          std::vector<int64_t> a_shape = {16, 12};
          if (layout == "transposed") {
            pre = R"({"op": "transpose", "in": ["a0"], "out": "a", "permutation": [1, 0]}, )";
            a_shape = {12, 16};
          } else if (layout == "broadcast") {
            pre = R"({"op": "broadcast_in_dim", "in": ["a0"], "out": "a", "shape": [16, 12], "broadcast_dimensions": [1]}, )";
            a_shape = {12};
          }
          std::string json = R"({"format": "tenact.program/1", "inputs": [)" + std::string{a_decl} +
                             R"(, {"name": "b", "dtype": "DT", "shape": [16, 12]}, {"name": "c", "dtype": "DT", "shape": [16, 12]}],
              "ops": [)" + pre + ops + R"(], "outputs": ["y", "t"]})";
          replace_all(json, "\"DT\"", "\"" + dt + "\"");
          INFO("engine kind '" << kind.name << "', chain " << chain.name << ", dtype " << dt << ", a " << layout);
          auto program = program_of(json);
          const uint64_t seed = std::hash<std::string>{}(chain.name + dt + layout);
          const std::vector<Tensor> inputs = {random_tensor(dtype, a_shape, seed, 5),
                                              random_tensor(dtype, {16, 12}, seed + 1, 5),
                                              random_tensor(dtype, {16, 12}, seed + 2, 5)};
          auto expected = reference->run(program, inputs);
          REQUIRE(expected.ok());
          auto actual = rig->run(program, inputs);
          if (!actual.ok()) FAIL_CHECK(actual.error().to_string());
          if (!actual.ok()) continue;
          ++runs;
          for (size_t i = 0; i < 2; ++i) CHECK(compare((*expected)[i], (*actual)[i], kind.tolerance(chain.accuracy)) == "");
        }
    CHECK(runs > 0);
    // Evidence that regions were fused, where the suite can ask the engine.
    if (rig->engine().capabilities().fused_elementwise_regions)
      if (auto saved_after = fused_ops_saved(rig->engine())) CHECK(*saved_after > saved_before.value_or(0));
  }
}

// -- allocation and release --------------------------------------------------------------------

TEST_CASE("conformance: allocation in every storage class is zero-filled, counted, and released",
          "[conformance][memory]") {
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind};
    for (const auto& engine_ptr : rig->engines()) {
      Engine& engine = *engine_ptr;
      for (const std::string& storage : engine.capabilities().storage_classes) {
        INFO("engine kind '" << kind.name << "', engine " << engine.identity().id << ", storage class " << storage);
        auto before = engine.memory_stats(storage);
        REQUIRE(before.ok());  // every engine counts the memory of its storage classes
        for (DType dtype : kAllDTypes) {
          INFO("dtype " << to_string(dtype));
          auto t = engine.allocate(storage, dtype, {10, 25});
          REQUIRE(t.ok());
          CHECK(t->endpoint() == Endpoint{engine.identity().id, storage});
          CHECK(t->shape() == std::vector<int64_t>{10, 25});
          CHECK(t->dtype() == dtype);
          auto during = engine.memory_stats(storage);
          REQUIRE(during.ok());
          CHECK(during->allocated_bytes >= before->allocated_bytes + 250 * size_of(dtype));
          CHECK(during->allocations == before->allocations + 1);
          t = Tensor{};  // the last reference: released at once
          auto after = engine.memory_stats(storage);
          REQUIRE(after.ok());
          CHECK(after->allocated_bytes == before->allocated_bytes);
          CHECK(after->releases == before->releases + 1);
          // Zero-filled, as the host reads it back.
          {
            auto z = engine.allocate(storage, dtype, {10, 25});
            REQUIRE(z.ok());
            auto host = rig->to_host(*z);
            REQUIRE(host.ok());
            auto dense = host->contiguous();
            REQUIRE(dense.ok());
            const std::vector<std::byte> zeros(250 * size_of(dtype));
            CHECK(std::memcmp(dense->data(), zeros.data(), zeros.size()) == 0);
          }
          // The copy that read it back may still hold the source for a
          // moment after its future is ready (released from a runtime
          // thread): the count comes back, if not at once.
          CHECK(eventually_allocated(engine, storage, before->allocated_bytes));
          before = engine.memory_stats(storage);
          REQUIRE(before.ok());
        }
        auto empty = engine.allocate(storage, DType::I8, {0, 3});
        REQUIRE(empty.ok());
        CHECK(empty->element_count() == 0);
        empty = Tensor{};
        // Beyond any memory: an error, not a crash, and nothing counted.
        auto huge = engine.allocate(storage, DType::F64, {int64_t{1} << 20, int64_t{1} << 20});
        REQUIRE_FALSE(huge.ok());
        CHECK((huge.error().code() == ErrorCode::LimitExceeded || huge.error().code() == ErrorCode::ResourceExhausted));
        CHECK(engine.memory_stats(storage)->allocated_bytes == before->allocated_bytes);
      }
      auto foreign = engine.allocate("no-such-storage-class", DType::F32, {4});
      REQUIRE_FALSE(foreign.ok());
      CHECK(foreign.error().code() == ErrorCode::Unsupported);
    }
  }
}

// -- copies --------------------------------------------------------------------------------------

TEST_CASE("conformance: copies between every pair of storage classes preserve values bit for bit",
          "[conformance][copy]") {
  for (const EngineKind& kind : engine_kinds()) {
    CheckedRig rig{kind, kind.max_devices};
    std::vector<Endpoint> endpoints = {Endpoint::unowned_host()};
    for (const Endpoint& e : rig->endpoints()) endpoints.push_back(e);
    // Dense values of several dtypes, a transposed and a broadcast view,
    // an empty tensor and a scalar.
    const Tensor f16_matrix = random_tensor(DType::F16, {6, 5}, 3);
    const Tensor i16_row = random_tensor(DType::I16, {4}, 4);
    const std::vector<std::pair<std::string, Tensor>> values = {
        {"f32[7, 9]", random_tensor(DType::F32, {7, 9}, 1)},
        {"bool[13]", random_tensor(DType::Bool, {13}, 2)},
        {"c128[3, 4]", random_tensor(DType::C128, {3, 4}, 5)},
        {"f16[5, 6] transposed view", f16_matrix.transposed(std::vector<int64_t>{1, 0})},
        {"i16[3, 4] broadcast view", i16_row.broadcast_view({3, 4}, std::vector<int64_t>{1})},
        {"u64[0, 3]", random_tensor(DType::U64, {0, 3}, 6)},
        {"i64[] scalar", random_tensor(DType::I64, {}, 7)},
        {"bf16[300]", random_tensor(DType::BF16, {300}, 8)},
    };
    // Every ordered pair of distinct endpoints, but copies from memory the
    // host addresses to unowned host memory (nothing needs them: the host
    // reads such memory in place, and setup registers no such route for
    // CPU memory).
    const auto wanted = [&](const Endpoint& from, const Endpoint& to) {
      if (from == to) return false;
      if (to != Endpoint::unowned_host()) return true;
      auto probe = rig->runtime().copy(values[0].second, from).get();
      return probe.ok() && !probe->is_host();
    };
    size_t copies = 0, pairs = 0;
    for (const Endpoint& from : endpoints)
      for (const Endpoint& to : endpoints) {
        if (!wanted(from, to)) continue;
        ++pairs;
        for (const auto& [what, value] : values) {
          INFO("engine kind '" << kind.name << "', " << what << ", from " << from.to_string() << " to "
                               << to.to_string());
          Tensor source = value;
          if (from != Endpoint::unowned_host()) {
            auto placed = rig->runtime().copy(value, from).get();
            if (!placed.ok()) FAIL_CHECK(placed.error().to_string());
            if (!placed.ok()) continue;
            CHECK(placed->endpoint() == from);
            source = *placed;
          }
          auto copied = rig->runtime().copy(source, to).get();
          if (!copied.ok()) FAIL_CHECK(copied.error().to_string());
          if (!copied.ok()) continue;
          CHECK(copied->endpoint() == to);
          auto back = rig->to_host(*copied);
          REQUIRE(back.ok());
          CHECK(compare(value, *back, Tolerance{}) == "");
          ++copies;
        }
      }
    CHECK(copies == pairs * values.size());
    // Host to each device and back at least, device to device with two.
    CHECK(pairs >= 2 * rig->endpoints().size());
    // A value placed on each device is a program input there, too.
    auto program = program_of(R"({"format": "tenact.program/1",
        "inputs": [{"name": "x", "dtype": "f32", "shape": [7, 9]}],
        "ops": [{"op": "multiply", "in": ["x", "x"], "out": "y"}], "outputs": ["y"]})");
    const Tensor x = values[0].second;
    auto expected = rig->run(program, {x});
    REQUIRE(expected.ok());
    for (const Endpoint& at : rig->endpoints()) {
      INFO("engine kind '" << kind.name << "', input placed at " << at.to_string());
      auto placed = rig->runtime().copy(x, at).get();
      REQUIRE(placed.ok());
      auto actual = rig->run(program, {*placed});
      REQUIRE(actual.ok());
      CHECK(compare((*expected)[0], (*actual)[0], Tolerance{}) == "");
    }
    // No route (a storage class the engine lacks): refused, naming it.
    const Endpoint missing{rig->engine().identity().id, "no-such-storage-class"};
    auto nowhere = rig->runtime().copy(values[0].second, missing).get();
    REQUIRE_FALSE(nowhere.ok());
    CHECK(nowhere.error().code() == ErrorCode::Unsupported);
    CHECK_THAT(nowhere.error().message(), Catch::Contains(missing.to_string()));
  }
}

// -- events and stream order ---------------------------------------------------------------------

