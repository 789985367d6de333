// Tensors outside programs: the JSON tensor form and NumPy .npy files.
//
// JSON tensor form: {"dtype": "f32", "shape": [2, 2], "data": [1, 2, 3, 4]}
// with data flat row-major; bool as true/false; complex as [re, im]; floats
// may be "nan", "inf", "-inf". bf16 travels in the JSON form, or in .npy
// as descr '<V2' (raw little-endian bfloat16 bits; see npy.cpp).
//
// Contract: readers never trust declared sizes: a header or shape whose
// byte size exceeds the data present, or kMaxTensorBytes, is an error
// before any allocation. All functions are thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace tenact {

/// Parses the JSON tensor form. Errors name the key or element at fault.
Result<HostTensor> parse_tensor_json(std::string_view text);
/// Serializes to the JSON tensor form (NaN/inf as strings, complex as pairs).
std::string tensor_to_json(const HostTensor& tensor);

/// Parses a .npy file image (format versions 1.0, 2.0, 3.0; little- or
/// big-endian data; C or Fortran order). Errors name what is malformed.
Result<HostTensor> parse_npy(std::string_view bytes);
/// Serializes as .npy (version 1.0 unless the header needs 2.0), C order,
/// little-endian.
std::string tensor_to_npy(const HostTensor& tensor);

/// File helpers over the two above; the format is chosen by extension
/// (".npy" or ".json"). Errors: Io naming the path, or the parse error
/// prefixed with the path.
Result<HostTensor> read_tensor_file(const std::string& path);
Status write_tensor_file(const std::string& path, const HostTensor& tensor);

/// Reads a whole file (Io error naming the path); `max_bytes` bounds it.
Result<std::string> read_file(const std::string& path, uint64_t max_bytes = kMaxTensorBytes);
Status write_file(const std::string& path, std::string_view bytes);

}  // namespace tenact
