// The engine conformance suite's machinery (the test cases are in
// conformance_test.cpp): the engine kinds every test iterates
// (conformance_engines.cpp), the op x dtype x layout matrix of programs
// (conformance_cases.cpp), and the comparison of an engine's results with
// the CPU engine's, bit for bit or within a declared bound
// (conformance_compare.cpp).
//
// Adding an engine kind is one entry of listed_engine_kinds(): a name, how
// to register one or two of its engines with a Runtime, what it does not
// support (refused at prepare), the ulp bounds it needs where the spec
// allows them, and whether this build and machine can install it. No Catch2 here: the functions report what is wrong as text,
// and the tests turn it into failures.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "core/dtype.hpp"
#include "core/op_kind.hpp"
#include "core/program.hpp"
#include "core/tensor.hpp"
#include "engines/engine.hpp"

namespace tenact::conformance {

// -- accuracy classes ----------------------------------------------------------------

/// What the spec (docs/program-format.md, "Decisions") promises of an op's
/// result, by which an engine may differ from the CPU engine.
enum class Accuracy : uint8_t {
  /// Layout, indexing, comparisons, integer arithmetic, conversions,
  /// rounding ops, add/subtract/multiply/divide/sqrt on real floats
  /// (correctly rounded): bit for bit on every engine.
  Exact,
  /// Real transcendental functions: within 4 ulps on f32/f64, computed in
  /// f32 and rounded for f16/bf16; complex arithmetic that is not one
  /// rounding (complex multiply, divide, abs, functions).
  Approximate,
  /// Sums that may reassociate (reduce_sum, reduce_sum_squares, dot_general,
  /// scatter add): the pairwise-summation bound; the sign of a zero sum is
  /// unspecified.
  Sum,
  /// Products that may reassociate (reduce_prod, scatter multiply).
  Product,
};
const char* to_string(Accuracy a);

/// How an engine's result is compared with the reference.
struct Tolerance {
  /// 0: bit for bit (NaN payloads and the sign of zero included).
  /// Otherwise: each element within `ulps` units in the last place of the
  /// reference (per component for complex), any NaN matching any NaN, and
  /// +0 matching -0.
  uint32_t ulps = 0;
};

// -- engine kinds --------------------------------------------------------------------

/// An op family, an op or a dtype (or a combination) an engine kind does not
/// support: the suite checks that preparing a program using it fails with
/// Unsupported, NoEligibleEngine or NoExecutableEngine, and that running it
/// fails too, never returning a result.
struct Refusal {
  std::optional<OpFamily> family;
  std::optional<OpKind> op;
  std::optional<DType> dtype;
  /// True when an op of `kind` on `dtype` falls under this refusal (every
  /// field that is set matches).
  bool covers(OpKind kind, DType dtype) const;
  std::string to_string() const;
};

/// Engines of one kind registered with a Runtime (preference in this order).
struct Installed {
  std::vector<std::shared_ptr<Engine>> engines;
};

struct EngineKind {
  /// "cpu", "sim", "cuda".
  std::string name;
  /// Registers `devices` engines of this kind (1, or 2 for device-to-device
  /// copies) with `runtime`, with the transfer routes that join them to the
  /// host and to each other.
  std::function<Result<Installed>(Runtime&, unsigned devices)> install;
  /// The most engines `install` can make (1: no device-to-device copies).
  unsigned max_devices = 1;
  /// What it does not support (empty for cpu and sim).
  std::vector<Refusal> unsupported;
  /// Ulps it needs per accuracy class where the spec allows a bound; absent:
  /// 0, bit for bit. Ignored for Accuracy::Exact.
  std::map<Accuracy, uint32_t> ulps;

