// The tenact command's small shared pieces: commands, exit codes, argument
// scanning. Each command lives in its own file and is a thin layer over the
// libraries (no logic lives only in the tool).
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tenact::cli {

/// Exit statuses of every command.
enum ExitCode : int { kOk = 0, kInvalid = 1, kUsage = 2 };

struct Command {
  std::string_view name;
  std::string_view summary;  // one line for `tenact --help`
  std::string_view help;     // the full text of `tenact NAME --help`
  int (*run)(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
};

/// All commands, in the order `tenact --help` lists them.
const std::vector<Command>& commands();

int run_check(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_inspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_run_op(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// Prints "tenact NAME: MESSAGE\nTry 'tenact NAME --help'." and returns kUsage.
int usage_error(std::string_view command, std::string_view message, std::ostream& err);

}  // namespace tenact::cli
