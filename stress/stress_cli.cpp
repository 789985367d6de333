#include "stress/stress_cli.hpp"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include "core/program_json.hpp"
#include "stress/stress_run.hpp"

namespace tenact::stress {

namespace {

constexpr std::string_view kHelp =
    "Usage: tenact stress [--engines LIST] [--platform FILE] [--seed S] [--jobs N]\n"
    "                     [--threads T] [--window W] [--faults SPEC] [--duration SEC]\n"
    "                     [--json REPORT] [--programs P] [--max-ops K] [--max-n N]\n"
    "                     [--retryable] [--failures DIR] [--job I [--print-program]]\n"
    "                     [--no-float-dots] [--plant-wrong I] [--quiet]\n\n"
    "Submits N seeded random jobs from T client threads to one runtime over the\n"
    "engines of LIST and checks every answer against the CPU engine computing the\n"
    "same program: bit for bit where the program format fixes the result, within\n"
    "the spec's ulps after transcendental ops. A job is a function of (S, its\n"
    "index): its program (one of P per seed, 3 to K ops of every family over one\n"
    "of the format's types, inputs of symbolic shape [N, N] under guards), N and\n"
    "its inputs (NaN, infinities, -0, subnormals, the type's extremes).\n\n"
    "  --engines LIST   as for tenact run (default: sim:0,sim:1,sim:2,sim:3)\n"
    "  --platform FILE  the simulated machine (docs/platform-format.md)\n"
    "  --seed S         the job seed, 0 or more (default 1)\n"
    "  --jobs N         jobs to run (default 1000)\n"
    "  --threads T      client threads (default 4), each with W jobs in flight\n"
    "  --window W       jobs in flight per client (default 8)\n"
    "  --faults SPEC    seeded faults of the simulated devices, as for tenact run\n"
    "  --duration SEC   stop starting jobs after SEC seconds (the report counts\n"
    "                   the jobs that ran)\n"
    "  --json REPORT    also write the report as JSON to REPORT\n"
    "  --programs P     distinct programs per seed (default 32)\n"
    "  --max-ops K      ops per program at most, 3 to 400 (default 40)\n"
    "  --max-n N        the largest N a job draws, 1 to 64 (default 24)\n"
    "  --retryable      runs are marked retryable: a run that fails because a\n"
    "                   device died is placed again on the devices left\n"
    "  --failures DIR   write each wrong job's program, inputs (.npy) and replay\n"
    "                   command to DIR/job-INDEX/\n"
    "  --job I          run job I only (what a failure's replay command does)\n"
    "  --print-program  with --job: print the job's program, N and input types\n"
    "  --no-float-dots  no dot_general on floating or complex types (for runs\n"
    "                   under ThreadSanitizer, which cannot see into OpenBLAS)\n"
    "  --plant-wrong I  the harness's self-check: job I's expected result gets a\n"
    "                   bit flipped, so it must be reported wrong and written out\n"
    "  --quiet          no progress (a bar on a terminal, else a line every 10 s)\n\n"
    "The report: jobs, correct, wrong, failed as injected (errors the faults\n"
    "explain), unexplained errors, hung (no answer within 2 minutes), lost (never\n"
    "answered), errors by code, retries, re-placements, runs and utilisation per\n"
    "device, virtual makespan, wall time, latency, the prepare cache; then each\n"
    "failure with the command that replays it.\n"
    "Exit status: 0 passed, 1 a wrong, hung or lost job, an unexplained error or\n"
    "leaked engine memory (or the run could not start), 2 usage error.\n";

int usage(std::string_view message, std::ostream& err) {
  err << "tenact stress: " << message << "\nTry 'tenact stress --help'.\n";
  return 2;
}

std::optional<uint64_t> parse_u64(const std::string& text, uint64_t min, uint64_t max) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty() || v < min || v > max) return std::nullopt;
  return v;
}

struct StressArgs {
  StressOptions options;
  std::string engines = "sim:0,sim:1,sim:2,sim:3";
  std::string platform;
  std::string faults;
  std::string json;
  bool print_program = false;
  bool quiet = false;
};

