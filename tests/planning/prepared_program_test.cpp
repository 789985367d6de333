// Prepared programs: the root shared between specializations, per-op
// plans validated against what was asked (BindingMismatch,
// ProjectionMismatch, WrongOperationFamily), outcomes classified
// deterministic or transient, and the whole prepare loop with redirects
// (SpecializationRetryLimitExceeded, NonWideningSpecialization) over
// scripted engines.
#include <catch2/catch.hpp>

#include "planning/prepared_program.hpp"
#include "planning_world.hpp"

using namespace tenact;
using namespace tenact::testing;

namespace {

struct Prepared {
  Result<std::shared_ptr<const PreparedProgram>> program;
  PrepareReport report;
};

Prepared prepare(const World& w, const std::shared_ptr<const SemanticProgram>& p,
                 const std::vector<InputDescriptor>& inputs, const EntrySource& source = {}) {
  Prepared out{Error{ErrorCode::Internal, "unset"}, {}};
  out.program = prepare_program(w.config, p, inputs, {}, w.lookup(), source, &out.report);
  return out;
}

// Asks once for input 0's axis 0 (the batch) to be concrete.
ScriptedEngine::Answer needs_batch() {
  return [](const OpPrepareRequest& r) -> PrepareAnswer {
    const auto& in = r.specialization.inputs;
    const bool has = !in.empty() && !in[0].concrete_dims.empty();
    if (has) return ScriptedEngine::echo(r);
    InputRequirement x;
    x.concrete_dims = {0};
    return NeedsSpecialization{SpecializationRequirements{{x, {}}}, "needs a concrete batch"};
  };
}

}  // namespace

TEST_CASE("a prepared program has one validated plan per op and a root", "[prepared]") {
  World w;
  auto e = w.add("cpu", {"host"});
  auto p = program_of(kBatched);
  auto r = prepare(w, p, batch(3));
  REQUIRE(r.program.ok());
  const PreparedProgram& prog = **r.program;
  REQUIRE(prog.ops.size() == 3);
  CHECK(e->calls == 3);
  CHECK(prog.ops[0]->kind == OpKind::Add);
  CHECK(prog.ops[2]->kind == OpKind::ReduceSum);
  CHECK(prog.ops[1]->binding.endpoint == Endpoint{"cpu", "host"});
  // Polymorphic: nothing about the inputs is assumed.
  CHECK(prog.projection.inputs == std::vector<InputProjection>(2));
  REQUIRE(prog.root);
  CHECK(prog.root->program == p);
  CHECK(prog.root->staging->instructions.size() == 3);
  CHECK(prog.root->schedule->nodes.size() == 3);
  CHECK(prog.root->retained_bytes > prog.root->staging->slots.size() * sizeof(ExecSlot));
  CHECK(prog.retained_bytes >= 3 * sizeof(PreparedOp));
  REQUIRE(r.report.key);
  CHECK(r.report.redirects == 0);
  CHECK(r.report.key->accounting() == RootAccounting::CountedByKey);
}

TEST_CASE("the signature is checked before any engine is asked", "[prepared]") {
  World w;
  auto e = w.add("cpu", {"host"});
  auto p = program_of(kBatched);
  auto wrong_rank = prepare(w, p, {input(DType::F32, {3, 4}), input(DType::F32, {3})});
  REQUIRE_FALSE(wrong_rank.program.ok());
  CHECK(wrong_rank.program.error().code() == ErrorCode::InputMismatch);
  auto arity = prepare(w, p, {input(DType::F32, {3, 4})});
  REQUIRE_FALSE(arity.program.ok());
  CHECK(arity.program.error().code() == ErrorCode::InputMismatch);
  CHECK(e->calls == 0);
  CHECK_FALSE(arity.report.context);
}

TEST_CASE("regions are planned into the root on engines that fuse", "[prepared]") {
  World w;
  auto e = std::make_shared<ScriptedEngine>("cpu", std::vector<std::string>{"host"});
  e->capabilities_.fused_elementwise_regions = true;
  w.add(e);
  auto r = prepare(w, program_of(kBatched), batch(2));
  REQUIRE(r.program.ok());
  const auto& regions = (*r.program)->root->regions;
  REQUIRE(regions.size() == 1);
  CHECK(regions[0].instructions == std::vector<uint32_t>{0, 1});
  CHECK(regions[0].endpoint == Endpoint{"cpu", "host"});

  World plain;
  plain.add("cpu", {"host"});
  auto r2 = prepare(plain, program_of(kBatched), batch(2));
  REQUIRE(r2.program.ok());
  CHECK((*r2.program)->root->regions.empty());
}

