// The simulated-platform description: default_platform, the platform-file
// reader (docs/platform-format.md) and validate_platform.
#include "engines/sim/sim_platform.hpp"

#include "core/tensor_io.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

using tenact::DType;
using tenact::ErrorCode;
using tenact::sim::default_platform;
using tenact::sim::load_platform;
using tenact::sim::parse_platform;
using tenact::sim::SimDeviceSpec;
using tenact::sim::SimLinkSpec;
using tenact::sim::SimPlatform;
using tenact::sim::SimRates;
using tenact::sim::validate_platform;

const std::string kPlatformDir = std::string(TENACT_SOURCE_DIR) + "/examples/platforms/";

/// A platform document with `devices` and, unless empty, `rest` (more
/// top-level members, e.g. "\"links\": [...]") spliced in.
std::string doc(const std::string& devices, const std::string& rest = "") {
  return R"({"format": "tenact.platform/1", "devices": [)" + devices + "]" + (rest.empty() ? "" : ", " + rest) +
         "}";
}
const std::string kOneDevice = R"({"id": "sim:0"})";
const std::string kTwoDevices = R"({"id": "sim:0"}, {"id": "sim:1"})";

/// Parses `text`, requires the error `code` and a message that contains
/// every one of `parts`.
void require_error(const std::string& text, ErrorCode code, const std::vector<std::string>& parts) {
  auto p = parse_platform(text);
  INFO(text);
  REQUIRE_FALSE(p.ok());
  INFO(p.error().to_string());
  CHECK(p.error().code() == code);
  for (const auto& part : parts) CHECK_THAT(p.error().message(), Catch::Contains(part));
}

void require_error(const SimPlatform& platform, ErrorCode code, const std::vector<std::string>& parts) {
  auto s = validate_platform(platform);
  REQUIRE_FALSE(s.ok());
  INFO(s.error().to_string());
  CHECK(s.error().code() == code);
  for (const auto& part : parts) CHECK_THAT(s.error().message(), Catch::Contains(part));
}

size_t count_links_from(const SimPlatform& p, const std::string& from) {
  size_t n = 0;
  for (const auto& l : p.links) n += l.from == from;
  return n;
}

}  // namespace

TEST_CASE("SimRates::for_dtype picks the rate of the dtype's class", "[sim][platform]") {
  SimRates r;
  r.f16 = 1;
  r.f32 = 2;
  r.f64 = 3;
  r.integer = 4;
  r.complex64 = 5;
  r.complex128 = 6;
  CHECK(r.for_dtype(DType::F16) == 1);
  CHECK(r.for_dtype(DType::BF16) == 1);
  CHECK(r.for_dtype(DType::F32) == 2);
  CHECK(r.for_dtype(DType::F64) == 3);
  CHECK(r.for_dtype(DType::C64) == 5);
  CHECK(r.for_dtype(DType::C128) == 6);
  for (DType t : {DType::Bool, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32,
                  DType::U64})
    CHECK(r.for_dtype(t) == 4);
}

TEST_CASE("default_platform: devices, host links and peer links", "[sim][platform]") {
  const SimLinkSpec host_defaults;
  const SimDeviceSpec device_defaults;

  SECTION("one device: a host link each way, no peers") {
    auto p = default_platform(1);
    REQUIRE(p.ok());
    REQUIRE(p->devices.size() == 1);
    CHECK(p->devices[0].id == "sim:0");
    CHECK(p->devices[0].memory_bytes == device_defaults.memory_bytes);
    CHECK(p->devices[0].streams == device_defaults.streams);
    REQUIRE(p->links.size() == 2);
    REQUIRE(p->link("host", "sim:0"));
    REQUIRE(p->link("sim:0", "host"));
    CHECK(p->link("host", "sim:0")->bandwidth == host_defaults.bandwidth);
    CHECK(p->link("sim:0", "host")->latency_ns == host_defaults.latency_ns);
    CHECK(p->link("sim:0", "sim:0") == nullptr);
    CHECK(p->seed == 0);
    CHECK(p->jitter == 0);
    CHECK(validate_platform(*p).ok());
  }

  SECTION("two devices: host links and one peer pair at 4x bandwidth") {
    auto p = default_platform(2);
    REQUIRE(p.ok());
    REQUIRE(p->devices.size() == 2);
    CHECK(p->devices[1].id == "sim:1");
    CHECK(p->links.size() == 6);
    REQUIRE(p->link("sim:0", "sim:1"));
    REQUIRE(p->link("sim:1", "sim:0"));
    CHECK(p->link("sim:0", "sim:1")->bandwidth == 4 * host_defaults.bandwidth);
    CHECK(p->link("sim:1", "sim:0")->latency_ns == host_defaults.latency_ns);
    CHECK(p->link("host", "sim:1")->bandwidth == host_defaults.bandwidth);
    CHECK(validate_platform(*p).ok());
  }

  SECTION("four devices: every ordered pair is linked") {
    auto p = default_platform(4);
    REQUIRE(p.ok());
    REQUIRE(p->devices.size() == 4);
    CHECK(p->links.size() == 4 * 2 + 4 * 3);
    CHECK(count_links_from(*p, "host") == 4);
    for (const auto& a : p->devices) {
      CHECK(count_links_from(*p, a.id) == 4);  // the host and three peers
      CHECK(p->link(a.id, "host") != nullptr);
      for (const auto& b : p->devices)
        CHECK((p->link(a.id, b.id) != nullptr) == (a.id != b.id));
    }
    CHECK(p->device("sim:3") != nullptr);
    CHECK(p->device("sim:4") == nullptr);
    CHECK(p->device("host") == nullptr);
    CHECK(validate_platform(*p).ok());
  }

  SECTION("count 0 and above 64 are refused") {
    for (uint32_t count : {0u, 65u, 1000u}) {
      auto p = default_platform(count);
      REQUIRE_FALSE(p.ok());
      CHECK(p.error().code() == ErrorCode::InvalidAttribute);
      CHECK_THAT(p.error().message(), Catch::Contains(std::to_string(count)));
    }
    CHECK(default_platform(64).ok());
  }
}

