#include "planning/preparation_context.hpp"

#include "planning/cost_placement.hpp"
#include "planning/signature.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace tenact {

namespace {

using Candidates = std::vector<const EngineEntry*>;

/// Per op, the dispatches that could serve it, as indices into the
/// resolver's dispatches. Ops served by the same capability (op family,
/// or extension family) share one list: O(ops) indices, not O(ops)
/// lists of bindings.
struct OpCandidates {
  std::vector<std::vector<uint32_t>> lists;
  std::vector<uint32_t> list_of_op;

  size_t ops() const { return list_of_op.size(); }
  const std::vector<uint32_t>& of(size_t op) const { return lists[list_of_op[op]]; }
};
/// A selection: per op, an index into its candidate list.
using Pick = std::vector<uint32_t>;

bool is_route_error(const Error& e) {
  return e.code() == ErrorCode::NoInputIngress || e.code() == ErrorCode::MissingTransferProvider;
}

const ExtensionAttrs* extension_of(const Op& op) {
  return op.kind == OpKind::Extension ? std::get_if<ExtensionAttrs>(&op.attrs) : nullptr;
}

bool serves_op(const EngineEntry& engine, const Op& op) {
  if (const ExtensionAttrs* ext = extension_of(op))
    return engine.extension_slot(ext->family) != nullptr;
  return engine.capabilities.runs(op.kind);
}

std::string join_ids(const std::vector<std::string>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + ids[i];
  return out;
}

class ContextResolver {
 public:
  ContextResolver(const RuntimeConfigPtr& config, std::shared_ptr<const SemanticProgram> program,
                  std::span<const InputDescriptor> inputs, const PrepareOptions& options,
                  uint64_t budget)
      : config_(config), program_(std::move(program)), inputs_(inputs), options_(options),
        budget_(budget) {}

  Result<PreparationContext> resolve() {
    if (!config_ || !program_) return Error{ErrorCode::Internal, "preparation without a configuration or program"};
    if (inputs_.size() != program_->inputs().size())
      return Error{ErrorCode::InputMismatch, "program '" + program_->name() + "' takes " +
                                                 std::to_string(program_->inputs().size()) +
                                                 " inputs, " + std::to_string(inputs_.size()) + " given"};
    TENACT_TRY(select_candidates());
    auto staged = stage(*program_);
    if (!staged.ok()) return staged.error();
    if (options_.pins) {
      auto ordered = with_order(std::move(*staged), options_.pins->order, program_->ops().size());
      if (!ordered.ok()) return ordered.error();
      staged = std::move(ordered);
    }
    staging_ = std::make_shared<const ExecProgram>(std::move(*staged));
    if (options_.pins) return place_pinned(*options_.pins);

    if (const auto policy = cost_policy()) {
      TENACT_ASSIGN_OR_RETURN(auto found, place_by_cost(*policy));
      if (found) return std::move(*found);
    }
    for (const std::string& storage : storage_classes()) {
      TENACT_ASSIGN_OR_RETURN(auto found, search_storage_class(storage));
      if (found) return std::move(*found);
    }
    if (!options_.placement.storage_class) {
      TENACT_ASSIGN_OR_RETURN(auto per_op, op_candidates(std::nullopt));
      if (per_op && per_op->ops() > 0) {
        TENACT_ASSIGN_OR_RETURN(auto found, search(*per_op));
        if (found) return std::move(*found);
      }
    }
    if (last_route_error_) return *last_route_error_;
    if (missing_family_)
      return Error{ErrorCode::MissingExtension,
                   "no registered engine has a slot for extension family '" + *missing_family_ +
                       "' (needed by program '" + program_->name() + "')"};
    return no_eligible_engine();
  }

 private:
  // The policy that places by estimates, when one does: asked for, or
  // Auto with estimates from every candidate. nullopt: the preference
  // search.
  std::optional<PlacementPolicy> cost_policy() const {
    if (staging_->instructions.empty()) return std::nullopt;
    switch (options_.policy) {
      case PlacementPolicy::Preference: return std::nullopt;
      case PlacementPolicy::EarliestFinish:
      case PlacementPolicy::RoundRobin: return options_.policy;
      case PlacementPolicy::Auto: break;
    }
    const bool all_estimate = std::all_of(candidates_.begin(), candidates_.end(),
                                          [](const EngineEntry* e) { return e->capabilities.cost.has_value(); });
    if (!all_estimate) return std::nullopt;
    return PlacementPolicy::EarliestFinish;
  }

