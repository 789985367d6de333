#include "planning/prepared_program.hpp"

#include <utility>

#include "planning/retained_bytes.hpp"
#include "planning/signature.hpp"

namespace tenact {

namespace {

Result<uint64_t> endpoint_bytes(const Endpoint& e) {
  return checked_sum({sizeof(Endpoint), e.engine.size(), e.storage_class.size()});
}

Result<uint64_t> schedule_retained_bytes(const ScheduledGraph& g) {
  ByteCount c;
  c.add(sizeof(ScheduledGraph));
  for (const Endpoint& e : g.locations) c.add(endpoint_bytes(e));
  c.add_array(g.input_locations.size(), sizeof(LocationId));
  c.add_array(g.instruction_locations.size(), sizeof(LocationId));
  c.add_array(g.instruction_nodes.size(), sizeof(uint32_t));
  c.add_array(g.outputs.size(), sizeof(SlotCopy));
  c.add_array(g.nodes.size(), sizeof(ScheduledNode));
  for (const ScheduledNode& n : g.nodes) {
    c.add(n.provider.size());
    c.add_array(n.dependencies.size(), sizeof(uint32_t));
    c.add_array(n.releases.size(), sizeof(SlotCopy));
  }
  return c.total();
}

Result<uint64_t> regions_retained_bytes(const std::vector<ElementwiseRegion>& regions) {
  ByteCount c;
  c.add_array(regions.size(), sizeof(ElementwiseRegion));
  for (const ElementwiseRegion& r : regions) {
    c.add_array(r.instructions.size(), sizeof(uint32_t));
    c.add_array(r.splat_constants.size(), sizeof(uint32_t));
    c.add_array(r.broadcasts.size(), sizeof(uint32_t));
    c.add_array(r.inputs.size(), sizeof(SlotId));
    c.add_array(r.outputs.size(), sizeof(SlotId));
    c.add(r.endpoint.engine.size()).add(r.endpoint.storage_class.size());
    c.add(shape_retained_bytes(r.shape));
  }
  return c.total();
}

Result<uint64_t> dispatch_retained_bytes(const OpDispatchTable& dispatch) {
  ByteCount c;
  c.add_array(dispatch.size(), sizeof(uint32_t));
  c.add_array(dispatch.distinct().size(), sizeof(OpDispatch));
  for (const OpDispatch& d : dispatch.distinct()) {
    c.add(d.binding.endpoint.engine.size()).add(d.binding.endpoint.storage_class.size());
    c.add(d.binding.engine.id.size()).add(d.binding.engine.hardware_class.size());
    if (d.extension) c.add(d.extension->family.size()).add(d.extension->engine.size());
  }
  return c.total();
}

// The plan's bytes; its requirements and projection only when they are not
// the entry's own lists (an engine that echoes its request shares them).
Result<uint64_t> prepared_op_retained_bytes(const PreparedOp& op, const PreparedProgram& entry) {
  ByteCount c;
  c.add(sizeof(PreparedOp));
  c.add(op_attrs_retained_bytes(op.attrs));
  c.add_array(op.results.size(), sizeof(ValueType));
  for (const ValueType& t : op.results) c.add(shape_retained_bytes(t.shape));
  c.add(op.binding.endpoint.engine.size()).add(op.binding.endpoint.storage_class.size());
  c.add(op.binding.engine.id.size()).add(op.binding.engine.hardware_class.size());
  if (!op.specialization.inputs.shares_storage_with(entry.requirements.inputs))
    c.add(requirements_retained_bytes(op.specialization));
  if (!op.projection.inputs.shares_storage_with(entry.projection.inputs))
    c.add(projection_retained_bytes(op.projection));
  return c.total();
}

// The symbols whose binding dimension the projection fixes.
SymbolBindings fixed_symbols(const SemanticProgram& program, const SpecializationProjection& projection) {
  SymbolBindings out;
  for (const SymbolSource& s : program.symbols()) {
    if (s.input >= projection.inputs.size()) continue;
    for (const ConcreteDim& d : projection.inputs[s.input].concrete_dims)
      if (d.axis == s.axis) out[s.symbol] = d.extent;
  }
  return out;
}

std::string who_prepares(const SemanticProgram& program, size_t op, const OpBinding& binding) {
  return "engine '" + binding.endpoint.engine + "' preparing " + program.describe_op(op);
}

// The request for staged instruction `instruction` (its dispatch), naming
// the program op it executes.
OpPrepareRequest request_for(const PreparationContext& context, const PreparedEntryKey& key,
                             size_t instruction, const SymbolBindings& fixed) {
  const SemanticProgram& program = *context.program;
  const size_t index = context.staging->instructions[instruction].semantic_op;
  const Op& op = program.ops()[index];
  OpPrepareRequest r;
  r.op_index = index;
  r.kind = op.kind;
  r.attrs = op.attrs;
  for (ValueId v : op.inputs) r.operands.push_back(program.value(v).type);
  for (ValueId v : op.outputs) r.results.push_back(program.value(v).type);
  r.binding = context.dispatch[instruction].binding;
  r.specialization = key.requirements();
  r.projection = key.projection();
  r.fixed_symbols = fixed;
  attach_extension_slot(*context.config, r);
  if (context.pins && index < context.pins->ops.size()) r.provider = context.pins->ops[index].provider;
  return r;
}

EntryFailed failed(Error error, std::shared_ptr<const PreparedRoot> root) {
  const bool deterministic = is_deterministic_prepare_failure(error.code());
  return EntryFailed{std::move(error), deterministic, std::move(root)};
}

}  // namespace

bool is_deterministic_prepare_failure(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::Unsupported:
    case ErrorCode::DeterminismUnsupported:
    case ErrorCode::ProviderContract:
    case ErrorCode::BindingMismatch:
    case ErrorCode::ProjectionMismatch:
    case ErrorCode::WrongOperationFamily:
    case ErrorCode::NonWideningSpecialization:
    case ErrorCode::SpecializationRetryLimitExceeded:
      return true;
    default:
      return false;
  }
}

