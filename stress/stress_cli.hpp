// `tenact stress`: parses its command line, runs the harness
// (stress_run.hpp) and prints progress and the report. It lives here, not
// in tools/, so that the sanitizer builds (which leave the tenact command
// out) run exactly the same command through stress_runner.
//
// Threading: call from a thread of the caller's own; it blocks until the
// stress run is over.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tenact::stress {

/// The full text of `tenact stress --help`.
std::string_view stress_help();

/// Runs `tenact stress ARGS` (ARGS without the command's name). Exit
/// status: 0 the run passed, 1 it did not (a wrong, hung or lost job, an
/// unexplained error, a leak) or could not start, 2 a usage error.
int stress_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tenact::stress
