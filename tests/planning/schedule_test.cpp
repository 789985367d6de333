// The scheduled graph: dependencies, transfers only along registered
// routes (one per value and destination), releases at the last reader of
// each copy, and the MissingTransferProvider error. Expected graphs are
// derived by hand from the programs below.
#include <catch2/catch.hpp>

#include "planning/schedule.hpp"
#include "planning_world.hpp"

using namespace tenact;
using namespace tenact::testing;

namespace {

// z = x + y feeds both w = tanh(z) and v = z * w; slots: x=0, y=1, z=2, w=3, v=4
const char* kDiamond = R"({"format": "tenact.program/1", "name": "p",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [4]}],
  "ops": [{"op": "add", "in": ["x", "y"], "out": "z"},
          {"op": "tanh", "in": ["z"], "out": "w"},
          {"op": "multiply", "in": ["z", "w"], "out": "v"}],
  "outputs": ["v"]})";

ExecProgram staged() {
  auto s = stage(*program_of(kDiamond));
  REQUIRE(s.ok());
  return std::move(*s);
}

const Endpoint kA{"a", "host"};
const Endpoint kB{"b", "dev"};

}  // namespace

TEST_CASE("one endpoint: dependencies follow the data and copies die at their last reader", "[schedule]") {
  World w;
  const ExecProgram p = staged();
  auto g = build_schedule(p, kA, std::vector<Endpoint>{kA, kA}, std::vector<Endpoint>{kA, kA, kA}, *w.config);
  REQUIRE(g.ok());
  CHECK(g->locations == std::vector<Endpoint>{kA});
  REQUIRE(g->nodes.size() == 3);
  CHECK(g->transfer_count() == 0);
  CHECK(g->nodes[0].dependencies.empty());
  CHECK(g->nodes[1].dependencies == std::vector<uint32_t>{0});
  CHECK(g->nodes[2].dependencies == std::vector<uint32_t>{0, 1});
  CHECK(g->nodes[0].releases == std::vector<SlotCopy>{{0, 0}, {1, 0}});  // x, y
  CHECK(g->nodes[1].releases.empty());
  CHECK(g->nodes[2].releases == std::vector<SlotCopy>{{2, 0}, {3, 0}});  // z, w
  CHECK(g->outputs == std::vector<SlotCopy>{{4, 0}});
  CHECK(g->instruction_nodes == std::vector<uint32_t>{0, 1, 2});
}

TEST_CASE("a value moves once to each endpoint that reads it, along its route", "[schedule]") {
  World w;
  w.route(kA, kB, "h2d");
  const ExecProgram p = staged();
  // add on a; tanh and multiply on b: z moves a -> b once, read twice there.
  auto g = build_schedule(p, kA, std::vector<Endpoint>{kA, kA}, std::vector<Endpoint>{kA, kB, kB}, *w.config);
  REQUIRE(g.ok());
  CHECK(g->locations == std::vector<Endpoint>{kA, kB});
  REQUIRE(g->nodes.size() == 4);
  CHECK(g->transfer_count() == 1);
  const ScheduledNode& t = g->nodes[1];
  REQUIRE(t.is_transfer());
  CHECK(t.slot == 2);
  CHECK(t.source == 0);
  CHECK(t.location == 1);
  CHECK(t.provider == "h2d");
  CHECK(t.dependencies == std::vector<uint32_t>{0});
  CHECK(g->instruction_nodes == std::vector<uint32_t>{0, 2, 3});
  CHECK(g->nodes[2].dependencies == std::vector<uint32_t>{1});
  CHECK(g->nodes[3].dependencies == std::vector<uint32_t>{1, 2});
  // z at a dies after the transfer reads it; z at b after the multiply.
  CHECK(t.releases == std::vector<SlotCopy>{{2, 0}});
  CHECK(g->nodes[3].releases == std::vector<SlotCopy>{{2, 1}, {3, 1}});
  CHECK(g->outputs == std::vector<SlotCopy>{{4, 1}});
  CHECK(describe_schedule(p, *g).find("node 1: transfer slot 2 ('z') a/host -> b/dev via h2d after [0]") !=
        std::string::npos);
}

TEST_CASE("no route to a reader is MissingTransferProvider naming everything", "[schedule]") {
  World w;
  w.route(kB, kA, "d2h");  // the wrong direction
  const ExecProgram p = staged();
  auto g = build_schedule(p, kA, std::vector<Endpoint>{kA, kA}, std::vector<Endpoint>{kA, kB, kB}, *w.config);
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().code() == ErrorCode::MissingTransferProvider);
  CHECK(g.error().message() ==
        "instruction #1 (tanh) reads slot 2 ('z') at b/dev, but no transfer route reaches it "
        "there from the endpoints holding it: a/host");
}

TEST_CASE("a value may travel on from where it was moved", "[schedule]") {
  World w;
  const Endpoint c{"c", "host"};
  w.route(kA, kB, "h2d");
  w.route(kB, c, "peer");
  const ExecProgram p = staged();
  // x and y enter at a; add on b, tanh on b, multiply on c: z and w move b -> c.
  auto g = build_schedule(p, kA, std::vector<Endpoint>{kA, kA}, std::vector<Endpoint>{kB, kB, c}, *w.config);
  REQUIRE(g.ok());
  CHECK(g->transfer_count() == 4);  // x, y to b; z, w to c
  for (const ScheduledNode& n : g->nodes)
    if (n.is_transfer() && (n.slot == 2 || n.slot == 3)) CHECK(n.provider == "peer");
}

TEST_CASE("endpoint lists of the wrong length are an internal error", "[schedule]") {
  World w;
  const ExecProgram p = staged();
  auto g = build_schedule(p, kA, std::vector<Endpoint>{kA}, std::vector<Endpoint>{kA, kA, kA}, *w.config);
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().code() == ErrorCode::Internal);
}