Result<std::shared_ptr<const PreparedRoot>> make_prepared_root(const PreparationContext& context) {
  if (!context.program || !context.staging || !context.schedule || !context.root_identity)
    return Error{ErrorCode::Internal, "prepared root of an incomplete preparation context"};
  auto root = std::make_shared<PreparedRoot>();
  root->identity = context.root_identity;
  root->program = context.program;
  root->staging = context.staging;
  root->schedule = context.schedule;
  root->dispatch = context.dispatch;
  std::vector<Endpoint> endpoints;
  std::vector<uint32_t> queues;
  endpoints.reserve(context.dispatch.size());
  queues.reserve(context.dispatch.size());
  for (const OpDispatch& d : context.dispatch) endpoints.push_back(d.binding.endpoint);
  for (size_t i = 0; i < context.dispatch.size(); ++i)
    queues.push_back(context.schedule ? context.schedule->queue_of(i) : BatchWork::kAnyQueue);
  const RuntimeConfigPtr config = context.config;
  const bool fuse = context.compiler.fuse_elementwise;
  TENACT_ASSIGN_OR_RETURN(
      root->regions,
      plan_elementwise_regions(
          *context.staging, endpoints,
          [config, fuse](const Endpoint& e) {
            const EngineEntry* engine = config ? config->find_engine(e.engine) : nullptr;
            return fuse && engine && engine->capabilities.fused_elementwise_regions;
          },
          queues, context.compiler.max_region_ops));
  ByteCount c;
  c.add(sizeof(PreparedRoot));
  c.add(root_identity_retained_bytes(*root->identity));
  c.add(semantic_program_retained_bytes(*root->program));
  c.add(exec_program_retained_bytes(*root->staging));
  c.add(schedule_retained_bytes(*root->schedule));
  c.add(dispatch_retained_bytes(root->dispatch));
  c.add(regions_retained_bytes(root->regions));
  TENACT_ASSIGN_OR_RETURN(root->retained_bytes, c.total());
  return std::shared_ptr<const PreparedRoot>(std::move(root));
}

