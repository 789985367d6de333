#include "tools/cli_args.hpp"

namespace tenact::cli {

Parsed<std::pair<std::string, std::string>> parse_name_value(const std::string& arg, const std::string& flag,
                                                             const std::string& value_word) {
  const std::string form = flag + " expects NAME=" + value_word + ", got '" + arg + "'";
  std::string name;
  size_t i = 0;
  for (; i < arg.size() && arg[i] != '='; ++i) {
    if (arg[i] != '\\') {
      name.push_back(arg[i]);
      continue;
    }
    if (i + 1 < arg.size() && (arg[i + 1] == '=' || arg[i + 1] == '\\')) {
      name.push_back(arg[++i]);
      continue;
    }
    return form + " (in NAME, '\\' starts '\\=' or '\\\\' only)";
  }
  if (i == arg.size() || name.empty() || i + 1 == arg.size()) return form;
  return std::make_pair(std::move(name), arg.substr(i + 1));
}

Parsed<EndpointArg> parse_endpoint_arg(const std::string& text, const std::string& default_storage) {
  const auto slash = text.find('/');
  EndpointArg e{text.substr(0, slash), slash == std::string::npos ? default_storage : text.substr(slash + 1)};
  if (e.engine.empty() || (slash != std::string::npos && e.storage_class.empty()) ||
      (slash != std::string::npos && text.find('/', slash + 1) != std::string::npos))
    return "expected ENGINE or ENGINE/STORAGE with both parts non-empty, got '" + text + "'";
  return e;
}

Parsed<PlacementPolicy> parse_policy_arg(const std::string& text) {
  if (auto policy = parse_placement_policy(text)) return *policy;
  return "--policy: expected auto, earliest_finish, preference or round_robin, got '" + text + "'";
}

std::optional<uint64_t> parse_count(const std::string& text, uint64_t max) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const uint64_t n = std::stoull(text);
  if (n == 0 || n > max) return std::nullopt;
  return n;
}

}  // namespace tenact::cli