  // Per slot, the extents placement costs it at: exact and upper-bound
  // extents evaluated at the caller's signature, anything else 1.
  std::vector<std::vector<int64_t>> slot_extents() const {
    auto bound = bind_signature(*program_, signature_of(inputs_));
    const SymbolBindings symbols = bound.ok() ? std::move(*bound) : SymbolBindings{};
    std::vector<std::vector<int64_t>> out(staging_->slots.size());
    for (size_t s = 0; s < staging_->slots.size(); ++s)
      for (const ShapeExtent& extent : staging_->slots[s].type.shape) {
        int64_t v = 1;
        if (extent.kind != ExtentKind::Unknown)
          if (auto value = extent.expr.evaluate(symbols); value.ok() && *value >= 0) v = *value;
        out[s].push_back(v);
      }
    return out;
  }

  // The placement of `policy` (cost_placement.hpp) over the candidates of
  // the storage constraint (without one: every class of every candidate),
  // built like any selection. nullopt: some op has no candidate, the
  // estimates found no reachable place, or the plan needs a route that is
  // not there (remembered); the preference search then runs.
  Result<std::optional<PreparationContext>> place_by_cost(PlacementPolicy policy) {
    TENACT_ASSIGN_OR_RETURN(auto per_op, op_candidates(options_.placement.storage_class));
    if (!per_op) return std::optional<PreparationContext>{};
    std::vector<PlacementCandidate> candidates;
    for (const OpDispatch& d : dispatches_) {
      const EngineEntry* e = config_->find_engine(d.binding.endpoint.engine);
      PlacementCandidate c{d.binding.endpoint, e && e->capabilities.cost ? *e->capabilities.cost : nominal_cost_model(), 1};
      if (e && c.cost.lanes > 1 && e->capabilities.queues >= c.cost.lanes) c.lanes = c.cost.lanes;
      c.fuses_elementwise = e && e->capabilities.fused_elementwise_regions && options_.compiler.fuse_elementwise;
      candidates.push_back(std::move(c));
    }
    const auto extents = slot_extents();
    std::vector<Endpoint> placements;
    for (const InputDescriptor& in : inputs_) placements.push_back(in.placement);
    CostPlacementProblem problem;
    problem.staging = staging_.get();
    problem.slot_extents = extents;
    problem.candidates = candidates;
    problem.candidates_of = [&](size_t k) { return std::span<const uint32_t>{per_op->of(k)}; };
    problem.input_placements = placements;
    problem.accepts = [&](size_t i, const Endpoint& at) {
      const EngineEntry* e = config_->find_engine(at.engine);
      return e && accepts_input(*e, at.storage_class, inputs_[i]);
    };
    problem.config = config_.get();
    auto placed = policy == PlacementPolicy::RoundRobin ? place_round_robin(problem) : place_earliest_finish(problem);
    if (!placed) return std::optional<PreparationContext>{};
    ++attempts_;
    planned_ = std::move(*placed);
    planned_by_ = policy;
    auto built = build(table_of(*per_op, planned_->pick), std::nullopt);
    planned_.reset();
    if (built.ok()) return std::optional<PreparationContext>{std::move(*built)};
    if (!is_route_error(built.error())) return built.error();
    last_route_error_ = built.error();
    return std::optional<PreparationContext>{};
  }