  Tolerance tolerance(Accuracy accuracy) const;
  bool refuses(OpKind kind, DType dtype) const;
};

/// An engine kind the suite knows, and why it is skipped here (set when
/// this build or machine cannot install it: cuda without the toolkit or
/// without a device; today always, as the CUDA engine runs no programs yet).
struct ListedKind {
  EngineKind kind;
  std::optional<Error> skipped;
};
/// Every engine kind the suite knows: cpu, sim, cuda.
const std::vector<ListedKind>& listed_engine_kinds();
/// The engine kinds under test: the listed kinds not skipped, the CPU
/// engine first (the reference kind is made separately, by
/// reference_kind()). The first call prints each skipped kind and its
/// reason to stdout.
const std::vector<EngineKind>& engine_kinds();
/// The reference: one CPU engine ("cpu").
EngineKind reference_kind();
/// The reference for fused regions: one CPU engine with fusion off, so that
/// each op of a region runs as its own kernel.
EngineKind unfused_reference_kind();
/// Registers the engines an engine list names (setup::register_engines,
/// two CPU threads each): what the cpu and sim kinds do.
std::function<Result<Installed>(Runtime&, unsigned)> install_engine_list(std::string one, std::string two);

/// A Runtime with the engines of one kind. Destroy it with shutdown() and
/// then ask leaks(): every engine's allocated bytes in every storage class
/// must be back to what they were right after registration.
class Rig {
 public:
  /// Errors: the kind's installation errors.
  static Result<std::unique_ptr<Rig>> create(const EngineKind& kind, unsigned devices = 1);
  ~Rig();

  const EngineKind& kind() const { return kind_; }
  Runtime& runtime() { return *runtime_; }
  const std::vector<std::shared_ptr<Engine>>& engines() const { return installed_.engines; }
  Engine& engine(size_t i = 0) const { return *installed_.engines.at(i); }
  /// Each engine's default storage class, and then its other ones.
  std::vector<Endpoint> endpoints() const;

  /// `value` as a host tensor: itself when the host can address it, else
  /// copied to unowned host memory along the registered route.
  Result<Tensor> to_host(const Tensor& value);
  /// Runs `program` on `inputs` and reads every output back to the host.
  Result<std::vector<Tensor>> run(const std::shared_ptr<const SemanticProgram>& program,
                                  const std::vector<Tensor>& inputs);
  /// Prepares `program` for the descriptors of `inputs` (unowned host).
  Result<PreparedProgramPtr> prepare(const std::shared_ptr<const SemanticProgram>& program,
                                     const std::vector<Tensor>& inputs);

  /// Destroys the Runtime (waits for the work in flight).
  void shutdown();
  /// After shutdown(): "sim:0/device: 400 bytes allocated, 0 before" for
  /// each storage class whose count did not come back.
  std::vector<std::string> leaks() const;

 private:
  Rig(const EngineKind& kind, std::unique_ptr<Runtime> runtime, Installed installed);
  EngineKind kind_;
  std::unique_ptr<Runtime> runtime_;
  Installed installed_;
  std::map<std::string, uint64_t> baseline_;  // "id/class" -> allocated bytes
};

// -- negative controls -----------------------------------------------------------------

/// What a control engine (one CPU engine behind a ForwardingEngine) does with
/// the ops of one family.
enum class ControlBehaviour : uint8_t {
  /// Declares the family but answers Unsupported at prepare.
  RefuseAtPrepare,
  /// Leaves the family out of its capabilities.
  DropFromCapabilities,
  /// Serves it (while its engine kind lists it as unsupported: a table that
  /// lies, which the refusal check must notice).
  ServeAnyway,
  /// Serves it, but flips the lowest bit of the first byte of every
  /// non-empty output of a batch holding such an op (the comparison must
  /// notice). For families whose results are fresh buffers (dot).
  CorruptResults,
};
struct ControlCounters {
  std::atomic<uint64_t> prepares_refused{0};
  /// Batches and single launches holding an op of the family.
  std::atomic<uint64_t> launches_of_family{0};
};
/// An engine kind made of one control engine over a CPU engine with id
/// "cpu"; `unsupported` is the kind's table entry (what it claims).
EngineKind control_kind(std::string name, OpFamily family, ControlBehaviour behaviour,
                        std::vector<Refusal> unsupported, std::shared_ptr<ControlCounters> counters);

/// "ok" when preparing and running `program` on `rig` are both refused with
/// an Unsupported-class code (Unsupported, NoEligibleEngine,
/// NoExecutableEngine; MissingExtension for an extension family); otherwise what happened instead ("prepared", "ran and
/// returned 1 output", "prepare failed with timeout: ...").
std::string refusal_verdict(Rig& rig, const std::shared_ptr<const SemanticProgram>& program,
                            const std::vector<Tensor>& inputs);

// -- the op x dtype x layout matrix ----------------------------------------------------

/// How the operands of the op under test reach it.
enum class Layout : uint8_t {
  /// Program inputs, dense and row-major.
  Contiguous,
  /// A transpose of a program input (reversed axes): a permuted view.
  Transposed,
  /// A slice with offsets and step 2 on the last axis of a larger input.
  Sliced,
  /// broadcast_in_dim of an input without the first axis (a zero stride).
  Broadcast,
  /// A dimension of 0 (the first axis, or the contracted one).
  Empty,
};
const char* to_string(Layout layout);
inline constexpr Layout kAllLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Sliced,
                                         Layout::Broadcast, Layout::Empty};

