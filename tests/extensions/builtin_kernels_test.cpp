// The built-in module's host kernels against NumPy (tests/fixtures/
// gen_builtin_extensions.py): every family x f16, bf16, f32, f64 x shapes
// and axes (first, middle, last; several `dimensions`, none, rank 0;
// transposed and sliced inputs), special values, each result within the
// bound the fixture derived from the spec, and the same bits whatever the
// thread split.
//
// The tolerance (derivation in full in the generator's docstring): the
// formula evaluated exactly on the exact inputs is the reference; each
// operation of the formula contributes one rounding of the computation
// type (u = 2^-24 for f16/bf16/f32, 2^-53 for f64) to its result, each
// exp/log/erf/tanh 4 ulps (8u relative), each sum of n terms the spec's
// 2*ceil(log2 n)*u*sum|terms|, all propagated through the later operations
// by their exact sensitivity (the extremes over each operand's error
// interval); f16/bf16 add half an ulp of their own for the final
// rounding. Where the reference is NaN or infinite the result must be the
// same (any NaN).
//
// TENACT_EXTENSION_REPORT=1 prints each family's worst |error| / bound per
// dtype.
#include "tests/extensions/extension_test_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

namespace tenact {
namespace {

using namespace ext_test;

struct KernelCase {
  std::string name, family, dtype, view, attrs;
};

std::vector<KernelCase> read_kernel_manifest() {
  std::ifstream in(fixture_dir() + "manifest.txt");
  if (!in) FAIL("missing fixture manifest " << fixture_dir() << "manifest.txt (run generate_fixtures.py)");
  std::vector<KernelCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream ss(line);
    KernelCase c;
    std::string view, attrs;
    ss >> c.name >> c.family >> c.dtype >> view >> attrs;
    c.view = view.substr(5);
    c.attrs = attrs.substr(6);
    cases.push_back(c);
  }
  return cases;
}

/// The worst |error| / bound seen, per family and dtype.
std::map<std::string, double>& worst_ratios() {
  static std::map<std::string, double> worst;
  return worst;
}

void check_against_reference(const HostTensor& got, const KernelCase& c) {
  const std::string path = fixture_dir() + c.name;
  const HostTensor ref = load(path + ".ref.npy");
  const HostTensor tol = load(path + ".tol.npy");
  REQUIRE(got.shape() == ref.shape());
  REQUIRE(got.is_contiguous());
  double& worst = worst_ratios()[c.family + " " + c.dtype];
  int failures = 0;
  for (int64_t i = 0; i < got.element_count() && failures < 10; ++i) {
    const double g = value_at(got, i), r = value_at(ref, i), t = value_at(tol, i);
    bool ok;
    if (std::isnan(r)) {
      ok = std::isnan(g);
    } else if (std::isinf(r)) {
      ok = g == r;
    } else {
      ok = std::isfinite(g) && std::fabs(g - r) <= t;
      if (t > 0 && std::isfinite(g)) worst = std::max(worst, std::fabs(g - r) / t);
    }
    if (!ok) {  // (messages only for failures: INFO per element would cost seconds)
      ++failures;
      FAIL_CHECK(c.name << " element " << i << ": got " << g << ", exact " << r << ", bound " << t);
    }
  }
}

void run_family_fixtures(const std::string& family_name) {
  ThreadedParallel threads(4, 1);
  int count = 0;
  for (const KernelCase& c : read_kernel_manifest()) {
    if (c.family != family_name) continue;
    ++count;
    INFO("case " << c.name << " attrs " << c.attrs << " view " << c.view);
    const std::string path = fixture_dir() + c.name;
    std::vector<HostTensor> inputs{make_view(load(path + ".x.npy"), c.view)};
    for (const char* p : {".scale.npy", ".bias.npy"})
      if (std::ifstream(path + p).good()) inputs.push_back(load(path + p));
    const HostTensor serial = run_ok(c.family, c.attrs, inputs);
    CHECK(serial.dtype() == inputs[0].dtype());
    check_against_reference(serial, c);
    const HostTensor split = run_ok(c.family, c.attrs, inputs, &threads);
    CHECK(split.bitwise_equal(serial));
  }
  CHECK(count >= 40);
}

void print_report() {
  if (std::getenv("TENACT_EXTENSION_REPORT") == nullptr) return;
  for (const auto& [key, ratio] : worst_ratios())
    std::printf("worst |error| / bound  %-28s %.4f\n", key.c_str(), ratio);
}

TEST_CASE("tenact.softmax matches NumPy within the spec's bound", "[extensions][softmax]") {
  run_family_fixtures("tenact.softmax");
  print_report();
}

TEST_CASE("tenact.log_softmax matches NumPy within the spec's bound", "[extensions][softmax]") {
  run_family_fixtures("tenact.log_softmax");
  print_report();
}

TEST_CASE("tenact.layer_norm matches NumPy within the spec's bound", "[extensions][norm]") {
  run_family_fixtures("tenact.layer_norm");
  print_report();
}

TEST_CASE("tenact.rms_norm matches NumPy within the spec's bound", "[extensions][norm]") {
  run_family_fixtures("tenact.rms_norm");
  print_report();
}

TEST_CASE("tenact.gelu matches NumPy within the spec's bound", "[extensions][gelu]") {
  run_family_fixtures("tenact.gelu");
  print_report();
}

}  // namespace
}  // namespace tenact
