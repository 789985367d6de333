// The simulated platform: defaults, the platform-file reader and the checks
// a platform must pass (docs/platform-format.md).
//
// Contract: no nlohmann exception escapes; every failure is a tenact::Error
// whose message starts "platform: " and names the path of the offending
// field ("devices[1].streams"). parse_platform reads the document field by
// field (Schema for a missing, unknown or mistyped field, InvalidAttribute
// for a value out of range), then runs the same whole-platform checks as
// validate_platform (ids, uniqueness, link endpoints). The range checks are
// one set of functions shared by both, so a file and a platform built in
// code get the same message for the same mistake.
#include "engines/sim/sim_platform.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <map>
#include <new>
#include <set>
#include <utility>

#include "core/checked.hpp"
#include "core/json_internal.hpp"
#include "core/tensor_io.hpp"

namespace tenact::sim {

using json_io::Json;

namespace {

constexpr std::string_view kFormat = "tenact.platform/1";
constexpr std::string_view kHost = "host";
constexpr std::string_view kIdPrefix = "sim:";
/// Platform files above this size are refused before parsing.
constexpr uint64_t kMaxPlatformBytes = uint64_t{1} << 20;
constexpr uint32_t kMaxDevices = 64;
/// Largest device number in an id ("sim:65535").
constexpr uint64_t kMaxDeviceNumber = 65535;
constexpr double kMaxJitter = 0.5;
/// Peer links of default_platform move this many times a host link's bytes.
constexpr double kDefaultPeerSpeedup = 4.0;

/// An inclusive range an unsigned field must lie in.
struct UIntRange {
  uint64_t min;
  uint64_t max;
};
constexpr UIntRange kMemoryBytesRange{1, uint64_t{1} << 50};  // 1 PiB
constexpr UIntRange kStreamsRange{1, 64};
constexpr UIntRange kHostThreadsRange{0, 64};
/// Latencies up to 1000 s: sums of many stay far from overflowing.
constexpr UIntRange kLatencyRange{0, 1'000'000'000'000};
constexpr UIntRange kSeedRange{0, UINT64_MAX};

// -- messages -------------------------------------------------------------------

/// "platform: <path>: <what>" (no path segment for the document itself).
std::string message(std::string_view path, std::string_view what) {
  std::string out = "platform: ";
  if (!path.empty()) out.append(path).append(": ");
  out.append(what);
  return out;
}
Error schema(std::string_view path, std::string_view what) {
  return Error{ErrorCode::Schema, message(path, what)};
}
Error invalid(std::string_view path, std::string_view what) {
  return Error{ErrorCode::InvalidAttribute, message(path, what)};
}

/// `base.key`, or `key` at the top level.
std::string member_path(std::string_view base, std::string_view key) {
  std::string out(base);
  if (!out.empty()) out += '.';
  out.append(key);
  return out;
}
std::string element_path(std::string_view base, size_t index) {
  return std::string(base) + "[" + std::to_string(index) + "]";
}

/// Shortest text that reads back as `v` ("1e+23", "0.25").
std::string format_double(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc{}) return "?";
  return std::string(buf, end);
}
/// A JSON number as written in messages; other values by their type.
std::string describe(const Json& j) {
  if (j.is_number_unsigned()) return std::to_string(j.get<uint64_t>());
  if (j.is_number_integer()) return std::to_string(j.get<int64_t>());
  if (j.is_number_float()) return format_double(j.get<double>());
  return json_io::json_type_name(j);
}
/// A user-written string, cut so a hostile one cannot flood a message.
std::string excerpt(std::string_view s) {
  constexpr size_t kMax = 64;
  if (s.size() <= kMax) return "'" + std::string(s) + "'";
  return "'" + std::string(s.substr(0, kMax)) + "...'";
}

std::string uint_expectation(UIntRange range) {
  return "expected an integer from " + std::to_string(range.min) + " to " + std::to_string(range.max);
}
constexpr std::string_view kPositiveExpectation = "expected a positive finite number";
std::string jitter_expectation() { return "expected a number from 0 to " + format_double(kMaxJitter); }
std::string id_expectation() {
  return "expected \"sim:\" followed by a decimal number from 0 to " + std::to_string(kMaxDeviceNumber);
}

// -- value checks (shared by the reader and validate_platform) ------------------

Status check_uint(uint64_t v, UIntRange range, std::string_view path) {
  if (v < range.min || v > range.max) return invalid(path, uint_expectation(range) + ", got " + std::to_string(v));
  return ok_status();
}
Status check_positive(double v, std::string_view path) {
  if (!(std::isfinite(v) && v > 0)) return invalid(path, std::string(kPositiveExpectation) + ", got " + format_double(v));
  return ok_status();
}
Status check_jitter(double v, std::string_view path) {
  if (!(v >= 0 && v <= kMaxJitter)) return invalid(path, jitter_expectation() + ", got " + format_double(v));
  return ok_status();
}

/// True for "sim:N", N decimal without leading zeros and at most
/// kMaxDeviceNumber (one spelling per device, so ids compare as numbers).
bool well_formed_id(std::string_view id) {
  if (id.size() <= kIdPrefix.size() || id.substr(0, kIdPrefix.size()) != kIdPrefix) return false;
  const std::string_view digits = id.substr(kIdPrefix.size());
  if (digits.size() > 1 && digits.front() == '0') return false;
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return ec == std::errc{} && end == digits.data() + digits.size() && n <= kMaxDeviceNumber;
}
Status check_id(std::string_view id, std::string_view path) {
  if (!well_formed_id(id)) return invalid(path, id_expectation() + ", got " + excerpt(id));
  return ok_status();
}

Status check_rates(const SimRates& r, const std::string& path) {
  const std::pair<std::string_view, double> rates[] = {
      {"f16", r.f16}, {"f32", r.f32}, {"f64", r.f64}, {"integer", r.integer},
      {"complex64", r.complex64}, {"complex128", r.complex128}};
  for (const auto& [name, value] : rates) TENACT_TRY(check_positive(value, member_path(path, name)));
  return ok_status();
}

/// Every per-device range; the id's spelling, not its uniqueness.
Status check_device(const SimDeviceSpec& d, const std::string& path) {
  TENACT_TRY(check_id(d.id, member_path(path, "id")));
  TENACT_TRY(check_uint(d.memory_bytes, kMemoryBytesRange, member_path(path, "memory_bytes")));
  TENACT_TRY(check_uint(d.streams, kStreamsRange, member_path(path, "streams")));
  TENACT_TRY(check_uint(d.host_threads, kHostThreadsRange, member_path(path, "host_threads")));
  TENACT_TRY(check_positive(d.memory_bandwidth, member_path(path, "memory_bandwidth")));
  TENACT_TRY(check_uint(d.launch_latency_ns, kLatencyRange, member_path(path, "launch_latency_ns")));
  return check_rates(d.rates, member_path(path, "rates"));
}

Status check_devices(const std::vector<SimDeviceSpec>& devices) {
  if (devices.empty() || devices.size() > kMaxDevices)
    return invalid("devices", "expected 1 to " + std::to_string(kMaxDevices) + " devices, got " +
                                  std::to_string(devices.size()));
  std::map<std::string_view, size_t> first_index;
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string path = element_path("devices", i);
    TENACT_TRY(check_device(devices[i], path));
    auto [it, inserted] = first_index.emplace(devices[i].id, i);
    if (!inserted)
      return invalid(member_path(path, "id"), "duplicate device id " + excerpt(devices[i].id) +
                                                  " (also devices[" + std::to_string(it->second) + "])");
  }
  return ok_status();
}

