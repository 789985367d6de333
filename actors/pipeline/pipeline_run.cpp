#include "actors/pipeline/pipeline_run.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

namespace tenact {

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

Error internal(std::string message) { return Error{ErrorCode::Internal, "pipeline plan: " + std::move(message)}; }

uint64_t logical_bytes(const Tensor& t) {
  const int64_t n = t.element_count();
  return n <= 0 ? 0 : static_cast<uint64_t>(n) * size_of(t.dtype());
}

}  // namespace

std::string_view to_string(PipelineUnitKind kind) noexcept {
  switch (kind) {
    case PipelineUnitKind::Instruction: return "instruction";
    case PipelineUnitKind::Transfer: return "transfer";
    case PipelineUnitKind::Region: return "region";
  }
  return "unit";
}

// -- the plan ----------------------------------------------------------------------

class PipelinePlanBuilder {
 public:
  explicit PipelinePlanBuilder(std::shared_ptr<const PreparedProgram> program) {
    plan_.program_ = std::move(program);
  }

  Result<std::shared_ptr<const PipelinePlan>> build() {
    const PreparedProgram* p = plan_.program_.get();
    if (!p || !p->root || !p->root->staging || !p->root->schedule || !p->root->program)
      return internal("the prepared program lacks its root, program, staging or schedule");
    if (p->ops.size() != p->root->staging->instructions.size())
      return internal(std::to_string(p->ops.size()) + " prepared ops for " +
                      std::to_string(p->root->staging->instructions.size()) + " staged instructions");
    TENACT_TRY(group_nodes());
    TENACT_TRY(order_units());
    TENACT_TRY(make_copies());
    TENACT_TRY(connect_units());
    return std::make_shared<const PipelinePlan>(std::move(plan_));
  }

 private:
  const ExecProgram& staging() const { return *plan_.program_->root->staging; }
  const ScheduledGraph& graph() const { return *plan_.program_->root->schedule; }
  const std::vector<ElementwiseRegion>& regions() const { return plan_.program_->root->regions; }

  // Provisional units, numbered by their first node.
  struct Provisional {
    PipelineUnitKind kind;
    uint32_t index;
    LocationId location;
  };

  Status group_nodes() {
    const ScheduledGraph& g = graph();
    const ExecProgram& e = staging();
    const size_t n_nodes = g.nodes.size();
    if (n_nodes >= kNone) return internal("too many nodes");
    if (g.instruction_nodes.size() != e.instructions.size())
      return internal(std::to_string(g.instruction_nodes.size()) + " instruction nodes for " +
                      std::to_string(e.instructions.size()) + " instructions");
    const std::vector<int32_t> region_of = region_of_instructions(e.instructions.size(), regions());
    std::vector<uint32_t> region_unit(regions().size(), kNone);
    prov_of_node_.assign(n_nodes, kNone);
    for (uint32_t n = 0; n < n_nodes; ++n) {
      const ScheduledNode& node = g.nodes[n];
      if (node.location >= g.locations.size())
        return internal("node " + std::to_string(n) + " at an unknown location");
      for (uint32_t d : node.dependencies)
        if (d >= n) return internal("node " + std::to_string(n) + " depends on a later node " + std::to_string(d));
      if (node.is_transfer()) {
        if (node.source >= g.locations.size() || node.slot >= e.slots.size())
          return internal("transfer node " + std::to_string(n) + " names an unknown slot or source");
        prov_of_node_[n] = add_provisional({PipelineUnitKind::Transfer, n, node.location});
        continue;
      }
      const uint32_t i = node.instruction;
      if (i >= e.instructions.size() || g.instruction_nodes[i] != n)
        return internal("node " + std::to_string(n) + " names instruction " + std::to_string(i) +
                        ", whose node it is not");
      const int32_t r = region_of[i];
      if (r < 0) {
        prov_of_node_[n] = add_provisional({PipelineUnitKind::Instruction, i, node.location});
        continue;
      }
      uint32_t& unit = region_unit[static_cast<size_t>(r)];
      if (unit == kNone) {
        unit = add_provisional({PipelineUnitKind::Region, static_cast<uint32_t>(r), node.location});
        if (!(g.endpoint(node.location) == regions()[static_cast<size_t>(r)].endpoint))
          return internal("region " + std::to_string(r) + " runs at " +
                          regions()[static_cast<size_t>(r)].endpoint.to_string() + " but its node " +
                          std::to_string(n) + " at " + g.endpoint(node.location).to_string());
      } else if (provisional_[unit].location != node.location) {
        return internal("region " + std::to_string(r) + " spans two locations");
      }
      prov_of_node_[n] = unit;
    }
    // Dependencies between provisional units (internal ones dropped).
    prov_deps_.resize(provisional_.size());
    for (uint32_t n = 0; n < n_nodes; ++n) {
      const uint32_t pu = prov_of_node_[n];
      for (uint32_t d : g.nodes[n].dependencies)
        if (prov_of_node_[d] != pu) prov_deps_[pu].push_back(prov_of_node_[d]);
    }
    for (auto& deps : prov_deps_) {
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    }
    return ok_status();
  }

