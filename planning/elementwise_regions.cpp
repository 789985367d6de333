#include "planning/elementwise_regions.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <unordered_set>
#include <utility>

namespace tenact {

namespace {

constexpr int32_t kNone = -1;

// Whether instruction `ins` may be a compute member of a region: an
// elementwise op with one result whose extents are all exact, every operand
// of the result's shape or rank 0.
bool fusable_compute(const ExecProgram& p, const ExecInstruction& ins) {
  if (family_of(ins.kind) != OpFamily::Elementwise || ins.outputs.size() != 1) return false;
  const Shape& shape = p.slot_type(ins.outputs[0]).shape;
  for (const ShapeExtent& e : shape)
    if (!e.is_exact()) return false;
  for (SlotId s : ins.inputs) {
    const Shape& operand = p.slot_type(s).shape;
    if (!operand.empty() && !(operand == shape)) return false;
  }
  return true;
}

bool is_broadcast(const ExecInstruction& ins) {
  return ins.kind == OpKind::BroadcastInDim && ins.inputs.size() == 1 && ins.outputs.size() == 1;
}

bool is_splat_constant(const ExecInstruction& ins) {
  if (!ins.is_constant() || ins.outputs.size() != 1) return false;
  const auto* attrs = std::get_if<ConstantAttrs>(&ins.attrs);
  return attrs != nullptr && attrs->splat.has_value();
}

// Regions are grouped by endpoint and shape; the key spells both
// unambiguously (canonical dimension expressions print injectively).
std::string region_key(const Endpoint& endpoint, const Shape& shape) {
  std::string key = endpoint.engine;
  key += '\0';
  key += endpoint.storage_class;
  key += '\0';
  key += to_string(shape);
  return key;
}

struct OpenRegion {
  Endpoint endpoint;
  Shape shape;
  std::vector<uint32_t> members;  // compute instructions, ascending
};

// The greedy walk: every fusable instruction lands in some open region
// (possibly a new one); `region_of[i]` says which. dep_max[s] is the
// highest region number slot s depends on (transitively, through any
// instruction), kNone if none. Region members only read slots depending on
// lower-numbered regions (or the region's own results), so a region's own
// dependencies are all below its number and dep_max never goes stale as
// regions grow.
struct Walk {
  std::vector<OpenRegion> regions;
  std::vector<int32_t> region_of;
};

Walk walk_program(const ExecProgram& p, std::span<const Endpoint> endpoints,
                  const CanFuseRegions& can_fuse, std::span<const uint32_t> queues, uint32_t max_members) {
  Walk walk;
  // A full region takes no more members: the instruction opens a new one.
  auto full = [&](int32_t region) {
    return max_members != 0 && walk.regions[static_cast<size_t>(region)].members.size() >= max_members;
  };
  walk.region_of.assign(p.instructions.size(), kNone);
  std::vector<int32_t> dep_max(p.slots.size(), kNone);
  std::map<std::string, int32_t> latest;  // newest region per endpoint and shape
  std::vector<std::pair<Endpoint, bool>> fuse_cache;
  auto endpoint_fuses = [&](const Endpoint& e) {
    for (const auto& [known, fuses] : fuse_cache)
      if (known == e) return fuses;
    const bool fuses = can_fuse ? can_fuse(e) : false;
    fuse_cache.emplace_back(e, fuses);
    return fuses;
  };
  auto producer_region = [&](SlotId s) {
    const auto& producer = p.slots[s].producer;
    return producer ? walk.region_of[*producer] : kNone;
  };

  for (size_t i = 0; i < p.instructions.size(); ++i) {
    const ExecInstruction& ins = p.instructions[i];
    int32_t deepest = kNone;
    for (SlotId s : ins.inputs) deepest = std::max(deepest, dep_max[s]);
    // An instruction ordered after others depends on them as on an operand.
    for (uint32_t before : ins.after)
      for (SlotId r : p.instructions[before].outputs) deepest = std::max(deepest, dep_max[r]);
    if (!fusable_compute(p, ins) || !endpoint_fuses(endpoints[i])) {
      for (SlotId r : ins.outputs) dep_max[r] = deepest;
      continue;
    }
    const Shape& shape = p.slot_type(ins.outputs[0]).shape;
    const std::string key = region_key(endpoints[i], shape);

    int32_t chosen = kNone;
    // The region that writes an operand: only the deepest one can qualify,
    // and only if no other operand depends on it (or on anything above).
    if (deepest != kNone) {
      const OpenRegion& r = walk.regions[static_cast<size_t>(deepest)];
      bool writes_operand = false;
      bool convex = true;
      for (SlotId s : ins.inputs) {
        if (producer_region(s) == deepest)
          writes_operand = true;
        else if (dep_max[s] >= deepest)
          convex = false;
      }
      if (writes_operand && convex && r.endpoint == endpoints[i] && r.shape == shape && !full(deepest))
        chosen = deepest;
    }
    if (chosen == kNone && (queues.empty() || queues[i] == BatchWork::kAnyQueue)) {
      auto it = latest.find(key);
      if (it != latest.end() && it->second > deepest && !full(it->second)) chosen = it->second;
    }
    if (chosen == kNone) {
      chosen = static_cast<int32_t>(walk.regions.size());
      walk.regions.push_back(OpenRegion{endpoints[i], shape, {}});
      latest[key] = chosen;
    }
    walk.regions[static_cast<size_t>(chosen)].members.push_back(static_cast<uint32_t>(i));
    walk.region_of[i] = chosen;
    dep_max[ins.outputs[0]] = chosen;
  }
  return walk;
}

// Slots read by members (compute and absorbed broadcasts, ascending) and
// written outside, in order of first read, excluding the absorbed splats'
// and broadcasts' results.
std::vector<SlotId> region_inputs(const ExecProgram& p, const std::vector<uint32_t>& members,
                                  const std::vector<int32_t>& region_of, int32_t index,
                                  const std::vector<SlotId>& absorbed_slots) {
  std::vector<SlotId> inputs;
  std::unordered_set<SlotId> seen(absorbed_slots.begin(), absorbed_slots.end());
  for (uint32_t i : members)
    for (SlotId s : p.instructions[i].inputs) {
      const auto& producer = p.slots[s].producer;
      if (producer && region_of[*producer] == index) continue;
      if (seen.insert(s).second) inputs.push_back(s);
    }
  return inputs;
}

}  // namespace

Result<std::vector<ElementwiseRegion>> plan_elementwise_regions(
    const ExecProgram& program, std::span<const Endpoint> instruction_endpoints,
    const CanFuseRegions& can_fuse, std::span<const uint32_t> instruction_queues, uint32_t max_compute_members) {
  const size_t n = program.instructions.size();
  if (instruction_endpoints.size() != n)
    return Error{ErrorCode::Internal, "region planning got " +
                                          std::to_string(instruction_endpoints.size()) +
                                          " instruction endpoints for " + std::to_string(n) +
                                          " instructions"};
  if (!instruction_queues.empty() && instruction_queues.size() != n)
    return Error{ErrorCode::Internal, "region planning got " + std::to_string(instruction_queues.size()) +
                                          " instruction queues for " + std::to_string(n) + " instructions"};
  Walk walk = walk_program(program, instruction_endpoints, can_fuse, instruction_queues, max_compute_members);

  // Who reads each slot, for a numbering of regions: the one region all
  // its readers belong to, or kShared when some reader is outside every
  // region or in another region.
  constexpr int32_t kUnread = -2, kShared = -3;
  auto slot_readers = [&](const std::vector<int32_t>& region_of) {
    std::vector<int32_t> readers(program.slots.size(), kUnread);
    for (size_t i = 0; i < n; ++i)
      for (SlotId s : program.instructions[i].inputs) {
        const int32_t here = region_of[i] == kNone ? kShared : region_of[i];
        if (readers[s] == kUnread)
          readers[s] = here;
        else if (readers[s] != here)
          readers[s] = kShared;
      }
    return readers;
  };

  // Program outputs by slot (ExecProgram::is_output scans the outputs).
  std::vector<bool> is_output(program.slots.size(), false);
  for (SlotId s : program.output_slots) is_output[s] = true;

  // Broadcasts absorbed per open region (single members included),
  // ascending: a broadcast_in_dim to the region's shape that only that
  // region's members read, on its endpoint and (when queues are planned)
  // its first member's queue, in no `after` constraint either way
  // (absorbed, it runs inside the region's pass).
  std::vector<bool> ordered(n, false);
  for (size_t i = 0; i < n; ++i)
    for (uint32_t before : program.instructions[i].after) ordered[i] = ordered[before] = true;
  std::vector<std::vector<uint32_t>> broadcasts(walk.regions.size());
  {
    const std::vector<int32_t> open_readers = slot_readers(walk.region_of);
    for (size_t b = 0; b < n; ++b) {
      const ExecInstruction& ins = program.instructions[b];
      if (!is_broadcast(ins) || ordered[b] || walk.region_of[b] != kNone) continue;
      const SlotId s = ins.outputs[0];
      const int32_t k = open_readers[s];
      if (k < 0 || is_output[s]) continue;
      const OpenRegion& r = walk.regions[static_cast<size_t>(k)];
      if (!(r.endpoint == instruction_endpoints[b]) || !(program.slot_type(s).shape == r.shape)) continue;
      if (!instruction_queues.empty() && instruction_queues[b] != instruction_queues[r.members.front()]) continue;
      broadcasts[static_cast<size_t>(k)].push_back(static_cast<uint32_t>(b));
    }
  }

  // Keep the regions with at least two compute members, or one that reads
  // an absorbed broadcast, renumbered in order of opening (= order of their
  // first compute member).
  std::vector<int32_t> kept_index(walk.regions.size(), kNone);
  std::vector<ElementwiseRegion> regions;
  for (size_t k = 0; k < walk.regions.size(); ++k) {
    OpenRegion& open = walk.regions[k];
    if (open.members.size() < 2 && broadcasts[k].empty()) continue;
    kept_index[k] = static_cast<int32_t>(regions.size());
    ElementwiseRegion r;
    r.instructions = std::move(open.members);
    r.broadcasts = std::move(broadcasts[k]);
    r.endpoint = std::move(open.endpoint);
    r.shape = std::move(open.shape);
    regions.push_back(std::move(r));
  }
  std::vector<int32_t> region_of(n, kNone);
  for (size_t i = 0; i < n; ++i)
    if (walk.region_of[i] != kNone) region_of[i] = kept_index[static_cast<size_t>(walk.region_of[i])];
  // Absorbed broadcasts count as outside here: their operands are region
  // inputs, never absorbed splats.
  const std::vector<int32_t> readers = slot_readers(region_of);

  // Splat candidates per region, ascending by instruction.
  std::vector<std::vector<uint32_t>> splats(regions.size());
  for (uint32_t c : program.constant_instructions) {
    const ExecInstruction& ins = program.instructions[c];
    if (!is_splat_constant(ins)) continue;
    const SlotId s = ins.outputs[0];
    const int32_t k = readers[s];
    if (k < 0 || is_output[s]) continue;
    const ElementwiseRegion& r = regions[static_cast<size_t>(k)];
    if (!(r.endpoint == instruction_endpoints[c]) || !(program.slot_type(s).shape == r.shape)) continue;
    splats[static_cast<size_t>(k)].push_back(c);
  }

  for (size_t k = 0; k < regions.size(); ++k) {
    ElementwiseRegion& r = regions[k];
    const auto index = static_cast<int32_t>(k);
    std::vector<uint32_t>& absorbed = splats[k];
    const std::vector<uint32_t>& viewed = r.broadcasts;
    std::vector<uint32_t> readers_of_inputs = r.instructions;
    readers_of_inputs.insert(readers_of_inputs.end(), viewed.begin(), viewed.end());
    std::sort(readers_of_inputs.begin(), readers_of_inputs.end());
    std::vector<SlotId> absorbed_slots;
    for (uint32_t b : viewed) absorbed_slots.push_back(program.instructions[b].outputs[0]);
    for (uint32_t c : absorbed) absorbed_slots.push_back(program.instructions[c].outputs[0]);
    r.inputs = region_inputs(program, readers_of_inputs, region_of, index, absorbed_slots);
    // An absorbed broadcast enters as a view of the region's full shape.
    const bool has_full_input =
        !viewed.empty() || std::any_of(r.inputs.begin(), r.inputs.end(),
                                       [&](SlotId s) { return !program.slot_type(s).shape.empty(); });
    if (!r.shape.empty() && !has_full_input && !absorbed.empty()) {
      absorbed.erase(absorbed.begin());
      absorbed_slots.erase(absorbed_slots.begin() + static_cast<std::ptrdiff_t>(viewed.size()));
      r.inputs = region_inputs(program, readers_of_inputs, region_of, index, absorbed_slots);
    }
    for (uint32_t i : r.instructions)
      for (SlotId out : program.instructions[i].outputs)
        if (is_output[out] || (readers[out] != kUnread && readers[out] != index))
          r.outputs.push_back(out);
    std::sort(r.outputs.begin(), r.outputs.end());
    r.splat_constants = absorbed;
    r.instructions.insert(r.instructions.end(), absorbed.begin(), absorbed.end());
    r.instructions.insert(r.instructions.end(), viewed.begin(), viewed.end());
    std::sort(r.instructions.begin(), r.instructions.end());
  }
  std::stable_sort(regions.begin(), regions.end(),
                   [](const ElementwiseRegion& a, const ElementwiseRegion& b) {
                     return a.instructions.front() < b.instructions.front();
                   });
  return regions;
}

std::vector<int32_t> region_of_instructions(size_t instruction_count,
                                            std::span<const ElementwiseRegion> regions) {
  std::vector<int32_t> out(instruction_count, kNone);
  for (size_t k = 0; k < regions.size(); ++k)
    for (uint32_t i : regions[k].instructions)
      if (i < instruction_count) out[i] = static_cast<int32_t>(k);
  return out;
}

std::string describe_region(const ExecProgram& program, const ElementwiseRegion& region,
                            size_t index) {
  std::string out = "region " + std::to_string(index) + ":";
  DType dtype = DType::F32;
  bool first = true;
  for (uint32_t i : region.instructions) {
    if (std::binary_search(region.splat_constants.begin(), region.splat_constants.end(), i) ||
        std::binary_search(region.broadcasts.begin(), region.broadcasts.end(), i))
      continue;
    const ExecInstruction& ins = program.instructions[i];
    out += first ? " #" : ", #";
    out += std::to_string(i) + " " + std::string{to_string(ins.kind)};
    first = false;
    if (!ins.outputs.empty()) dtype = program.slot_type(ins.outputs[0]).dtype;
  }
  if (const size_t n = region.splat_constants.size(); n > 0)
    out += " (+" + std::to_string(n) + (n == 1 ? " splat)" : " splats)");
  if (const size_t n = region.broadcasts.size(); n > 0)
    out += " (+" + std::to_string(n) + (n == 1 ? " broadcast)" : " broadcasts)");
  out += " over " + type_string(dtype, region.shape) + " at " + region.endpoint.to_string();
  return out;
}

std::vector<ExecStep> sequential_steps(const ExecProgram& program,
                                       std::span<const ElementwiseRegion> regions) {
  const size_t n = program.instructions.size();
  const std::vector<int32_t> region_of = region_of_instructions(n, regions);
  // Nodes: regions first (0 .. regions-1), then one per instruction in no region.
  std::vector<uint32_t> node_of(n);
  std::vector<ExecStep> node_step;
  std::vector<uint32_t> node_first;  // lowest instruction, the priority
  for (size_t k = 0; k < regions.size(); ++k) {
    node_step.push_back(ExecStep{ExecStep::Kind::Region, static_cast<uint32_t>(k)});
    node_first.push_back(regions[k].instructions.empty() ? 0 : regions[k].instructions.front());
  }
  for (size_t i = 0; i < n; ++i) {
    if (region_of[i] != kNone) {
      node_of[i] = static_cast<uint32_t>(region_of[i]);
      continue;
    }
    node_of[i] = static_cast<uint32_t>(node_step.size());
    node_step.push_back(ExecStep{ExecStep::Kind::Instruction, static_cast<uint32_t>(i)});
    node_first.push_back(static_cast<uint32_t>(i));
  }
  const size_t nodes = node_step.size();
  std::vector<std::vector<uint32_t>> readers(nodes);
  std::vector<size_t> waiting(nodes, 0);  // edges not yet satisfied (one per cross-node read)
  for (size_t i = 0; i < n; ++i)
    for (SlotId s : program.instructions[i].inputs) {
      const auto& producer = program.slots[s].producer;
      if (!producer || node_of[*producer] == node_of[i]) continue;
      readers[node_of[*producer]].push_back(node_of[i]);
      ++waiting[node_of[i]];
    }
  using Entry = std::pair<uint32_t, uint32_t>;  // (first instruction, node)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (size_t v = 0; v < nodes; ++v)
    if (waiting[v] == 0) ready.emplace(node_first[v], static_cast<uint32_t>(v));
  std::vector<ExecStep> steps;
  steps.reserve(nodes);
  while (!ready.empty()) {
    const uint32_t v = ready.top().second;
    ready.pop();
    steps.push_back(node_step[v]);
    for (uint32_t w : readers[v])
      if (--waiting[w] == 0) ready.emplace(node_first[w], w);
  }
  return steps;
}

}  // namespace tenact
