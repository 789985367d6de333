// The stress harness (stress/): its generator is deterministic and covers
// the format, its comparison is the spec's, and a runtime over simulated
// devices passes it with and without faults, answering every job.
// Expected values are hand-derived (the comparison cases) or the CPU
// engine's own results (the harness's oracle, computed apart from the
// runtime on the client's thread).
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <set>

#include "core/program_json.hpp"
#include "stress/stress_programs.hpp"
#include "stress/stress_run.hpp"

using namespace tenact;
using namespace tenact::stress;

namespace {

#if defined(__SANITIZE_THREAD__)
constexpr bool kUnderTsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kUnderTsan = true;
#else
constexpr bool kUnderTsan = false;
#endif
#else
constexpr bool kUnderTsan = false;
#endif

std::vector<setup::EngineSpec> sims(int count) {
  std::vector<setup::EngineSpec> out;
  for (int i = 0; i < count; ++i) out.push_back({setup::EngineSpec::Kind::Sim, "sim:" + std::to_string(i)});
  return out;
}

StressOptions base_options(uint64_t jobs, int devices) {
  StressOptions o;
  o.jobs = jobs;
  o.seed = 11;
  o.engines = sims(devices);
  o.clients = 4;
  o.window = 4;
  o.generator.programs = 24;
  o.generator.float_dots = !kUnderTsan;  // OpenBLAS is not instrumented
  return o;
}

HostTensor scalar_f32(float v) {
  HostTensor t = Tensor::zeros(DType::F32, {1}).value();
  t.data_as<float>()[0] = v;
  return t;
}

std::string text_of(const HostTensor& t) {
  return std::string(reinterpret_cast<const char*>(t.data()), static_cast<size_t>(t.element_count()) * size_of(t.dtype()));
}

}  // namespace

TEST_CASE("a stress job is a function of its seed and index", "[stress]") {
  for (uint64_t job : {0ull, 7ull, 123ull}) {
    auto a = generate_job(5, job).value();
    auto b = generate_job(5, job).value();
    CHECK(a.program_json == b.program_json);
    CHECK(a.n == b.n);
    REQUIRE(a.inputs.size() == b.inputs.size());
    for (size_t i = 0; i < a.inputs.size(); ++i) CHECK(text_of(a.inputs[i]) == text_of(b.inputs[i]));
  }
  CHECK(generate_program_json(5, 3) != generate_program_json(6, 3));
  CHECK(generate_program_json(5, 3) != generate_program_json(5, 4));
}

TEST_CASE("stress programs load, stay within their bounds and cover the format", "[stress]") {
  GeneratorOptions g;
  g.max_ops = 40;
  std::set<std::string> ops, dtypes;
  int second_symbol = 0;  // programs with an input [M, N]
  for (uint64_t seed = 1; seed <= 3; ++seed)
    for (uint32_t index = 0; index < 64; ++index) {
      const std::string json = generate_program_json(seed, index, g);
      if (json.find(R"("shape":["M","N"])") != std::string::npos && json.find(R"("M <= 24")") != std::string::npos)
        ++second_symbol;
      auto program = load_program(json);
      INFO("seed " << seed << ", program " << index << "\n" << json);
      REQUIRE(program.ok());
      CHECK(program->ops().size() >= 3);
      CHECK(program->ops().size() <= 40);
      for (const auto& op : program->ops()) ops.insert(std::string(to_string(op.kind)));
      dtypes.insert(std::string(to_string(program->value(program->inputs()[0]).type.dtype)));
    }
  // Every element type but bool (which compare and convert make inside).
  CHECK(dtypes.size() == 14);
  CHECK(second_symbol >= 20);
  for (const char* op : {"dot_general", "reduce_sum", "reduce_prod", "reduce_sum_squares", "reduce_max", "reduce_min",
                         "exponential", "sine", "log_plus_one", "divide", "remainder", "power", "xor", "compare",
                         "select", "clamp", "convert", "transpose", "reshape", "broadcast_in_dim", "iota", "tril",
                         "triu", "extract_diag", "embed_diag", "slice", "dynamic_slice", "dynamic_update_slice", "pad",
                         "concatenate", "reverse", "round_nearest_even", "gather", "scatter", "shape_of",
                         "dynamic_truncate", "pad_to_match"})
    CHECK(ops.count(op) == 1);
}

TEST_CASE("stress inputs hold the special values of their type", "[stress]") {
  bool nan = false, inf = false, negative_zero = false, subnormal = false, extreme = false;
  for (uint64_t job = 0; job < 400; ++job) {
    auto j = generate_job(2, job).value();
    for (const HostTensor& t : j.inputs) {
      if (t.dtype() != DType::F32) continue;
      for (int64_t i = 0; i < t.element_count(); ++i) {
        const float v = t.data_as<float>()[i];
        nan |= std::isnan(v);
        inf |= std::isinf(v);
        negative_zero |= v == 0 && std::signbit(v);
        subnormal |= std::fpclassify(v) == FP_SUBNORMAL;
        extreme |= v == std::numeric_limits<float>::max() || v == std::numeric_limits<float>::lowest();
      }
    }
  }
  CHECK(nan);
  CHECK(inf);
  CHECK(negative_zero);
  CHECK(subnormal);
  CHECK(extreme);
}

