// The specialization loop: strict widening field by field, merging, the
// retry bound (hand-derived from input_retry_bound's definition), and the
// redirect helper with its NonWideningSpecialization and
// SpecializationRetryLimitExceeded errors, driven by a small fake engine.
#include <catch2/catch.hpp>

#include "core/program_json.hpp"
#include "planning/specialization.hpp"

using namespace tenact;

namespace {

SemanticProgram batch_and_scalar_program() {
  auto p = load_program(R"({"format": "tenact.program/1",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 4]},
               {"name": "s", "dtype": "f32", "shape": []}],
    "ops": [], "outputs": ["x", "s"]})");
  REQUIRE(p.ok());
  return std::move(*p);
}

SpecializationRequirements reqs(InputRequirement x, InputRequirement s = {}) {
  return SpecializationRequirements{{std::move(x), std::move(s)}};
}

InputRequirement with_dims(std::vector<size_t> dims) {
  InputRequirement r;
  r.concrete_dims = std::move(dims);
  return r;
}

// Each entry requires exactly one more thing than polymorphic.
std::vector<InputRequirement> single_fields() {
  std::vector<InputRequirement> v(6);
  v[0].dtype = true;
  v[1].rank = true;
  v[2].concrete_dims = {1};
  v[3].placement = PlacementSpecialization::StorageClass;
  v[4].layout = LayoutSpecialization::Class;
  v[5].alignment_log2 = 0;
  return v;
}

const std::vector<InputDescriptor> kInputs = {
    InputDescriptor{DType::F32, {2, 4}, {"cpu", "host"}, {4, 1}, 6},
    InputDescriptor{DType::F32, {}, {"cpu", "host"}, {}, std::nullopt}};

}  // namespace

TEST_CASE("adding any one field strictly widens", "[specialization]") {
  const SpecializationRequirements none{};
  for (const InputRequirement& r : single_fields()) {
    CHECK(strictly_widens(none, reqs(r)));
    CHECK(strictly_widens(none, reqs({}, r)));
    CHECK_FALSE(strictly_widens(reqs(r), none));  // dropping it narrows
    CHECK_FALSE(strictly_widens(reqs(r), reqs(r)));  // equal
  }
  CHECK(strictly_widens(reqs(with_dims({0})), reqs(with_dims({1, 0}))));
  CHECK_FALSE(strictly_widens(reqs(with_dims({0})), reqs(with_dims({1}))));  // incomparable
}

TEST_CASE("each field widens only upwards", "[specialization]") {
  InputRequirement sc, dev, cls, exact, a2, a4;
  sc.placement = PlacementSpecialization::StorageClass;
  dev.placement = PlacementSpecialization::Device;
  cls.layout = LayoutSpecialization::Class;
  exact.layout = LayoutSpecialization::ExactStrides;
  a2.alignment_log2 = 2;
  a4.alignment_log2 = 4;
  CHECK(strictly_widens(reqs(sc), reqs(dev)));
  CHECK_FALSE(strictly_widens(reqs(dev), reqs(sc)));
  CHECK(strictly_widens(reqs(cls), reqs(exact)));
  CHECK_FALSE(strictly_widens(reqs(exact), reqs(cls)));
  CHECK(strictly_widens(reqs(a2), reqs(a4)));
  CHECK_FALSE(strictly_widens(reqs(a4), reqs(a2)));
  // One input widens while the other narrows: not a widening.
  CHECK_FALSE(strictly_widens(reqs(sc, sc), reqs(dev, {})));
  // Empty lists are polymorphic: equal to an explicit polymorphic list.
  CHECK_FALSE(strictly_widens(SpecializationRequirements{}, polymorphic_requirements(2)));
  // Lists of different lengths never widen.
  CHECK_FALSE(strictly_widens(polymorphic_requirements(1), reqs(sc)));
}

