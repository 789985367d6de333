#include "tools/cli.hpp"
#include "tools/cli_args.hpp"

namespace tenact::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"check", "validate a program and print every value's dtype and shape",
       "Usage: tenact check PROGRAM.json\n\n"
       "Loads and validates PROGRAM.json (format tenact.program/1, described in\n"
       "docs/program-format.md of Tenact's sources). On success prints each input and\n"
       "each op result with its inferred dtype and shape (symbolic\n"
       "dimensions stay symbolic; <=E marks an upper bound known at run time), the\n"
       "shape constraints checked against every input signature, and the program's\n"
       "semantic fingerprint. Otherwise prints every error found.\n\n"
       "Exit status: 0 valid, 1 invalid program (or unreadable file), 2 usage error.\n",
       run_check},
      {"run", "run a program on the CPU engine with inputs from .npy or JSON files",
       "Usage: tenact run PROGRAM.json --input NAME=FILE ... [--print-json] [--out DIR]\n"
       "                  [--repeat N] [--stats] [--threads N] [--trace FILE]\n\n"
       "Runs PROGRAM.json (docs/program-format.md) through the runtime on the CPU\n"
       "engine. Every program input is given once as --input NAME=FILE, FILE being a\n"
       "NumPy .npy file or a JSON tensor ({\"dtype\": \"f32\", \"shape\": [2], \"data\": [1, 2]}).\n"
       "An input whose dtype or shape does not fit the program is an error naming the\n"
       "input, what was expected and what was given.\n\n"
       "  --input NAME=FILE  a program input (repeat for each one)\n"
       "  --print-json       print {\"outputs\": {NAME: {\"dtype\", \"shape\", \"data\"}}}; NaN and\n"
       "                     infinities as \"nan\", \"inf\", \"-inf\", complex values as [re, im]\n"
       "  --out DIR          write each output as DIR/FILE.npy (DIR is created if missing);\n"
       "                     see \"Output file names\" below\n"
       "  --repeat N         run N times (1 to 1000000), printing each run's time and\n"
       "                     whether preparation was a cache hit; outputs of the last run\n"
       "  --stats            print the prepare cache's counters after the runs\n"
       "  --threads N        worker threads of the CPU engine, 1 to 1024 (default: one\n"
       "                     per core); more than the machine can start is an error\n"
       "  --trace FILE       write a Chrome/Perfetto trace of ops, transfers and\n"
       "                     prepare-cache events to FILE\n\n"
       TENACT_NAME_ESCAPES_HELP "\n"
       "Output file names: an output's name is escaped into one file name, so that\n"
       "every name (value names may hold '/', '..', spaces, any Unicode) gives a file\n"
       "directly inside DIR and distinct names give distinct files. ASCII letters,\n"
       "digits, '_', '-' and '.' stay as they are, except a '.' that starts the name;\n"
       "every other byte of the name's UTF-8, '%' included, becomes %XX (upper-case\n"
       "hex): 'layer1/w' -> layer1%2Fw.npy, '..' -> %2E..npy, '%' -> %25.npy.\n"
       "Decoding each %XX gives the name back. A name whose file name would exceed\n"
       "255 bytes is an error. Each file is written to a temporary file in DIR and\n"
       "renamed into place only when every output has been written: a failed run\n"
       "leaves no half-written file, and a symbolic link at a file's name is\n"
       "replaced, never followed.\n\n"
       "Without --print-json or --out, prints each output's dtype and shape (and its\n"
       "values when small).\n"
       "Exit status: 0 success, 1 invalid program or data (or a failure while\n"
       "running, e.g. out of memory or threads), 2 usage error.\n",
       run_run},
      {"inspect", "prepare a program and print its plan: engines, transfers, regions, key",
       "Usage: tenact inspect PROGRAM.json [--input NAME=FILE ...] [--engines LIST]\n"
       "                      [--placement NAME=ENGINE[/STORAGE] ...] [--json]\n\n"
       "Prepares PROGRAM.json (docs/program-format.md) without running it and prints\n"
       "the plan: where each instruction runs (engine and storage class), each\n"
       "transfer and its route, the fused elementwise regions, where outputs are\n"
       "delivered, the prepared entry's key digest and the bytes it retains.\n\n"
       "  --input NAME=FILE   the input's dtype, shape, strides and alignment come\n"
       "                      from FILE (.npy or JSON tensor); an input whose\n"
       "                      declared shape is all constants may be left out\n"
       "  --engines LIST      CPU engines to register under these ids, most preferred\n"
       "                      first (default: cpu), with host_copy routes between them\n"
       "  --placement NAME=ENGINE[/STORAGE]\n"
       "                      the input's buffer lives on ENGINE (storage class host\n"
       "                      unless given; both parts non-empty); it enters there and\n"
       "                      moves along routes\n"
       "  --json              print the plan as JSON\n\n"
       TENACT_NAME_ESCAPES_HELP "\n"
       "Ops whose results nothing reads (directly or through other ops) are dropped\n"
       "when the program is staged; the plan lists them.\n\n"
       "Exit status: 0 success, 1 invalid program, data or placement (or a\n"
       "preparation error, printed with its code), 2 usage error.\n",
       run_inspect},
  };
  return kCommands;
}

}  // namespace tenact::cli
