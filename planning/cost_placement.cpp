#include "planning/cost_placement.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "core/checked.hpp"

namespace tenact {

namespace {

constexpr uint64_t kSaturated = uint64_t{1} << 62;

uint64_t add_sat(uint64_t a, uint64_t b) { return saturating_add(a, b, kSaturated); }
uint64_t mul_sat(uint64_t a, uint64_t b) { return saturating_mul(a, b, kSaturated); }

// Whose lanes and memory a candidate uses: its resource, else its engine.
const std::string& resource_of(const PlacementCandidate& c) {
  return c.cost.resource.empty() ? c.endpoint.engine : c.cost.resource;
}

// One candidate's answer for one instruction.
struct Evaluation {
  bool reachable = false;
  bool over_memory = false;
  uint64_t start = 0;
  uint64_t finish = 0;
  uint32_t lane = 0;
  uint64_t moved_bytes = 0;
  /// Bytes the engine holds more once it runs here (results and arrivals).
  uint64_t new_bytes = 0;
};

// Where a value is, and since when (estimated).
struct Held {
  Endpoint at;
  uint64_t since = 0;
};

// The estimated state of the machine while instructions are placed one by
// one: when each engine's lanes are free, what each holds, where each value
// is.
class PlacementSimulation {
 public:
  /// `anchor_constants`: a constant's result is free wherever it is first
  /// read (the caller places the constant there, take_anchored).
  /// `see_regions`: an op that continues a fused region on its lane costs
  /// no launch (the file comment).
  PlacementSimulation(const CostPlacementProblem& p, bool anchor_constants, bool see_regions = false)
      : p_(p), staging_(*p.staging), see_regions_(see_regions) {
    held_.resize(staging_.slots.size());
    made_by_.assign(staging_.slots.size(), Made{});
    input_of_slot_.assign(staging_.slots.size(), -1);
    for (size_t i = 0; i < staging_.input_slots.size(); ++i)
      input_of_slot_[staging_.input_slots[i]] = static_cast<int32_t>(i);
    entries_.resize(staging_.input_slots.size());
    floating_.assign(staging_.slots.size(), 0);
    for (const ExecInstruction& ins : staging_.instructions)
      if (anchor_constants && ins.is_constant())
        for (SlotId s : ins.outputs) floating_[s] = 1;
    for (const PlacementCandidate& c : p.candidates) {
      auto [it, fresh] = engine_index_.try_emplace(resource_of(c), lanes_.size());
      if (fresh) {
        lanes_.emplace_back(std::max<uint32_t>(1, c.lanes), 0);
        engine_bytes_.push_back(0);
      }
    }
    for (size_t i = 0; i < staging_.input_slots.size(); ++i) enter_placed_input(i);
  }

  uint64_t slot_bytes(SlotId s) const {
    uint64_t n = size_of(staging_.slot_type(s).dtype);
    for (int64_t d : p_.slot_extents[s]) n = mul_sat(n, d > 0 ? static_cast<uint64_t>(d) : 0);
    return n;
  }

  /// `fused`: the op runs inside a region already launched (no latency).
  uint64_t cost_on(size_t instruction, const PlacementCandidate& c, bool fused) const {
    const ExecInstruction& ins = staging_.instructions[instruction];
    std::vector<ValueExtent> in, out;
    for (SlotId s : ins.inputs) in.push_back(ValueExtent{staging_.slot_type(s).dtype, p_.slot_extents[s]});
    for (SlotId s : ins.outputs) out.push_back(ValueExtent{staging_.slot_type(s).dtype, p_.slot_extents[s]});
    EngineCostModel model = c.cost;
    if (fused) model.launch_latency_ns = 0;
    return estimate_ns(model, op_work(ins.kind, ins.attrs, in, out, extension_of(ins)));
  }

  /// The registered family of an extension instruction (null otherwise).
  const ExtensionFamily* extension_of(const ExecInstruction& ins) const {
    const auto* ext = ins.kind == OpKind::Extension ? std::get_if<ExtensionAttrs>(&ins.attrs) : nullptr;
    return ext && p_.config ? p_.config->find_extension(ext->family).get() : nullptr;
  }

  static bool fusable(const ExecInstruction& ins) {
    return !ins.is_constant() && family_of(ins.kind) == OpFamily::Elementwise && ins.outputs.size() == 1;
  }