/// Checks the links against `devices` (already checked). `link_path(i)`
/// names link i in messages: a file's reader maps the links a
/// "bidirectional" entry expanded to back to that entry.
template <class LinkPath>
Status check_links(const SimPlatform& p, const LinkPath& link_path) {
  std::set<std::string_view> endpoints{kHost};
  for (const auto& d : p.devices) endpoints.insert(d.id);
  std::map<std::pair<std::string_view, std::string_view>, size_t> first_index;
  for (size_t i = 0; i < p.links.size(); ++i) {
    const SimLinkSpec& l = p.links[i];
    const std::string path = link_path(i);
    for (const auto& [key, end] : {std::pair{"from", &l.from}, std::pair{"to", &l.to}})
      if (!endpoints.count(*end))
        return invalid(member_path(path, key), "unknown endpoint " + excerpt(*end) +
                                                   " (expected \"host\" or a device id of this platform)");
    if (l.from == l.to) return invalid(path, "a link from " + excerpt(l.from) + " to itself");
    TENACT_TRY(check_positive(l.bandwidth, member_path(path, "bandwidth")));
    TENACT_TRY(check_uint(l.latency_ns, kLatencyRange, member_path(path, "latency_ns")));
    auto [it, inserted] = first_index.emplace(std::pair{std::string_view(l.from), std::string_view(l.to)}, i);
    if (!inserted)
      return invalid(path, "duplicate link " + l.from + " -> " + l.to + " (also " + link_path(it->second) + ")");
  }
  return ok_status();
}