  uint32_t add_provisional(Provisional p) {
    provisional_.push_back(p);
    return static_cast<uint32_t>(provisional_.size() - 1);
  }

  // Kahn's algorithm, lowest provisional number (first node) first.
  Status order_units() {
    const size_t count = provisional_.size();
    std::vector<uint32_t> indegree(count);
    std::vector<std::vector<uint32_t>> users(count);
    for (uint32_t u = 0; u < count; ++u) {
      indegree[u] = static_cast<uint32_t>(prov_deps_[u].size());
      for (uint32_t d : prov_deps_[u]) users[d].push_back(u);
    }
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> heap;
    for (uint32_t u = 0; u < count; ++u)
      if (indegree[u] == 0) heap.push(u);
    final_of_prov_.assign(count, kNone);
    uint32_t next = 0;
    while (!heap.empty()) {
      const uint32_t u = heap.top();
      heap.pop();
      final_of_prov_[u] = next++;
      for (uint32_t v : users[u])
        if (--indegree[v] == 0) heap.push(v);
    }
    if (next != count) return internal("the units' dependencies form a cycle");

    auto& units = plan_.units_;
    units.resize(count);
    for (uint32_t u = 0; u < count; ++u) {
      PipelineUnit& unit = units[final_of_prov_[u]];
      unit.kind = provisional_[u].kind;
      unit.index = provisional_[u].index;
      unit.location = provisional_[u].location;
      if (unit.kind == PipelineUnitKind::Region) unit.region_memo = std::make_shared<RegionMemo>();
      for (uint32_t d : prov_deps_[u]) unit.dependencies.push_back(final_of_prov_[d]);
      std::sort(unit.dependencies.begin(), unit.dependencies.end());
    }
    for (uint32_t u = 0; u < count; ++u)
      for (uint32_t d : units[u].dependencies) units[d].dependents.push_back(u);
    plan_.unit_of_node_.resize(prov_of_node_.size());
    for (uint32_t n = 0; n < prov_of_node_.size(); ++n) {
      const uint32_t u = final_of_prov_[prov_of_node_[n]];
      plan_.unit_of_node_[n] = u;
      units[u].nodes.push_back(n);
    }
    return ok_status();
  }

