// Extension op families: what a user registers to add an op to Tenact.
//
// A family is a name ("tenact.softmax", "mylib.fancy_op"), a result
// inference (operand types and attributes -> result types, run when a
// program is validated), kernels per kind of engine (a host kernel, which
// the CPU engine runs and the simulated devices run on the host while
// charging virtual time; device kernels once the CUDA engine exists), an
// optional work estimate for cost-aware placement, and a planning
// configuration payload per engine slot that reaches the kernel's prepare.
//
// Contract: an ExtensionFamily is immutable once registered (shared as
// shared_ptr<const ExtensionFamily>) and every hook is called from many
// threads at once (planning threads, engine worker threads): hooks must be
// pure functions of their arguments, or synchronise what they share.
// Prepare hooks run when an op is prepared (once per prepared program, or
// once per eager call); a host kernel runs each time the op runs.
//
// Depends on core/ only, so the CPU kernels and every engine can run a
// family without knowing the runtime.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dim_expr.hpp"
#include "core/error.hpp"
#include "core/op_attrs.hpp"
#include "core/program.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"

namespace tenact {

/// What an engine asks of a family when it prepares one of its ops.
struct ExtensionPrepareCall {
  /// The op: its family and the canonical JSON text of its attributes
  /// (keys sorted, no spaces; "{}" when the program gave none).
  const ExtensionAttrs& op;
  /// The validated operand and result types (shapes may be symbolic).
  std::span<const ValueType> operands;
  std::span<const ValueType> results;
  /// The id of the engine preparing it ("cpu", "sim:1").
  std::string_view engine;
  /// The planning configuration of the engine's slot for this family (the
  /// payload given at registration; empty when none was). Part of the
  /// prepared program's key: programs prepared under different payloads
  /// never share a plan.
  std::string_view planning_config;
};

/// How a host kernel may split its work over the engine's worker threads.
/// for_range calls body(begin, end) on disjoint chunks covering [0, n),
/// each of at least `grain` indices but the last, from the engine's
/// threads and the calling one, and returns once every chunk has run.
/// Results must not depend on how the range was split.
class HostParallel {
 public:
  virtual ~HostParallel() = default;
  virtual void for_range(int64_t n, int64_t grain,
                         const std::function<void(int64_t begin, int64_t end)>& body) = 0;
};

/// What a host kernel is given each time its op runs.
struct HostKernelArgs {
  /// Host tensors of the operands' dtypes and concrete shapes, with any
  /// strides (a transposed or broadcast view reads through its strides).
  std::span<const HostTensor> inputs;
  /// The program's inferred result types (dtype authoritative; shapes may
  /// be symbolic: compute the concrete ones from the inputs).
  std::span<const ValueType> result_types;
  /// Every symbol's value for this run.
  const SymbolBindings& symbols;
  /// The engine's threads, or null: run serially.
  HostParallel* parallel = nullptr;
};

/// A prepared host kernel: returns the results, dense and row-major, made
/// with Tensor::zeros (on an engine's thread that allocates from the
/// engine's memory). Called from many threads at once; must not block on
/// other work of the runtime.
using HostExtensionKernel = std::function<Result<std::vector<HostTensor>>(const HostKernelArgs&)>;

/// Arithmetic operations and bytes moved by one run of an op, as
/// engines/cost_model.hpp counts them for core ops.
struct ExtensionWork {
  uint64_t ops = 0;
  uint64_t bytes = 0;
};

/// What a work estimate is asked about: one op with concrete extents.
struct ExtensionWorkCall {
  const ExtensionAttrs& op;
  std::span<const ValueExtent> operands;
  std::span<const ValueExtent> results;
};

struct ExtensionFamily {
  /// Unique within a runtime; by convention "module.op".
  std::string name;
  /// Result types from the operand types and the attributes' canonical
  /// JSON text. Errors say what is wrong with the operands or attributes;
  /// validation prefixes the op ("op #3 (extension -> 'y'): extension
  /// family 'tenact.softmax': ..."). Required.
  ExtensionInferFn infer;
  /// Prepares the host kernel for one op. Errors: Unsupported for an op
  /// this kernel does not run (a dtype, an attribute): the engine answers
  /// Unsupported and placement may look elsewhere; any other error fails
  /// preparation with it. Null: the family has no host kernel, and the
  /// CPU engine and the simulated devices get no slot for it.
  std::function<Result<HostExtensionKernel>(const ExtensionPrepareCall&)> prepare_host;
  /// The work of one op (for placement and the simulated devices' clocks).
  /// Null: one operation per element read or written, every byte read and
  /// written once, as for an elementwise op.
  std::function<ExtensionWork(const ExtensionWorkCall&)> estimate;
};

using ExtensionFamilyPtr = std::shared_ptr<const ExtensionFamily>;

/// InvalidAttribute naming what an ExtensionFamily lacks: an empty name,
/// a name with control characters, or no infer hook.
Status check_extension_family(const ExtensionFamily& family);

}  // namespace tenact