template <class LinkPath>
Status check_platform(const SimPlatform& p, const LinkPath& link_path) {
  if (p.name.empty()) return invalid("name", "expected a non-empty string");
  TENACT_TRY(check_jitter(p.jitter, "jitter"));
  TENACT_TRY(check_devices(p.devices));
  for (size_t i = 0; i < p.faults.devices.size(); ++i)
    if (p.device(p.faults.devices[i].device) == nullptr)
      return invalid("faults", "device '" + p.faults.devices[i].device + "' is not a device of the platform");
  return check_links(p, link_path);
}

// -- JSON readers: type checks (Schema), then the value checks above ------------

/// Schema error unless `j` is an object whose keys are all in `allowed`.
Status expect_object(const Json& j, std::string_view path, std::initializer_list<std::string_view> allowed) {
  if (!j.is_object()) return schema(path, "expected an object, got " + json_io::json_type_name(j));
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (std::string_view key : allowed) known = known || it.key() == key;
    if (known) continue;
    std::string list;
    for (std::string_view key : allowed) list.append(list.empty() ? "" : ", ").append(key);
    return schema(path, "unknown key " + excerpt(it.key()) + " (expected one of: " + list + ")");
  }
  return ok_status();
}

/// The member `key` of object `obj`, or null when absent.
const Json* find(const Json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

/// An integer in `range`. A number with an integral value counts as an
/// integer (1e9, and 1e23, which then fails the range); Schema for
/// anything else.
Result<uint64_t> read_uint(const Json& j, UIntRange range, const std::string& path) {
  const auto out_of_range = [&] { return invalid(path, uint_expectation(range) + ", got " + describe(j)); };
  if (j.is_number_unsigned()) {
    const uint64_t v = j.get<uint64_t>();
    TENACT_TRY(check_uint(v, range, path));
    return v;
  }
  if (j.is_number_integer()) return out_of_range();  // negative: unsigned ones are handled above
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (std::floor(v) != v) return schema(path, uint_expectation(range) + ", got " + describe(j));
    // 0x1p64: the first double past UINT64_MAX (which rounds up to it).
    if (!(v >= static_cast<double>(range.min) && v <= static_cast<double>(range.max) && v < 0x1p64))
      return out_of_range();
    const auto u = static_cast<uint64_t>(v);
    TENACT_TRY(check_uint(u, range, path));
    return u;
  }
  return schema(path, uint_expectation(range) + ", got " + json_io::json_type_name(j));
}

Result<uint32_t> read_uint32(const Json& j, UIntRange range, const std::string& path) {
  TENACT_ASSIGN_OR_RETURN(uint64_t v, read_uint(j, range, path));
  return static_cast<uint32_t>(v);  // every 32-bit field's range is below 2^32
}

Result<double> read_positive(const Json& j, const std::string& path) {
  if (!j.is_number()) return schema(path, std::string(kPositiveExpectation) + ", got " + json_io::json_type_name(j));
  const double v = j.get<double>();
  TENACT_TRY(check_positive(v, path));
  return v;
}

Result<std::string> read_string(const Json& j, const std::string& path, std::string_view expectation) {
  if (!j.is_string()) return schema(path, std::string(expectation) + ", got " + json_io::json_type_name(j));
  return j.get<std::string>();
}

/// Reads member `key` of `obj`, when present, into `out` with `read`
/// (read(json, path) -> Result<T>); absent keeps `out`'s default.
template <class T, class Read>
Status read_optional(const Json& obj, std::string_view key, const std::string& base, T& out, Read read) {
  const Json* j = find(obj, key);
  if (!j) return ok_status();
  TENACT_ASSIGN_OR_RETURN(out, read(*j, member_path(base, key)));
  return ok_status();
}

auto uint_reader(UIntRange range) {
  return [range](const Json& j, const std::string& path) { return read_uint(j, range, path); };
}
auto uint32_reader(UIntRange range) {
  return [range](const Json& j, const std::string& path) { return read_uint32(j, range, path); };
}
constexpr auto positive_reader = [](const Json& j, const std::string& path) { return read_positive(j, path); };

