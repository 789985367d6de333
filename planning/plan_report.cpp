#include "planning/plan_report.hpp"

#include <nlohmann/json.hpp>

#include "planning/retained_bytes.hpp"

namespace tenact {

namespace {

struct Bytes {
  uint64_t key = 0, root = 0, entry = 0, total = 0;
};

Result<Bytes> bytes_of(const PreparedProgram& program, const PreparedEntryKey& key) {
  Bytes b;
  TENACT_ASSIGN_OR_RETURN(b.key, key.retained_bytes());
  b.root = program.root->retained_bytes;
  b.entry = program.retained_bytes;
  TENACT_ASSIGN_OR_RETURN(b.total, checked_sum({b.key, b.root, b.entry}));
  return b;
}

// What both reports read, checked and gathered once.
struct PlanView {
  const PreparedRoot& root;
  const ExecProgram& staged;
  const ScheduledGraph& graph;
  const RootIdentity& id;
  Bytes bytes;
  std::vector<int32_t> region_of;  // per instruction: its region, or -1
};

Result<PlanView> view_of(const PreparedProgram& program, const PrepareReport& report) {
  if (!report.context || !report.key || !program.root)
    return Error{ErrorCode::Internal, "plan report without its preparation context, key or root"};
  const PreparedRoot& root = *program.root;
  TENACT_ASSIGN_OR_RETURN(Bytes bytes, bytes_of(program, *report.key));
  return PlanView{root, *root.staging, *root.schedule, *root.identity, bytes,
                  region_of_instructions(root.staging->instructions.size(), root.regions)};
}

std::string output_names(const ExecProgram& p, const ExecInstruction& ins) {
  std::string out;
  for (size_t k = 0; k < ins.outputs.size(); ++k)
    out += (k ? ", '" : "'") + p.slots[ins.outputs[k]].name + "'";
  return out;
}

std::vector<std::string> names(const ExecProgram& p, const std::vector<SlotId>& slots) {
  std::vector<std::string> out;
  for (SlotId s : slots) out.push_back(p.slots[s].name);
  return out;
}

}  // namespace

Result<std::string> plan_to_text(const PreparedProgram& program, const PrepareReport& report) {
  TENACT_ASSIGN_OR_RETURN(const PlanView view, view_of(program, report));
  const auto& [root, staged, graph, id, bytes, region_of] = view;
  std::string out;
  out += "program '" + root.program->name() + "': " + std::to_string(staged.input_slots.size()) +
         " inputs, " + std::to_string(staged.instructions.size()) + " instructions, " +
         std::to_string(staged.output_slots.size()) + " outputs\n";
  out += "configuration: runtime " + std::to_string(id.runtime_id) + ", epoch " +
         std::to_string(id.epoch) + "\n";
  for (const EngineIdentity& e : id.engines)
    out += "engine " + e.id + " (" + e.hardware_class + ", registration " +
           std::to_string(e.registration) + ")\n";
  out += "root at " + id.root_placement.to_string() + "\n";
  for (size_t i = 0; i < staged.input_slots.size(); ++i) {
    const ExecSlot& s = staged.slots[staged.input_slots[i]];
    out += "input '" + s.name + "' " + s.type.to_string() + " enters at " +
           graph.endpoint(graph.input_locations[i]).to_string() + "\n";
  }
  for (size_t i = 0; i < staged.instructions.size(); ++i) {
    const ExecInstruction& ins = staged.instructions[i];
    out += "instruction #" + std::to_string(i) + " " + std::string{to_string(ins.kind)} + " -> " +
           output_names(staged, ins) + " at " +
           graph.endpoint(graph.instruction_locations[i]).to_string();
    if (region_of[i] >= 0) out += " (region " + std::to_string(region_of[i]) + ")";
    if (i < graph.placement.size()) {
      const OpPlacement& p = graph.placement[i];
      out += ", " + (p.queue == BatchWork::kAnyQueue ? std::string{"any stream"} : "stream " + std::to_string(p.queue)) +
             ", placed by " + graph.placed_by + ": estimated start " + std::to_string(p.est_start_ns) +
             " ns, finish " + std::to_string(p.est_finish_ns) + " ns, " + std::to_string(p.transfer_bytes) +
             " bytes moved";
    }
    out += "\n";
  }
  if (graph.placement.empty()) out += "placement: preference (the most preferred engine that runs each op)\n";
  for (size_t op : staged.dropped_ops)
    out += "dropped " + root.program->describe_op(op) + ": nothing reads its results\n";
  if (graph.transfer_count() == 0) out += "transfers: none\n";
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ScheduledNode& node = graph.nodes[n];
    if (!node.is_transfer()) continue;
    out += "transfer node " + std::to_string(n) + ": '" + staged.slots[node.slot].name + "' " +
           graph.endpoint(node.source).to_string() + " -> " +
           graph.endpoint(node.location).to_string() + " via " + node.provider + "\n";
  }
  if (root.regions.empty()) out += "regions: none\n";
  for (size_t r = 0; r < root.regions.size(); ++r)
    out += describe_region(staged, root.regions[r], r) + "\n";
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    out += "output '" + staged.slots[graph.outputs[i].slot].name + "' delivered at " +
           graph.endpoint(graph.outputs[i].location).to_string() + "\n";
  out += "specialization " + to_string(program.projection) + " after " +
         std::to_string(report.redirects) + " redirects, " +
         std::to_string(report.context->search_attempts) + " dispatch attempts\n";
  out += "key digest " + report.key->compact_digest().to_hex() + "\n";
  out += "retained bytes: key " + std::to_string(bytes.key) + ", root " + std::to_string(bytes.root) +
         ", entry " + std::to_string(bytes.entry) + ", total " + std::to_string(bytes.total) + "\n";
  return out;
}