  // Every copy a node or the caller makes: program inputs where they
  // enter, instruction results where they run, transfer destinations.
  Status make_copies() {
    const ScheduledGraph& g = graph();
    const ExecProgram& e = staging();
    if (g.input_locations.size() != e.input_slots.size() ||
        g.instruction_locations.size() != e.instructions.size())
      return internal("the schedule's input or instruction locations do not match the program");
    std::vector<std::vector<std::pair<LocationId, CopyId>>> by_slot(e.slots.size());
    auto intern = [&](SlotId s, LocationId loc) {
      for (const auto& [l, c] : by_slot[s])
        if (l == loc) return c;
      const auto c = static_cast<CopyId>(plan_.copies_.size());
      plan_.copies_.push_back(SlotCopy{s, loc});
      by_slot[s].emplace_back(loc, c);
      return c;
    };
    for (size_t i = 0; i < e.input_slots.size(); ++i) {
      if (e.input_slots[i] >= e.slots.size()) return internal("an input slot out of range");
      plan_.input_copies_.push_back(intern(e.input_slots[i], g.input_locations[i]));
    }
    for (const ScheduledNode& node : g.nodes) {
      if (node.is_transfer()) {
        intern(node.slot, node.location);
        continue;
      }
      for (SlotId s : e.instructions[node.instruction].outputs) {
        if (s >= e.slots.size()) return internal("an instruction writes a slot out of range");
        intern(s, node.location);
      }
    }
    plan_.copy_begin_.assign(e.slots.size() + 1, 0);
    for (SlotId s = 0; s < e.slots.size(); ++s)
      plan_.copy_begin_[s + 1] = plan_.copy_begin_[s] + static_cast<uint32_t>(by_slot[s].size());
    plan_.copies_by_slot_.reserve(plan_.copies_.size());
    for (const auto& list : by_slot)
      for (const auto& entry : list) plan_.copies_by_slot_.push_back(entry.second);
    plan_.readers_.assign(plan_.copies_.size(), 0);
    plan_.is_output_.assign(plan_.copies_.size(), 0);
    for (const SlotCopy& out : g.outputs) {
      TENACT_ASSIGN_OR_RETURN(CopyId c, find(out, "program output"));
      plan_.output_copies_.push_back(c);
      plan_.is_output_[c] = 1;
    }
    return ok_status();
  }

  Result<CopyId> find(SlotCopy copy, std::string_view who) const {
    if (copy.slot < staging().slots.size())
      if (auto c = plan_.find_copy(copy)) return *c;
    return internal(std::string{who} + " reads " + staging().describe_slot(copy.slot) + " at " +
                    (copy.location < graph().locations.size() ? graph().endpoint(copy.location).to_string()
                                                               : std::string{"an unknown location"}) +
                    ", which nothing makes there");
  }

  Status connect_units() {
    const ExecProgram& e = staging();
    const ScheduledGraph& g = graph();
    const PreparedProgram& p = *plan_.program_;
    std::vector<uint32_t> seen(plan_.copies_.size(), kNone);
    for (uint32_t u = 0; u < plan_.units_.size(); ++u) {
      PipelineUnit& unit = plan_.units_[u];
      switch (unit.kind) {
        case PipelineUnitKind::Instruction: {
          unit.instructions = {unit.index};
          const ExecInstruction& ins = e.instructions[unit.index];
          for (SlotId s : ins.inputs) unit.inputs.push_back({s, unit.location});
          for (SlotId s : ins.outputs) unit.outputs.push_back({s, unit.location});
          break;
        }
        case PipelineUnitKind::Region: {
          const ElementwiseRegion& r = regions()[unit.index];
          unit.instructions = r.instructions;
          for (SlotId s : r.inputs) unit.inputs.push_back({s, unit.location});
          for (SlotId s : r.outputs) unit.outputs.push_back({s, unit.location});
          break;
        }
        case PipelineUnitKind::Transfer: {
          const ScheduledNode& node = g.nodes[unit.index];
          unit.slot = node.slot;
          unit.source = node.source;
          unit.provider = node.provider;
          unit.inputs.push_back({node.slot, node.source});
          unit.outputs.push_back({node.slot, node.location});
          break;
        }
      }
      if (!unit.instructions.empty()) unit.queue = g.queue_of(unit.instructions.front());
      unit.lane = lane_of(unit.location, unit.kind == PipelineUnitKind::Transfer ? BatchWork::kAnyQueue : unit.queue);
      for (uint32_t i : unit.instructions) {
        if (i >= p.ops.size() || !p.ops[i]) return internal("instruction #" + std::to_string(i) + " has no prepared op");
        unit.ops.push_back(p.ops[i]);
      }
      for (const SlotCopy& in : unit.inputs) {
        TENACT_ASSIGN_OR_RETURN(CopyId c, find(in, "unit " + std::to_string(u)));
        unit.input_copies.push_back(c);
        if (seen[c] != u) {
          seen[c] = u;
          unit.reads.push_back(c);
          ++plan_.readers_[c];
        }
      }
      for (const SlotCopy& out : unit.outputs) {
        TENACT_ASSIGN_OR_RETURN(CopyId c, find(out, "unit " + std::to_string(u)));
        unit.output_copies.push_back(c);
      }
    }
    for (PipelineUnit& unit : plan_.units_) {
      if (unit.kind == PipelineUnitKind::Transfer) continue;
      for (uint32_t d : unit.dependents) {
        const PipelineUnit& next = plan_.units_[d];
        if (next.kind == PipelineUnitKind::Transfer || next.lane != unit.lane) unit.feeds_other_lane = true;
      }
    }
    return ok_status();
  }