/// "16GiB", "64 MiB", "512MB", "4096B": a whole number and a binary (KiB
/// .. PiB) or decimal (kB .. PB) unit, in kMemoryBytesRange.
Result<uint64_t> parse_memory_size(std::string_view text, const std::string& path) {
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
      {"B", 1},           {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
      {"TiB", 1ull << 40}, {"PiB", 1ull << 50}, {"kB", 1000},        {"KB", 1000},
      {"MB", 1000'000},    {"GB", 1000'000'000}, {"TB", 1000'000'000'000}, {"PB", 1000'000'000'000'000}};
  const auto fail = [&] {
    return invalid(path, "expected a size like \"16GiB\" or \"512MB\" from 1 B to 1 PiB, got " + excerpt(text));
  };
  uint64_t count = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (ec != std::errc{} || end == text.data()) return fail();
  std::string_view unit = text.substr(static_cast<size_t>(end - text.data()));
  if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    auto bytes = checked_mul_u(count, scale);
    if (!bytes || *bytes < kMemoryBytesRange.min || *bytes > kMemoryBytesRange.max) return fail();
    return *bytes;
  }
  return fail();
}

/// "memory_bytes" (an integer) or "memory" (a size string), not both.
Status read_memory(const Json& j, const std::string& path, uint64_t& out) {
  const Json* bytes = find(j, "memory_bytes");
  const Json* text = find(j, "memory");
  if (bytes && text) return schema(path, "give one of 'memory_bytes' and 'memory', not both");
  if (bytes) {
    TENACT_ASSIGN_OR_RETURN(out, read_uint(*bytes, kMemoryBytesRange, member_path(path, "memory_bytes")));
  } else if (text) {
    const std::string at = member_path(path, "memory");
    TENACT_ASSIGN_OR_RETURN(std::string s, read_string(*text, at, "expected a size string like \"16GiB\""));
    TENACT_ASSIGN_OR_RETURN(out, parse_memory_size(s, at));
  }
  return ok_status();
}

Result<SimRates> read_rates(const Json& j, const std::string& path) {
  TENACT_TRY(expect_object(j, path, {"f16", "f32", "f64", "integer", "complex64", "complex128"}));
  SimRates r;
  TENACT_TRY(read_optional(j, "f16", path, r.f16, positive_reader));
  TENACT_TRY(read_optional(j, "f32", path, r.f32, positive_reader));
  TENACT_TRY(read_optional(j, "f64", path, r.f64, positive_reader));
  TENACT_TRY(read_optional(j, "integer", path, r.integer, positive_reader));
  TENACT_TRY(read_optional(j, "complex64", path, r.complex64, positive_reader));
  TENACT_TRY(read_optional(j, "complex128", path, r.complex128, positive_reader));
  return r;
}

/// "lacks": op names of the format ("dot_general"), each once.
Result<std::vector<OpKind>> read_op_kinds(const Json& j, const std::string& path) {
  if (!j.is_array()) return schema(path, "expected an array of op names, got " + json_io::json_type_name(j));
  std::vector<OpKind> kinds;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = element_path(path, i);
    TENACT_ASSIGN_OR_RETURN(std::string name, read_string(j[i], at, "expected an op name like \"dot_general\""));
    const std::optional<OpKind> kind = parse_op_kind(name);
    if (!kind) return invalid(at, "'" + name + "' is not an op of the program format");
    if (std::find(kinds.begin(), kinds.end(), *kind) != kinds.end())
      return invalid(at, "'" + name + "' is listed twice");
    kinds.push_back(*kind);
  }
  return kinds;
}

Result<SimDeviceSpec> read_device(const Json& j, const std::string& path) {
  TENACT_TRY(expect_object(j, path, {"id", "memory_bytes", "memory", "streams", "host_threads",
                                     "memory_bandwidth", "launch_latency_ns", "rates", "lacks"}));
  SimDeviceSpec d;
  const Json* id = find(j, "id");
  if (!id) return schema(path, "missing 'id'");
  const std::string id_path = member_path(path, "id");
  TENACT_ASSIGN_OR_RETURN(d.id, read_string(*id, id_path, id_expectation()));
  TENACT_TRY(check_id(d.id, id_path));
  TENACT_TRY(read_memory(j, path, d.memory_bytes));
  TENACT_TRY(read_optional(j, "streams", path, d.streams, uint32_reader(kStreamsRange)));
  TENACT_TRY(read_optional(j, "host_threads", path, d.host_threads, uint32_reader(kHostThreadsRange)));
  TENACT_TRY(read_optional(j, "memory_bandwidth", path, d.memory_bandwidth, positive_reader));
  TENACT_TRY(read_optional(j, "launch_latency_ns", path, d.launch_latency_ns, uint_reader(kLatencyRange)));
  TENACT_TRY(read_optional(j, "rates", path, d.rates, read_rates));
  TENACT_TRY(read_optional(j, "lacks", path, d.lacks, read_op_kinds));
  return d;
}

