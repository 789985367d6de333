// The model side of the tenact command: `tenact plan` (compile a model's
// plan and print it) and `tenact run` of a program with weights or states
// (load it once, run it --repeat times: states persist across the runs).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "core/tensor.hpp"
#include "setup/engine_setup.hpp"

namespace tenact::cli {

/// What `tenact run` hands over for a model.
struct ModelRunRequest {
  std::shared_ptr<const SemanticProgram> program;
  std::vector<HostTensor> inputs;
  std::vector<setup::EngineSpec> engines;
  setup::EngineSetupOptions engine_options;
  std::string weights_dir;
  std::vector<std::string> retain;
  bool retain_all = false;
  std::string materializer;
  uint64_t repeat = 1;
  bool stats = false;
  bool print_json = false;
  std::string out_dir;
};

int run_model(const ModelRunRequest& request, std::ostream& out, std::ostream& err);
int run_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tenact::cli