  // The lane of (location, queue): numbered in order of first use.
  uint32_t lane_of(LocationId location, uint32_t queue) {
    for (uint32_t l = 0; l < lanes_.size(); ++l)
      if (lanes_[l].first == location && lanes_[l].second == queue) return l;
    lanes_.emplace_back(location, queue);
    plan_.lane_count_ = static_cast<uint32_t>(lanes_.size());
    return plan_.lane_count_ - 1;
  }

  PipelinePlan plan_;
  std::vector<std::pair<LocationId, uint32_t>> lanes_;
  std::vector<Provisional> provisional_;
  std::vector<uint32_t> prov_of_node_;
  std::vector<std::vector<uint32_t>> prov_deps_;
  std::vector<uint32_t> final_of_prov_;
};

Result<std::shared_ptr<const PipelinePlan>> PipelinePlan::build(
    std::shared_ptr<const PreparedProgram> program) {
  return PipelinePlanBuilder{std::move(program)}.build();
}

bool PipelinePlan::single_lane() const {
  if (units_.empty()) return false;
  const uint32_t lane = units_[0].lane;
  for (const PipelineUnit& u : units_)
    if (u.kind == PipelineUnitKind::Transfer || u.lane != lane) return false;
  return true;
}

std::optional<CopyId> PipelinePlan::find_copy(SlotCopy copy) const {
  if (copy.slot + size_t{1} >= copy_begin_.size()) return std::nullopt;
  for (uint32_t k = copy_begin_[copy.slot]; k < copy_begin_[copy.slot + 1]; ++k)
    if (copies_[copies_by_slot_[k]].location == copy.location) return copies_by_slot_[k];
  return std::nullopt;
}

std::string PipelinePlan::describe_unit(uint32_t u) const {
  if (u >= units_.size()) return "unit " + std::to_string(u) + " (no such unit)";
  const PipelineUnit& unit = units_[u];
  switch (unit.kind) {
    case PipelineUnitKind::Instruction:
      return program_->root->program->describe_op(staging().instructions[unit.index].semantic_op) +
             " at " + endpoint(unit.location).to_string();
    case PipelineUnitKind::Transfer:
      return "transfer of " + staging().describe_slot(unit.slot) + " " + endpoint(unit.source).to_string() +
             " -> " + endpoint(unit.location).to_string();
    case PipelineUnitKind::Region: {
      // describe_region says "region 0: <members> over <type> at <endpoint>".
      std::string text = describe_region(staging(), program_->root->regions[unit.index], unit.index);
      const std::string head = "region " + std::to_string(unit.index);
      std::string rest = text.substr(std::min(text.size(), head.size()));
      if (rest.rfind(": ", 0) == 0) rest.erase(0, 2);
      return head + " (" + rest + ")";
    }
  }
  return "unit " + std::to_string(u);
}

// -- the run -----------------------------------------------------------------------

PipelineRun::PipelineRun(std::shared_ptr<const PipelinePlan> plan) : plan_(std::move(plan)) {
  const size_t units = plan_->unit_count();
  const size_t copies = plan_->copy_count();
  state_.assign(units, UnitState::Waiting);
  unmet_.resize(units);
  held_.resize(copies);
  held_bytes_.assign(copies, 0);
  holding_.assign(copies, 0);
  readers_left_.resize(copies);
  for (CopyId c = 0; c < copies; ++c) readers_left_[c] = plan_->reader_count(c);
  unit_stamp_.assign(units, 0);
  pending_.assign(units, 0);
  copy_stamp_.assign(copies, 0);
  copy_scratch_.assign(copies, 0);
  for (uint32_t u = 0; u < units; ++u) {
    unmet_[u] = static_cast<uint32_t>(plan_->unit(u).dependencies.size());
    if (unmet_[u] == 0) {
      state_[u] = UnitState::Ready;
      ready_.push_back(u);
    }
  }
}