TEST_CASE("parse_platform reads every field of a full file", "[sim][platform]") {
  const std::string text = R"({
    "format": "tenact.platform/1",
    "name": "lab",
    "seed": 18446744073709551615,
    "jitter": 0.25,
    "devices": [
      {"id": "sim:0", "memory_bytes": 1073741824, "streams": 2, "host_threads": 3,
       "memory_bandwidth": 1.5e12, "launch_latency_ns": 7000,
       "rates": {"f16": 1e14, "f32": 2e13, "f64": 1e13, "integer": 5e12, "complex64": 4e12, "complex128": 2e12}},
      {"id": "sim:7", "memory": "512MiB", "streams": 64, "host_threads": 0, "memory_bandwidth": 900000000000,
       "launch_latency_ns": 0, "rates": {"f32": 1}}
    ],
    "links": [
      {"from": "host", "to": "sim:0", "bandwidth": 12e9, "latency_ns": 20000, "bidirectional": false},
      {"from": "sim:0", "to": "host", "bandwidth": 13e9, "latency_ns": 21000},
      {"from": "sim:0", "to": "sim:7", "bandwidth": 3e11, "latency_ns": 0, "bidirectional": true}
    ]
  })";
  auto p = parse_platform(text);
  INFO((p.ok() ? "" : p.error().to_string()));
  REQUIRE(p.ok());
  CHECK(p->name == "lab");
  CHECK(p->seed == UINT64_MAX);
  CHECK(p->jitter == 0.25);
  REQUIRE(p->devices.size() == 2);

  const SimDeviceSpec& d0 = p->devices[0];
  CHECK(d0.id == "sim:0");
  CHECK(d0.memory_bytes == (uint64_t{1} << 30));
  CHECK(d0.streams == 2);
  CHECK(d0.host_threads == 3);
  CHECK(d0.memory_bandwidth == 1.5e12);
  CHECK(d0.launch_latency_ns == 7000);
  CHECK(d0.rates.f16 == 1e14);
  CHECK(d0.rates.f32 == 2e13);
  CHECK(d0.rates.f64 == 1e13);
  CHECK(d0.rates.integer == 5e12);
  CHECK(d0.rates.complex64 == 4e12);
  CHECK(d0.rates.complex128 == 2e12);

  const SimDeviceSpec& d7 = p->devices[1];
  const SimRates default_rates;
  CHECK(d7.id == "sim:7");
  CHECK(d7.memory_bytes == (uint64_t{512} << 20));
  CHECK(d7.streams == 64);
  CHECK(d7.host_threads == 0);
  CHECK(d7.memory_bandwidth == 9e11);
  CHECK(d7.launch_latency_ns == 0);
  CHECK(d7.rates.f32 == 1);
  CHECK(d7.rates.f16 == default_rates.f16);
  CHECK(d7.rates.complex128 == default_rates.complex128);

  REQUIRE(p->links.size() == 4);
  CHECK(p->link("host", "sim:0")->bandwidth == 12e9);
  CHECK(p->link("host", "sim:0")->latency_ns == 20000);
  CHECK(p->link("sim:0", "host")->bandwidth == 13e9);
  CHECK(p->link("sim:0", "host")->latency_ns == 21000);
  REQUIRE(p->link("sim:7", "sim:0"));
  CHECK(p->link("sim:0", "sim:7")->bandwidth == 3e11);
  CHECK(p->link("sim:7", "sim:0")->bandwidth == 3e11);
  CHECK(p->link("sim:7", "sim:0")->latency_ns == 0);
  CHECK(p->link("host", "sim:7") == nullptr);
  CHECK(validate_platform(*p).ok());
}

