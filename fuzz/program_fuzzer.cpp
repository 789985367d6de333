// libFuzzer target: the JSON program loader. Any input must give a program
// or errors, never a crash, hang or unbounded allocation; a program that
// loads must survive a save/load round trip unchanged.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/program_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text{reinterpret_cast<const char*>(data), size};
  tenact::ValidationReport report = tenact::load_program_all(text);
  if (!report.program) return 0;
  const std::string saved = tenact::save_program_json(*report.program);
  auto again = tenact::load_program(saved);
  if (!again.ok() || !(*again == *report.program)) std::abort();
  return 0;
}
