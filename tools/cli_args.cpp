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

Parsed<ResolvedTensorSpec> parse_tensor_spec(const std::string& text) {
  const std::string form = "expected DTYPE[D0,D1,...] (e.g. f32[4,784] or i32[]), got '" + text + "'";
  const auto open = text.find('[');
  if (open == std::string::npos || text.empty() || text.back() != ']') return form;
  auto dtype = parse_dtype(text.substr(0, open));
  if (!dtype) return form + " (unknown dtype '" + text.substr(0, open) + "')";
  std::vector<uint64_t> dims;
  const std::string inner = text.substr(open + 1, text.size() - open - 2);
  size_t at = 0;
  while (at < inner.size()) {
    while (at < inner.size() && inner[at] == ' ') ++at;
    size_t end = at;
    while (end < inner.size() && inner[end] >= '0' && inner[end] <= '9') ++end;
    if (end == at || end - at > 18) return form;
    dims.push_back(std::stoull(inner.substr(at, end - at)));
    while (end < inner.size() && inner[end] == ' ') ++end;
    if (end < inner.size() && inner[end] != ',') return form;
    at = end + (end < inner.size() ? 1 : 0);
    if (end < inner.size() && at == inner.size()) return form;  // a trailing comma
  }
  auto spec = ResolvedTensorSpec::make(std::move(dims), *dtype, ResolvedTensorLayout::contiguous());
  if (!spec.ok()) return form + " (" + spec.error().message() + ")";
  return std::move(*spec);
}

std::optional<uint64_t> parse_count(const std::string& text, uint64_t max) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const uint64_t n = std::stoull(text);
  if (n == 0 || n > max) return std::nullopt;
  return n;
}

}  // namespace tenact::cli
