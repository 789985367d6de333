// Adding an op to Tenact: an extension family with a CPU kernel
// (core/extension.hpp), registered with Runtime::register_extension and
// used by a JSON program.
//
//   x f32[N] ── demo.scaled_square {"scale": 0.5} ── s ──┐
//     └─────────────────────────────────────────────────┴─ add ── y
//
// demo.scaled_square computes scale * x * x elementwise. With
// x = [1, 2, 3, -4]: s = [0.5, 2, 4.5, 8] and y = s + x = [1.5, 4, 7.5, 4].
// Exits 1 when anything fails or y differs from that.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "core/extension.hpp"
#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "engines/cpu/cpu_engine.hpp"

namespace {

// The attributes arrive as canonical JSON text (keys sorted, no spaces):
// here {"scale":NUMBER}.
tenact::Result<double> parse_scale(const std::string& attributes_json) {
  double scale = 0;
  if (std::sscanf(attributes_json.c_str(), "{\"scale\":%lf}", &scale) != 1)
    return tenact::Error{tenact::ErrorCode::InvalidAttribute, "wants {\"scale\": NUMBER}, got " + attributes_json};
  return scale;
}

tenact::ExtensionFamily scaled_square() {
  tenact::ExtensionFamily family;
  family.name = "demo.scaled_square";
  // Validation: one f32 operand; the result has its type.
  family.infer = [](std::span<const tenact::ValueType> operands,
                    const std::string& attributes_json) -> tenact::Result<std::vector<tenact::ValueType>> {
    if (operands.size() != 1 || operands[0].dtype != tenact::DType::F32)
      return tenact::Error{tenact::ErrorCode::TypeMismatch, "takes one f32 operand"};
    TENACT_TRY(parse_scale(attributes_json));
    return std::vector<tenact::ValueType>{operands[0]};
  };
  // Preparation, once per prepared program: the kernel the CPU engine runs
  // each time the op runs. It must be safe from many threads at once.
  family.prepare_host = [](const tenact::ExtensionPrepareCall& call) -> tenact::Result<tenact::HostExtensionKernel> {
    TENACT_ASSIGN_OR_RETURN(double scale, parse_scale(call.op.attributes_json));
    return tenact::HostExtensionKernel{[scale](const tenact::HostKernelArgs& args)
                                           -> tenact::Result<std::vector<tenact::HostTensor>> {
      TENACT_ASSIGN_OR_RETURN(tenact::HostTensor x, args.inputs[0].contiguous());
      TENACT_ASSIGN_OR_RETURN(tenact::HostTensor s, tenact::Tensor::zeros(tenact::DType::F32, x.shape()));
      const float* in = x.data_as<const float>();
      float* out = s.data_as<float>();
      auto body = [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = static_cast<float>(scale * in[i] * in[i]);
      };
      if (args.parallel != nullptr)
        args.parallel->for_range(x.element_count(), 4096, body);  // over the engine's threads
      else
        body(0, x.element_count());
      return std::vector<tenact::HostTensor>{s};
    }};
  };
  return family;
}

constexpr const char* kProgram = R"({
  "format": "tenact.program/1",
  "name": "scaled_square_plus_x",
  "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]}],
  "ops": [
    {"op": "extension", "family": "demo.scaled_square", "in": ["x"], "out": "s",
     "attributes": {"scale": 0.5}},
    {"op": "add", "in": ["s", "x"], "out": "y"}
  ],
  "outputs": ["y"]
})";

}  // namespace

int main() {
  tenact::Runtime rt;
  auto cpu = tenact::cpu::CpuEngine::create();
  if (!rt.status().ok() || !cpu.ok() || !rt.register_engine(*cpu).ok()) {
    std::fprintf(stderr, "cannot start the CPU engine\n");
    return 1;
  }
  if (tenact::Status registered = rt.register_extension(scaled_square()); !registered.ok()) {
    std::fprintf(stderr, "%s\n", registered.error().to_string().c_str());
    return 1;
  }
  // The program validates against the families registered so far.
  auto loaded = tenact::load_program(kProgram, rt.extensions());
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.error().to_string().c_str());
    return 1;
  }
  auto program = std::make_shared<const tenact::SemanticProgram>(std::move(*loaded));

  tenact::Tensor x = tenact::Tensor::zeros(tenact::DType::F32, {4}).value();
  const float xs[] = {1, 2, 3, -4};
  for (int i = 0; i < 4; ++i) x.data_as<float>()[i] = xs[i];
  auto outputs = rt.run(program, {x}).get();
  if (!outputs.ok()) {
    std::fprintf(stderr, "%s\n", outputs.error().to_string().c_str());
    return 1;
  }
  const tenact::Tensor& y = (*outputs)[0];
  std::printf("y = %s\n", tenact::tensor_to_json(y).c_str());
  const float expected[] = {1.5f, 4, 7.5f, 4};
  auto dense = y.contiguous();
  if (!dense.ok() || dense->element_count() != 4) {
    std::fprintf(stderr, "y has the wrong shape\n");
    return 1;
  }
  for (int i = 0; i < 4; ++i)
    if (dense->data_as<const float>()[i] != expected[i]) {
      std::fprintf(stderr, "y[%d] = %g, expected %g\n", i, double(dense->data_as<const float>()[i]),
                   double(expected[i]));
      return 1;
    }
  return 0;
}
