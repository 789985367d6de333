// Embedding the Runtime: one JSON program, many client threads at once.
//
//   examples/mlp/mlp.json ──load──> SemanticProgram ─┐
//   examples/mlp/inputs/*.npy ──read──> x w1 b1 w2 b2 ┤
//                                                     v
//            thread 0 ──run──┐
//            thread 1 ──run──┼──> Runtime ──> CPU engine
//               ...          │    (prepared once, then served from the
//            thread 7 ──run──┘     prepare cache without a round trip)
//
// Every answer must equal the first bit for bit (one plan, the same
// kernels: the same arithmetic in the same order), and the first must
// agree with y = max(x·w1 + b1, 0)·w2 + b2 computed below with plain loops
// in double precision. Exits 1 on any error or disagreement.
//
// Usage: embed_runtime EXAMPLE_DIR    (examples/mlp)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "actors/runtime.hpp"
#include "core/program_json.hpp"
#include "core/tensor_io.hpp"
#include "engines/cpu/cpu_engine.hpp"

namespace {

constexpr int kThreads = 8;
constexpr int kRunsPerThread = 25;

// Element (i, j) of a dense row-major f32 matrix with `cols` columns.
float at(const tenact::Tensor& t, int64_t i, int64_t j, int64_t cols) {
  return t.data_as<const float>()[i * cols + j];
}

// The MLP by hand: x f32[B,16], w1 [16,32], b1 [32], w2 [32,10], b2 [10].
std::vector<double> reference(const std::vector<tenact::Tensor>& in) {
  const tenact::Tensor &x = in[0], &w1 = in[1], &b1 = in[2], &w2 = in[3], &b2 = in[4];
  const int64_t batch = x.shape()[0];
  std::vector<double> y(static_cast<size_t>(batch * 10));
  for (int64_t r = 0; r < batch; ++r) {
    double hidden[32];
    for (int64_t h = 0; h < 32; ++h) {
      double sum = b1.data_as<const float>()[h];
      for (int64_t k = 0; k < 16; ++k) sum += double(at(x, r, k, 16)) * at(w1, k, h, 32);
      hidden[h] = std::max(sum, 0.0);
    }
    for (int64_t o = 0; o < 10; ++o) {
      double sum = b2.data_as<const float>()[o];
      for (int64_t h = 0; h < 32; ++h) sum += hidden[h] * at(w2, h, o, 10);
      y[static_cast<size_t>(r * 10 + o)] = sum;
    }
  }
  return y;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: embed_runtime EXAMPLE_DIR (examples/mlp)\n");
    return 2;
  }
  const std::string dir = argv[1];
  auto loaded = tenact::load_program_file(dir + "/mlp.json");
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.error().to_string().c_str());
    return 1;
  }
  auto program = std::make_shared<const tenact::SemanticProgram>(std::move(*loaded));
  std::vector<tenact::Tensor> inputs;
  for (const char* name : {"x", "w1", "b1", "w2", "b2"}) {
    // Dense row-major, as the loops below read them.
    auto tensor = tenact::read_tensor_file(dir + "/inputs/" + name + ".npy");
    auto dense = tensor.ok() ? tensor->contiguous() : tenact::Result<tenact::Tensor>(tensor.error());
    if (!dense.ok()) {
      std::fprintf(stderr, "%s\n", dense.error().to_string().c_str());
      return 1;
    }
    inputs.push_back(std::move(*dense));
  }

  tenact::Runtime rt;
  auto cpu = tenact::cpu::CpuEngine::create();
  if (!rt.status().ok() || !cpu.ok() || !rt.register_engine(*cpu).ok()) {
    std::fprintf(stderr, "cannot start the CPU engine\n");
    return 1;
  }

  // Each thread keeps its answers; the Runtime is shared by all of them.
  std::vector<std::vector<tenact::Tensor>> answers(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t)
    clients.emplace_back([&, t] {
      for (int i = 0; i < kRunsPerThread; ++i) {
        auto outputs = rt.run(program, inputs).get();
        if (!outputs.ok()) {
          errors[t] = outputs.error().to_string();
          return;
        }
        answers[t].push_back((*outputs)[0]);
      }
    });
  for (auto& client : clients) client.join();
  for (const auto& error : errors)
    if (!error.empty()) {
      std::fprintf(stderr, "run failed: %s\n", error.c_str());
      return 1;
    }

  const tenact::Tensor& first = answers[0][0];
  int disagreements = 0;
  for (const auto& thread_answers : answers)
    for (const auto& y : thread_answers)
      if (!y.bitwise_equal(first)) ++disagreements;
  if (disagreements > 0) {
    std::fprintf(stderr, "%d of %d answers differ from the first\n", disagreements, kThreads * kRunsPerThread);
    return 1;
  }

  const std::vector<double> expected = reference(inputs);
  auto y = first.contiguous();
  if (!y.ok() || y->element_count() != static_cast<int64_t>(expected.size())) {
    std::fprintf(stderr, "y has the wrong shape\n");
    return 1;
  }
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    worst = std::max(worst, std::abs(double(y->data_as<const float>()[i]) - expected[i]));
  std::printf("%d runs from %d threads agree; y[0, 0..2] = %.6f %.6f %.6f; largest difference from the loops %.2e\n",
              kThreads * kRunsPerThread, kThreads, y->data_as<const float>()[0], y->data_as<const float>()[1],
              y->data_as<const float>()[2], worst);
  auto cache = rt.cache_stats();
  std::printf("prepare cache: %llu production(s), %llu hit(s)\n", static_cast<unsigned long long>(cache.productions),
              static_cast<unsigned long long>(cache.hits));
  if (worst > 1e-4) {
    std::fprintf(stderr, "y differs from the loops by %.2e (more than 1e-4)\n", worst);
    return 1;
  }
  return 0;
}