TEST_CASE("a redirect re-keys with the wider requirements and the shared root", "[prepared]") {
  World w;
  auto e = w.add("cpu", {"host"});
  e->answer = needs_batch();
  std::vector<std::shared_ptr<const PreparedRoot>> roots_seen;
  std::vector<PreparedEntryKey> keys;
  auto p = program_of(kBatched);
  const auto inputs = batch(5);
  std::shared_ptr<const PreparationContext> ctx;
  PrepareReport report;
  EntrySource source = [&](const PreparedEntryKey& key, const std::shared_ptr<const PreparedRoot>& root) {
    keys.push_back(key);
    roots_seen.push_back(root);
    return produce_prepared_entry(*report.context, key, root, inputs, w.lookup());
  };
  auto prog = prepare_program(w.config, p, inputs, {}, w.lookup(), source, &report);
  REQUIRE(prog.ok());
  REQUIRE(keys.size() == 2);
  CHECK_FALSE(roots_seen[0]);                    // first production makes the root
  REQUIRE(roots_seen[1]);                        // the redirect carries it
  CHECK(roots_seen[1] == (*prog)->root);         // and the entry shares it
  CHECK(keys[1].accounting() == RootAccounting::CountedBySharedRoot);
  CHECK(&keys[0].root() == &keys[1].root());     // one root identity
  CHECK_FALSE(keys[0] == keys[1]);
  CHECK((*prog)->projection.inputs[0].concrete_dims == std::vector<ConcreteDim>{{0, 5}});
  CHECK(report.redirects == 1);
  // The engine saw the fixed batch symbol in the request that prepared.
  CHECK((*prog)->ops[0]->projection == (*prog)->projection);
}

TEST_CASE("a redirect that adds nothing is a deterministic NonWideningSpecialization", "[prepared]") {
  World w;
  auto e = w.add("cpu", {"host"});
  e->answer = [](const OpPrepareRequest&) -> PrepareAnswer {
    return NeedsSpecialization{SpecializationRequirements{}, "wants nothing new"};
  };
  auto p = program_of(kBatched);
  auto r = prepare(w, p, batch(2));
  REQUIRE_FALSE(r.program.ok());
  CHECK(r.program.error().code() == ErrorCode::NonWideningSpecialization);
  CHECK(mentions(r.program.error(), "engine 'cpu' preparing op #0 (add -> 'z')"));
  CHECK(mentions(r.program.error(), "wants nothing new"));
  CHECK(is_deterministic_prepare_failure(r.program.error().code()));
}

TEST_CASE("an engine that keeps redirecting hits the retry limit", "[prepared]") {
  // The engine widens by one lattice edge per answer: per input dtype,
  // rank, each axis, placement twice, layout twice, then alignment. The
  // inputs' alignment is unknown, so (input_retry_bound) each
  // contributes 1 + 1 + 2 + 2 + 2 + 0 = 8 edges: a bound of 16. Every
  // answer strictly widens, and the 17th exceeds the bound.
  World w;
  auto e = w.add("cpu", {"host"});
  e->answer = [](const OpPrepareRequest& r) -> PrepareAnswer {
    SpecializationRequirements next = r.specialization;
    // Widen by one edge per call, in a fixed order of fields.
    for (InputRequirement& in : next.inputs.edit()) {
      if (!in.dtype) { in.dtype = true; return NeedsSpecialization{next, "dtype"}; }
      if (!in.rank) { in.rank = true; return NeedsSpecialization{next, "rank"}; }
      if (in.concrete_dims.size() < 2) { in.concrete_dims.push_back(in.concrete_dims.size()); return NeedsSpecialization{next, "dim"}; }
      if (in.placement != PlacementSpecialization::Device) {
        in.placement = static_cast<PlacementSpecialization>(static_cast<int>(in.placement) + 1);
        return NeedsSpecialization{next, "placement"};
      }
      if (in.layout != LayoutSpecialization::ExactStrides) {
        in.layout = static_cast<LayoutSpecialization>(static_cast<int>(in.layout) + 1);
        return NeedsSpecialization{next, "layout"};
      }
      if (!in.alignment_log2 || *in.alignment_log2 < 63) {
        in.alignment_log2 = in.alignment_log2 ? *in.alignment_log2 + 1 : 0;
        return NeedsSpecialization{next, "alignment"};
      }
    }
    return NeedsSpecialization{next, "more"};
  };
  auto inputs = batch(2);
  for (InputDescriptor& in : inputs) in.alignment_log2.reset();
  auto r = prepare(w, program_of(kBatched), inputs);
  REQUIRE_FALSE(r.program.ok());
  CHECK(r.program.error().code() == ErrorCode::SpecializationRetryLimitExceeded);
  CHECK(mentions(r.program.error(), "redirect 17 exceeds the retry bound of 16"));
  CHECK(e->calls == 17);
}