  // Every op where its pin says, on the pin's queue: the selection is
  // taken as it is (no search); its inputs enter as for any selection.
  Result<PreparationContext> place_pinned(const ExecutionPins& pins) {
    if (pins.ops.size() != program_->ops().size())
      return Error{ErrorCode::Internal, std::to_string(pins.ops.size()) + " pins for program '" + program_->name() +
                                            "' of " + std::to_string(program_->ops().size()) + " ops"};
    std::vector<uint32_t> of_op;
    CostPlacement fixed;
    for (const ExecInstruction& ins : staging_->instructions) {
      const OpPin& pin = pins.ops[ins.semantic_op];
      const Op& op = program_->ops()[ins.semantic_op];
      const EngineEntry* e = config_->find_engine(pin.engine);
      const auto& classes = e ? e->capabilities.storage_classes : std::vector<std::string>{};
      if (!e || !e->capabilities.executable ||
          std::find(classes.begin(), classes.end(), pin.storage_class) == classes.end())
        return Error{ErrorCode::NoEligibleEngine,
                     program_->describe_op(ins.semantic_op) + " is pinned to " +
                         Endpoint{pin.engine, pin.storage_class}.to_string() +
                         ", which no registered executable engine offers"};
      if (!serves_op(*e, op))
        return Error{ErrorCode::NoEligibleEngine, program_->describe_op(ins.semantic_op) + " is pinned to engine '" +
                                                      pin.engine + "', which does not run it"};
      of_op.push_back(intern_dispatch(*e, pin.storage_class, extension_of(op)));
      OpPlacement placed;
      placed.queue = pin.queue;
      fixed.placement.push_back(placed);
    }
    std::vector<OpDispatch> distinct;
    std::vector<int32_t> local(dispatches_.size(), -1);
    for (uint32_t& d : of_op) {
      if (local[d] < 0) {
        local[d] = static_cast<int32_t>(distinct.size());
        distinct.push_back(dispatches_[d]);
      }
      d = static_cast<uint32_t>(local[d]);
    }
    ++attempts_;
    pinned_ = std::move(fixed);
    std::optional<Endpoint> empty_root;
    if (of_op.empty()) {
      const EngineEntry* first = candidates_.front();
      empty_root = Endpoint{first->id(), first->capabilities.default_storage_class};
    }
    return build(OpDispatchTable{std::move(distinct), std::move(of_op)}, empty_root);
  }

  // The selection `pick` as a table: its distinct dispatches in order of
  // first use.
  OpDispatchTable table_of(const OpCandidates& per_op, const Pick& pick) const {
    std::vector<int32_t> local(dispatches_.size(), -1);
    std::vector<OpDispatch> distinct;
    std::vector<uint32_t> of_op;
    of_op.reserve(pick.size());
    for (size_t op = 0; op < pick.size(); ++op) {
      const uint32_t d = per_op.of(op)[pick[op]];
      if (local[d] < 0) {
        local[d] = static_cast<int32_t>(distinct.size());
        distinct.push_back(dispatches_[d]);
      }
      of_op.push_back(static_cast<uint32_t>(local[d]));
    }
    return OpDispatchTable{std::move(distinct), std::move(of_op)};
  }

  // Names the first op no allowed executable engine runs at all, when
  // there is one (otherwise no single placement fits every op).
  Error no_eligible_engine() const {
    std::string which;
    for (size_t i = 0; i < program_->ops().size() && which.empty(); ++i) {
      const bool anyone = std::any_of(candidates_.begin(), candidates_.end(),
                                      [&](const EngineEntry* e) { return serves_op(*e, program_->ops()[i]); });
      if (!anyone && !candidates_.empty()) which = ": none runs " + program_->describe_op(i);
    }
    return Error{ErrorCode::NoEligibleEngine,
                 "no engine allowed by the placement constraint (" +
                     options_.placement.to_string() + ") can run every op of program '" +
                     program_->name() + "'" + which};
  }

  Status select_candidates() {
    Candidates all;
    if (options_.placement.engines.empty()) {
      for (const EngineEntry& e : config_->engines()) all.push_back(&e);
    } else {
      // An explicit list is the caller's preference order (registered
      // preferences do not re-sort it); a repeated id counts once,
      // unregistered ids allow nothing.
      for (const std::string& id : options_.placement.distinct_engines())
        if (const EngineEntry* e = config_->find_engine(id)) all.push_back(e);
    }
    for (const EngineEntry* e : all)
      if (e->capabilities.executable) candidates_.push_back(e);
    if (!candidates_.empty()) return ok_status();
    for (const EngineEntry* e : all) {
      for (size_t i = 0; i < program_->ops().size(); ++i)
        if (serves_op(*e, program_->ops()[i]))
          return Error{ErrorCode::NoExecutableEngine,
                       "engine '" + e->id() + "' could serve " + program_->describe_op(i) +
                           " but is preparation-only (not executable), and no executable engine "
                           "is allowed (" +
                           options_.placement.to_string() + ")"};
    }
    return no_eligible_engine();
  }

  std::vector<std::string> storage_classes() const {
    std::vector<std::string> out;
    auto add = [&out](const std::string& s) {
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    };
    if (options_.placement.storage_class) {
      for (const EngineEntry* e : candidates_)
        for (const std::string& s : e->capabilities.storage_classes)
          if (s == *options_.placement.storage_class) add(s);
      return out;
    }
    for (const EngineEntry* e : candidates_) add(e->capabilities.default_storage_class);
    for (const EngineEntry* e : candidates_)
      for (const std::string& s : e->capabilities.storage_classes) add(s);
    return out;
  }

