// model_bench: what models (actors/model.hpp, planning/model/model_plan.hpp)
// save, each figure next to its baseline from the same run.
//  activations: peak activation bytes of three models written from core ops
//    only (bench/models/: mlp, attention, transformer_block) with liveness
//    packing on and off: the plan's figures (every activation added up, what
//    the plan allocates, the most live at once) and what one run really
//    allocated on a fresh CPU engine (its host peak minus what was allocated
//    before the run); packed and unpacked outputs checked bitwise equal.
//  resident: the mlp at batch 4 run as a Model with resident weights (as
//    declared, and stored in panels by "tenact.pack_panels") against
//    Runtime::run of the same program with the weights as inputs passed
//    every run; one engine, interleaved passes, median and min per run.
//
// Usage: model_bench [--quick] [--only activations|resident] [--models DIR]
// Exit status: 0, 1 when a load, a run or an output check fails, 2 on a bad
// command line.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/model.hpp"
#include "actors/runtime.hpp"
#include "bench/bench_util.hpp"
#include "core/program_json.hpp"
#include "engines/cpu/cpu_engine.hpp"

using namespace tenact;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  bool quick = false;
  std::string only;  // "", "activations" or "resident"
  std::string models = TENACT_BENCH_MODELS_DIR;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "model_bench: %s\n", what.c_str());
  std::exit(1);
}

template <class T>
T must(Result<T> r, const std::string& what) {
  if (!r.ok()) die(what + ": " + r.error().to_string());
  return std::move(*r);
}

void must(const Status& s, const std::string& what) {
  if (!s.ok()) die(what + ": " + s.error().to_string());
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) die("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<const SemanticProgram> parse(const std::string& text, const std::string& what) {
  return std::make_shared<const SemanticProgram>(must(load_program(text), what));
}

// The same program with every weight turned into an input after the
// declared inputs, in weight order: what a caller without models runs.
std::shared_ptr<const SemanticProgram> weights_as_inputs(const std::string& text, const std::string& what) {
  auto doc = nlohmann::json::parse(text);
  for (auto weight : doc["weights"]) {
    weight.erase("data");
    doc["inputs"].push_back(weight);
  }
  doc.erase("weights");
  return parse(doc.dump(), what + " (weights as inputs)");
}

// A dense f32 tensor of normal(0, 1) * scale.
Tensor random_tensor(std::mt19937& rng, const std::vector<int64_t>& shape, float scale) {
  Tensor t = must(Tensor::zeros(DType::F32, shape), "allocating a tensor");
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float* data = t.data_as<float>();
  for (int64_t i = 0; i < t.element_count(); ++i) data[i] = normal(rng) * scale;
  return t;
}

// Every weight of `program`, seeded random data, in weight order.
std::vector<std::pair<std::string, Tensor>> random_weights(const SemanticProgram& program, std::mt19937& rng) {
  std::vector<std::pair<std::string, Tensor>> weights;
  for (const WeightInfo& w : program.weights()) {
    const ValueInfo& value = program.value(w.value);
    std::vector<int64_t> shape;
    for (const ShapeExtent& e : value.type.shape) shape.push_back(*e.expr.constant_value());
    weights.emplace_back(value.name, random_tensor(rng, shape, 0.05f));
  }
  return weights;
}

std::map<std::string, Tensor> by_name(const std::vector<std::pair<std::string, Tensor>>& weights) {
  return {weights.begin(), weights.end()};
}

ModelOptions model_options(const std::vector<int64_t>& x_shape, bool pack, std::string_view materializer) {
  ModelOptions o;
  const std::vector<uint64_t> dims(x_shape.begin(), x_shape.end());
  o.compile.tensors["x"] = must(ResolvedTensorSpec::make(dims, DType::F32, ResolvedTensorLayout::contiguous()), "x spec");
  o.compile.pack_activations = pack;
  o.compile.weight_materializer = std::string{materializer};
  return o;
}

// A runtime with one CPU engine of its own (fresh memory counters).
struct CpuRuntime {
  std::unique_ptr<Runtime> rt = std::make_unique<Runtime>();
  std::shared_ptr<cpu::CpuEngine> engine = must(cpu::CpuEngine::create(), "starting the CPU engine");
  CpuRuntime() { must(rt->register_engine(engine), "registering the CPU engine"); }
  MemoryStats memory() const { return must(engine->memory_stats("host"), "memory_stats"); }
};

// The first output of a model run, as a host copy of the caller's.
Tensor run_model(Model& model, const Tensor& x) {
  auto out = must(model.run({x}).get(), "model run");
  return must(out.outputs.at(0).clone(), "copying an output");
}