TEST_CASE("a plan bound elsewhere is a BindingMismatch", "[prepared]") {
  World w;
  auto e = w.add("cpu", {"host"});
  e->answer = [](const OpPrepareRequest& r) -> PrepareAnswer {
    auto op = std::const_pointer_cast<PreparedOp>(ScriptedEngine::echo(r));
    op->binding.epoch += 1;
    return std::shared_ptr<const PreparedOp>(op);
  };
  auto r = prepare(w, program_of(kBatched), batch(2));
  REQUIRE_FALSE(r.program.ok());
  CHECK(r.program.error().code() == ErrorCode::BindingMismatch);
  CHECK(mentions(r.program.error(), "op #0 (add -> 'z')"));
  CHECK(mentions(r.program.error(), "epoch " + std::to_string(w.config->epoch() + 1)));
  CHECK(mentions(r.program.error(), "asked for cpu/host"));
  CHECK(is_deterministic_prepare_failure(ErrorCode::BindingMismatch));
}

TEST_CASE("a plan for another specialization is a ProjectionMismatch", "[prepared]") {
  World w;
  auto e = w.add("cpu", {"host"});
  e->answer = [](const OpPrepareRequest& r) -> PrepareAnswer {
    auto op = std::const_pointer_cast<PreparedOp>(ScriptedEngine::echo(r));
    op->projection.inputs.edit()[0].dtype = DType::F64;
    return std::shared_ptr<const PreparedOp>(op);
  };
  auto r = prepare(w, program_of(kBatched), batch(2));
  REQUIRE_FALSE(r.program.ok());
  CHECK(r.program.error().code() == ErrorCode::ProjectionMismatch);
  CHECK(mentions(r.program.error(), "prepared for specialization [f64; -]"));
  CHECK(mentions(r.program.error(), "asked for [-; -]"));
}

TEST_CASE("a plan for another op is a WrongOperationFamily", "[prepared]") {
  World w;
  auto e = w.add("cpu", {"host"});
  e->answer = [](const OpPrepareRequest& r) -> PrepareAnswer {
    auto op = std::const_pointer_cast<PreparedOp>(ScriptedEngine::echo(r));
    if (r.kind == OpKind::ReduceSum) op->kind = OpKind::Add;
    return std::shared_ptr<const PreparedOp>(op);
  };
  auto r = prepare(w, program_of(kBatched), batch(2));
  REQUIRE_FALSE(r.program.ok());
  CHECK(r.program.error().code() == ErrorCode::WrongOperationFamily);
  CHECK(mentions(r.program.error(), "op #2 (reduce_sum -> 's')"));
  CHECK(mentions(r.program.error(), "asked to prepare reduce_sum (reduction), returned a plan for add (elementwise)"));
}

TEST_CASE("requirements that do not fit the inputs violate the provider contract", "[prepared]") {
  World w;
  auto e = w.add("cpu", {"host"});
  e->answer = [](const OpPrepareRequest&) -> PrepareAnswer {
    InputRequirement x;
    x.concrete_dims = {7};  // x has rank 2
    return NeedsSpecialization{SpecializationRequirements{{x, {}}}, "axis 7"};
  };
  auto r = prepare(w, program_of(kBatched), batch(2));
  REQUIRE_FALSE(r.program.ok());
  CHECK(r.program.error().code() == ErrorCode::ProviderContract);
  CHECK(mentions(r.program.error(), "axis 7"));
  CHECK(is_deterministic_prepare_failure(ErrorCode::ProviderContract));
}

