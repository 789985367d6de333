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
      {"run", "run a program on the CPU engine with inputs from .npy or JSON files",
       "Usage: tenact run PROGRAM.json --input NAME=FILE ... [--print-json] [--out DIR]\n\n"
       "Runs PROGRAM.json on the CPU engine. Every program input is given once as\n"
       "--input NAME=FILE, FILE being a NumPy .npy file or a JSON tensor\n"
       "({\"dtype\": \"f32\", \"shape\": [2], \"data\": [1, 2]}). An input whose dtype or\n"
       "shape does not fit the program is an error naming the input, what was\n"
       "expected and what was given.\n\n"
       "  --print-json  print {\"outputs\": {NAME: {\"dtype\", \"shape\", \"data\"}}}; NaN and\n"
       "                infinities as \"nan\", \"inf\", \"-inf\", complex values as [re, im]\n"
       "  --out DIR     write each output as DIR/NAME.npy\n\n"
       "Without either, prints each output's dtype and shape (and its values when small).\n"
       "Exit status: 0 success, 1 invalid program or data (or a failure while\n"
       "running), 2 usage error.\n",
       run_run},
      {"inspect", "prepare a program and print its plan: engines, transfers, regions, key",
       "Usage: tenact inspect PROGRAM.json [--input NAME=FILE ...] [--engines LIST]\n"
       "                      [--placement NAME=ENGINE[/STORAGE] ...] [--json]\n\n"
       "Prepares PROGRAM.json without running it and prints the plan: where each\n"
       "instruction runs (engine and storage class), each transfer and its route,\n"
       "the fused elementwise regions, where outputs are delivered, the prepared\n"
       "entry's key digest and the bytes it retains.\n\n"
       "  --input NAME=FILE   the input's dtype, shape, strides and alignment come\n"
       "                      from FILE (.npy or JSON tensor); an input whose\n"
       "                      declared shape is all constants may be left out\n"
       "  --engines LIST      CPU engines to register under these ids, most preferred\n"
       "                      first (default: cpu), with host_copy routes between them\n"
       "  --placement NAME=ENGINE[/STORAGE]\n"
       "                      the input's buffer lives on ENGINE (storage class host\n"
       "                      unless given); it enters there and moves along routes\n"
       "  --json              print the plan as JSON\n\n"
       "Exit status: 0 success, 1 invalid program, data or placement (or a\n"
       "preparation error, printed with its code), 2 usage error.\n",
       run_inspect},
  };
  return kCommands;
}

}  // namespace tenact::cli