Result<std::string> plan_to_json(const PreparedProgram& program, const PrepareReport& report) {
  using nlohmann::ordered_json;
  TENACT_ASSIGN_OR_RETURN(const PlanView view, view_of(program, report));
  const auto& [root, staged, graph, id, bytes, region_of] = view;
  ordered_json doc;
  doc["program"] = root.program->name();
  doc["runtime_id"] = id.runtime_id;
  doc["epoch"] = id.epoch;
  doc["engines"] = ordered_json::array();
  for (const EngineIdentity& e : id.engines)
    doc["engines"].push_back({{"id", e.id}, {"hardware_class", e.hardware_class}, {"registration", e.registration}});
  doc["root"] = id.root_placement.to_string();
  doc["inputs"] = ordered_json::array();
  for (size_t i = 0; i < staged.input_slots.size(); ++i) {
    const ExecSlot& s = staged.slots[staged.input_slots[i]];
    doc["inputs"].push_back({{"name", s.name},
                             {"dtype", std::string{to_string(s.type.dtype)}},
                             {"shape", to_string(s.type.shape)},
                             {"endpoint", graph.endpoint(graph.input_locations[i]).to_string()}});
  }
  doc["instructions"] = ordered_json::array();
  for (size_t i = 0; i < staged.instructions.size(); ++i) {
    const ExecInstruction& ins = staged.instructions[i];
    const Endpoint& at = graph.endpoint(graph.instruction_locations[i]);
    ordered_json j{{"index", i},
                   {"op", std::string{to_string(ins.kind)}},
                   {"op_index", ins.semantic_op},
                   {"outputs", names(staged, ins.outputs)},
                   {"engine", at.engine},
                   {"storage_class", at.storage_class}};
    j["region"] = region_of[i] >= 0 ? ordered_json(region_of[i]) : ordered_json(nullptr);
    if (i < graph.placement.size()) {
      const OpPlacement& p = graph.placement[i];
      j["stream"] = p.queue == BatchWork::kAnyQueue ? ordered_json(nullptr) : ordered_json(p.queue);
      j["placement"] = {{"policy", graph.placed_by},
                        {"est_start_ns", p.est_start_ns},
                        {"est_finish_ns", p.est_finish_ns},
                        {"transfer_bytes", p.transfer_bytes}};
    } else {
      j["stream"] = nullptr;
      j["placement"] = {{"policy", graph.placed_by}};
    }
    doc["instructions"].push_back(std::move(j));
  }
  // Ops staging dropped because nothing reads their results.
  doc["dropped_ops"] = ordered_json::array();
  for (size_t op : staged.dropped_ops) {
    const Op& dropped = root.program->ops()[op];
    std::vector<std::string> outputs;
    for (ValueId v : dropped.outputs) outputs.push_back(root.program->value(v).name);
    doc["dropped_ops"].push_back({{"op_index", op}, {"op", std::string{to_string(dropped.kind)}}, {"outputs", outputs}});
  }
  doc["transfers"] = ordered_json::array();
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ScheduledNode& node = graph.nodes[n];
    if (!node.is_transfer()) continue;
    doc["transfers"].push_back({{"node", n},
                                {"value", staged.slots[node.slot].name},
                                {"from", graph.endpoint(node.source).to_string()},
                                {"to", graph.endpoint(node.location).to_string()},
                                {"provider", node.provider},
                                {"after", node.dependencies}});
  }
  doc["regions"] = ordered_json::array();
  for (size_t r = 0; r < root.regions.size(); ++r) {
    const ElementwiseRegion& region = root.regions[r];
    doc["regions"].push_back({{"index", r},
                              {"instructions", region.instructions},
                              {"splat_constants", region.splat_constants},
                              {"broadcasts", region.broadcasts},
                              {"inputs", names(staged, region.inputs)},
                              {"outputs", names(staged, region.outputs)},
                              {"endpoint", region.endpoint.to_string()},
                              {"shape", to_string(region.shape)}});
  }
  doc["outputs"] = ordered_json::array();
  for (const SlotCopy& o : graph.outputs)
    doc["outputs"].push_back({{"name", staged.slots[o.slot].name},
                              {"endpoint", graph.endpoint(o.location).to_string()}});
  doc["specialization"] = to_string(program.projection);
  doc["redirects"] = report.redirects;
  doc["search_attempts"] = report.context->search_attempts;
  doc["key"] = {{"digest", report.key->compact_digest().to_hex()},
                {"key_bytes", bytes.key},
                {"root_bytes", bytes.root},
                {"entry_bytes", bytes.entry},
                {"total_bytes", bytes.total}};
  return doc.dump(2) + "\n";
}

}  // namespace tenact
