// Program inputs from files named on the command line (NAME=FILE pairs),
// shared by `tenact run` and `tenact inspect`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/program.hpp"
#include "core/tensor.hpp"

namespace tenact::cli {

/// The program's inputs in declaration order, read from `files` (.npy or
/// JSON tensors). Errors name the missing, unknown or repeated input, or
/// the file that cannot be read.
Result<std::vector<HostTensor>> read_input_files(
    const SemanticProgram& program, const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace tenact::cli
