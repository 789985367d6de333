// Liveness packing over seeded random programs: two packed values of one
// device whose lifetimes meet never share a byte, every offset is aligned
// and inside its arena; what is read on another device, output or retained
// is not packed; the totals bound each other.
#include <catch2/catch.hpp>
#include <map>
#include <random>

#include "tests/planning/model_test_support.hpp"

using namespace tenact;
using namespace tenact::model_test;

namespace {

struct RandomModel {
  std::string json;
  std::vector<std::string> on_e1;  // nodes preferred on e1
  std::vector<std::string> retain;
};

/// 5-40 elementwise and dot ops over f32 [4, 8], [8, 8], [8, 4], [4, 4],
/// each reading random earlier values (so branches and long lifetimes).
RandomModel random_model(std::mt19937& rng) {
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::map<std::string, std::vector<std::string>> by_shape{
      {"[4, 8]", {"x"}}, {"[8, 8]", {"wa"}}, {"[8, 4]", {"wb"}}, {"[4, 4]", {}}};
  RandomModel m;
  std::string ops;
  std::vector<std::string> results;
  const size_t count = 5 + pick(36);
  for (size_t i = 0; i < count; ++i) {
    const std::string out = "v" + std::to_string(i);
    std::string op, shape;
    const size_t kind = pick(3);
    if (kind == 2) {
      static const char* kDots[][3] = {
          {"[4, 8]", "[8, 8]", "[4, 8]"}, {"[4, 8]", "[8, 4]", "[4, 4]"}, {"[4, 4]", "[4, 8]", "[4, 8]"}};
      const auto& d = kDots[pick(3)];
      const auto& lhs = by_shape[d[0]];
      const auto& rhs = by_shape[d[1]];
      if (lhs.empty() || rhs.empty()) {
        --i;
        continue;
      }
      op = R"({"op": "dot_general", "in": [")" + lhs[pick(lhs.size())] + R"(", ")" + rhs[pick(rhs.size())] +
           R"("], "out": ")" + out + R"(", "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]})";
      shape = d[2];
    } else {
      std::vector<std::string> shapes;
      for (const auto& [s, values] : by_shape)
        if (!values.empty()) shapes.push_back(s);
      shape = shapes[pick(shapes.size())];
      const auto& values = by_shape[shape];
      static const char* kUnary[] = {"negate", "exponential", "tanh"};
      static const char* kBinary[] = {"add", "multiply", "subtract"};
      if (kind == 0)
        op = std::string{R"({"op": ")"} + kUnary[pick(3)] + R"(", "in": [")" + values[pick(values.size())] +
             R"("], "out": ")" + out + "\"}";
      else
        op = std::string{R"({"op": ")"} + kBinary[pick(3)] + R"(", "in": [")" + values[pick(values.size())] +
             R"(", ")" + values[pick(values.size())] + R"("], "out": ")" + out + "\"}";
    }
    ops += (ops.empty() ? "" : ", ") + op;
    by_shape[shape].push_back(out);
    results.push_back(out);
    if (pick(5) == 0) m.on_e1.push_back(out);
    if (pick(10) == 0) m.retain.push_back(out);
  }
  std::string outputs = "\"" + results.back() + "\"";
  for (size_t k = pick(3); k > 0; --k) outputs += ", \"" + results[pick(results.size())] + "\"";
  m.json =
      R"({"format": "tenact.program/1", "name": "random", "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 8]}],
    "weights": [{"name": "wa", "dtype": "f32", "shape": [8, 8]}, {"name": "wb", "dtype": "f32", "shape": [8, 4]}],
    "ops": [)" +
      ops + R"(], "outputs": [)" + outputs + "]}";
  return m;
}

struct Life {
  size_t first = 0, last = 0;
};

/// Lifetimes in program order, computed here: producer to last reader, an
/// operand a result may or must alias kept live as long as that result.
std::vector<Life> lifetimes_of(const SemanticProgram& p, const ModelPlan& plan) {
  std::vector<Life> life(p.values().size());
  for (size_t i = 0; i < p.ops().size(); ++i)
    for (ValueId r : p.ops()[i].outputs) life[r] = {i, i};
  for (size_t i = 0; i < p.ops().size(); ++i)
    for (ValueId v : p.ops()[i].inputs)
      if (p.value(v).role == ValueRole::Result) life[v].last = std::max(life[v].last, i);
  for (size_t i = p.ops().size(); i-- > 0;)
    for (size_t r = 0; r < p.ops()[i].outputs.size(); ++r)
      if (plan.node(i).result_aliases[r].kind != AliasPolicy::Kind::NoAlias) {
        const ValueId operand = p.ops()[i].inputs[plan.node(i).result_aliases[r].input];
        if (p.value(operand).role == ValueRole::Result)
          life[operand].last = std::max(life[operand].last, life[p.ops()[i].outputs[r]].last);
      }
  return life;
}