Result<PipelineRun> PipelineRun::start(std::shared_ptr<const PreparedProgram> program,
                                       std::vector<Tensor> inputs) {
  TENACT_ASSIGN_OR_RETURN(auto plan, PipelinePlan::build(std::move(program)));
  return start(std::move(plan), std::move(inputs));
}

Result<PipelineRun> PipelineRun::start(std::shared_ptr<const PipelinePlan> plan,
                                       std::vector<Tensor> inputs) {
  if (!plan) return Error{ErrorCode::Internal, "pipeline run: no plan"};
  const ExecProgram& e = plan->staging();
  const std::string& name = plan->program().root->program->name();
  if (inputs.size() != e.input_slots.size())
    return Error{ErrorCode::InputMismatch, "program '" + name + "' takes " +
                                               std::to_string(e.input_slots.size()) + " inputs, got " +
                                               std::to_string(inputs.size())};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueType& want = e.slot_type(e.input_slots[i]);
    if (inputs[i].dtype() != want.dtype || inputs[i].rank() != want.rank())
      return Error{ErrorCode::InputMismatch,
                   "input " + std::to_string(i) + " ('" + e.slots[e.input_slots[i]].name + "') of program '" +
                       name + "' is " + std::string{to_string(want.dtype)} + " of rank " +
                       std::to_string(want.rank()) + ", got " + std::string{to_string(inputs[i].dtype())} +
                       " of rank " + std::to_string(inputs[i].rank())};
  }
  PipelineRun run{std::move(plan)};
  for (size_t i = 0; i < inputs.size(); ++i) run.hold(run.plan_->input_copies()[i], std::move(inputs[i]));
  run.peak_bytes_ = run.live_bytes_;
  return run;
}

void PipelineRun::hold(CopyId c, Tensor tensor) {
  if (readers_left_[c] == 0 && !plan_->is_output(c)) return;
  drop(c);
  held_bytes_[c] = logical_bytes(tensor);
  held_[c] = std::move(tensor);
  holding_[c] = 1;
  live_bytes_ += held_bytes_[c];
  ++held_count_;
}

void PipelineRun::drop(CopyId c) {
  if (!holding_[c]) return;
  held_[c] = Tensor{};
  holding_[c] = 0;
  live_bytes_ -= held_bytes_[c];
  held_bytes_[c] = 0;
  --held_count_;
}

void PipelineRun::release_reads(const PipelineUnit& unit) {
  for (CopyId c : unit.reads)
    if (--readers_left_[c] == 0 && !plan_->is_output(c)) drop(c);
}

void PipelineRun::finish_unit(uint32_t u) {
  state_[u] = UnitState::Done;
  --in_flight_;
  ++done_count_;
  if (error_) return;
  for (uint32_t d : plan_->unit(u).dependents)
    if (--unmet_[d] == 0 && state_[d] == UnitState::Waiting) {
      state_[d] = UnitState::Ready;
      ready_.push_back(d);
    }
}

std::vector<uint32_t> PipelineRun::take_ready() {
  if (error_) return {};
  std::sort(ready_.begin(), ready_.end());
  for (uint32_t u : ready_) state_[u] = UnitState::Started;
  in_flight_ += ready_.size();
  std::vector<uint32_t> out;
  out.swap(ready_);
  return out;
}