/// One program of the matrix, its inputs and how to compare its outputs.
struct Case {
  /// The op under test (its JSON name), the dtype it is tested on (for
  /// convert the source and "to" the target), the layout.
  OpKind kind = OpKind::Add;
  std::string op;
  DType dtype = DType::F32;
  std::optional<DType> to;
  Layout layout = Layout::Contiguous;
  std::string json;
  std::shared_ptr<const SemanticProgram> program;
  std::vector<Tensor> inputs;
  /// The program's outputs (value names) and what the spec promises of each.
  std::vector<std::string> outputs;
  std::vector<Accuracy> accuracies;
  /// "add f32 transposed", "convert f16->i8 contiguous".
  std::string label() const;
};

/// One row of the op table: an op, its family and the dtypes the spec
/// admits for it (for ops with several kinds of operands: the dtype of the
/// data operand).
struct OpSpec {
  OpKind kind;
  std::vector<DType> admitted;
  /// The layouts that apply (ops without operands: contiguous and empty).
  std::vector<Layout> layouts;
};
/// Every op of docs/program-format.md's op list but `extension`, with the
/// dtypes the spec admits (written from the spec, not from the validator).
const std::vector<OpSpec>& op_table();

/// The case of `spec` on `dtype` in `layout`; for convert, one per target
/// dtype. Each case's program is loaded when made: a program that does not
/// load is a bug of the table, reported as an Internal error naming the
/// case and the loader's message.
Result<std::vector<Case>> make_cases(const OpSpec& spec, DType dtype, Layout layout);

/// A minimal program applying `kind` to operands of `dtype` (the validator's
/// view of admissibility, for checking the table against it). Ops whose
/// dtype is not an operand's (constant, iota) use it as their attribute.
std::string probe_program(OpKind kind, DType dtype);

// -- values and comparison ---------------------------------------------------------------

/// Deterministic pseudo-random elements of `t`'s dtype, special values mixed
/// in about one element in `special_every` (0: none): NaN (quiet, signalling,
/// with payloads), +-inf, -0, denormals, the extremes; integers' min and max.
void fill(Tensor& t, uint64_t seed, int special_every = 3);
/// A dense host tensor of `dtype` and `shape` filled by fill().
Tensor random_tensor(DType dtype, std::vector<int64_t> shape, uint64_t seed, int special_every = 3);
/// A dense integer tensor holding `values` (converted, wrapping).
Tensor integer_tensor(DType dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values);

/// Empty when `actual` matches `expected` under `tolerance`; else what
/// differs: dtype, shape, or the first differing elements with their bits.
std::string compare(const Tensor& expected, const Tensor& actual, Tolerance tolerance);

/// Units in the last place between two finite-or-infinite values of a real
/// float dtype given by their bits; nullopt when exactly one is NaN.
std::optional<uint64_t> ulp_distance(DType dtype, uint64_t a_bits, uint64_t b_bits);

}  // namespace tenact::conformance