TEST_CASE("a non-widening step is named by input and field", "[specialization]") {
  const SemanticProgram p = batch_and_scalar_program();
  auto message = [&](const SpecializationRequirements& prev, const SpecializationRequirements& next) {
    Status s = check_widening(p, prev, next);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code() == ErrorCode::NonWideningSpecialization);
    return s.error().message();
  };
  const std::string prefix = "specialization does not widen: the next requirements of input ";
  const auto f = single_fields();
  CHECK(message(reqs(f[0]), {}) == prefix + "'x' drops the dtype requirement");
  CHECK(message(reqs({}, f[1]), {}) == prefix + "'s' drops the rank requirement");
  CHECK(message(reqs(with_dims({0, 1})), reqs(with_dims({0}))) ==
        prefix + "'x' drops the concrete extent of axis 1");
  InputRequirement dev;
  dev.placement = PlacementSpecialization::Device;
  CHECK(message(reqs(dev), reqs(f[3])) == prefix + "'x' narrows placement from device to storage_class");
  InputRequirement exact;
  exact.layout = LayoutSpecialization::ExactStrides;
  CHECK(message(reqs(exact), reqs(f[4])) == prefix + "'x' narrows layout from exact_strides to class");
  InputRequirement a4;
  a4.alignment_log2 = 4;
  CHECK(message(reqs(a4), {}) == prefix + "'x' drops the alignment requirement 2^4");
  CHECK(message(reqs(a4), reqs(f[5])) == prefix + "'x' lowers alignment from 2^4 to 2^0");
  CHECK(message(reqs(f[0]), reqs(f[0])) ==
        "specialization does not widen: the next requirements equal the current ones "
        "(input 'x': dtype; input 's': none)");
  CHECK(check_widening(p, {}, reqs(f[2])).ok());
  Status wrong = check_widening(p, {}, SpecializationRequirements{{f[0]}});
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().code() == ErrorCode::ProviderContract);
}

TEST_CASE("merging takes the least requirements covering both", "[specialization]") {
  InputRequirement a, b;
  a.dtype = true;
  a.concrete_dims = {1};
  a.placement = PlacementSpecialization::Device;
  a.alignment_log2 = 3;
  b.rank = true;
  b.concrete_dims = {0, 1};
  b.layout = LayoutSpecialization::Class;
  b.placement = PlacementSpecialization::StorageClass;
  b.alignment_log2 = 5;
  auto m = merge_requirements(reqs(a), reqs(b), 2);
  REQUIRE(m.ok());
  InputRequirement want;
  want.dtype = want.rank = true;
  want.concrete_dims = {0, 1};
  want.placement = PlacementSpecialization::Device;
  want.layout = LayoutSpecialization::Class;
  want.alignment_log2 = 5;
  CHECK(*m == reqs(want));
  auto with_empty = merge_requirements({}, reqs(a), 2);
  REQUIRE(with_empty.ok());
  CHECK(*with_empty == reqs(a));
  CHECK_FALSE(merge_requirements(reqs(a), SpecializationRequirements{{b}}, 2).ok());
}

TEST_CASE("the retry bound counts the edges each input can still widen along", "[specialization]") {
  // Polymorphic, rank 2, alignment known: dtype 1 + rank 1 + dims 2 +
  // placement 2 + layout 2 + alignment 64 = 72.
  CHECK(input_retry_bound({}, 2, 6) == std::optional<uint64_t>{72});
  // Alignment unknown: no alignment edges: 8.
  CHECK(input_retry_bound({}, 2, std::nullopt) == std::optional<uint64_t>{8});
  // Rank 0 scalar, alignment unknown: 1 + 1 + 0 + 2 + 2 = 6.
  CHECK(input_retry_bound({}, 0, std::nullopt) == std::optional<uint64_t>{6});
  InputRequirement r;
  r.dtype = r.rank = true;
  r.concrete_dims = {0};
  r.placement = PlacementSpecialization::StorageClass;
  r.layout = LayoutSpecialization::Class;
  r.alignment_log2 = 4;
  // 0 + 0 + 1 + 1 + 1 + (63 - min(4, 6)) = 62.
  CHECK(input_retry_bound(r, 2, 6) == std::optional<uint64_t>{62});
  // Required above actual: 63 - min(10, 6) = 57; total 60.
  r.alignment_log2 = 10;
  CHECK(input_retry_bound(r, 2, 6) == std::optional<uint64_t>{60});
  // Required but actual unknown: 0 alignment edges; total 3.
  CHECK(input_retry_bound(r, 2, std::nullopt) == std::optional<uint64_t>{3});
  r.concrete_dims = {0, 1};
  r.placement = PlacementSpecialization::Device;
  r.layout = LayoutSpecialization::ExactStrides;
  r.alignment_log2 = 63;
  CHECK(input_retry_bound(r, 2, 63) == std::optional<uint64_t>{0});
  // More fixed axes than the rank, or an alignment beyond 63: no bound.
  CHECK(input_retry_bound(with_dims({0, 1, 2}), 2, 6) == std::nullopt);
  InputRequirement huge;
  huge.alignment_log2 = 70;
  CHECK(input_retry_bound(huge, 1, 80) == std::nullopt);
}