std::vector<PipelineBatch> PipelineRun::take_ready_batches() {
  if (error_) return {};
  std::sort(ready_.begin(), ready_.end());
  std::vector<PipelineBatch> batches;
  // The compute batch of each lane in this call (kNone: none yet).
  std::vector<uint32_t> batch_at(plan_->lane_count(), kNone);
  const uint32_t stamp = ++stamp_;
  std::vector<uint32_t> stack;
  size_t started = 0;
  for (uint32_t r : ready_) {
    const PipelineUnit& seed = plan_->unit(r);
    state_[r] = UnitState::Started;
    ++started;
    if (seed.kind == PipelineUnitKind::Transfer) {
      batches.push_back(PipelineBatch{seed.location, {r}});
      continue;
    }
    uint32_t& b = batch_at[seed.lane];
    if (b == kNone) {
      b = static_cast<uint32_t>(batches.size());
      batches.push_back(PipelineBatch{seed.location, {}, seed.queue});
    }
    const uint32_t batch = b;
    batches[batch].units.push_back(r);
    // Extend: a waiting compute unit here joins once all its dependencies
    // that are not done have joined this batch.
    stack.push_back(r);
    while (!stack.empty()) {
      const uint32_t w = stack.back();
      stack.pop_back();
      for (uint32_t v : plan_->unit(w).dependents) {
        const PipelineUnit& next = plan_->unit(v);
        if (state_[v] != UnitState::Waiting || next.kind == PipelineUnitKind::Transfer || next.lane != seed.lane)
          continue;
        if (unit_stamp_[v] != stamp) {
          unit_stamp_[v] = stamp;
          pending_[v] = unmet_[v];
        }
        if (--pending_[v] == 0) {
          state_[v] = UnitState::Started;
          ++started;
          batches[batch].units.push_back(v);
          stack.push_back(v);
        }
      }
    }
  }
  ready_.clear();
  in_flight_ += started;
  for (PipelineBatch& batch : batches) std::sort(batch.units.begin(), batch.units.end());
  return batches;
}

std::vector<PipelineBatch> PipelineRun::take_all_batches() {
  if (error_) return {};
  std::vector<PipelineBatch> batches;
  // Per unit: the batch it went to; per lane: its latest compute batch.
  std::vector<uint32_t>& batch_of = pending_;
  std::vector<uint32_t> latest(plan_->lane_count(), kNone);
  size_t started = 0;
  for (uint32_t u = 0; u < unit_count(); ++u) {
    if (state_[u] == UnitState::Started || state_[u] == UnitState::Done) {
      batch_of[u] = kNone;  // in flight or done: not in a batch of this call
      continue;
    }
    const PipelineUnit& unit = plan_->unit(u);
    // The latest batch of this call any dependency went to (kNone: none).
    uint32_t needs = kNone;
    for (uint32_t d : unit.dependencies)
      if (batch_of[d] != kNone && (needs == kNone || batch_of[d] > needs)) needs = batch_of[d];
    uint32_t b = kNone;
    if (unit.kind != PipelineUnitKind::Transfer) {
      const uint32_t at = latest[unit.lane];
      if (at != kNone && (needs == kNone || needs <= at)) b = at;
    }
    if (b == kNone) {
      b = static_cast<uint32_t>(batches.size());
      batches.push_back(PipelineBatch{unit.location, {}, unit.kind == PipelineUnitKind::Transfer ? BatchWork::kAnyQueue : unit.queue});
      if (unit.kind != PipelineUnitKind::Transfer) latest[unit.lane] = b;
    }
    batches[b].units.push_back(u);
    batch_of[u] = b;
    state_[u] = UnitState::Started;
    ++started;
    // Other lanes wait on this batch's signal: nothing more joins it.
    if (unit.feeds_other_lane) latest[unit.lane] = kNone;
  }
  ready_.clear();
  in_flight_ += started;
  return batches;
}

std::vector<Tensor> PipelineRun::unit_inputs(uint32_t u) const {
  std::vector<Tensor> out;
  if (u >= unit_count()) return out;
  const PipelineUnit& unit = plan_->unit(u);
  out.reserve(unit.input_copies.size());
  for (CopyId c : unit.input_copies) out.push_back(held_[c]);
  return out;
}

Status PipelineRun::check_in_flight(uint32_t u, std::string_view what) const {
  if (u >= unit_count())
    return Error{ErrorCode::Internal, std::string{what} + " for unit " + std::to_string(u) + " of a run with " +
                                          std::to_string(unit_count()) + " units"};
  if (state_[u] != UnitState::Started)
    return Error{ErrorCode::Internal,
                 std::string{what} + " for " + plan_->describe_unit(u) + ", which " +
                     (state_[u] == UnitState::Done ? "is already done" : "has not started")};
  return ok_status();
}