// Largest |a - b| over the largest |b|.
double relative_difference(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < b.element_count(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(a.data_as<float>()[i] - b.data_as<float>()[i])));
    scale = std::max(scale, static_cast<double>(std::abs(b.data_as<float>()[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

std::string differ_note(const Tensor& packed, const Tensor& unpacked) {
  char note[128];
  std::snprintf(note, sizeof note, "DIFFER (FAILED): max |packed - unpacked| / max |unpacked| = %.2e",
                relative_difference(packed, unpacked));
  return note;
}

// ---- activations -----------------------------------------------------------

struct ActivationFigures {
  uint64_t total = 0, planned = 0, peak_live = 0;
  uint64_t run_bytes = 0;   // host peak during the run minus allocated before it
  bool peak_was_load = false;  // the load's peak was above what stayed allocated
  size_t packed_values = 0;
  Tensor output;
};

// Loads `program` with packing `pack` on a fresh engine and runs it once.
ActivationFigures measure_activations(std::shared_ptr<const SemanticProgram> program,
                                      const std::map<std::string, Tensor>& weights, const Tensor& x, bool pack) {
  CpuRuntime cpu;
  auto model = must(cpu.rt->load_model(program, weights, model_options(x.shape(), pack, kIdentityMaterializer)),
                    "loading " + program->name());
  const ModelPlan& plan = model->plan();
  ActivationFigures f;
  f.total = plan.total_activation_bytes;
  f.planned = plan.planned_activation_bytes;
  f.peak_live = plan.peak_live_activation_bytes;
  for (const ValueStorage& s : plan.storage) f.packed_values += s.packed ? 1 : 0;
  const MemoryStats before = cpu.memory();
  f.peak_was_load = before.peak_allocated_bytes > before.allocated_bytes;
  f.output = run_model(*model, x);
  f.run_bytes = cpu.memory().peak_allocated_bytes - before.allocated_bytes;
  return f;
}

double kib(uint64_t bytes) { return static_cast<double>(bytes) / 1024.0; }

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

void print_activation_row(const std::string& model, const char* packing, const ActivationFigures& f) {
  std::printf("%-30s %-4s %11.1f %11.1f %11.1f %8.2fx %11.1f %7zu%s\n", model.c_str(), packing, kib(f.total),
              kib(f.planned), kib(f.peak_live), ratio(static_cast<double>(f.total), static_cast<double>(f.planned)),
              kib(f.run_bytes), f.packed_values, f.peak_was_load ? "  (load peak above: run KiB is a bound)" : "");
}

struct ModelCase {
  std::string name;
  std::vector<int64_t> x_shape;
};

// Returns the failed checks.
int bench_activations(const Options& o) {
  std::printf("== activations: liveness packing on vs off (KiB = 1024 bytes; total = every activation added up,\n"
              "   planned = what the plan allocates, peak-live = most live at once, run = host peak of one run on a\n"
              "   fresh CPU engine minus what was allocated before it; packed = values in the arena)\n");
  std::printf("%-30s %-4s %11s %11s %11s %9s %11s %7s\n", "model", "pack", "total KiB", "planned KiB",
              "peak-live", "tot/plan", "run KiB", "packed");
  const std::vector<ModelCase> cases = {
      {"mlp", {64, 784}}, {"attention", {128, 256}}, {"transformer_block", {128, 256}}};
  int failures = 0;
  std::vector<std::string> summaries;
  for (const ModelCase& c : cases) {
    auto program = parse(read_text(o.models + "/" + c.name + ".json"), c.name);
    std::mt19937 rng(2026);
    const auto weights = by_name(random_weights(*program, rng));
    const Tensor x = random_tensor(rng, c.x_shape, 0.5f);
    const std::string label = c.name + " x" + to_string(c.x_shape);
    const ActivationFigures on = measure_activations(program, weights, x, true);
    const ActivationFigures off = measure_activations(program, weights, x, false);
    print_activation_row(label, "on", on);
    print_activation_row(label, "off", off);
    const bool equal = on.output.bitwise_equal(off.output);
    failures += equal ? 0 : 1;
    char line[256];
    std::snprintf(line, sizeof line, "%-18s planned off/on %.2fx, run off/on %.2fx, outputs ", c.name.c_str(),
                  ratio(static_cast<double>(off.planned), static_cast<double>(on.planned)),
                  ratio(static_cast<double>(off.run_bytes), static_cast<double>(on.run_bytes)));
    summaries.push_back(line + (equal ? std::string{"bitwise equal"} : differ_note(on.output, off.output)));
  }
  std::printf("ratios (unpacked / packed):\n");
  for (const auto& s : summaries) std::printf("  %s\n", s.c_str());
  return failures;
}

// ---- resident weights ------------------------------------------------------

struct Way {
  std::string tag;  // "(a)"
  std::string name;
  std::function<Tensor()> run;  // one run, its output
  bench::Samples samples;
};

// `passes` passes, each running every way `runs` times back to back, the
// first way rotating from pass to pass; every run timed on its own.
void time_interleaved(std::vector<Way>& ways, int passes, int runs) {
  for (int p = 0; p < passes; ++p)
    for (size_t j = 0; j < ways.size(); ++j) {
      Way& way = ways[(static_cast<size_t>(p) + j) % ways.size()];
      for (int r = 0; r < runs; ++r) {
        const auto t0 = Clock::now();
        way.run();
        way.samples.add(std::chrono::duration<double>(Clock::now() - t0).count());
      }
    }
}

std::string dot_providers(const ModelPlan& plan) {
  std::string out;
  for (const NodeResolution& n : plan.nodes)
    if (plan.program->ops()[n.op].kind == OpKind::DotGeneral) out += (out.empty() ? "" : ", ") + n.provider;
  return out;
}

int bench_resident(const Options& o) {
  const std::string text = read_text(o.models + "/mlp.json");
  auto program = parse(text, "mlp");
  auto plain = weights_as_inputs(text, "mlp");
  std::mt19937 rng(7);
  const auto weights = random_weights(*program, rng);
  const std::vector<int64_t> x_shape{4, 784};
  const Tensor x = random_tensor(rng, x_shape, 0.5f);
  std::vector<Tensor> plain_inputs{x};
  for (const auto& w : weights) plain_inputs.push_back(w.second);

  CpuRuntime cpu;
  auto identity = must(cpu.rt->load_model(program, by_name(weights), model_options(x_shape, true, kIdentityMaterializer)),
                       "loading mlp (identity)");
  auto panels = must(cpu.rt->load_model(program, by_name(weights), model_options(x_shape, true, kPackPanelsMaterializer)),
                     "loading mlp (tenact.pack_panels)");
  std::vector<Way> ways;
  ways.push_back({"(a)", "Model::run, resident weights, identity", [&] { return run_model(*identity, x); }, {}});
  ways.push_back({"(b)", "Model::run, resident, tenact.pack_panels", [&] { return run_model(*panels, x); }, {}});
  ways.push_back({"(c)", "Runtime::run, weights as inputs", [&] {
                    auto out = must(cpu.rt->run(plain, plain_inputs).get(), "Runtime::run (weights as inputs)");
                    return must(out.at(0).clone(), "copying an output");
                  }, {}});

  const Tensor reference = ways[2].run();
  int failures = 0;
  for (size_t i = 0; i < 2; ++i) {
    const double d = relative_difference(ways[i].run(), reference);
    const bool ok = d <= 1e-4;
    failures += ok ? 0 : 1;
    std::printf("check: %s vs (c): max |diff| / max |y| = %.2e %s\n", ways[i].tag.c_str(), d,
                ok ? "(<= 1e-4, ok)" : "(> 1e-4, FAILED)");
  }
  if (failures) return failures;

  const int passes = o.quick ? 3 : 10, runs = o.quick ? 100 : 400;
  time_interleaved(ways, 1, o.quick ? 20 : 100);  // warm-up, not recorded
  for (Way& w : ways) w.samples = {};
  time_interleaved(ways, passes, runs);

  std::printf("\n== resident: mlp x[4, 784] -> 512 -> 256 -> 10, one CPU engine, %d interleaved passes x %d runs "
              "per way ==\n", passes, runs);
  std::printf("%-46s %11s %11s\n", "way", "median us", "min us");
  for (const Way& w : ways)
    std::printf("%-3s %-42s %11.2f %11.2f\n", w.tag.c_str(), w.name.c_str(), w.samples.median() * 1e6,
                w.samples.best() * 1e6);
  for (size_t i = 0; i < 2; ++i)
    std::printf("(c)/%s: median %.2fx, min %.2fx\n", ways[i].tag.c_str(),
                ways[2].samples.median() / ways[i].samples.median(), ways[2].samples.best() / ways[i].samples.best());
  std::printf("dot providers: (a) %s; (b) %s\n", dot_providers(identity->plan()).c_str(),
              dot_providers(panels->plan()).c_str());
  return 0;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") o.quick = true;
    else if (a == "--only" && i + 1 < argc) o.only = argv[++i];
    else if (a == "--models" && i + 1 < argc) o.models = argv[++i];
    else {
      std::fprintf(stderr, "usage: model_bench [--quick] [--only activations|resident] [--models DIR]\n");
      std::exit(2);
    }
  }
  if (!o.only.empty() && o.only != "activations" && o.only != "resident") {
    std::fprintf(stderr, "model_bench: --only takes activations or resident\n");
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  int failures = 0;
  if (o.only.empty() || o.only == "activations") failures += bench_activations(o);
  if (o.only.empty()) std::printf("\n");
  if (o.only.empty() || o.only == "resident") failures += bench_resident(o);
  if (failures) std::printf("\n%d check(s) FAILED\n", failures);
  return failures ? 1 : 0;
}
