#include "engines/sim/sim_faults.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tenact::sim {

namespace {

Error bad(std::string_view item, std::string_view why) {
  return Error{ErrorCode::InvalidAttribute, "faults: '" + std::string{item} + "': " + std::string{why}};
}

std::optional<uint64_t> parse_u64(std::string_view text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// A finite decimal number (strtod over a copy: from_chars for double is
// not in this standard library).
std::optional<double> parse_number(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  const std::string copy{text};
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

Result<double> probability(std::string_view item, std::string_view value) {
  auto p = parse_number(value);
  if (!p || *p < 0 || *p > 1) return bad(item, "expected a probability from 0 to 1");
  return *p;
}

SimDeviceFault& fault_of(SimFaultSpec& spec, std::string_view device) {
  for (SimDeviceFault& d : spec.devices)
    if (d.device == device) return d;
  spec.devices.push_back(SimDeviceFault{std::string{device}, std::nullopt, std::nullopt, 1.0});
  return spec.devices.back();
}

bool is_device_id(std::string_view id) {
  if (id.size() < 5 || id.substr(0, 4) != "sim:") return false;
  const std::string_view digits = id.substr(4);
  return digits.size() <= 5 && (digits.size() == 1 || digits[0] != '0') &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

Status parse_item(SimFaultSpec& spec, std::string_view item) {
  const size_t eq = item.find('=');
  if (eq == std::string_view::npos) return bad(item, "expected KEY=VALUE");
  const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
  if (key == "seed") {
    auto v = parse_u64(value);
    if (!v) return bad(item, "expected a seed from 0 to 2^64 - 1");
    spec.seed = *v;
  } else if (key == "transient") {
    TENACT_ASSIGN_OR_RETURN(spec.transient, probability(item, value));
  } else if (key == "alloc") {
    TENACT_ASSIGN_OR_RETURN(spec.allocation, probability(item, value));
  } else if (key == "transfer") {
    TENACT_ASSIGN_OR_RETURN(spec.transfer, probability(item, value));
  } else if (key == "fail") {
    auto kind = parse_op_kind(value);
    if (!kind) return bad(item, "not an op of the program format");
    if (!spec.fails(*kind)) spec.fail_ops.push_back(*kind);
  } else if (key == "die") {
    const size_t at = value.find('@');
    if (at == std::string_view::npos || !is_device_id(value.substr(0, at)))
      return bad(item, "expected die=sim:N@COUNTops or die=sim:N@TIMEns");
    const std::string_view when = value.substr(at + 1);
    const bool ops = when.size() > 3 && when.substr(when.size() - 3) == "ops";
    const bool ns = !ops && when.size() > 2 && when.substr(when.size() - 2) == "ns";
    auto n = (ops || ns) ? parse_u64(when.substr(0, when.size() - (ops ? 3 : 2))) : std::nullopt;
    if (!n) return bad(item, "expected die=sim:N@COUNTops or die=sim:N@TIMEns");
    SimDeviceFault& d = fault_of(spec, value.substr(0, at));
    if (d.dies_after_ops || d.dies_at_ns) return bad(item, "the device dies once");
    (ops ? d.dies_after_ops : d.dies_at_ns) = *n;
  } else if (key == "slow") {
    const size_t star = value.find('*');
    if (star == std::string_view::npos || !is_device_id(value.substr(0, star)))
      return bad(item, "expected slow=sim:N*FACTOR");
    auto f = parse_number(value.substr(star + 1));
    if (!f || *f < 1 || *f > 1e6) return bad(item, "expected a slow factor from 1 to 1e6");
    SimDeviceFault& d = fault_of(spec, value.substr(0, star));
    if (d.slow != 1.0) return bad(item, "the device is slowed once");
    d.slow = *f;
  } else {
    return bad(item, "unknown key (seed, transient, fail, alloc, transfer, die, slow)");
  }
  return ok_status();
}

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

bool SimFaultSpec::any() const {
  return transient > 0 || !fail_ops.empty() || allocation > 0 || transfer > 0 || !devices.empty();
}

const SimDeviceFault* SimFaultSpec::device(std::string_view id) const {
  for (const SimDeviceFault& d : devices)
    if (d.device == id) return &d;
  return nullptr;
}

bool SimFaultSpec::fails(OpKind kind) const {
  return std::find(fail_ops.begin(), fail_ops.end(), kind) != fail_ops.end();
}

std::string SimFaultSpec::to_string() const {
  std::string out = "seed=" + std::to_string(seed);
  if (transient > 0) out += ",transient=" + number_text(transient);
  for (OpKind k : fail_ops) out += ",fail=" + std::string{tenact::to_string(k)};
  if (allocation > 0) out += ",alloc=" + number_text(allocation);
  if (transfer > 0) out += ",transfer=" + number_text(transfer);
  for (const SimDeviceFault& d : devices) {
    if (d.dies_after_ops) out += ",die=" + d.device + "@" + std::to_string(*d.dies_after_ops) + "ops";
    if (d.dies_at_ns) out += ",die=" + d.device + "@" + std::to_string(*d.dies_at_ns) + "ns";
    if (d.slow != 1.0) out += ",slow=" + d.device + "*" + number_text(d.slow);
  }
  return out;
}

Result<SimFaultSpec> parse_fault_spec(std::string_view text) {
  SimFaultSpec spec;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t comma = text.find(',', begin);
    const std::string_view item = text.substr(begin, comma == std::string_view::npos ? text.npos : comma - begin);
    if (item.empty()) return Error{ErrorCode::InvalidAttribute, "faults: an empty item in '" + std::string{text} + "'"};
    TENACT_TRY(parse_item(spec, item));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return spec;
}

double fault_unit(uint64_t seed, FaultDraw what, uint64_t a, uint64_t b, uint64_t c) {
  uint64_t h = splitmix(seed ^ (static_cast<uint64_t>(what) << 56));
  h = splitmix(h ^ a);
  h = splitmix(h ^ (b + 0x632be59bd9b4e019ull));
  h = splitmix(h ^ (c + 0x85157af5ull));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace tenact::sim