  // Whether `instruction` on `c`'s lane `lane` continues a fused region.
  bool continues_region(size_t instruction, const PlacementCandidate& c, uint32_t lane) const {
    const ExecInstruction& ins = staging_.instructions[instruction];
    if (!see_regions_ || !c.fuses_elementwise || !fusable(ins)) return false;
    const std::vector<int64_t>& shape = p_.slot_extents[ins.outputs.front()];
    for (SlotId s : ins.inputs)
      if (!p_.slot_extents[s].empty() && p_.slot_extents[s] != shape) return false;
    for (SlotId s : ins.inputs) {
      const Made& m = made_by_[s];
      if (m.elementwise && m.lane == lane && m.at == c.endpoint && p_.slot_extents[s] == shape) return true;
    }
    return false;
  }

  /// `lane`: the lane to run on (else chosen as the file comment says).
  Evaluation evaluate(size_t instruction, uint32_t candidate, std::optional<uint32_t> lane = std::nullopt) const {
    const PlacementCandidate& c = p_.candidates[candidate];
    const ExecInstruction& ins = staging_.instructions[instruction];
    Evaluation e;
    uint64_t ready = 0;
    std::vector<SlotId> counted;  // an operand read twice moves once
    for (SlotId s : ins.inputs) {
      if (std::find(counted.begin(), counted.end(), s) != counted.end()) continue;
      counted.push_back(s);
      auto arrival = arrival_at(s, c.endpoint);
      if (!arrival) return e;  // unreachable
      ready = std::max(ready, arrival->time);
      if (arrival->moved) {
        e.moved_bytes = add_sat(e.moved_bytes, slot_bytes(s));
        e.new_bytes = add_sat(e.new_bytes, slot_bytes(s));
      }
    }
    for (SlotId s : ins.outputs) e.new_bytes = add_sat(e.new_bytes, slot_bytes(s));
    const size_t engine = engine_index_.at(resource_of(c));
    const std::vector<uint64_t>& lanes = lanes_[engine];
    const uint32_t usable = std::min<uint32_t>(static_cast<uint32_t>(lanes.size()), std::max<uint32_t>(1, c.lanes));
    // The given lane, else the least idle gap: the latest lane free by
    // `ready`, else the first free.
    std::optional<uint32_t> fit;
    if (lane && *lane < usable) {
      fit = *lane;
    } else {
      for (uint32_t l = 0; l < usable; ++l)
        if (lanes[l] <= ready && (!fit || lanes[l] > lanes[*fit])) fit = l;
      if (!fit) {
        fit = 0;
        for (uint32_t l = 1; l < usable; ++l)
          if (lanes[l] < lanes[*fit]) fit = l;
      }
    }
    e.reachable = true;
    e.lane = *fit;
    e.start = std::max(ready, lanes[e.lane]);
    e.finish = add_sat(e.start, cost_on(instruction, c, continues_region(instruction, c, e.lane)));
    e.over_memory = c.cost.memory_bytes != 0 && add_sat(engine_bytes_[engine], e.new_bytes) > c.cost.memory_bytes;
    return e;
  }

  void commit(size_t instruction, uint32_t candidate, const Evaluation& e) {
    const PlacementCandidate& c = p_.candidates[candidate];
    const ExecInstruction& ins = staging_.instructions[instruction];
    for (SlotId s : ins.inputs) {
      if (floating_[s]) {
        floating_[s] = 0;
        held_[s].push_back(Held{c.endpoint, e.start});
        anchored_.push_back(Anchored{s, c.endpoint, e});
        continue;
      }
      if (holds(s, c.endpoint)) continue;
      auto arrival = arrival_at(s, c.endpoint);
      if (!arrival) continue;
      const int32_t input = input_of_slot_[s];
      if (input >= 0 && held_[s].empty()) {
        // It enters here, or where first_entry_then_copy let it in.
        const size_t i = static_cast<size_t>(input);
        if (p_.accepts(i, c.endpoint)) {
          entries_[i] = c.endpoint;
        } else if (const PlacementCandidate* entry = first_accepting(i)) {
          entries_[i] = entry->endpoint;
          held_[s].push_back(Held{entry->endpoint, upload_ns(s, entry->endpoint)});
        }
      }
      held_[s].push_back(Held{c.endpoint, arrival->time});
    }
    for (SlotId s : ins.outputs) {
      floating_[s] = 0;
      held_[s].push_back(Held{c.endpoint, e.finish});
      made_by_[s] = Made{c.endpoint, e.lane, fusable(ins)};
    }
    const size_t engine = engine_index_.at(resource_of(c));
    last_ = c.endpoint;
    lanes_[engine][e.lane] = e.finish;
    engine_bytes_[engine] = add_sat(engine_bytes_[engine], e.new_bytes);
  }

