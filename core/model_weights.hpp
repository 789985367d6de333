// A model's weight data (docs/program-format.md, "Weights and states"):
// read from a folder of .npy files, or checked when a C++ caller hands it
// over.
//
// The folder holds one file per weight without inline data, named by the
// reversible escaping of core/value_file_name.hpp plus ".npy" (`w` is
// `DIR/w.npy`, `layer1/w` is `DIR/layer1%2Fw.npy`, `..` is `DIR/%2E..npy`):
// the name a weight gets can never leave the folder. Files in the folder
// are the caller's: a symbolic link there is followed. Other files in the
// folder are ignored.
//
// Thread-safe (no shared state). Every error names the weight.
#pragma once

#include <map>
#include <string>

#include "core/error.hpp"
#include "core/program.hpp"
#include "core/tensor.hpp"

namespace tenact {

/// Every weight of `program` by name: its inline data when the program
/// carries some (no file is read for it), else the .npy file of its name
/// in `dir`. `dir` may be empty only when every weight has inline data.
/// Errors: Io naming the weight and the path (missing or unreadable file),
/// the .npy reader's error after the weight and the path (a malformed
/// file), InputMismatch naming the weight (dtype or shape other than the
/// weight's: "weight 'w' is f32[16, 16]; w.npy holds f64[16, 16]"; no
/// folder given for a weight without inline data), LimitExceeded for a
/// name too long for a file name.
Result<std::map<std::string, HostTensor>> load_weights_folder(const SemanticProgram& program,
                                                              const std::string& dir);

/// Checks the weights a caller passes: each weight of `program` present
/// with its dtype and shape, in host memory (a weight with inline data may
/// be left out: its inline data is used), and no name that is not a weight
/// of `program`. Errors: InputMismatch naming the weight (the first one
/// found, in the program's weight order, then unknown names in map order).
Status check_weights(const SemanticProgram& program, const std::map<std::string, HostTensor>& weights);

}  // namespace tenact
