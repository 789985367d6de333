// Program inputs from files named on the command line (NAME=FILE pairs),
// shared by `tenact run` and `tenact inspect`.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/program.hpp"
#include "core/tensor.hpp"

namespace tenact::cli {

/// NAME=VALUE pairs from the command line by input name. Errors
/// (InputMismatch): a name given twice ("input 'x' is <repeated>", e.g.
/// "given twice"), a name the program has no input for.
Result<std::map<std::string, std::string>> pairs_by_input(
    const SemanticProgram& program, const std::vector<std::pair<std::string, std::string>>& pairs,
    const std::string& repeated);

/// The program's inputs in declaration order, read from `files` (.npy or
/// JSON tensors). Errors name the missing, unknown or repeated input, or
/// the file that cannot be read.
Result<std::vector<HostTensor>> read_input_files(
    const SemanticProgram& program, const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace tenact::cli