  Result<std::optional<PreparationContext>> search_storage_class(const std::string& storage) {
    TENACT_ASSIGN_OR_RETURN(auto per_op, op_candidates(storage));
    if (!per_op) return std::optional<PreparationContext>{};
    if (per_op->ops() == 0) {
      // No ops: the root sits on the first candidate with this class.
      for (const EngineEntry* e : candidates_) {
        const auto& classes = e->capabilities.storage_classes;
        if (std::find(classes.begin(), classes.end(), storage) == classes.end()) continue;
        auto built = build({}, Endpoint{e->id(), storage});
        if (built.ok()) return std::optional<PreparationContext>{std::move(*built)};
        if (!is_route_error(built.error())) return built.error();
        last_route_error_ = built.error();
        return std::optional<PreparationContext>{};
      }
      return std::optional<PreparationContext>{};
    }
    return search(*per_op);
  }

  // The dispatches of every op in `storage` (nullopt: in any class of any
  // candidate, default classes first). nullopt result: some op has none.
  Result<std::optional<OpCandidates>> op_candidates(const std::optional<std::string>& storage) {
    OpCandidates per_op;
    per_op.list_of_op.reserve(staging_->instructions.size());
    // What serves an op: its family, or for an extension op its family name.
    std::map<std::pair<int, std::string>, uint32_t, std::less<>> list_of_capability;
    for (const ExecInstruction& ins : staging_->instructions) {
      const Op& op = program_->ops()[ins.semantic_op];
      const ExtensionAttrs* ext = extension_of(op);
      std::pair<int, std::string> capability{static_cast<int>(family_of(op.kind)), ext ? ext->family : ""};
      auto [it, fresh] = list_of_capability.try_emplace(std::move(capability),
                                                        static_cast<uint32_t>(per_op.lists.size()));
      if (fresh) {
        std::vector<uint32_t> list = candidates_for(op, storage);
        if (list.empty()) return std::optional<OpCandidates>{};
        per_op.lists.push_back(std::move(list));
      }
      per_op.list_of_op.push_back(it->second);
    }
    return std::optional<OpCandidates>{std::move(per_op)};
  }

  // The dispatches that could serve `op` (see op_candidates), as indices
  // into dispatches_.
  std::vector<uint32_t> candidates_for(const Op& op, const std::optional<std::string>& storage) {
    std::vector<uint32_t> list;
    auto consider = [&](const EngineEntry& e, const std::string& cls) {
      if (!serves_op(e, op)) {
        if (const ExtensionAttrs* ext = extension_of(op))
          if (!config_->has_extension_family(ext->family) && !missing_family_)
            missing_family_ = ext->family;
        return;
      }
      list.push_back(intern_dispatch(e, cls, extension_of(op)));
    };
    if (storage) {
      for (const EngineEntry* e : candidates_) {
        const auto& classes = e->capabilities.storage_classes;
        if (std::find(classes.begin(), classes.end(), *storage) != classes.end()) consider(*e, *storage);
      }
    } else {
      for (const EngineEntry* e : candidates_) consider(*e, e->capabilities.default_storage_class);
      for (const EngineEntry* e : candidates_)
        for (const std::string& cls : e->capabilities.storage_classes)
          if (cls != e->capabilities.default_storage_class) consider(*e, cls);
    }
    return list;
  }

  // The index in dispatches_ of running on `engine` in `storage_class`
  // (through the slot of `ext`'s family for an extension op), made once.
  uint32_t intern_dispatch(const EngineEntry& engine, const std::string& storage_class,
                           const ExtensionAttrs* ext) {
    auto [it, fresh] = dispatch_index_.try_emplace(
        std::make_tuple(engine.id(), storage_class, ext ? ext->family : std::string{}),
        static_cast<uint32_t>(dispatches_.size()));
    if (fresh) {
      OpDispatch d{binding_for(*config_, engine, storage_class), std::nullopt};
      if (ext) d.extension = ExtensionPlanningIdentity::of(engine, *engine.extension_slot(ext->family));
      dispatches_.push_back(std::move(d));
    }
    return it->second;
  }