  bool holds(SlotId s, const Endpoint& at) const {
    for (const Held& h : held_[s])
      if (h.at == at) return true;
    return false;
  }

  std::vector<Endpoint> take_entries() { return std::move(entries_); }

  /// A constant placed with its first reader: where, and the reader's
  /// evaluation (the constant shares its lane and start).
  struct Anchored {
    SlotId slot = 0;
    Endpoint at;
    Evaluation reader;
  };
  /// Constants anchored since the last call.
  std::vector<Anchored> take_anchored() { return std::exchange(anchored_, {}); }
  bool floating(SlotId s) const { return floating_[s] != 0; }
  const Endpoint& last_engine() const { return last_; }

 private:

  struct Arrival {
    uint64_t time = 0;
    bool moved = false;  // copied or uploaded to get there
  };

  uint64_t copy_ns(const TransferRoute& route, SlotId s) const {
    if (!route.cost) return 0;
    return copy_estimate_ns(route.cost->latency_ns, route.cost->bandwidth, slot_bytes(s));
  }

  // When slot `s` can be at `at`; nullopt: no route gets it there.
  std::optional<Arrival> arrival_at(SlotId s, const Endpoint& at) const {
    if (floating_[s]) return Arrival{0, false};  // a constant made where it is read
    for (const Held& h : held_[s])
      if (h.at == at) return Arrival{h.since, false};
    const int32_t input = input_of_slot_[s];
    if (held_[s].empty() && input >= 0) {
      // An input in host memory not read yet: it enters here if it may,
      // uploaded along the host's route when there is one.
      if (!p_.accepts(static_cast<size_t>(input), at)) return first_entry_then_copy(s, at);
      const bool uploaded = p_.config->find_route(Endpoint::unowned_host(), at) != nullptr;
      return Arrival{upload_ns(s, at), uploaded};
    }
    for (const Held& h : held_[s])
      if (const TransferRoute* route = p_.config->find_route(h.at, at))
        return Arrival{add_sat(h.since, copy_ns(*route, s)), true};
    return std::nullopt;
  }

  const PlacementCandidate* first_accepting(size_t input) const {
    for (const PlacementCandidate& c : p_.candidates)
      if (p_.accepts(input, c.endpoint)) return &c;
    return nullptr;
  }

  // The upload of slot `s` from host memory to `at` (0 without a route).
  uint64_t upload_ns(SlotId s, const Endpoint& at) const {
    const TransferRoute* upload = p_.config->find_route(Endpoint::unowned_host(), at);
    return upload ? copy_ns(*upload, s) : 0;
  }

  // An unplaced input that may not enter at `at`: it enters at the first
  // candidate that accepts it and is copied from there.
  std::optional<Arrival> first_entry_then_copy(SlotId s, const Endpoint& at) const {
    const PlacementCandidate* entry = first_accepting(static_cast<size_t>(input_of_slot_[s]));
    if (!entry) return std::nullopt;
    const TransferRoute* route = p_.config->find_route(entry->endpoint, at);
    if (!route) return std::nullopt;
    return Arrival{add_sat(upload_ns(s, entry->endpoint), copy_ns(*route, s)), true};
  }

  // A placed input is where it was placed from the start.
  void enter_placed_input(size_t i) {
    const Endpoint& placed = i < p_.input_placements.size() ? p_.input_placements[i] : Endpoint{};
    if (placed.engine.empty()) return;
    Endpoint at = placed;
    if (at.storage_class.empty()) {
      for (const PlacementCandidate& c : p_.candidates)
        if (c.endpoint.engine == placed.engine && p_.accepts(i, c.endpoint)) {
          at = c.endpoint;
          break;
        }
    }
    entries_[i] = at;
    held_[staging_.input_slots[i]].push_back(Held{at, 0});
    if (last_.engine.empty()) last_ = at;  // ties go where data lives first
  }