TEST_CASE("outcomes are classified deterministic or transient", "[prepared]") {
  World w;
  auto e = w.add("cpu", {"host"});
  auto p = program_of(kBatched);
  const auto inputs = batch(2);
  auto produce_with = [&](ScriptedEngine::Answer answer) {
    e->answer = std::move(answer);
    PrepareReport report;
    std::optional<EntryFailed> failure;
    EntrySource source = [&](const PreparedEntryKey& key, const std::shared_ptr<const PreparedRoot>& root) {
      ProducedEntry entry = produce_prepared_entry(*report.context, key, root, inputs, w.lookup());
      if (auto* f = std::get_if<EntryFailed>(&entry)) failure = *f;
      return entry;
    };
    auto prog = prepare_program(w.config, p, inputs, {}, w.lookup(), source, &report);
    REQUIRE_FALSE(prog.ok());
    REQUIRE(failure);
    CHECK(failure->root);  // the root was made before the op failed
    return *failure;
  };
  auto unsupported = produce_with([](const OpPrepareRequest&) -> PrepareAnswer { return Unsupported{"no f32 here"}; });
  CHECK(unsupported.error.code() == ErrorCode::Unsupported);
  CHECK(unsupported.deterministic);
  CHECK(mentions(unsupported.error, "no f32 here"));
  auto nondet = produce_with([](const OpPrepareRequest&) -> PrepareAnswer {
    return Error{ErrorCode::DeterminismUnsupported, "atomics make the sum order vary"};
  });
  CHECK(nondet.error.code() == ErrorCode::DeterminismUnsupported);
  CHECK(nondet.deterministic);
  auto busy = produce_with([](const OpPrepareRequest&) -> PrepareAnswer {
    return Error{ErrorCode::LimitExceeded, "workspace does not fit right now"};
  });
  CHECK(busy.error.code() == ErrorCode::LimitExceeded);
  CHECK_FALSE(busy.deterministic);
  CHECK(mentions(busy.error, "engine 'cpu' preparing op #0 (add -> 'z')"));
}

TEST_CASE("an engine missing from the lookup is a transient failure", "[prepared]") {
  World w;
  w.add("cpu", {"host"});
  auto p = program_of(kBatched);
  auto prog = prepare_program(w.config, p, batch(2), {}, [](std::string_view) { return nullptr; });
  REQUIRE_FALSE(prog.ok());
  CHECK(prog.error().code() == ErrorCode::EngineDown);
  CHECK_FALSE(is_deterministic_prepare_failure(ErrorCode::EngineDown));
}

TEST_CASE("ops on different engines are prepared by their own engines", "[prepared]") {
  World w;
  auto ew = w.add("ew", {"host"}, {OpFamily::Elementwise}, 0);
  auto red = w.add("red", {"host"}, {OpFamily::Reduction}, 1);
  w.route({"ew", "host"}, {"red", "host"});
  auto r = prepare(w, program_of(kBatched), batch(2));
  REQUIRE(r.program.ok());
  CHECK(ew->calls == 2);
  CHECK(red->calls == 1);
  CHECK((*r.program)->ops[2]->binding.endpoint == Endpoint{"red", "host"});
  CHECK((*r.program)->root->schedule->transfer_count() == 1);
  CHECK((*r.program)->root->identity->engines.size() == 2);
}

TEST_CASE("every op's plan shares the entry's requirements and projection", "[prepared]") {
  // One list per preparation, not one per op: holding them costs each plan
  // a reference, however many inputs the program has.
  World w;
  w.add("cpu", {"host"});
  auto r = prepare(w, program_of(kBatched), batch(3));
  REQUIRE(r.program.ok());
  const PreparedProgram& prog = **r.program;
  REQUIRE(prog.requirements.inputs.size() == 2);
  REQUIRE(prog.projection.inputs.size() == 2);
  for (const auto& op : prog.ops) {
    CHECK(op->specialization.inputs.shares_storage_with(prog.requirements.inputs));
    CHECK(op->projection.inputs.shares_storage_with(prog.projection.inputs));
  }
}