  // One attempt; nullopt: already tried. Route errors are remembered.
  Result<std::optional<PreparationContext>> attempt(const OpCandidates& per_op, const Pick& pick,
                                                    std::set<Pick>& tried, uint64_t& used) {
    if (!tried.insert(pick).second) return std::optional<PreparationContext>{};
    if (used >= budget_)
      return Error{ErrorCode::DispatchSearchBudgetExceeded,
                   "dispatch search for program '" + program_->name() + "' gave up after " +
                       std::to_string(used) + " attempts (limit " + std::to_string(budget_) +
                       ") without a selection whose inputs and values reach every op" +
                       (last_route_error_ ? "; last failure: " + last_route_error_->message()
                                          : std::string{})};
    ++used;
    ++attempts_;
    auto built = build(table_of(per_op, pick), std::nullopt);
    if (built.ok()) return std::optional<PreparationContext>{std::move(*built)};
    if (!is_route_error(built.error())) return built.error();
    last_route_error_ = built.error();
    return std::optional<PreparationContext>{};
  }

  Result<std::optional<PreparationContext>> search(const OpCandidates& per_op) {
    std::set<Pick> tried;  // selections as candidate indices
    uint64_t used = 0;
    const size_t n = per_op.ops();
    // Preferred engines first: every op on that engine where it can be.
    for (const EngineEntry* preferred : candidates_) {
      std::vector<uint32_t> list_pick(per_op.lists.size(), 0);
      for (size_t l = 0; l < per_op.lists.size(); ++l)
        for (size_t k = 0; k < per_op.lists[l].size(); ++k)
          if (dispatches_[per_op.lists[l][k]].binding.endpoint.engine == preferred->id()) {
            list_pick[l] = static_cast<uint32_t>(k);
            break;
          }
      Pick pick(n);
      for (size_t op = 0; op < n; ++op) pick[op] = list_pick[per_op.list_of_op[op]];
      TENACT_ASSIGN_OR_RETURN(auto found, attempt(per_op, pick, tried, used));
      if (found) return found;
    }
    // Then the Cartesian product, last op fastest.
    Pick pick(n, 0);
    while (true) {
      TENACT_ASSIGN_OR_RETURN(auto found, attempt(per_op, pick, tried, used));
      if (found) return found;
      size_t op = n;
      while (op > 0) {
        --op;
        if (++pick[op] < per_op.of(op).size()) break;
        pick[op] = 0;
        if (op == 0) return std::optional<PreparationContext>{};
      }
      if (n == 0) return std::optional<PreparationContext>{};
    }
  }

  const EngineEntry* candidate(const std::string& id) const {
    for (const EngineEntry* e : candidates_)
      if (e->id() == id) return e;
    return nullptr;
  }

  // Where each input enters: the first (candidate engine, storage class)
  // that accepts it and from which it reaches all its consumers.
  Result<std::vector<Endpoint>> resolve_inputs(const OpDispatchTable& selection) const {
    // Per input, the distinct endpoints of the ops reading it, in order of
    // first read (what reaches_all needs of them).
    std::vector<int32_t> input_of_slot(staging_->slots.size(), -1);
    for (size_t i = 0; i < staging_->input_slots.size(); ++i)
      input_of_slot[staging_->input_slots[i]] = static_cast<int32_t>(i);
    std::vector<std::vector<Endpoint>> consumers(inputs_.size());
    for (size_t k = 0; k < staging_->instructions.size(); ++k)
      for (SlotId s : staging_->instructions[k].inputs) {
        const int32_t i = input_of_slot[s];
        if (i < 0) continue;
        std::vector<Endpoint>& readers = consumers[static_cast<size_t>(i)];
        const Endpoint& at = selection[k].binding.endpoint;
        if (std::find(readers.begin(), readers.end(), at) == readers.end()) readers.push_back(at);
      }
    std::vector<Endpoint> out;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      std::optional<Endpoint> chosen;
      // A cost-aware placement says where it entered the estimates.
      if (planned_ && i < planned_->input_entries.size() && !planned_->input_entries[i].engine.empty()) {
        const Endpoint& entry = planned_->input_entries[i];
        const EngineEntry* e = candidate(entry.engine);
        if (e && accepts_input(*e, entry.storage_class, inputs_[i]) && reaches_all(entry, consumers[i]))
          chosen = entry;
      }
      for (const EngineEntry* e : candidates_) {
        if (chosen) break;
        for (const std::string& cls : e->capabilities.storage_classes) {
          if (!accepts_input(*e, cls, inputs_[i])) continue;
          Endpoint source{e->id(), cls};
          if (reaches_all(source, consumers[i])) {
            chosen = source;
            break;
          }
        }
        if (chosen) break;
      }
      if (!chosen) {
        const Endpoint& at = inputs_[i].placement;
        return Error{ErrorCode::NoInputIngress,
                     "input " + std::to_string(i) + " ('" +
                         program_->value(program_->inputs()[i]).name + "'), placed at " +
                         (at.engine.empty() ? std::string{"no particular endpoint"} : at.to_string()) +
                         ", has no ingress: no allowed engine accepts it where every op reading "
                         "it can be reached along registered routes"};
      }
      out.push_back(std::move(*chosen));
    }
    return out;
  }