// nullopt after printing a usage error into `status`.
std::optional<StressArgs> parse(const std::vector<std::string>& args, std::ostream& err, int& status) {
  StressArgs a;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    auto value = [&]() -> const std::string* {
      if (i + 1 >= args.size()) {
        status = usage(flag + " needs a value", err);
        return nullptr;
      }
      return &args[++i];
    };
    auto count = [&](uint64_t min, uint64_t max) -> std::optional<uint64_t> {
      const std::string* v = value();
      if (!v) return std::nullopt;
      auto n = parse_u64(*v, min, max);
      if (!n)
        status = usage(flag + " expects a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
                           ", got '" + *v + "'",
                       err);
      return n;
    };
    std::optional<uint64_t> n;
    if (flag == "--engines" || flag == "--platform" || flag == "--faults" || flag == "--json" || flag == "--failures") {
      const std::string* v = value();
      if (!v) return std::nullopt;
      if (flag == "--engines") a.engines = *v;
      else if (flag == "--platform") a.platform = *v;
      else if (flag == "--faults") a.faults = *v;
      else if (flag == "--json") a.json = *v;
      else a.options.failures_dir = *v;
    } else if (flag == "--seed") {
      if (!(n = count(0, UINT64_MAX))) return std::nullopt;
      a.options.seed = *n;
    } else if (flag == "--jobs") {
      if (!(n = count(1, 1000000000))) return std::nullopt;
      a.options.jobs = *n;
    } else if (flag == "--threads") {
      if (!(n = count(1, 256))) return std::nullopt;
      a.options.clients = static_cast<uint32_t>(*n);
    } else if (flag == "--window") {
      if (!(n = count(1, 4096))) return std::nullopt;
      a.options.window = static_cast<uint32_t>(*n);
    } else if (flag == "--duration") {
      if (!(n = count(1, 86400))) return std::nullopt;
      a.options.duration = std::chrono::seconds(*n);
    } else if (flag == "--programs") {
      if (!(n = count(1, 1000000))) return std::nullopt;
      a.options.generator.programs = static_cast<uint32_t>(*n);
    } else if (flag == "--max-ops") {
      if (!(n = count(3, 400))) return std::nullopt;
      a.options.generator.max_ops = static_cast<uint32_t>(*n);
    } else if (flag == "--max-n") {
      if (!(n = count(1, 64))) return std::nullopt;
      a.options.generator.max_n = static_cast<uint32_t>(*n);
    } else if (flag == "--job") {
      if (!(n = count(0, UINT64_MAX - 1))) return std::nullopt;
      a.options.only_job = *n;
    } else if (flag == "--plant-wrong") {
      if (!(n = count(0, UINT64_MAX - 1))) return std::nullopt;
      a.options.plant_wrong_job = *n;
    } else if (flag == "--no-float-dots") {
      a.options.generator.float_dots = false;
    } else if (flag == "--retryable") {
      a.options.prepare.retryable = true;
    } else if (flag == "--print-program") {
      a.print_program = true;
    } else if (flag == "--quiet") {
      a.quiet = true;
    } else {
      status = usage(flag.starts_with("-") ? "unknown option '" + flag + "'" : "unexpected argument '" + flag + "'", err);
      return std::nullopt;
    }
  }
  if (a.print_program && !a.options.only_job) {
    status = usage("--print-program needs --job I", err);
    return std::nullopt;
  }
  auto engines = setup::parse_engine_list(a.engines);
  if (!engines.ok()) {
    status = usage("--engines: " + engines.error().message(), err);
    return std::nullopt;
  }
  a.options.engines = std::move(*engines);
  if (!a.faults.empty()) {
    auto spec = sim::parse_fault_spec(a.faults);
    if (!spec.ok()) {
      status = usage("--faults: " + spec.error().message(), err);
      return std::nullopt;
    }
    a.options.engine_options.faults = std::move(*spec);
  }
  return a;
}

// A shell word: quoted unless it is plain.
std::string shell_word(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-.,:/=@*").find(c) != std::string_view::npos))
      plain = false;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string replay_command(const StressArgs& a) {
  const auto& o = a.options;
  std::string c = "tenact stress --engines " + shell_word(a.engines);
  if (!a.platform.empty()) c += " --platform " + shell_word(a.platform);
  if (!a.faults.empty()) c += " --faults " + shell_word(a.faults);
  c += " --seed " + std::to_string(o.seed) + " --programs " + std::to_string(o.generator.programs) + " --max-ops " +
       std::to_string(o.generator.max_ops) + " --max-n " + std::to_string(o.generator.max_n);
  if (o.prepare.retryable) c += " --retryable";
  if (!o.generator.float_dots) c += " --no-float-dots";
  return c;
}

}  // namespace

std::string_view stress_help() { return kHelp; }

int stress_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      out << kHelp;
      return 0;
    }
  int status = 0;
  auto parsed = parse(args, err, status);
  if (!parsed) return status;
  StressOptions& o = parsed->options;
  if (!parsed->platform.empty()) {
    auto platform = sim::load_platform(parsed->platform);
    if (!platform.ok()) {
      err << "tenact stress: " << platform.error().to_string() << "\n";
      return 1;
    }
    o.engine_options.platform = std::move(*platform);
  }
  if (parsed->print_program) {
    auto job = generate_job(o.seed, *o.only_job, o.generator);
    if (!job.ok()) {
      err << "tenact stress: " << job.error().to_string() << "\n";
      return 1;
    }
    out << job->program_json << "\n# job " << *o.only_job << ": program " << job->program_index << ", N = " << job->n
        << ", M = " << job->m << ", " << job->inputs.size() << " inputs\n";
    return 0;
  }
  o.replay_command = replay_command(*parsed);
  if (o.only_job) o.clients = 1, o.window = 1;
  const bool tty = isatty(STDOUT_FILENO) == 1;
  double last_line = 0;
  if (!parsed->quiet)
    o.progress = [&](const StressProgress& p) {
      if (tty) {
        const double share = p.planned ? static_cast<double>(p.done) / static_cast<double>(p.planned) : 0;
        const int filled = static_cast<int>(std::lround(share * 30));
        out << "\r[" << std::string(static_cast<size_t>(filled), '#') << std::string(static_cast<size_t>(30 - filled), ' ')
            << "] " << p.done << (p.planned ? "/" + std::to_string(p.planned) : std::string()) << " jobs, " << p.wrong
            << " wrong, " << p.errors << " errors, " << static_cast<int>(p.seconds) << " s" << std::flush;
      } else if (p.seconds - last_line >= 10) {
        last_line = p.seconds;
        out << "progress: " << p.done << (p.planned ? " of " + std::to_string(p.planned) : std::string()) << " jobs, "
            << p.wrong << " wrong, " << p.errors << " errors, " << static_cast<int>(p.seconds) << " s\n"
            << std::flush;
      }
    };
  StressReport report = run_stress(o);
  if (tty && !parsed->quiet) out << "\r" << std::string(72, ' ') << "\r";
  out << report_text(report);
  if (!parsed->json.empty()) {
    std::ofstream f(parsed->json, std::ios::binary | std::ios::trunc);
    f << report_json(report);
    if (!f) {
      err << "tenact stress: cannot write the report to '" << parsed->json << "'\n";
      return 1;
    }
  }
  return report.passed() ? 0 : 1;
}

}  // namespace tenact::stress