Result<std::string> read_endpoint(const Json& link, std::string_view key, const std::string& path) {
  const Json* j = find(link, key);
  if (!j) return schema(path, "missing '" + std::string(key) + "'");
  return read_string(*j, member_path(path, key), "expected \"host\" or a device id");
}

/// One entry of "links": the link, and whether its reverse is wanted too.
Result<std::pair<SimLinkSpec, bool>> read_link(const Json& j, const std::string& path) {
  TENACT_TRY(expect_object(j, path, {"from", "to", "bandwidth", "latency_ns", "bidirectional"}));
  SimLinkSpec l;
  TENACT_ASSIGN_OR_RETURN(l.from, read_endpoint(j, "from", path));
  TENACT_ASSIGN_OR_RETURN(l.to, read_endpoint(j, "to", path));
  TENACT_TRY(read_optional(j, "bandwidth", path, l.bandwidth, positive_reader));
  TENACT_TRY(read_optional(j, "latency_ns", path, l.latency_ns, uint_reader(kLatencyRange)));
  bool bidirectional = false;
  if (const Json* b = find(j, "bidirectional")) {
    if (!b->is_boolean())
      return schema(member_path(path, "bidirectional"), "expected a bool, got " + json_io::json_type_name(*b));
    bidirectional = b->get<bool>();
  }
  return std::pair{std::move(l), bidirectional};
}

Status read_devices(const Json& doc, SimPlatform& p) {
  const Json* devices = find(doc, "devices");
  if (!devices) return schema("", "missing 'devices'");
  if (!devices->is_array()) return schema("devices", "expected an array, got " + json_io::json_type_name(*devices));
  if (devices->empty() || devices->size() > kMaxDevices)
    return invalid("devices", "expected 1 to " + std::to_string(kMaxDevices) + " devices, got " +
                                  std::to_string(devices->size()));
  for (size_t i = 0; i < devices->size(); ++i) {
    TENACT_ASSIGN_OR_RETURN(SimDeviceSpec d, read_device((*devices)[i], element_path("devices", i)));
    p.devices.push_back(std::move(d));
  }
  return ok_status();
}

/// Appends the file's links to `p.links` and, for each, the path that
/// names it in messages. Absent "links": each device gets a host link each
/// way with SimLinkSpec's defaults.
Status read_links(const Json& doc, SimPlatform& p, std::vector<std::string>& paths) {
  const Json* links = find(doc, "links");
  if (!links) {
    for (const auto& d : p.devices) {
      p.links.push_back(SimLinkSpec{std::string(kHost), d.id});
      paths.push_back("the default link host -> " + d.id);
      p.links.push_back(SimLinkSpec{d.id, std::string(kHost)});
      paths.push_back("the default link " + d.id + " -> host");
    }
    return ok_status();
  }
  if (!links->is_array()) return schema("links", "expected an array, got " + json_io::json_type_name(*links));
  for (size_t i = 0; i < links->size(); ++i) {
    const std::string path = element_path("links", i);
    TENACT_ASSIGN_OR_RETURN(auto entry, read_link((*links)[i], path));
    const auto& [link, bidirectional] = entry;
    p.links.push_back(link);
    paths.push_back(path);
    if (!bidirectional) continue;
    p.links.push_back(SimLinkSpec{link.to, link.from, link.bandwidth, link.latency_ns});
    paths.push_back(path + " (reverse direction)");
  }
  return ok_status();
}

