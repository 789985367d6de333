// libFuzzer target: the .npy reader. Any input must give a tensor or an
// error, never a crash, hang or unbounded allocation (declared sizes are
// checked against the bytes present); a tensor that parses must survive a
// write/read round trip bit for bit, and writing it again must give the
// same bytes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/tensor_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes{reinterpret_cast<const char*>(data), size};
  auto tensor = tenact::parse_npy(bytes);
  if (!tensor.ok()) return 0;
  const std::string written = tenact::tensor_to_npy(*tensor);
  auto again = tenact::parse_npy(written);
  if (!again.ok() || !again->bitwise_equal(*tensor)) std::abort();
  if (tenact::tensor_to_npy(*again) != written) std::abort();
  return 0;
}