  bool reaches_all(const Endpoint& source, const std::vector<Endpoint>& consumers) const {
    std::vector<Endpoint> available{source};
    for (const Endpoint& dest : consumers) {
      if (std::find(available.begin(), available.end(), dest) != available.end()) continue;
      bool reached = false;
      for (const Endpoint& from : available)
        if (config_->has_route(from, dest)) reached = true;
      if (!reached) return false;
      available.push_back(dest);
    }
    return true;
  }

  Result<PreparationContext> build(OpDispatchTable selection, std::optional<Endpoint> empty_root) {
    PreparationContext ctx;
    ctx.config = config_;
    ctx.program = program_;
    ctx.staging = staging_;
    ctx.compiler = options_.compiler;
    ctx.root_placement = selection.empty() ? *empty_root : selection[0].binding.endpoint;
    TENACT_ASSIGN_OR_RETURN(ctx.input_endpoints, resolve_inputs(selection));
    std::vector<Endpoint> instruction_endpoints;
    instruction_endpoints.reserve(staging_->instructions.size());
    for (const OpDispatch& d : selection) instruction_endpoints.push_back(d.binding.endpoint);
    TENACT_ASSIGN_OR_RETURN(auto schedule, build_schedule(*staging_, ctx.root_placement,
                                                          ctx.input_endpoints, instruction_endpoints, *config_));
    if (planned_) {
      schedule.placement = planned_->placement;
      schedule.placed_by = std::string{to_string(planned_by_)};
    }
    if (pinned_) {
      schedule.placement = pinned_->placement;
      schedule.placed_by = "pinned";
      ctx.pins = options_.pins;
    }
    ctx.schedule = std::make_shared<const ScheduledGraph>(std::move(schedule));
    ctx.dispatch = std::move(selection);
    ctx.root_identity = std::make_shared<const RootIdentity>(root_identity(ctx));
    ctx.search_attempts = attempts_;
    return ctx;
  }

  RootIdentity root_identity(const PreparationContext& ctx) const {
    RootIdentity root;
    root.program = program_;
    root.runtime_id = config_->runtime_id();
    root.epoch = config_->epoch();
    root.root_placement = ctx.root_placement;
    std::set<std::string> ids{ctx.root_placement.engine};
    for (const OpDispatch& d : ctx.dispatch.distinct()) ids.insert(d.binding.endpoint.engine);
    root.op_bindings.reserve(ctx.dispatch.size());
    for (const OpDispatch& d : ctx.dispatch) {
      root.op_bindings.push_back(d.binding.endpoint);
      if (d.extension) root.extension_planning.push_back(*d.extension);
    }
    for (const Endpoint& e : ctx.input_endpoints) ids.insert(e.engine);
    for (const std::string& id : ids)
      if (const EngineEntry* e = config_->find_engine(id)) root.engines.push_back(e->identity);
    root.compiler_options = options_.compiler_text();
    if (const EngineEntry* primary = config_->find_engine(ctx.root_placement.engine))
      root.planning = planning_key(*primary, config_->policy());
    root.prepare_options = options_.placement_text();
    root.input_endpoints = ctx.input_endpoints;
    for (const OpPlacement& p : ctx.schedule->placement)
      if (p.queue != BatchWork::kAnyQueue) {
        for (size_t k = 0; k < ctx.schedule->placement.size(); ++k) root.op_queues.push_back(ctx.schedule->queue_of(k));
        break;
      }
    return root;
  }