TEST_CASE("parse_platform fills defaults", "[sim][platform]") {
  const SimDeviceSpec device_defaults;
  const SimLinkSpec link_defaults;

  SECTION("a device with only an id, no links key: host links each way") {
    auto p = parse_platform(doc(kOneDevice));
    REQUIRE(p.ok());
    CHECK(p->name == "default");
    CHECK(p->seed == 0);
    CHECK(p->jitter == 0);
    REQUIRE(p->devices.size() == 1);
    const SimDeviceSpec& d = p->devices[0];
    CHECK(d.memory_bytes == device_defaults.memory_bytes);
    CHECK(d.streams == device_defaults.streams);
    CHECK(d.host_threads == device_defaults.host_threads);
    CHECK(d.memory_bandwidth == device_defaults.memory_bandwidth);
    CHECK(d.launch_latency_ns == device_defaults.launch_latency_ns);
    CHECK(d.rates.f16 == device_defaults.rates.f16);
    CHECK(d.rates.integer == device_defaults.rates.integer);
    REQUIRE(p->links.size() == 2);
    REQUIRE(p->link("host", "sim:0"));
    REQUIRE(p->link("sim:0", "host"));
    CHECK(p->link("host", "sim:0")->bandwidth == link_defaults.bandwidth);
    CHECK(p->link("sim:0", "host")->latency_ns == link_defaults.latency_ns);
  }

  SECTION("an empty links list means no links") {
    auto p = parse_platform(doc(kOneDevice, R"("links": [])"));
    REQUIRE(p.ok());
    CHECK(p->links.empty());
  }

  SECTION("a link with only its endpoints gets the default bandwidth and latency") {
    auto p = parse_platform(doc(kTwoDevices, R"("links": [{"from": "sim:1", "to": "sim:0"}])"));
    REQUIRE(p.ok());
    REQUIRE(p->links.size() == 1);
    CHECK(p->links[0].from == "sim:1");
    CHECK(p->links[0].to == "sim:0");
    CHECK(p->links[0].bandwidth == link_defaults.bandwidth);
    CHECK(p->links[0].latency_ns == link_defaults.latency_ns);
  }

  SECTION("integral numbers count as integers; integer rates as numbers") {
    auto p = parse_platform(doc(R"({"id": "sim:0", "memory_bytes": 2e9, "streams": 2.0, "rates": {"f32": 7}})"));
    REQUIRE(p.ok());
    CHECK(p->devices[0].memory_bytes == 2'000'000'000);
    CHECK(p->devices[0].streams == 2);
    CHECK(p->devices[0].rates.f32 == 7);
  }
}

TEST_CASE("parse_platform expands bidirectional links", "[sim][platform]") {
  auto p = parse_platform(doc(kTwoDevices, R"("links": [
      {"from": "host", "to": "sim:0", "bandwidth": 1e9, "latency_ns": 5, "bidirectional": true},
      {"from": "sim:0", "to": "sim:1", "bandwidth": 2e9, "bidirectional": true},
      {"from": "host", "to": "sim:1", "bidirectional": false}])"));
  REQUIRE(p.ok());
  REQUIRE(p->links.size() == 5);
  // Each entry's own direction first, then its reverse.
  CHECK(p->links[0].from == "host");
  CHECK(p->links[0].to == "sim:0");
  CHECK(p->links[1].from == "sim:0");
  CHECK(p->links[1].to == "host");
  CHECK(p->links[1].bandwidth == 1e9);
  CHECK(p->links[1].latency_ns == 5);
  CHECK(p->link("sim:1", "sim:0")->bandwidth == 2e9);
  CHECK(p->link("host", "sim:1") != nullptr);
  CHECK(p->link("sim:1", "host") == nullptr);
}

TEST_CASE("parse_platform: malformed JSON is a Parse error", "[sim][platform]") {
  require_error("", ErrorCode::Parse, {"platform"});
  require_error(R"({"format": "tenact.platform/1", "devices": [)", ErrorCode::Parse, {"platform", "byte"});
  require_error(R"({"format": "tenact.platform/1", "format": "x", "devices": []})", ErrorCode::Parse,
                {"duplicate key 'format'"});
  require_error(doc(R"({"id": "sim:0", "memory_bandwidth": 1e400})"), ErrorCode::Parse, {"platform"});
  // Nesting past the JSON depth limit is refused before parsing.
  require_error(std::string(100, '[') + std::string(100, ']'), ErrorCode::LimitExceeded, {"platform", "nesting"});
}

TEST_CASE("parse_platform: structure errors are Schema errors naming the path", "[sim][platform]") {
  SECTION("the document") {
    require_error("[]", ErrorCode::Schema, {"platform: expected an object, got an array"});
    require_error(R"({"devices": [{"id": "sim:0"}]})", ErrorCode::Schema, {"missing 'format'"});
    require_error(R"({"format": "tenact.platform/2", "devices": [{"id": "sim:0"}]})", ErrorCode::Schema,
                  {"platform: format: expected \"tenact.platform/1\"", "tenact.platform/2"});
    require_error(R"({"format": 1, "devices": [{"id": "sim:0"}]})", ErrorCode::Schema, {"format:", "an integer"});
    require_error(R"({"format": "tenact.platform/1"})", ErrorCode::Schema, {"missing 'devices'"});
    require_error(R"({"format": "tenact.platform/1", "devices": {}})", ErrorCode::Schema,
                  {"platform: devices: expected an array, got an object"});
    require_error(doc(kOneDevice, R"("links": {})"), ErrorCode::Schema, {"platform: links: expected an array"});
  }

  SECTION("unknown keys, with their path") {
    require_error(doc(kOneDevice, R"("sed": 1)"), ErrorCode::Schema, {"platform: unknown key 'sed'"});
    require_error(doc(R"({"id": "sim:0"}, {"id": "sim:1", "stream": 2})"), ErrorCode::Schema,
                  {"platform: devices[1]: unknown key 'stream'", "streams"});
    require_error(doc(R"({"id": "sim:0", "rates": {"f8": 1}})"), ErrorCode::Schema,
                  {"platform: devices[0].rates: unknown key 'f8'"});
    require_error(doc(kOneDevice, R"("links": [{"from": "host", "to": "sim:0", "duplex": true}])"),
                  ErrorCode::Schema, {"platform: links[0]: unknown key 'duplex'"});
    // A hostile key is cut in the message.
    require_error(doc(kOneDevice, "\"" + std::string(1000, 'k') + "\": 1"), ErrorCode::Schema, {"unknown key", "...'"});
  }

  SECTION("missing required members") {
    require_error(doc(R"({"streams": 1})"), ErrorCode::Schema, {"platform: devices[0]: missing 'id'"});
    require_error(doc(kOneDevice, R"("links": [{"to": "sim:0"}])"), ErrorCode::Schema,
                  {"platform: links[0]: missing 'from'"});
    require_error(doc(kOneDevice, R"("links": [{"from": "sim:0"}])"), ErrorCode::Schema,
                  {"platform: links[0]: missing 'to'"});
  }

  SECTION("wrong types") {
    require_error(doc(kOneDevice, R"("name": 3)"), ErrorCode::Schema, {"platform: name:", "got an integer"});
    require_error(doc(kOneDevice, R"("seed": "7")"), ErrorCode::Schema, {"platform: seed:", "got a string"});
    require_error(doc(kOneDevice, R"("jitter": true)"), ErrorCode::Schema, {"platform: jitter:", "got a bool"});
    require_error(doc("3"), ErrorCode::Schema, {"platform: devices[0]: expected an object, got an integer"});
    require_error(doc(R"({"id": 0})"), ErrorCode::Schema, {"platform: devices[0].id:", "got an integer"});
    require_error(doc(R"({"id": "sim:0"}, {"id": "sim:1", "streams": "4"})"), ErrorCode::Schema,
                  {"platform: devices[1].streams: expected an integer from 1 to 64, got a string"});
    require_error(doc(R"({"id": "sim:0", "streams": 1.5})"), ErrorCode::Schema,
                  {"platform: devices[0].streams: expected an integer from 1 to 64, got 1.5"});
    require_error(doc(R"({"id": "sim:0", "memory_bandwidth": null})"), ErrorCode::Schema,
                  {"platform: devices[0].memory_bandwidth: expected a positive finite number, got null"});
    require_error(doc(R"({"id": "sim:0", "rates": [1]})"), ErrorCode::Schema,
                  {"platform: devices[0].rates: expected an object, got an array"});
    require_error(doc(R"({"id": "sim:0", "rates": {"f64": "fast"}})"), ErrorCode::Schema,
                  {"platform: devices[0].rates.f64:", "got a string"});
    require_error(doc(R"({"id": "sim:0", "memory": 1024})"), ErrorCode::Schema,
                  {"platform: devices[0].memory:", "got an integer"});
    require_error(doc(R"({"id": "sim:0", "memory": "1GiB", "memory_bytes": 1024})"), ErrorCode::Schema,
                  {"platform: devices[0]:", "not both"});
    require_error(doc(kOneDevice, R"("links": [{"from": "host", "to": 0}])"), ErrorCode::Schema,
                  {"platform: links[0].to:", "got an integer"});
    require_error(doc(kOneDevice, R"("links": [{"from": "host", "to": "sim:0", "bidirectional": 1}])"),
                  ErrorCode::Schema, {"platform: links[0].bidirectional: expected a bool, got an integer"});
    require_error(doc(kOneDevice, R"("links": [{"from": "host", "to": "sim:0", "latency_ns": "1us"}])"),
                  ErrorCode::Schema, {"platform: links[0].latency_ns:", "got a string"});
  }
}

TEST_CASE("parse_platform: values out of range are InvalidAttribute naming the path", "[sim][platform]") {
  SECTION("device fields") {
    require_error(doc(R"({"id": "sim:0"}, {"id": "sim:1", "streams": 0})"), ErrorCode::InvalidAttribute,
                  {"platform: devices[1].streams: expected an integer from 1 to 64, got 0"});
    require_error(doc(R"({"id": "sim:0", "streams": 65})"), ErrorCode::InvalidAttribute,
                  {"platform: devices[0].streams:", "got 65"});
    require_error(doc(R"({"id": "sim:0", "host_threads": 65})"), ErrorCode::InvalidAttribute,
                  {"platform: devices[0].host_threads: expected an integer from 0 to 64, got 65"});
    require_error(doc(R"({"id": "sim:0", "memory_bytes": 0})"), ErrorCode::InvalidAttribute,
                  {"platform: devices[0].memory_bytes:", "got 0"});
    require_error(doc(R"({"id": "sim:0", "memory_bytes": -5})"), ErrorCode::InvalidAttribute,
                  {"platform: devices[0].memory_bytes:", "got -5"});
    require_error(doc(R"({"id": "sim:0", "memory_bandwidth": 0})"), ErrorCode::InvalidAttribute,
                  {"platform: devices[0].memory_bandwidth: expected a positive finite number, got 0"});
    require_error(doc(R"({"id": "sim:0", "rates": {"complex128": -1}})"), ErrorCode::InvalidAttribute,
                  {"platform: devices[0].rates.complex128: expected a positive finite number, got -1"});
    require_error(doc(R"({"id": "sim:0", "launch_latency_ns": -1})"), ErrorCode::InvalidAttribute,
                  {"platform: devices[0].launch_latency_ns:", "got -1"});
    require_error(doc(R"({"id": "sim:0", "memory": "16 GB of RAM"})"), ErrorCode::InvalidAttribute,
                  {"platform: devices[0].memory:", "16 GB of RAM"});
    require_error(doc(R"({"id": "sim:0", "memory": "0GiB"})"), ErrorCode::InvalidAttribute,
                  {"platform: devices[0].memory:"});
  }

  SECTION("document fields") {
    require_error(doc(kOneDevice, R"("jitter": 0.6)"), ErrorCode::InvalidAttribute,
                  {"platform: jitter: expected a number from 0 to 0.5, got 0.6"});
    require_error(doc(kOneDevice, R"("jitter": -0.1)"), ErrorCode::InvalidAttribute, {"platform: jitter:"});
    require_error(doc(kOneDevice, R"("seed": -1)"), ErrorCode::InvalidAttribute, {"platform: seed:", "got -1"});
    require_error(doc(kOneDevice, R"("name": "")"), ErrorCode::InvalidAttribute, {"platform: name:"});
    require_error(doc(""), ErrorCode::InvalidAttribute, {"platform: devices: expected 1 to 64 devices, got 0"});
    std::string many;
    for (int i = 0; i < 65; ++i) many += (i ? ", " : "") + std::string(R"({"id": "sim:)") + std::to_string(i) + "\"}";
    require_error(doc(many), ErrorCode::InvalidAttribute, {"platform: devices:", "got 65"});
  }

  SECTION("link fields") {
    require_error(doc(kOneDevice, R"("links": [{"from": "host", "to": "sim:0", "bandwidth": 0}])"),
                  ErrorCode::InvalidAttribute, {"platform: links[0].bandwidth: expected a positive finite number"});
    require_error(doc(kOneDevice, R"("links": [{"from": "host", "to": "sim:0", "latency_ns": -3}])"),
                  ErrorCode::InvalidAttribute, {"platform: links[0].latency_ns:", "got -3"});
    require_error(doc(kOneDevice, R"("links": [{"from": "sim:0", "to": "sim:0"}])"), ErrorCode::InvalidAttribute,
                  {"platform: links[0]:", "to itself"});
  }
}

TEST_CASE("parse_platform: the ops a device lacks", "[sim][platform]") {
  auto p = parse_platform(doc(R"({"id": "sim:0", "lacks": ["dot_general", "gather"]}, {"id": "sim:1"})"));
  REQUIRE(p.ok());
  CHECK(p->devices[0].lacks == std::vector<tenact::OpKind>{tenact::OpKind::DotGeneral, tenact::OpKind::Gather});
  CHECK(p->devices[1].lacks.empty());
  require_error(doc(R"({"id": "sim:0", "lacks": ["dot"]})"), ErrorCode::InvalidAttribute,
                {"platform: devices[0].lacks[0]: 'dot' is not an op of the program format"});
  require_error(doc(R"({"id": "sim:0", "lacks": ["add", "add"]})"), ErrorCode::InvalidAttribute,
                {"platform: devices[0].lacks[1]: 'add' is listed twice"});
  require_error(doc(R"({"id": "sim:0", "lacks": "add"})"), ErrorCode::Schema,
                {"platform: devices[0].lacks: expected an array of op names, got a string"});
  require_error(doc(R"({"id": "sim:0", "lacks": [3]})"), ErrorCode::Schema, {"platform: devices[0].lacks[0]:"});
}

TEST_CASE("parse_platform: ids, uniqueness and endpoints", "[sim][platform]") {
  SECTION("bad ids") {
    for (const char* id : {"gpu:0", "sim:", "sim:x", "sim:-1", "sim:01", "sim:1.5", "sim:65536", "SIM:0", " sim:0",
                           "sim:0 ", "host"}) {
      INFO(id);
      require_error(doc(R"({"id": ")" + std::string(id) + "\"}"), ErrorCode::InvalidAttribute,
                    {"platform: devices[0].id: expected \"sim:\" followed by a decimal number"});
    }
    CHECK(parse_platform(doc(R"({"id": "sim:65535"})")).ok());
  }

  SECTION("duplicate device id") {
    require_error(doc(R"({"id": "sim:0"}, {"id": "sim:1"}, {"id": "sim:0"})"), ErrorCode::InvalidAttribute,
                  {"platform: devices[2].id: duplicate device id 'sim:0'", "devices[0]"});
  }

  SECTION("link to an unknown endpoint") {
    require_error(doc(kOneDevice, R"("links": [{"from": "host", "to": "sim:1"}])"), ErrorCode::InvalidAttribute,
                  {"platform: links[0].to: unknown endpoint 'sim:1'"});
    require_error(doc(kOneDevice, R"("links": [{"from": "sim:0", "to": "host"}, {"from": "cpu", "to": "sim:0"}])"),
                  ErrorCode::InvalidAttribute, {"platform: links[1].from: unknown endpoint 'cpu'"});
  }

  SECTION("duplicate links, also after bidirectional expansion") {
    require_error(doc(kOneDevice, R"("links": [{"from": "host", "to": "sim:0"}, {"from": "host", "to": "sim:0"}])"),
                  ErrorCode::InvalidAttribute, {"platform: links[1]: duplicate link host -> sim:0", "links[0]"});
    require_error(doc(kTwoDevices, R"("links": [{"from": "sim:1", "to": "sim:0"},
                                                 {"from": "sim:0", "to": "sim:1", "bidirectional": true}])"),
                  ErrorCode::InvalidAttribute,
                  {"platform: links[1] (reverse direction): duplicate link sim:1 -> sim:0", "(also links[0])"});
    require_error(doc(kTwoDevices, R"("links": [{"from": "sim:0", "to": "sim:1", "bidirectional": true},
                                                 {"from": "sim:1", "to": "sim:0"}])"),
                  ErrorCode::InvalidAttribute,
                  {"platform: links[1]: duplicate link sim:1 -> sim:0", "(also links[0] (reverse direction))"});
  }
}

