#include "tools/cli.hpp"

namespace tenact::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"check", "validate a program and print every value's dtype and shape",
       "Usage: tenact check PROGRAM.json\n\n"
       "Loads and validates PROGRAM.json (format tenact.program/1). On success prints\n"
       "each input and each op result with its inferred dtype and shape (symbolic\n"
       "dimensions stay symbolic; <=E marks an upper bound known at run time), the\n"
       "shape constraints checked against every input signature, and the program's\n"
       "semantic fingerprint. Otherwise prints every error found.\n\n"
       "Exit status: 0 valid, 1 invalid program (or unreadable file), 2 usage error.\n",
       run_check},
  };
  return kCommands;
}

}  // namespace tenact::cli