TEST_CASE("the program's retry bound sums its inputs", "[specialization]") {
  const SemanticProgram p = batch_and_scalar_program();
  // x: 72 (rank 2, aligned); s: 6 (scalar, alignment unknown).
  auto b = retry_bound(p, {}, kInputs);
  REQUIRE(b.ok());
  CHECK(*b == 78);
  auto fewer = retry_bound(p, {}, std::span<const InputDescriptor>{kInputs}.first(1));
  REQUIRE_FALSE(fewer.ok());
  CHECK(fewer.error().code() == ErrorCode::InputMismatch);
  CHECK(fewer.error().message() == "program expects 2 inputs, got 1");
  auto misfit = retry_bound(p, reqs({}, with_dims({0})), kInputs);
  REQUIRE_FALSE(misfit.ok());
  CHECK(misfit.error().code() == ErrorCode::ProviderContract);
  CHECK(misfit.error().message() ==
        "specialization requirements of input 's' (input 'x': none; input 's': concrete axes [0]) "
        "do not fit an input of rank 0");
}

namespace {

// Prepares only when input 0's axis 0 is specialized; asks for it first.
class NeedsBatchEngine final : public Engine {
 public:
  NeedsBatchEngine() {
    identity_.id = "fake";
    capabilities_.storage_classes = {"host"};
    capabilities_.default_storage_class = "host";
  }
  const EngineIdentity& identity() const override { return identity_; }
  const EngineCapabilities& capabilities() const override { return capabilities_; }
  PrepareAnswer prepare(const OpPrepareRequest& request) override {
    ++calls;
    const auto& in = request.specialization.inputs;
    const bool has_batch = !in.empty() && std::find(in[0].concrete_dims.begin(),
                                                    in[0].concrete_dims.end(),
                                                    size_t{0}) != in[0].concrete_dims.end();
    if (!has_batch) {
      InputRequirement r;
      r.concrete_dims = {0};
      return NeedsSpecialization{SpecializationRequirements{{r, {}}}, "needs a concrete batch"};
    }
    auto op = std::make_shared<PreparedOp>();
    op->kind = request.kind;
    op->binding = request.binding;
    op->specialization = request.specialization;
    return std::shared_ptr<const PreparedOp>(op);
  }
  Result<HostTensor> allocate(std::string_view, DType dtype, std::vector<int64_t> shape) override {
    return HostTensor::zeros(dtype, std::move(shape));
  }
  void launch(std::shared_ptr<const PreparedOp>, std::vector<HostTensor>, SymbolBindings,
              LaunchCompletion done) override {
    done(Error{ErrorCode::Unsupported, "fake engine runs nothing"});
  }
  int calls = 0;

 private:
  EngineIdentity identity_;
  EngineCapabilities capabilities_;
};

}  // namespace

TEST_CASE("the redirect loop follows an engine until it prepares", "[specialization]") {
  const SemanticProgram p = batch_and_scalar_program();
  auto state = begin_specialization(p, kInputs);
  REQUIRE(state.ok());
  CHECK(state->requirements == polymorphic_requirements(2));
  CHECK(state->redirects == 0);
  CHECK(state->retry_bound == 78);
  NeedsBatchEngine engine;
  OpPrepareRequest request;
  std::shared_ptr<const PreparedOp> prepared;
  for (int guard = 0; guard < 10 && !prepared; ++guard) {
    request.specialization = state->requirements;
    PrepareAnswer answer = engine.prepare(request);
    if (auto* ready = std::get_if<std::shared_ptr<const PreparedOp>>(&answer)) {
      prepared = *ready;
    } else {
      auto next = follow_redirect(p, kInputs, *state, std::get<NeedsSpecialization>(answer),
                                  "engine 'fake' for op #0");
      REQUIRE(next.ok());
      state = std::move(next);
    }
  }
  REQUIRE(prepared);
  CHECK(engine.calls == 2);
  CHECK(state->redirects == 1);
  CHECK(state->retry_bound == 78);
  CHECK(state->requirements == reqs(with_dims({0})));
  CHECK(state->projection.inputs[0].concrete_dims == std::vector<ConcreteDim>{{0, 2}});
  CHECK(prepared->specialization == state->requirements);
}