Status validate_prepared_op(const PreparedOp& op, const OpPrepareRequest& request,
                            std::string_view who) {
  const std::string w{who};
  const auto* asked_ext = std::get_if<ExtensionAttrs>(&request.attrs);
  const auto* got_ext = std::get_if<ExtensionAttrs>(&op.attrs);
  if (op.kind != request.kind || (asked_ext && (!got_ext || got_ext->family != asked_ext->family))) {
    auto name = [](OpKind k, const ExtensionAttrs* ext) {
      std::string s{to_string(k)};
      if (ext) s += " family '" + ext->family + "'";
      return s;
    };
    return Error{ErrorCode::WrongOperationFamily,
                 w + ": asked to prepare " + name(request.kind, asked_ext) + " (" +
                     std::string{to_string(family_of(request.kind))} + "), returned a plan for " +
                     name(op.kind, got_ext) + " (" + std::string{to_string(family_of(op.kind))} + ")"};
  }
  if (!(op.binding == request.binding))
    return Error{ErrorCode::BindingMismatch, w + ": plan bound to " + op.binding.to_string() +
                                                 ", asked for " + request.binding.to_string()};
  if (!(op.projection == request.projection) || !(op.specialization == request.specialization))
    return Error{ErrorCode::ProjectionMismatch,
                 w + ": plan prepared for specialization " + to_string(op.projection) +
                     ", asked for " + to_string(request.projection)};
  const bool same_provider = op.provider == request.provider ||
                             (op.provider && request.provider && *op.provider == *request.provider);
  if (!same_provider)
    return Error{ErrorCode::ProviderContract,
                 w + ": plan prepared for provider " + (op.provider ? op.provider->to_string() : "none") +
                     ", asked for " + (request.provider ? request.provider->to_string() : "none")};
  return ok_status();
}

ProducedEntry produce_prepared_entry(const PreparationContext& context, const PreparedEntryKey& key,
                                     std::shared_ptr<const PreparedRoot> shared_root,
                                     std::span<const InputDescriptor> inputs,
                                     const EngineLookup& engines) {
  std::shared_ptr<const PreparedRoot> root = std::move(shared_root);
  if (!root) {
    auto made = make_prepared_root(context);
    if (!made.ok()) return failed(made.error(), nullptr);
    root = std::move(*made);
  }
  const SemanticProgram& program = *context.program;
  const SymbolBindings fixed = fixed_symbols(program, key.projection());
  auto entry = std::make_shared<PreparedProgram>();
  entry->root = root;
  entry->requirements = key.requirements();
  entry->projection = key.projection();
  ByteCount bytes;
  bytes.add(sizeof(PreparedProgram));
  bytes.add(requirements_retained_bytes(entry->requirements));
  bytes.add(projection_retained_bytes(entry->projection));
  const size_t instructions = context.staging->instructions.size();
  bytes.add_array(instructions, sizeof(std::shared_ptr<const PreparedOp>));
  for (size_t i = 0; i < instructions; ++i) {
    const OpPrepareRequest request = request_for(context, key, i, fixed);
    const std::string who = who_prepares(program, request.op_index, request.binding);
    std::shared_ptr<Engine> engine = engines ? engines(request.binding.endpoint.engine) : nullptr;
    if (!engine)
      return failed(Error{ErrorCode::EngineDown, who + ": the engine is not available"}, root);
    PrepareAnswer answer = engine->prepare(request);
    if (auto* unsupported = std::get_if<Unsupported>(&answer))
      return failed(Error{ErrorCode::Unsupported, who + ": unsupported: " + unsupported->reason}, root);
    if (auto* error = std::get_if<Error>(&answer)) return failed(error->with_context(who), root);
    if (auto* needs = std::get_if<NeedsSpecialization>(&answer)) {
      const size_t n = program.inputs().size();
      auto merged = merge_requirements(key.requirements(), needs->requirements, n);
      if (!merged.ok()) return failed(merged.error().with_context(who), root);
      Status widens = check_widening(program, key.requirements(), *merged);
      if (!widens.ok()) return failed(widens.error().with_context(who + " (" + needs->reason + ")"), root);
      auto projected = project(program, *merged, inputs);
      if (!projected.ok()) {
        Error e = projected.error();
        return failed(Error{ErrorCode::ProviderContract, who + ": asked for specialization that does not fit the inputs: " + e.message()}, root);
      }
      return EntryRedirect{std::move(*merged), root, who, needs->reason};
    }
    auto& op = std::get<std::shared_ptr<const PreparedOp>>(answer);
    if (!op) return failed(Error{ErrorCode::ProviderContract, who + ": returned an empty plan"}, root);
    Status valid = validate_prepared_op(*op, request, who);
    if (!valid.ok()) return failed(valid.error(), root);
    bytes.add(prepared_op_retained_bytes(*op, *entry));
    entry->ops.push_back(std::move(op));
  }
  auto total = bytes.total();
  if (!total.ok()) return failed(total.error(), root);
  entry->retained_bytes = *total;
  return EntryReady{std::move(entry)};
}