  // Where a slot was made, on which lane, and whether by an op a fused
  // region may continue.
  struct Made {
    Endpoint at;
    uint32_t lane = 0;
    bool elementwise = false;
  };

  const CostPlacementProblem& p_;
  const ExecProgram& staging_;
  const bool see_regions_;
  std::vector<std::vector<Held>> held_;
  std::vector<Made> made_by_;
  std::vector<int32_t> input_of_slot_;
  std::vector<Endpoint> entries_;
  /// Per resource (or engine without one): its lanes and bytes placed.
  std::map<std::string, size_t, std::less<>> engine_index_;
  std::vector<std::vector<uint64_t>> lanes_;
  std::vector<uint64_t> engine_bytes_;
  /// Per slot: a constant's result not placed yet (free wherever read).
  std::vector<uint8_t> floating_;
  std::vector<Anchored> anchored_;
  /// Where the instruction placed last runs (ties stay there).
  Endpoint last_;
};

// Ties: within memory first, then earlier finish, fewer bytes moved, and
// the earlier candidate (the caller's preference order).
bool better(const Evaluation& a, bool a_stays, const Evaluation& b, bool b_stays) {
  if (a.over_memory != b.over_memory) return !a.over_memory;
  if (a.finish != b.finish) return a.finish < b.finish;
  if (a.moved_bytes != b.moved_bytes) return a.moved_bytes < b.moved_bytes;
  return a_stays && !b_stays;
}

OpPlacement placement_of(const Evaluation& e, const PlacementCandidate& c) {
  OpPlacement p;
  p.queue = c.lanes > 1 ? e.lane : BatchWork::kAnyQueue;
  p.est_start_ns = e.start;
  p.est_finish_ns = e.finish;
  p.transfer_bytes = e.moved_bytes;
  return p;
}

// A placement of `n` instructions, each on its first candidate so far.
CostPlacement empty_placement(size_t n) {
  CostPlacement out;
  out.pick.assign(n, 0);
  out.placement.assign(n, OpPlacement{});
  return out;
}

CostPlacement finish(PlacementSimulation& sim, CostPlacement out) {
  out.input_entries = sim.take_entries();
  for (const OpPlacement& p : out.placement) out.est_makespan_ns = std::max(out.est_makespan_ns, p.est_finish_ns);
  return out;
}

}  // namespace

namespace {

// One earliest-finish placement; with `fixed`, each instruction's pick
// and queue are fixed (a constant still goes with its reader) and regions
// are costed as such: only the estimates are made.
std::optional<CostPlacement> place_earliest_finish_once(const CostPlacementProblem& problem,
                                                        const CostPlacement* fixed = nullptr) {
  PlacementSimulation sim{problem, true, fixed != nullptr};
  const size_t n = problem.staging->instructions.size();
  CostPlacement out = empty_placement(n);
  const ExecProgram& staging = *problem.staging;
  // The producer of each constant's result, to place it with its reader.
  std::vector<size_t> producer(staging.slots.size(), 0);
  for (size_t k = 0; k < n; ++k)
    for (SlotId s : staging.instructions[k].outputs) producer[s] = k;
  auto place = [&](size_t k) -> bool {
    const auto list = problem.candidates_of(k);
    std::optional<Evaluation> best;
    bool best_stays = false;
    uint32_t chosen = 0;
    for (uint32_t i = 0; i < list.size(); ++i) {
      if (fixed && fixed->pick[k] != i) continue;
      std::optional<uint32_t> lane;
      if (fixed) lane = fixed->placement[k].queue == BatchWork::kAnyQueue ? 0 : fixed->placement[k].queue;
      Evaluation e = sim.evaluate(k, list[i], lane);
      if (!e.reachable) continue;
      const bool stays = problem.candidates[list[i]].endpoint == sim.last_engine();
      if (!best || better(e, stays, *best, best_stays)) {
        best = e;
        best_stays = stays;
        chosen = i;
      }
    }
    if (!best) return false;
    out.over_memory = out.over_memory || best->over_memory;
    sim.commit(k, list[chosen], *best);
    out.pick[k] = chosen;
    out.placement[k] = placement_of(*best, problem.candidates[list[chosen]]);
    for (const auto& a : sim.take_anchored()) {
      const size_t c = producer[a.slot];
      const auto of_constant = problem.candidates_of(c);
      for (uint32_t i = 0; i < of_constant.size(); ++i)
        if (problem.candidates[of_constant[i]].endpoint == a.at) {
          out.pick[c] = i;
          out.placement[c] = placement_of(a.reader, problem.candidates[of_constant[i]]);
          out.placement[c].est_finish_ns = out.placement[c].est_start_ns;
          out.placement[c].transfer_bytes = 0;
          break;
        }
    }
    return true;
  };
  // Constants are placed with their first reader (they are splats a
  // region absorbs, or tiny); one nobody reads is placed on its own.
  for (size_t k = 0; k < n; ++k)
    if (!staging.instructions[k].is_constant() && !place(k)) return std::nullopt;
  for (size_t k = 0; k < n; ++k) {
    const ExecInstruction& ins = staging.instructions[k];
    if (ins.is_constant() && !ins.outputs.empty() && sim.floating(ins.outputs.front()) && !place(k))
      return std::nullopt;
  }
  return finish(sim, std::move(out));
}

}  // namespace

std::optional<CostPlacement> place_earliest_finish(const CostPlacementProblem& problem) {
  // Resources in the order their first candidate comes.
  std::vector<std::string> resources;
  for (const PlacementCandidate& c : problem.candidates)
    if (std::find(resources.begin(), resources.end(), resource_of(c)) == resources.end())
      resources.push_back(resource_of(c));
  const size_t n = problem.staging->instructions.size();
  std::optional<CostPlacement> best;
  for (size_t k = 1; k <= resources.size(); ++k) {
    const auto first_k = std::span<const std::string>{resources}.first(k);
    // Per instruction: positions in its list of the candidates kept (all of
    // them when none is of the first k resources).
    std::vector<std::vector<uint32_t>> kept(n), kept_candidates(n);
    for (size_t i = 0; i < n; ++i) {
      const auto list = problem.candidates_of(i);
      for (uint32_t pos = 0; pos < list.size(); ++pos)
        if (std::find(first_k.begin(), first_k.end(), resource_of(problem.candidates[list[pos]])) != first_k.end())
          kept[i].push_back(pos);
      if (kept[i].empty())
        for (uint32_t pos = 0; pos < list.size(); ++pos) kept[i].push_back(pos);
      for (uint32_t pos : kept[i]) kept_candidates[i].push_back(list[pos]);
    }
    CostPlacementProblem sub = problem;
    sub.candidates_of = [&kept_candidates](size_t i) { return std::span<const uint32_t>{kept_candidates[i]}; };
    auto placed = place_earliest_finish_once(sub);
    if (placed) placed = place_earliest_finish_once(sub, &*placed);
    if (!placed) continue;
    for (size_t i = 0; i < n; ++i) placed->pick[i] = kept[i][placed->pick[i]];
    if (!best || std::pair{placed->over_memory, placed->est_makespan_ns} < std::pair{best->over_memory, best->est_makespan_ns})
      best = std::move(placed);
  }
  return best;
}

std::optional<CostPlacement> place_round_robin(const CostPlacementProblem& problem) {
  PlacementSimulation sim{problem, false};
  const size_t n = problem.staging->instructions.size();
  CostPlacement out = empty_placement(n);
  for (size_t k = 0; k < n; ++k) {
    const auto list = problem.candidates_of(k);
    const uint32_t chosen = static_cast<uint32_t>(k % list.size());
    const Evaluation e = sim.evaluate(k, list[chosen]);
    if (!e.reachable) return std::nullopt;
    sim.commit(k, list[chosen], e);
    out.pick[k] = chosen;
    out.placement[k] = placement_of(e, problem.candidates[list[chosen]]);
    out.placement[k].queue = BatchWork::kAnyQueue;
  }
  return finish(sim, std::move(out));
}

EngineCostModel nominal_cost_model() {
  EngineCostModel m;
  m.rates = DTypeRates{1e9, 1e9, 1e9, 1e9, 1e9, 1e9};
  m.memory_bandwidth = 1e9;
  m.launch_latency_ns = 1000;
  return m;
}

}  // namespace tenact