Status PipelineRun::check_output(SlotId slot, const Tensor& tensor, uint32_t unit) const {
  const ValueType& want = plan_->staging().slot_type(slot);
  if (tensor.dtype() == want.dtype && tensor.rank() == want.rank()) return ok_status();
  const std::string who = unit == kNone ? std::string{"a batch"} : plan_->describe_unit(unit);
  return Error{ErrorCode::Internal, who + " reported " + std::string{to_string(tensor.dtype())} + " of rank " +
                                        std::to_string(tensor.rank()) + " for " +
                                        plan_->staging().describe_slot(slot) + ", which is " + want.to_string()};
}

Status PipelineRun::unit_done(uint32_t u, std::vector<Tensor> outputs) {
  TENACT_TRY(check_in_flight(u, "unit_done"));
  const PipelineUnit& unit = plan_->unit(u);
  if (outputs.size() != unit.outputs.size())
    return Error{ErrorCode::Internal, "unit_done for " + plan_->describe_unit(u) + " with " +
                                          std::to_string(outputs.size()) + " outputs, expected " +
                                          std::to_string(unit.outputs.size())};
  if (!error_) {
    for (size_t k = 0; k < outputs.size(); ++k)
      if (auto s = check_output(unit.outputs[k].slot, outputs[k], u); !s.ok()) return s;
    for (size_t k = 0; k < outputs.size(); ++k) hold(unit.output_copies[k], std::move(outputs[k]));
    peak_bytes_ = std::max(peak_bytes_, live_bytes_);
    release_reads(unit);
  }
  finish_unit(u);
  return ok_status();
}

void PipelineRun::record_error(Error error) {
  if (!error_) error_ = std::move(error);
}

void PipelineRun::cancel() {
  for (uint32_t u : ready_) state_[u] = UnitState::Waiting;
  ready_.clear();
  for (CopyId c = 0; c < held_.size(); ++c) drop(c);
}

void PipelineRun::fail(uint32_t u, Error error) {
  if (!error_) record_error(error.with_context(plan_->describe_unit(u)));
  if (u < unit_count() && state_[u] == UnitState::Started) {
    state_[u] = UnitState::Done;
    --in_flight_;
  }
  cancel();
}

// -- batches -------------------------------------------------------------------------

uint32_t PipelineRun::stamp_copies() const {
  stamp_ += 2;
  return stamp_ - 1;
}

std::vector<SlotCopy> PipelineRun::batch_input_copies(std::span<const uint32_t> batch) const {
  std::vector<SlotCopy> out;
  for (CopyId c : batch_input_ids(batch)) out.push_back(plan_->copy(c));
  return out;
}

std::vector<CopyId> PipelineRun::batch_input_ids(std::span<const uint32_t> batch) const {
  // produced: stamp; listed: stamp + 1.
  const uint32_t produced = stamp_copies();
  const uint32_t listed = produced + 1;
  std::vector<CopyId> out;
  for (uint32_t u : batch)
    if (u < unit_count())
      for (CopyId c : plan_->unit(u).output_copies) copy_stamp_[c] = produced;
  for (uint32_t u : batch)
    if (u < unit_count())
      for (CopyId c : plan_->unit(u).input_copies)
        if (copy_stamp_[c] != produced && copy_stamp_[c] != listed) {
          copy_stamp_[c] = listed;
          out.push_back(c);
        }
  return out;
}

std::vector<Tensor> PipelineRun::batch_inputs(std::span<const uint32_t> batch) const {
  std::vector<Tensor> out;
  for (CopyId c : batch_input_ids(batch)) out.push_back(held_[c]);
  return out;
}

std::vector<SlotCopy> PipelineRun::batch_output_copies(std::span<const uint32_t> batch) const {
  std::vector<SlotCopy> out;
  for (CopyId c : batch_output_ids(batch)) out.push_back(plan_->copy(c));
  return out;
}