Result<PreparedEntryKey> PreparationWalk::key() const {
  return PreparedEntryKey::make(context->root_identity, state.requirements, state.projection,
                                shared_root ? RootAccounting::CountedBySharedRoot : RootAccounting::CountedByKey);
}

ProducedEntry PreparationWalk::produce(const PreparedEntryKey& key, const EngineLookup& engines) const {
  return produce_prepared_entry(*context, key, shared_root, inputs, engines);
}

std::optional<Result<std::shared_ptr<const PreparedProgram>>> PreparationWalk::settle(const ProducedEntry& entry) {
  if (const auto* ready = std::get_if<EntryReady>(&entry)) return Result<std::shared_ptr<const PreparedProgram>>{ready->program};
  if (const auto* fail = std::get_if<EntryFailed>(&entry)) return Result<std::shared_ptr<const PreparedProgram>>{fail->error};
  const auto& redirect = std::get<EntryRedirect>(entry);
  auto next = follow_redirect(*context->program, inputs, state,
                              NeedsSpecialization{redirect.requirements, redirect.reason}, redirect.asked_by);
  if (!next.ok()) return Result<std::shared_ptr<const PreparedProgram>>{next.error()};
  state = std::move(*next);
  shared_root = redirect.root;
  return std::nullopt;
}

Result<std::shared_ptr<const PreparedProgram>> prepare_program(
    const RuntimeConfigPtr& config, std::shared_ptr<const SemanticProgram> program,
    std::span<const InputDescriptor> inputs, const PrepareOptions& options,
    const EngineLookup& engines, const EntrySource& source, PrepareReport* report) {
  if (!program) return Error{ErrorCode::Internal, "prepare_program without a program"};
  const auto signature = signature_of(inputs);
  TENACT_TRY(bind_signature(*program, signature));
  TENACT_ASSIGN_OR_RETURN(auto resolved, resolve_preparation_context(config, program, inputs, options));
  PreparationWalk walk;
  walk.context = std::make_shared<const PreparationContext>(std::move(resolved));
  walk.inputs.assign(inputs.begin(), inputs.end());
  if (report) report->context = walk.context;
  TENACT_ASSIGN_OR_RETURN(walk.state, begin_specialization(*program, inputs));
  while (true) {
    TENACT_ASSIGN_OR_RETURN(auto key, walk.key());
    if (report) report->key = key;
    ProducedEntry entry = source ? source(key, walk.shared_root) : walk.produce(key, engines);
    if (auto settled = walk.settle(entry)) return std::move(*settled);
    if (report) report->redirects = walk.state.redirects;
  }
}

}  // namespace tenact
