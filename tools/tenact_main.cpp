// tenact: the command-line door to the runtime. `tenact --help` lists the
// commands; each command is one file of tools/.
#include <iostream>
#include <string>
#include <vector>

#include "core/guarded.hpp"
#include "tools/cli.hpp"

namespace tenact::cli {

int usage_error(std::string_view command, std::string_view message, std::ostream& err) {
  err << "tenact " << command << ": " << message << "\nTry 'tenact " << command << " --help'.\n";
  return kUsage;
}

namespace {

void print_overview(std::ostream& out) {
  out << "Usage: tenact COMMAND [ARGS...]\n\n"
         "Tenact prepares and executes tensor programs (tenact.program/1 JSON).\n\n"
         "Commands:\n";
  for (const auto& c : commands()) {
    std::string name{c.name};
    name.resize(10, ' ');
    out << "  " << name << c.summary << "\n";
  }
  out << "\n'tenact COMMAND --help' describes one command.\n"
         "Exit status: 0 success, 1 invalid program or data, 2 usage error.\n";
}

}  // namespace
}  // namespace tenact::cli

int main(int argc, char** argv) {
  using namespace tenact::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_overview(std::cerr);
    return kUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_overview(std::cout);
    return kOk;
  }
  for (const auto& c : commands()) {
    if (args[0] != c.name) continue;
    std::vector<std::string> rest(args.begin() + 1, args.end());
    for (const auto& a : rest) {
      if (a == "--help" || a == "-h") {
        std::cout << c.help;
        return kOk;
      }
    }
    // The last boundary: what a command did not turn into an error itself
    // (out of memory, no thread) is reported and exits 1, never an abort.
    try {
      return c.run(rest, std::cout, std::cerr);
    } catch (...) {
      std::cerr << "tenact " << c.name << ": "
                << tenact::error_from_exception("running the command", std::current_exception()).to_string() << "\n";
      return kInvalid;
    }
  }
  std::cerr << "tenact: unknown command '" << args[0] << "'\nTry 'tenact --help'.\n";
  return kUsage;
}