bool read_elsewhere(const SemanticProgram& p, const ModelPlan& plan, ValueId v) {
  const Endpoint& at = plan.node(static_cast<size_t>(p.value(v).producer)).endpoint;
  for (size_t i = 0; i < p.ops().size(); ++i)
    for (ValueId operand : p.ops()[i].inputs)
      if (operand == v && plan.node(i).endpoint != at) return true;
  return false;
}

uint64_t checked_packing(const SemanticProgram& p, const ModelPlan& plan) {
  const std::vector<Life> life = lifetimes_of(p, plan);
  std::map<std::string, std::vector<ValueId>> by_arena;
  uint64_t unpacked = 0, total = 0;
  std::vector<uint64_t> live_at(p.ops().size(), 0);
  for (ValueId v = 0; v < p.values().size(); ++v) {
    const ValueStorage& s = plan.storage[v];
    if (s.kind != ValueStorage::Kind::Activation) continue;
    const uint64_t bytes = plan.tensors[v].minimum_storage_bytes().value();
    total += bytes;
    for (size_t i = life[v].first; i <= life[v].last; ++i) live_at[i] += bytes;
    CHECK(s.first_op == life[v].first);
    CHECK(s.last_op == life[v].last);
    REQUIRE(s.places.size() == 1);
    CHECK(s.places[0].length_bytes == bytes);
    const bool output = std::find(p.outputs().begin(), p.outputs().end(), v) != p.outputs().end();
    const bool retained = std::find(plan.retained.begin(), plan.retained.end(), v) != plan.retained.end();
    CHECK(s.packed == !(output || retained || read_elsewhere(p, plan, v)));
    if (s.packed)
      by_arena[s.places[0].resource].push_back(v);
    else
      unpacked += bytes;
  }
  uint64_t arenas = 0;
  for (const auto& [id, values] : by_arena) {
    const StorageResource* arena = plan.resource(id);
    REQUIRE(arena != nullptr);
    CHECK(arena->kind == ResourceKind::ActivationArena);
    arenas += arena->bytes;
    std::vector<uint64_t> packed_live(p.ops().size(), 0);
    for (size_t a = 0; a < values.size(); ++a) {
      const StoragePlace& pa = plan.storage[values[a]].places[0];
      CHECK(pa.endpoint == arena->endpoint);
      CHECK(pa.endpoint == plan.node(static_cast<size_t>(p.value(values[a]).producer)).endpoint);
      CHECK(pa.offset_bytes % plan.value_alignment_bytes == 0);
      CHECK(pa.offset_bytes + pa.length_bytes <= arena->bytes);
      for (size_t i = life[values[a]].first; i <= life[values[a]].last; ++i) packed_live[i] += pa.length_bytes;
      for (size_t b = a + 1; b < values.size(); ++b) {
        const StoragePlace& pb = plan.storage[values[b]].places[0];
        const Life &la = life[values[a]], &lb = life[values[b]];
        if (la.first > lb.last || lb.first > la.last) continue;
        INFO(p.value(values[a]).name << " and " << p.value(values[b]).name << " are live together");
        CHECK((pa.offset_bytes + pa.length_bytes <= pb.offset_bytes ||
               pb.offset_bytes + pb.length_bytes <= pa.offset_bytes));
      }
    }
    CHECK(*std::max_element(packed_live.begin(), packed_live.end()) <= arena->bytes);
  }
  CHECK(plan.total_activation_bytes == total);
  CHECK(plan.planned_activation_bytes == arenas + unpacked);
  CHECK(plan.peak_live_activation_bytes == *std::max_element(live_at.begin(), live_at.end()));
  CHECK(plan.peak_live_activation_bytes <= plan.planned_activation_bytes);
  CHECK(plan.planned_activation_bytes <= plan.total_activation_bytes);
  return plan.total_activation_bytes - plan.planned_activation_bytes;
}

}  // namespace

TEST_CASE("liveness packing never lets two live values of a device overlap", "[model][packing]") {
  // e0 has a tanh that may alias its operand (keeping it live as long as
  // the result); e1 a plain mirror. Alignments 64 and 16.
  std::mt19937 rng(20240611);
  uint64_t saved = 0;
  for (int n = 0; n < 200; ++n) {
    const uint64_t alignment = n % 2 == 0 ? 64 : 16;
    const auto catalog = catalog_of(
        {{"e0", "mem",
          list({provider("may", serving({OpKind::Tanh}, aliasing(mirror, 0, AliasPolicy::may(0))), alignment),
                provider("m", mirror, alignment)})},
         {"e1", "mem", list({provider("m", mirror, alignment)})}});
    const RandomModel m = random_model(rng);
    INFO("program " << n << ": " << m.json);
    const auto program = program_of(m.json);
    ModelCompileOptions o;
    o.tensors["x"] = dense(DType::F32, {4, 8});
    for (const std::string& node : m.on_e1) o.preferred_providers[node] = "e1/m";
    o.retain = m.retain;
    const auto plan = compiled(program, catalog, o);
    CHECK(plan->value_alignment_bytes == alignment);
    saved += checked_packing(*program, *plan);
  }
  CHECK(saved > 0);  // the packing reuses bytes at all
}