Status read_header(const Json& doc, SimPlatform& p) {
  const Json* format = find(doc, "format");
  if (!format) return schema("", "missing 'format' (expected \"" + std::string(kFormat) + "\")");
  if (!format->is_string() || format->get<std::string>() != kFormat)
    return schema("format", "expected \"" + std::string(kFormat) + "\", got " +
                                (format->is_string() ? excerpt(format->get<std::string>())
                                                     : json_io::json_type_name(*format)));
  if (const Json* name = find(doc, "name")) {
    TENACT_ASSIGN_OR_RETURN(p.name, read_string(*name, "name", "expected a non-empty string"));
    if (p.name.empty()) return invalid("name", "expected a non-empty string");
  }
  TENACT_TRY(read_optional(doc, "seed", "", p.seed, uint_reader(kSeedRange)));
  if (const Json* jitter = find(doc, "jitter")) {
    if (!jitter->is_number()) return schema("jitter", jitter_expectation() + ", got " + json_io::json_type_name(*jitter));
    p.jitter = jitter->get<double>();
    TENACT_TRY(check_jitter(p.jitter, "jitter"));
  }
  return ok_status();
}

/// "faults": the flag form of sim_faults.hpp, as a string.
Status read_faults(const Json& doc, SimPlatform& p) {
  const Json* faults = find(doc, "faults");
  if (!faults) return ok_status();
  if (!faults->is_string())
    return schema("faults", "expected a string in the --faults form (\"seed=7,transient=0.01\"), got " +
                                json_io::json_type_name(*faults));
  auto spec = parse_fault_spec(faults->get<std::string>());
  if (!spec.ok()) return invalid("faults", spec.error().message());
  p.faults = std::move(*spec);
  return ok_status();
}

Result<SimPlatform> read_platform(const Json& doc) {
  TENACT_TRY(expect_object(doc, "", {"format", "name", "seed", "jitter", "devices", "links", "faults"}));
  SimPlatform p;
  TENACT_TRY(read_header(doc, p));
  TENACT_TRY(read_devices(doc, p));
  TENACT_TRY(read_faults(doc, p));
  std::vector<std::string> link_paths;
  TENACT_TRY(read_links(doc, p, link_paths));
  TENACT_TRY(check_platform(p, [&](size_t i) { return link_paths[i]; }));
  return p;
}

}  // namespace

// -- public API -----------------------------------------------------------------

const SimDeviceSpec* SimPlatform::device(std::string_view id) const {
  for (const auto& d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

const SimLinkSpec* SimPlatform::link(std::string_view from, std::string_view to) const {
  for (const auto& l : links)
    if (l.from == from && l.to == to) return &l;
  return nullptr;
}

Result<SimPlatform> default_platform(uint32_t count) {
  if (count == 0 || count > kMaxDevices)
    return invalid("", "default_platform: expected 1 to " + std::to_string(kMaxDevices) + " devices, got " +
                           std::to_string(count));
  SimPlatform p;
  for (uint32_t i = 0; i < count; ++i) {
    SimDeviceSpec d;
    d.id = std::string(kIdPrefix) + std::to_string(i);
    p.devices.push_back(std::move(d));
  }
  for (const auto& d : p.devices) {
    p.links.push_back(SimLinkSpec{std::string(kHost), d.id});
    p.links.push_back(SimLinkSpec{d.id, std::string(kHost)});
  }
  const SimLinkSpec host_link;
  for (const auto& a : p.devices)
    for (const auto& b : p.devices)
      if (a.id != b.id)
        p.links.push_back(SimLinkSpec{a.id, b.id, host_link.bandwidth * kDefaultPeerSpeedup, host_link.latency_ns});
  return p;
}

Result<SimPlatform> parse_platform(std::string_view json_text) {
  try {
    TENACT_ASSIGN_OR_RETURN(Json doc, json_io::parse_json(json_text, "platform"));
    return read_platform(doc);
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::ResourceExhausted, message("", "out of memory while reading the platform")};
  } catch (const std::exception& e) {
    // The readers check every type before get<>(), so this is a bug; it
    // still must not leave as an exception.
    return Error{ErrorCode::Internal, message("", std::string("unexpected failure while reading: ") + e.what())};
  }
}

Result<SimPlatform> load_platform(const std::string& path) {
  TENACT_ASSIGN_OR_RETURN(std::string text, read_file(path, kMaxPlatformBytes));
  auto platform = parse_platform(text);
  if (!platform.ok()) return platform.error().with_context(path);
  return platform;
}

Status validate_platform(const SimPlatform& platform) {
  try {
    return check_platform(platform, [](size_t i) { return element_path("links", i); });
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::ResourceExhausted, message("", "out of memory while validating the platform")};
  } catch (const std::exception& e) {
    return Error{ErrorCode::Internal, message("", std::string("unexpected failure while validating: ") + e.what())};
  }
}

}  // namespace tenact::sim
