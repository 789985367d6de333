// Building a program in C++ (core/builder.hpp) and running it on the CPU
// engine and on two simulated GPUs:
//
//   a f32[N,3] ──┐
//                ├─ dot_general ── h f32[N,2] ──┐
//   w f32[3,2] ──┘                              ├─ add ── y ── reduce_sum(0) ── s f32[2]
//   constant 1 f32[N,2] ────────────────────────┘
//
// With a = [[1, 2, 3], [4, 5, 6]] and w = [[1, 0], [0, 1], [1, 1]]:
// a·w = [[1+3, 2+3], [4+6, 5+6]] = [[4, 5], [10, 11]], so
// y = [[5, 6], [11, 12]] and s = [16, 18]. Exits 1 when a run fails or its
// results differ from those.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "core/builder.hpp"
#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "setup/engine_setup.hpp"

namespace {

// A dense f32 tensor of `shape` holding `values` (row-major).
tenact::Tensor f32(std::vector<int64_t> shape, const std::vector<float>& values) {
  tenact::Tensor t = tenact::Tensor::zeros(tenact::DType::F32, std::move(shape)).value();
  for (size_t i = 0; i < values.size(); ++i) t.data_as<float>()[i] = values[i];
  return t;
}

bool equals(const tenact::Tensor& t, const std::vector<float>& values) {
  auto dense = t.contiguous();
  if (!dense.ok() || dense->dtype() != tenact::DType::F32 || dense->element_count() != int64_t(values.size()))
    return false;
  for (size_t i = 0; i < values.size(); ++i)
    if (dense->data_as<const float>()[i] != values[i]) return false;
  return true;
}

// Runs `program` on the engines `list` names ("cpu", "sim:0,sim:1") and
// checks its two outputs; false (with a message) when anything is wrong.
bool run_on(const char* list, const std::shared_ptr<const tenact::SemanticProgram>& program,
            const std::vector<tenact::Tensor>& inputs) {
  tenact::Runtime rt;
  auto specs = tenact::setup::parse_engine_list(list);
  if (!specs.ok()) {
    std::fprintf(stderr, "%s\n", specs.error().to_string().c_str());
    return false;
  }
  auto engines = tenact::setup::register_engines(rt, *specs);
  if (!engines.ok()) {
    std::fprintf(stderr, "%s\n", engines.error().to_string().c_str());
    return false;
  }
  auto outputs = rt.run(program, inputs).get();
  if (!outputs.ok()) {
    std::fprintf(stderr, "%s: %s\n", list, outputs.error().to_string().c_str());
    return false;
  }
  // Results stay where they were produced: the CPU engine's host memory,
  // or a simulated device's memory, which is read back along the routes
  // register_engines added.
  std::vector<tenact::Tensor> host;
  for (const auto& output : *outputs) {
    if (output.is_host()) {
      host.push_back(output);
      continue;
    }
    auto back = rt.copy(output, tenact::Endpoint::unowned_host()).get();
    if (!back.ok()) {
      std::fprintf(stderr, "%s: %s\n", list, back.error().to_string().c_str());
      return false;
    }
    host.push_back(std::move(*back));
  }
  std::printf("%s: y = %s (on %s), s = %s\n", list, tenact::tensor_to_json(host[0]).c_str(),
              (*outputs)[0].endpoint().to_string().c_str(), tenact::tensor_to_json(host[1]).c_str());
  if (!equals(host[0], {5, 6, 11, 12}) || !equals(host[1], {16, 18})) {
    std::fprintf(stderr, "%s: expected y = [[5, 6], [11, 12]] and s = [16, 18]\n", list);
    return false;
  }
  return true;
}

}  // namespace

int main() {
  using tenact::DType;
  tenact::ProgramBuilder b{"affine_sum"};
  auto a = b.input("a", DType::F32, {"N", 3});
  auto w = b.input("w", DType::F32, {3, 2});
  tenact::DotGeneralAttrs contract;  // a's axis 1 with w's axis 0: a matrix product
  contract.lhs_contracting_dimensions = {1};
  contract.rhs_contracting_dimensions = {0};
  auto h = b.dot_general(a, w, contract, "h");
  auto one = b.constant(DType::F32, {"N", 2}, tenact::Scalar::of_float(1.0), "one");
  auto y = b.binary(tenact::OpKind::Add, h, one, "y");
  auto s = b.reduce(tenact::OpKind::ReduceSum, y, {0}, "s");
  b.output(y);
  b.output(s);
  auto built = b.build();
  if (!built.ok()) {
    std::fprintf(stderr, "%s\n", built.error().to_string().c_str());
    return 1;
  }
  auto program = std::make_shared<const tenact::SemanticProgram>(std::move(*built));
  std::printf("%s", tenact::save_program_json(*program).c_str());

  const std::vector<tenact::Tensor> inputs = {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {1, 0, 0, 1, 1, 1})};
  bool ok = run_on("cpu", program, inputs);
  ok = run_on("sim:0,sim:1", program, inputs) && ok;
  return ok ? 0 : 1;
}
