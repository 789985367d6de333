// `tenact stress` as a program of its own, for builds without the tenact
// command (the sanitizer variants): stress_runner ARGS is tenact stress ARGS.
#include <iostream>
#include <string>
#include <vector>

#include "stress/stress_cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return tenact::stress::stress_command(args, std::cout, std::cerr);
}