TEST_CASE("stress results compare as the spec allows", "[stress]") {
  std::string why;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(results_match(scalar_f32(nan), scalar_f32(-nan), 0, &why));  // any NaN matches any NaN
  CHECK_FALSE(results_match(scalar_f32(0.0f), scalar_f32(-0.0f), 0, &why));
  CHECK_FALSE(results_match(scalar_f32(0.0f), scalar_f32(nan), 4, &why));
  const float one_up = std::nextafter(1.0f, 2.0f);
  CHECK_FALSE(results_match(scalar_f32(1.0f), scalar_f32(one_up), 0, &why));
  CHECK(why.find("element 0") != std::string::npos);
  CHECK(results_match(scalar_f32(1.0f), scalar_f32(one_up), 1, &why));
  const float three_down = std::nextafter(std::nextafter(std::nextafter(1.0f, 0.0f), 0.0f), 0.0f);
  CHECK_FALSE(results_match(scalar_f32(1.0f), scalar_f32(three_down), 2, &why));
  CHECK(results_match(scalar_f32(1.0f), scalar_f32(three_down), 3, &why));
  // Across zero: -denorm_min and +denorm_min are 2 ulps apart.
  const float tiny = std::numeric_limits<float>::denorm_min();
  CHECK_FALSE(results_match(scalar_f32(tiny), scalar_f32(-tiny), 1, &why));
  CHECK(results_match(scalar_f32(tiny), scalar_f32(-tiny), 2, &why));
  CHECK_FALSE(results_match(scalar_f32(INFINITY), scalar_f32(std::numeric_limits<float>::max()), 8, &why));

  HostTensor a = Tensor::zeros(DType::C64, {2}).value();
  HostTensor b = Tensor::zeros(DType::C64, {2}).value();
  a.data_as<std::complex<float>>()[1] = {1, 2};
  b.data_as<std::complex<float>>()[1] = {1, 3};
  CHECK_FALSE(results_match(a, b, 0, &why));
  CHECK(why.find("element 1 (imaginary)") != std::string::npos);

  HostTensor i = Tensor::zeros(DType::I32, {3}).value();
  HostTensor k = Tensor::zeros(DType::I32, {3}).value();
  k.data_as<int32_t>()[2] = 1;
  CHECK_FALSE(results_match(i, k, 100, &why));  // integers: bit for bit whatever the allowance
  CHECK_FALSE(results_match(i, Tensor::zeros(DType::I32, {4}).value(), 0, &why));
  CHECK_FALSE(results_match(i, Tensor::zeros(DType::I64, {3}).value(), 0, &why));
}

TEST_CASE("stress jobs on four simulated devices all match the CPU engine", "[stress]") {
  StressOptions o = base_options(240, 4);
  const StressReport r = run_stress(o);
  INFO(report_text(r));
  CHECK(r.passed());
  CHECK(r.jobs == 240);
  CHECK(r.correct == 240);
  CHECK(r.agreed_errors == 0);
  CHECK(r.leaks.empty());
  int used = 0;
  for (const auto& [id, runs] : r.runs_per_engine) used += runs > 0 ? 1 : 0;
  CHECK(used >= 2);
  CHECK(r.virtual_makespan_ns > 0);
  CHECK(r.cache.productions > 0);
  CHECK(r.cache.productions < 240);  // programs repeat
}

TEST_CASE("stress with transient, allocation and copy faults answers every job", "[stress]") {
  StressOptions o = base_options(240, 4);
  o.engine_options.faults = sim::parse_fault_spec("seed=4,transient=0.02,alloc=0.01,transfer=0.01").value();
  const StressReport r = run_stress(o);
  INFO(report_text(r));
  CHECK(r.passed());
  CHECK(r.jobs == 240);
  CHECK(r.correct + r.failed_as_injected == 240);
  CHECK(r.retries > 0);
  CHECK(r.hung == 0);
  CHECK(r.lost == 0);
}

TEST_CASE("stress with a device that dies, retryable runs: re-placed, nothing lost", "[stress]") {
  StressOptions o = base_options(240, 3);
  o.engine_options.faults = sim::parse_fault_spec("seed=2,die=sim:1@150ops").value();
  o.prepare.retryable = true;
  const StressReport r = run_stress(o);
  INFO(report_text(r));
  CHECK(r.passed());
  CHECK(r.jobs == 240);
  CHECK(r.correct + r.failed_as_injected == 240);
  CHECK(r.correct > 200);
  CHECK(r.lost == 0);
  CHECK(r.hung == 0);
}

TEST_CASE("stress with a failing op kind: its jobs fail as injected, the rest are right", "[stress]") {
  StressOptions o = base_options(120, 2);
  o.engine_options.faults = sim::parse_fault_spec("seed=1,fail=convert").value();
  const StressReport r = run_stress(o);
  INFO(report_text(r));
  CHECK(r.passed());
  CHECK(r.failed_as_injected > 0);
  CHECK(r.correct > 0);
  // The refusal is decided once per program and signature, then served from
  // the prepare cache.
  CHECK(r.cache.deterministic_failures > 0);
  CHECK(r.cache.deterministic_failures_served > 0);
}

TEST_CASE("stress with one client is deterministic: the same seed gives the same report", "[stress]") {
  StressOptions o = base_options(80, 4);
  o.clients = 1;
  o.window = 1;
  o.engine_options.faults = sim::parse_fault_spec("seed=9,transient=0.03,alloc=0.01").value();
  const StressReport a = run_stress(o);
  const StressReport b = run_stress(o);
  INFO(report_text(a) << report_text(b));
  CHECK(a.passed());
  CHECK(a.correct == b.correct);
  CHECK(a.failed_as_injected == b.failed_as_injected);
  CHECK(a.errors == b.errors);
  CHECK(a.retries == b.retries);
  CHECK(a.runs_per_engine == b.runs_per_engine);
  CHECK(a.virtual_makespan_ns == b.virtual_makespan_ns);
  CHECK(a.retries > 0);
}