TEST_CASE("a redirect that adds nothing is NonWideningSpecialization", "[specialization]") {
  const SemanticProgram p = batch_and_scalar_program();
  auto state = begin_specialization(p, kInputs);
  REQUIRE(state.ok());
  auto once = follow_redirect(p, kInputs, *state, {reqs(with_dims({0})), "batch"}, "engine 'e'");
  REQUIRE(once.ok());
  auto again = follow_redirect(p, kInputs, *once, {reqs(with_dims({0})), "batch again"},
                               "engine 'e' for op #1 (add -> 'z')");
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().code() == ErrorCode::NonWideningSpecialization);
  CHECK(again.error().message() ==
        "engine 'e' for op #1 (add -> 'z') asked for specialization (batch again) that does not "
        "widen the current requirements: already required: input 'x': concrete axes [0]");
  auto nothing = follow_redirect(p, kInputs, *once, {{}, "no reason"}, "engine 'e'");
  REQUIRE_FALSE(nothing.ok());
  CHECK(nothing.error().message() ==
        "engine 'e' asked for specialization (no reason) that does not widen the current "
        "requirements: it asked for nothing");
}

TEST_CASE("redirects beyond the retry bound are SpecializationRetryLimitExceeded",
          "[specialization]") {
  // One scalar input whose alignment is unknown: bound 1 + 1 + 0 + 2 + 2 +
  // 0 = 6, yet alignment can still be asked for: one widening too many.
  auto scalar = load_program(R"({"format": "tenact.program/1",
    "inputs": [{"name": "s", "dtype": "f32", "shape": []}], "ops": [], "outputs": ["s"]})");
  REQUIRE(scalar.ok());
  const SemanticProgram& p = *scalar;
  const std::vector<InputDescriptor> in = {kInputs[1]};
  auto state = begin_specialization(p, in);
  REQUIRE(state.ok());
  CHECK(state->retry_bound == 6);
  InputRequirement s;
  std::vector<InputRequirement> steps;
  s.dtype = true;                                   steps.push_back(s);
  s.rank = true;                                    steps.push_back(s);
  s.placement = PlacementSpecialization::StorageClass; steps.push_back(s);
  s.placement = PlacementSpecialization::Device;    steps.push_back(s);
  s.layout = LayoutSpecialization::Class;           steps.push_back(s);
  s.layout = LayoutSpecialization::ExactStrides;    steps.push_back(s);
  for (const InputRequirement& step : steps) {
    auto next = follow_redirect(p, in, *state, {SpecializationRequirements{{step}}, "more"}, "engine 'e'");
    REQUIRE(next.ok());
    state = std::move(next);
  }
  CHECK(state->redirects == 6);
  s.alignment_log2 = 0;
  auto over = follow_redirect(p, in, *state, {SpecializationRequirements{{s}}, "aligned"}, "engine 'e'");
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().code() == ErrorCode::SpecializationRetryLimitExceeded);
  CHECK(over.error().message() ==
        "engine 'e' asked for specialization (aligned): redirect 7 exceeds the retry bound of 6 "
        "for this signature");
}

TEST_CASE("requirements that do not fit the inputs are a provider contract error", "[specialization]") {
  const SemanticProgram p = batch_and_scalar_program();
  auto state = begin_specialization(p, kInputs);
  REQUIRE(state.ok());
  auto axis = follow_redirect(p, kInputs, *state, {reqs({}, with_dims({0})), "why"}, "engine 'e'");
  REQUIRE_FALSE(axis.ok());
  CHECK(axis.error().code() == ErrorCode::ProviderContract);
  CHECK(axis.error().message() ==
        "engine 'e': specialization requires the concrete extent of input 's' axis 0, but the "
        "input has rank 0");
  auto count = follow_redirect(p, kInputs, *state,
                               {SpecializationRequirements{{with_dims({0})}}, "why"}, "engine 'e'");
  REQUIRE_FALSE(count.ok());
  CHECK(count.error().code() == ErrorCode::ProviderContract);
  CHECK(count.error().message() ==
        "engine 'e': specialization requirements list 1 inputs, but the program has 2");
}

TEST_CASE("the redirect count does not wrap", "[specialization]") {
  const SemanticProgram p = batch_and_scalar_program();
  auto state = begin_specialization(p, kInputs);
  REQUIRE(state.ok());
  state->redirects = UINT64_MAX;
  state->retry_bound = UINT64_MAX;
  auto next = follow_redirect(p, kInputs, *state, {reqs(with_dims({0})), "batch"}, "engine 'e'");
  REQUIRE_FALSE(next.ok());
  CHECK(next.error().code() == ErrorCode::Overflow);
  CHECK(next.error().message() == "specialization redirect count overflows");
}