TEST_CASE("parse_platform: huge numbers are refused, not wrapped", "[sim][platform]") {
  // 2^50 is the largest memory; one more byte is over.
  CHECK(parse_platform(doc(R"({"id": "sim:0", "memory_bytes": 1125899906842624})")).ok());
  require_error(doc(R"({"id": "sim:0", "memory_bytes": 1125899906842625})"), ErrorCode::InvalidAttribute,
                {"platform: devices[0].memory_bytes: expected an integer from 1 to 1125899906842624, "
                 "got 1125899906842625"});
  require_error(doc(R"({"id": "sim:0", "memory_bytes": 18446744073709551615})"), ErrorCode::InvalidAttribute,
                {"devices[0].memory_bytes:", "got 18446744073709551615"});
  // Past 2^64 nlohmann reads a float: still a range error, not a wrap.
  require_error(doc(R"({"id": "sim:0", "memory_bytes": 100000000000000000000000})"), ErrorCode::InvalidAttribute,
                {"devices[0].memory_bytes:", "got 1e+23"});
  require_error(doc(kOneDevice, R"("seed": 18446744073709551616)"), ErrorCode::InvalidAttribute, {"platform: seed:"});
  // 2^32 + 2 streams must not be narrowed to 2.
  require_error(doc(R"({"id": "sim:0", "streams": 4294967298})"), ErrorCode::InvalidAttribute,
                {"devices[0].streams:", "got 4294967298"});
  require_error(doc(R"({"id": "sim:0", "launch_latency_ns": 1e300})"), ErrorCode::InvalidAttribute,
                {"devices[0].launch_latency_ns:"});
  require_error(doc(kOneDevice, R"("links": [{"from": "host", "to": "sim:0", "latency_ns": 9223372036854775808}])"),
                ErrorCode::InvalidAttribute, {"platform: links[0].latency_ns:"});
  require_error(doc(R"({"id": "sim:0", "memory": "99999999999999999999GiB"})"), ErrorCode::InvalidAttribute,
                {"devices[0].memory:"});
  require_error(doc(R"({"id": "sim:0", "memory": "16777216GiB"})"), ErrorCode::InvalidAttribute,
                {"devices[0].memory:"});  // 16 EiB: overflows 2^64
  require_error(doc(R"({"id": "sim:0", "memory": "2PiB"})"), ErrorCode::InvalidAttribute, {"devices[0].memory:"});
}

