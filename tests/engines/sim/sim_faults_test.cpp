// The fault spec's flag form (every key, canonical text, each malformed
// item named) and the draws: pure functions of their arguments, uniform
// enough that a probability is met (to 1% over 200,000 draws).
#include <catch2/catch.hpp>

#include "engines/sim/sim_faults.hpp"
#include "engines/sim/sim_platform.hpp"

using namespace tenact;
using namespace tenact::sim;

TEST_CASE("fault spec: every key, and the canonical text", "[sim][faults]") {
  auto spec = parse_fault_spec("seed=7,transient=0.25,fail=dot_general,fail=add,alloc=0.5,transfer=1,"
                               "die=sim:2@500ops,slow=sim:1*2.5,die=sim:1@3000ns");
  REQUIRE(spec.ok());
  CHECK(spec->seed == 7);
  CHECK(spec->transient == 0.25);
  CHECK(spec->fail_ops == std::vector<OpKind>{OpKind::DotGeneral, OpKind::Add});
  CHECK(spec->allocation == 0.5);
  CHECK(spec->transfer == 1.0);
  REQUIRE(spec->device("sim:2") != nullptr);
  CHECK(spec->device("sim:2")->dies_after_ops == 500u);
  CHECK(spec->device("sim:1")->slow == 2.5);
  CHECK(spec->device("sim:1")->dies_at_ns == 3000u);
  CHECK(spec->device("sim:0") == nullptr);
  CHECK(spec->fails(OpKind::Add));
  CHECK_FALSE(spec->fails(OpKind::Tanh));
  CHECK(spec->to_string() ==
        "seed=7,transient=0.25,fail=dot_general,fail=add,alloc=0.5,transfer=1,die=sim:2@500ops,die=sim:1@3000ns,"
        "slow=sim:1*2.5");
  CHECK(parse_fault_spec(spec->to_string()).value() == *spec);
  CHECK_FALSE(parse_fault_spec("seed=3")->any());
}

TEST_CASE("fault spec: each malformed item is named", "[sim][faults]") {
  const std::pair<const char*, const char*> bad[] = {
      {"transient", "faults: 'transient': expected KEY=VALUE"},
      {"transient=1.5", "faults: 'transient=1.5': expected a probability from 0 to 1"},
      {"transient=nan", "faults: 'transient=nan': expected a probability from 0 to 1"},
      {"alloc=-0.1", "faults: 'alloc=-0.1': expected a probability from 0 to 1"},
      {"fail=cholesky", "faults: 'fail=cholesky': not an op of the program format"},
      {"die=sim:2", "faults: 'die=sim:2': expected die=sim:N@COUNTops or die=sim:N@TIMEns"},
      {"die=gpu:0@5ops", "faults: 'die=gpu:0@5ops': expected die=sim:N@COUNTops or die=sim:N@TIMEns"},
      {"die=sim:0@5s", "faults: 'die=sim:0@5s': expected die=sim:N@COUNTops or die=sim:N@TIMEns"},
      {"die=sim:0@5ops,die=sim:0@9ns", "faults: 'die=sim:0@9ns': the device dies once"},
      {"slow=sim:0*0.5", "faults: 'slow=sim:0*0.5': expected a slow factor from 1 to 1e6"},
      {"slow=sim:01*2", "faults: 'slow=sim:01*2': expected slow=sim:N*FACTOR"},
      {"seed=-1", "faults: 'seed=-1': expected a seed from 0 to 2^64 - 1"},
      {"speed=2", "faults: 'speed=2': unknown key (seed, transient, fail, alloc, transfer, die, slow)"},
      {"seed=1,,transient=0", "faults: an empty item in 'seed=1,,transient=0'"},
      {"", "faults: an empty item in ''"},
  };
  for (const auto& [text, message] : bad) {
    INFO(text);
    auto spec = parse_fault_spec(text);
    REQUIRE_FALSE(spec.ok());
    CHECK(spec.error().code() == ErrorCode::InvalidAttribute);
    CHECK(spec.error().message() == message);
  }
}

TEST_CASE("fault spec: a device fault must name a device of the platform", "[sim][faults]") {
  SimPlatform p = default_platform(2).value();
  p.faults = parse_fault_spec("die=sim:5@10ops").value();
  auto v = validate_platform(p);
  REQUIRE_FALSE(v.ok());
  CHECK(v.error().message() == "platform: faults: device 'sim:5' is not a device of the platform");
  p.faults = parse_fault_spec("die=sim:1@10ops").value();
  CHECK(validate_platform(p).ok());
}

TEST_CASE("fault draws: a pure function of their arguments, meeting the probability", "[sim][faults]") {
  CHECK(fault_unit(1, FaultDraw::Transient, 2, 3, 4) == fault_unit(1, FaultDraw::Transient, 2, 3, 4));
  CHECK(fault_unit(1, FaultDraw::Transient, 2, 3, 4) != fault_unit(2, FaultDraw::Transient, 2, 3, 4));
  CHECK(fault_unit(1, FaultDraw::Transient, 2, 3, 4) != fault_unit(1, FaultDraw::Transfer, 2, 3, 4));
  CHECK(fault_unit(1, FaultDraw::Transient, 2, 3, 4) != fault_unit(1, FaultDraw::Transient, 2, 3, 5));
  int hits = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    const double u = fault_unit(9, FaultDraw::Allocation, 0, i / 7, i % 7);
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    hits += fault_happens(0.1, 9, FaultDraw::Allocation, 0, i / 7, i % 7) ? 1 : 0;
  }
  CHECK(hits > 20000 - 2000);  // 10% of 200,000 = 20,000; 1% of the draws either side
  CHECK(hits < 20000 + 2000);
  CHECK_FALSE(fault_happens(0.0, 9, FaultDraw::Allocation, 0, 0, 0));
  CHECK(fault_happens(1.0, 9, FaultDraw::Allocation, 0, 0, 0));
}