std::vector<CopyId> PipelineRun::batch_output_ids(std::span<const uint32_t> batch) const {
  // Count the batch's own reads of each copy (copy_scratch_, valid where
  // copy_stamp_ is this call's stamp); a made copy is needed after the
  // batch when someone else reads it too, or it is an output.
  const uint32_t stamp = stamp_copies();
  for (uint32_t u : batch)
    if (u < unit_count())
      for (CopyId c : plan_->unit(u).reads) {
        if (copy_stamp_[c] != stamp) {
          copy_stamp_[c] = stamp;
          copy_scratch_[c] = 0;
        }
        ++copy_scratch_[c];
      }
  std::vector<CopyId> out;
  for (uint32_t u : batch)
    if (u < unit_count())
      for (CopyId c : plan_->unit(u).output_copies) {
        const uint32_t inside = copy_stamp_[c] == stamp ? copy_scratch_[c] : 0;
        if (plan_->is_output(c) || inside < plan_->reader_count(c)) out.push_back(c);
      }
  return out;
}

Status PipelineRun::batch_done(std::span<const uint32_t> batch, std::vector<Tensor> outputs) {
  const uint32_t stamp = ++stamp_;
  for (uint32_t u : batch) {
    TENACT_TRY(check_in_flight(u, "batch_done"));
    if (unit_stamp_[u] == stamp)
      return Error{ErrorCode::Internal, "batch_done lists " + plan_->describe_unit(u) + " twice"};
    unit_stamp_[u] = stamp;
  }
  const std::vector<CopyId> made = batch_output_ids(batch);
  if (outputs.size() != made.size())
    return Error{ErrorCode::Internal, "batch_done for a batch of " + std::to_string(batch.size()) +
                                          " units with " + std::to_string(outputs.size()) +
                                          " outputs, expected " + std::to_string(made.size())};
  if (!error_) {
    for (size_t k = 0; k < outputs.size(); ++k)
      if (auto s = check_output(plan_->copy(made[k]).slot, outputs[k], kNone); !s.ok()) return s;
    for (size_t k = 0; k < outputs.size(); ++k) hold(made[k], std::move(outputs[k]));
    peak_bytes_ = std::max(peak_bytes_, live_bytes_);
    for (uint32_t u : batch) release_reads(plan_->unit(u));
  }
  for (uint32_t u : batch) finish_unit(u);
  return ok_status();
}

void PipelineRun::fail_batch(std::span<const uint32_t> batch, Error error) {
  if (!error_) {
    std::string context;
    if (batch.size() == 1) {
      context = plan_->describe_unit(batch.front());
    } else if (!batch.empty()) {
      const uint32_t first = batch.front();
      context = "batch of " + std::to_string(batch.size()) + " units";
      if (first < unit_count()) context += " at " + plan_->endpoint(plan_->unit(first).location).to_string();
      context += ", " + plan_->describe_unit(first) + " to " + plan_->describe_unit(batch.back());
    } else {
      context = "an empty batch";
    }
    record_error(error.with_context(context));
  }
  for (uint32_t u : batch)
    if (u < unit_count() && state_[u] == UnitState::Started) {
      state_[u] = UnitState::Done;
      --in_flight_;
    }
  cancel();
}

Result<std::vector<Tensor>> PipelineRun::take_outputs() {
  if (!finished())
    return Error{ErrorCode::Internal, "take_outputs before the run is finished (" +
                                          std::to_string(in_flight_) + " units in flight, " +
                                          std::to_string(done_count_) + " of " +
                                          std::to_string(unit_count()) + " done)"};
  destinations_.reset();  // nothing runs any more: whoever planned them may reuse them
  if (error_) return *error_;
  if (outputs_taken_) return Error{ErrorCode::Internal, "take_outputs called twice"};
  outputs_taken_ = true;
  std::vector<Tensor> out;
  out.reserve(plan_->output_copies().size());
  for (CopyId c : plan_->output_copies()) out.push_back(held_[c]);
  for (CopyId c = 0; c < held_.size(); ++c) drop(c);
  return out;
}

}  // namespace tenact