TEST_CASE("parse_platform: memory size strings", "[sim][platform]") {
  const std::pair<const char*, uint64_t> cases[] = {
      {"16GiB", uint64_t{16} << 30}, {"64 MiB", uint64_t{64} << 20}, {"512MB", 512'000'000},
      {"4096B", 4096},               {"1PiB", uint64_t{1} << 50},    {"3kB", 3000}};
  for (const auto& [text, bytes] : cases) {
    INFO(text);
    auto p = parse_platform(doc(R"({"id": "sim:0", "memory": ")" + std::string(text) + "\"}"));
    REQUIRE(p.ok());
    CHECK(p->devices[0].memory_bytes == bytes);
  }
}

TEST_CASE("validate_platform checks a platform built in code", "[sim][platform]") {
  auto base = default_platform(2);
  REQUIRE(base.ok());
  CHECK(validate_platform(*base).ok());

  SECTION("device ranges") {
    SimPlatform p = *base;
    p.devices[1].streams = 0;
    require_error(p, ErrorCode::InvalidAttribute, {"platform: devices[1].streams: expected an integer from 1 to 64, got 0"});
    p = *base;
    p.devices[0].memory_bytes = (uint64_t{1} << 50) + 1;
    require_error(p, ErrorCode::InvalidAttribute, {"platform: devices[0].memory_bytes:"});
    p = *base;
    p.devices[0].rates.f64 = std::numeric_limits<double>::infinity();
    require_error(p, ErrorCode::InvalidAttribute, {"platform: devices[0].rates.f64: expected a positive finite number, got inf"});
    p = *base;
    p.devices[0].memory_bandwidth = std::numeric_limits<double>::quiet_NaN();
    require_error(p, ErrorCode::InvalidAttribute, {"platform: devices[0].memory_bandwidth:"});
    p = *base;
    p.devices[1].host_threads = 100;
    require_error(p, ErrorCode::InvalidAttribute, {"platform: devices[1].host_threads:"});
  }

  SECTION("ids and uniqueness") {
    SimPlatform p = *base;
    p.devices[1].id = "gpu1";
    require_error(p, ErrorCode::InvalidAttribute, {"platform: devices[1].id:", "'gpu1'"});
    p = *base;
    p.devices[1].id = "sim:0";
    require_error(p, ErrorCode::InvalidAttribute, {"platform: devices[1].id: duplicate device id 'sim:0'"});
    p = *base;
    p.devices.clear();
    p.links.clear();
    require_error(p, ErrorCode::InvalidAttribute, {"platform: devices: expected 1 to 64 devices, got 0"});
  }

  SECTION("platform fields") {
    SimPlatform p = *base;
    p.jitter = 0.51;
    require_error(p, ErrorCode::InvalidAttribute, {"platform: jitter:"});
    p.jitter = std::numeric_limits<double>::quiet_NaN();
    require_error(p, ErrorCode::InvalidAttribute, {"platform: jitter:"});
    p = *base;
    p.name.clear();
    require_error(p, ErrorCode::InvalidAttribute, {"platform: name:"});
  }

  SECTION("links") {
    SimPlatform p = *base;
    p.links.push_back(SimLinkSpec{"host", "sim:9"});
    require_error(p, ErrorCode::InvalidAttribute, {"platform: links[6].to: unknown endpoint 'sim:9'"});
    p = *base;
    p.links.push_back(p.links[0]);
    require_error(p, ErrorCode::InvalidAttribute, {"platform: links[6]: duplicate link host -> sim:0 (also links[0])"});
    p = *base;
    p.links[2].bandwidth = -1;
    require_error(p, ErrorCode::InvalidAttribute, {"platform: links[2].bandwidth:", "got -1"});
    p = *base;
    p.links[3].latency_ns = UINT64_MAX;
    require_error(p, ErrorCode::InvalidAttribute, {"platform: links[3].latency_ns:"});
    p = *base;
    p.links[0].to = "host";
    require_error(p, ErrorCode::InvalidAttribute, {"platform: links[0]:", "to itself"});
  }
}

