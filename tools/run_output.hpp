// How `tenact run` delivers outputs (plain programs and models alike): read
// back to the host, printed as text or JSON, written as .npy files into a
// folder (core/output_folder.hpp: never outside it, all or none).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "core/program.hpp"
#include "core/tensor.hpp"

namespace tenact::cli {

/// Outputs left in memory the host cannot address, read back along the
/// registered routes. Errors name the output.
Status outputs_to_host(Runtime& runtime, std::vector<HostTensor>& outputs);

/// {"outputs": {NAME: tensor JSON}} (each distinct name once), plus
/// "retained": {NAME: ...} when `retained` is not empty.
void print_outputs_json(const SemanticProgram& p, const std::vector<HostTensor>& outputs, std::ostream& out,
                        const std::vector<std::pair<std::string, HostTensor>>& retained = {});

/// Each distinct output name once, as DIR/<escaped name>.npy.
Status write_outputs(const SemanticProgram& p, const std::vector<HostTensor>& outputs, const std::string& dir);

/// "NAME: f32[2, 3] = [...]" per output (values when small), then
/// "retained NAME: ..." per retained value.
void print_outputs_text(const SemanticProgram& p, const std::vector<HostTensor>& outputs, std::ostream& out,
                        const std::vector<std::pair<std::string, HostTensor>>& retained = {});

}  // namespace tenact::cli