  const RuntimeConfigPtr& config_;
  std::shared_ptr<const SemanticProgram> program_;
  std::span<const InputDescriptor> inputs_;
  const PrepareOptions& options_;
  uint64_t budget_;
  Candidates candidates_;
  std::shared_ptr<const ExecProgram> staging_;
  /// Every dispatch some op could have, made once each (intern_dispatch).
  std::vector<OpDispatch> dispatches_;
  std::map<std::tuple<std::string, std::string, std::string>, uint32_t> dispatch_index_;
  std::optional<std::string> missing_family_;
  std::optional<Error> last_route_error_;
  uint64_t attempts_ = 0;
  /// While a cost-aware placement is built: its estimates and input entries.
  std::optional<CostPlacement> planned_;
  PlacementPolicy planned_by_ = PlacementPolicy::EarliestFinish;
  /// A pinned placement's queues (place_pinned).
  std::optional<CostPlacement> pinned_;
};

}  // namespace

bool accepts_input(const EngineEntry& engine, const std::string& storage_class,
                   const InputDescriptor& input) {
  const auto accepted = engine.input_storage_classes();
  if (std::find(accepted.begin(), accepted.end(), storage_class) == accepted.end()) return false;
  if (input.placement.engine.empty()) return true;
  return input.placement.engine == engine.id() &&
         (input.placement.storage_class.empty() || input.placement.storage_class == storage_class);
}

OpBinding binding_for(const RuntimeConfig& config, const EngineEntry& engine,
                      const std::string& storage_class) {
  OpBinding b;
  b.endpoint = Endpoint{engine.id(), storage_class};
  b.runtime_id = config.runtime_id();
  b.epoch = config.epoch();
  b.engine = engine.identity;
  return b;
}

Result<PreparationContext> resolve_preparation_context(
    const RuntimeConfigPtr& config, std::shared_ptr<const SemanticProgram> program,
    std::span<const InputDescriptor> inputs, const PrepareOptions& options,
    uint64_t search_budget) {
  return ContextResolver{config, std::move(program), inputs, options, search_budget}.resolve();
}

std::vector<std::string> PlacementConstraint::distinct_engines() const {
  std::vector<std::string> out;
  for (const std::string& id : engines)
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  return out;
}

std::string PlacementConstraint::to_string() const {
  if (is_any()) return "any engine";
  std::string out = engines.empty() ? std::string{"any engine"} : "engines [" + join_ids(engines) + "]";
  if (storage_class) out += ", storage class '" + *storage_class + "'";
  return out;
}

std::string PrepareOptions::placement_text() const {
  std::string out;
  if (!placement.is_any()) {
    // In the caller's order, which is the preference order of the plan;
    // length-prefixed, so no id can forge a separator.
    out = "engines=";
    for (const std::string& id : placement.distinct_engines()) out += std::to_string(id.size()) + ":" + id;
    if (placement.storage_class)
      out += ";storage=" + std::to_string(placement.storage_class->size()) + ":" + *placement.storage_class;
  }
  return out;
}

std::string PrepareOptions::compiler_text() const {
  std::string out;
  auto add = [&out](const std::string& item) { out += (out.empty() ? "" : ";") + item; };
  if (!compiler.fuse_elementwise) add("fuse=0");
  if (compiler.max_region_ops != 0) add("max_region_ops=" + std::to_string(compiler.max_region_ops));
  if (policy != PlacementPolicy::Auto) add("policy=" + std::string{to_string(policy)});
  if (pins) add("pins=" + pins->digest);
  return out;
}

std::string PrepareOptions::canonical_text() const {
  std::string out = placement_text();
  const std::string compiler_part = compiler_text();
  if (!compiler_part.empty()) out += (out.empty() ? "" : ";") + compiler_part;
  return out;
}

std::string_view to_string(PlacementPolicy policy) noexcept {
  switch (policy) {
    case PlacementPolicy::Auto: return "auto";
    case PlacementPolicy::EarliestFinish: return "earliest_finish";
    case PlacementPolicy::Preference: return "preference";
    case PlacementPolicy::RoundRobin: return "round_robin";
  }
  return "auto";
}

std::optional<PlacementPolicy> parse_placement_policy(std::string_view text) noexcept {
  for (PlacementPolicy p : {PlacementPolicy::Auto, PlacementPolicy::EarliestFinish, PlacementPolicy::Preference,
                            PlacementPolicy::RoundRobin})
    if (to_string(p) == text) return p;
  return std::nullopt;
}

}  // namespace tenact