TEST_CASE("load_platform reads the example platforms", "[sim][platform]") {
  SECTION("two_gpus.json") {
    auto p = load_platform(kPlatformDir + "two_gpus.json");
    INFO((p.ok() ? "" : p.error().to_string()));
    REQUIRE(p.ok());
    CHECK(p->name == "two_gpus");
    REQUIRE(p->devices.size() == 2);
    CHECK(p->links.size() == 6);
    for (const char* d : {"sim:0", "sim:1"}) {
      CHECK(p->link("host", d) != nullptr);
      CHECK(p->link(d, "host") != nullptr);
    }
    CHECK(p->link("sim:0", "sim:1") != nullptr);
    CHECK(p->link("sim:1", "sim:0") != nullptr);
    CHECK(validate_platform(*p).ok());
  }

  SECTION("four_gpus_nvlink.json") {
    auto p = load_platform(kPlatformDir + "four_gpus_nvlink.json");
    INFO((p.ok() ? "" : p.error().to_string()));
    REQUIRE(p.ok());
    REQUIRE(p->devices.size() == 4);
    CHECK(p->links.size() == 4 * 2 + 4 * 3);
    for (const auto& a : p->devices) {
      CHECK(a.memory_bytes == (uint64_t{80} << 30));
      const SimLinkSpec* to_host = p->link(a.id, "host");
      REQUIRE(to_host);
      for (const auto& b : p->devices) {
        if (a.id == b.id) continue;
        const SimLinkSpec* peer = p->link(a.id, b.id);
        REQUIRE(peer);
        CHECK(peer->bandwidth > to_host->bandwidth);  // the point of NVLink
      }
    }
    CHECK(validate_platform(*p).ok());
  }

  SECTION("small_memory.json") {
    auto p = load_platform(kPlatformDir + "small_memory.json");
    INFO((p.ok() ? "" : p.error().to_string()));
    REQUIRE(p.ok());
    REQUIRE(p->devices.size() == 1);
    CHECK(p->devices[0].memory_bytes == (uint64_t{64} << 20));
    CHECK(p->devices[0].streams == 1);
    CHECK(p->link("host", "sim:0") != nullptr);
    CHECK(p->link("sim:0", "host") != nullptr);
    CHECK(validate_platform(*p).ok());
  }
}

TEST_CASE("load_platform errors name the path", "[sim][platform]") {
  const std::string missing = kPlatformDir + "no_such_platform.json";
  auto p = load_platform(missing);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().code() == ErrorCode::Io);
  CHECK_THAT(p.error().message(), Catch::Contains(missing));

  // A file that is not a platform: the parse error, prefixed with the path.
  const std::string not_platform = std::string(TENACT_SOURCE_DIR) + "/examples/mlp/mlp.json";
  auto q = load_platform(not_platform);
  REQUIRE_FALSE(q.ok());
  CHECK(q.error().code() == ErrorCode::Schema);
  CHECK_THAT(q.error().message(), Catch::StartsWith(not_platform + ": platform: "));
}

TEST_CASE("the example in docs/platform-format.md parses", "[sim][platform]") {
  auto text = tenact::read_file(std::string(TENACT_SOURCE_DIR) + "/docs/platform-format.md", 1 << 20);
  REQUIRE(text.ok());
  const std::string fence = "```json\n";
  const size_t begin = text->find(fence);
  REQUIRE(begin != std::string::npos);
  const size_t end = text->find("```", begin + fence.size());
  REQUIRE(end != std::string::npos);
  auto p = parse_platform(std::string_view(*text).substr(begin + fence.size(), end - begin - fence.size()));
  INFO((p.ok() ? "" : p.error().to_string()));
  REQUIRE(p.ok());
  CHECK(p->name == "two_gpus");
  CHECK(p->jitter == 0.05);
  REQUIRE(p->devices.size() == 2);
  CHECK(p->devices[0].memory_bytes == (uint64_t{16} << 30));
  CHECK(p->devices[0].host_threads == 2);
  CHECK(p->devices[1].memory_bytes == (uint64_t{16} << 30));
  CHECK(p->links.size() == 6);
  CHECK(p->link("sim:1", "host")->bandwidth == 25e9);
}

TEST_CASE("parse_platform: faults in the --faults form", "[sim][platform]") {
  auto p = parse_platform(doc(kTwoDevices, R"("faults": "seed=7,transient=0.25,die=sim:1@500ops,slow=sim:0*2")"));
  REQUIRE(p.ok());
  CHECK(p->faults.seed == 7);
  CHECK(p->faults.transient == 0.25);
  REQUIRE(p->faults.devices.size() == 2);
  CHECK(p->faults.device("sim:1")->dies_after_ops == 500u);
  CHECK(p->faults.device("sim:0")->slow == 2.0);
  CHECK(parse_platform(doc(kTwoDevices))->faults.any() == false);
  require_error(doc(kOneDevice, R"("faults": "transient=2")"), ErrorCode::InvalidAttribute,
                {"platform: faults: ", "transient=2"});
  require_error(doc(kOneDevice, R"("faults": {"transient": 0.1})"), ErrorCode::Schema,
                {"platform: faults: expected a string in the --faults form", "got an object"});
  require_error(doc(kOneDevice, R"("faults": "die=sim:3@5ops")"), ErrorCode::InvalidAttribute,
                {"platform: faults: device 'sim:3' is not a device of the platform"});
}
