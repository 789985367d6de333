#include "planning/schedule.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace tenact {

namespace {

constexpr uint32_t kNoNode = std::numeric_limits<uint32_t>::max();

// Interns endpoints as LocationIds in order of first use.
class LocationTable {
 public:
  LocationId intern(const Endpoint& e) {
    for (size_t i = 0; i < locations_.size(); ++i)
      if (locations_[i] == e) return static_cast<LocationId>(i);
    locations_.push_back(e);
    return static_cast<LocationId>(locations_.size() - 1);
  }
  const Endpoint& at(LocationId id) const { return locations_[id]; }
  std::vector<Endpoint> take() { return std::move(locations_); }

 private:
  std::vector<Endpoint> locations_;
};

// Where one slot is available: (location, node that made it available or
// kNoNode for program ingress), in order of availability.
using Availability = std::vector<std::pair<LocationId, uint32_t>>;

const std::pair<LocationId, uint32_t>* find_at(const Availability& a, LocationId loc) {
  for (const auto& entry : a)
    if (entry.first == loc) return &entry;
  return nullptr;
}

class ScheduleBuilder {
 public:
  ScheduleBuilder(const ExecProgram& program, const RuntimeConfig& config)
      : program_(program), config_(config), available_(program.slots.size()) {}

  Result<ScheduledGraph> build(const Endpoint& root, std::span<const Endpoint> input_endpoints,
                               std::span<const Endpoint> instruction_endpoints) {
    if (input_endpoints.size() != program_.input_slots.size() ||
        instruction_endpoints.size() != program_.instructions.size())
      return Error{ErrorCode::Internal,
                   "schedule: " + std::to_string(input_endpoints.size()) + " input and " +
                       std::to_string(instruction_endpoints.size()) +
                       " instruction endpoints for a program with " +
                       std::to_string(program_.input_slots.size()) + " inputs and " +
                       std::to_string(program_.instructions.size()) + " instructions"};
    graph_.root = table_.intern(root);
    for (size_t i = 0; i < input_endpoints.size(); ++i) {
      const LocationId loc = table_.intern(input_endpoints[i]);
      graph_.input_locations.push_back(loc);
      Availability& a = available_[program_.input_slots[i]];
      if (!find_at(a, loc)) a.emplace_back(loc, kNoNode);
    }
    for (size_t i = 0; i < instruction_endpoints.size(); ++i)
      graph_.instruction_locations.push_back(table_.intern(instruction_endpoints[i]));

    for (uint32_t i = 0; i < program_.instructions.size(); ++i) TENACT_TRY(place_instruction(i));
    for (SlotId s : program_.output_slots) {
      if (available_[s].empty())
        return Error{ErrorCode::Internal, "schedule: output " + program_.describe_slot(s) +
                                              " is never produced"};
      graph_.outputs.push_back(SlotCopy{s, available_[s].front().first});
    }
    add_releases();
    graph_.locations = table_.take();
    return std::move(graph_);
  }

 private:
  Status place_instruction(uint32_t index) {
    const ExecInstruction& ins = program_.instructions[index];
    const LocationId loc = graph_.instruction_locations[index];
    ScheduledNode node;
    node.kind = ScheduledNodeKind::Instruction;
    node.instruction = index;
    node.location = loc;
    for (SlotId s : ins.inputs) {
      TENACT_ASSIGN_OR_RETURN(uint32_t dep, make_available(s, loc, index));
      if (dep != kNoNode) node.dependencies.push_back(dep);
      reads_.push_back({s, loc});
    }
    for (uint32_t before : ins.after) {
      if (before >= index)
        return Error{ErrorCode::Internal, "schedule: instruction #" + std::to_string(index) +
                                              " is ordered after a later instruction #" + std::to_string(before)};
      node.dependencies.push_back(graph_.instruction_nodes[before]);
    }
    std::sort(node.dependencies.begin(), node.dependencies.end());
    node.dependencies.erase(std::unique(node.dependencies.begin(), node.dependencies.end()),
                            node.dependencies.end());
    const auto id = static_cast<uint32_t>(graph_.nodes.size());
    reader_nodes_.resize(reads_.size(), id);
    graph_.nodes.push_back(std::move(node));
    graph_.instruction_nodes.push_back(id);
    for (SlotId out : ins.outputs) available_[out].emplace_back(loc, id);
    return ok_status();
  }

  // Makes slot `s` available at `loc` for instruction `reader`; returns the
  // node that makes it available there (kNoNode: program ingress).
  Result<uint32_t> make_available(SlotId s, LocationId loc, uint32_t reader) {
    Availability& a = available_[s];
    if (const auto* at = find_at(a, loc)) return at->second;
    const Endpoint& destination = table_endpoint(loc);
    for (const auto& [from, producer] : a) {
      const TransferRoute* route = config_.find_route(table_endpoint(from), destination);
      if (!route) continue;
      ScheduledNode t;
      t.kind = ScheduledNodeKind::Transfer;
      t.location = loc;
      t.slot = s;
      t.source = from;
      t.provider = route->provider;
      if (producer != kNoNode) t.dependencies.push_back(producer);
      const auto id = static_cast<uint32_t>(graph_.nodes.size());
      reads_.push_back({s, from});
      reader_nodes_.resize(reads_.size(), id);
      graph_.nodes.push_back(std::move(t));
      a.emplace_back(loc, id);
      return id;
    }
    std::string sources;
    for (size_t k = 0; k < a.size(); ++k)
      sources += (k ? ", " : "") + table_endpoint(a[k].first).to_string();
    return Error{ErrorCode::MissingTransferProvider,
                 "instruction #" + std::to_string(reader) + " (" +
                     std::string{to_string(program_.instructions[reader].kind)} + ") reads " +
                     program_.describe_slot(s) + " at " + destination.to_string() +
                     ", but no transfer route reaches it there from " +
                     (sources.empty() ? std::string{"anywhere (it is never available)"}
                                      : "the endpoints holding it: " + sources)};
  }

  const Endpoint& table_endpoint(LocationId id) const { return table_.at(id); }

  // A copy's last reader frees it, unless it is where an output is
  // delivered.
  void add_releases() {
    std::map<std::pair<SlotId, LocationId>, uint32_t> last;
    for (size_t r = 0; r < reads_.size(); ++r) {
      auto& slot = last[{reads_[r].slot, reads_[r].location}];
      slot = std::max(slot, reader_nodes_[r]);
    }
    std::set<std::pair<SlotId, LocationId>> delivered;
    for (const SlotCopy& out : graph_.outputs) {
      last.erase({out.slot, out.location});
      delivered.insert({out.slot, out.location});
    }
    for (const auto& [copy, node] : last)
      graph_.nodes[node].releases.push_back(SlotCopy{copy.first, copy.second});
    // Copies nobody reads (and that are not outputs) are freed by whoever made them.
    for (SlotId s = 0; s < available_.size(); ++s)
      for (const auto& [loc, producer] : available_[s]) {
        if (producer == kNoNode || last.count({s, loc}) || delivered.count({s, loc})) continue;
        graph_.nodes[producer].releases.push_back(SlotCopy{s, loc});
      }
  }

  const ExecProgram& program_;
  const RuntimeConfig& config_;
  LocationTable table_;
  ScheduledGraph graph_;
  std::vector<Availability> available_;
  std::vector<SlotCopy> reads_;         // every read of a copy, in node order
  std::vector<uint32_t> reader_nodes_;  // the node of each read
};

}  // namespace

size_t ScheduledGraph::transfer_count() const {
  return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(),
                                           [](const ScheduledNode& n) { return n.is_transfer(); }));
}

Result<ScheduledGraph> build_schedule(const ExecProgram& program, const Endpoint& root,
                                      std::span<const Endpoint> input_endpoints,
                                      std::span<const Endpoint> instruction_endpoints,
                                      const RuntimeConfig& config) {
  return ScheduleBuilder{program, config}.build(root, input_endpoints, instruction_endpoints);
}

std::string describe_schedule(const ExecProgram& program, const ScheduledGraph& graph) {
  std::string out;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ScheduledNode& node = graph.nodes[n];
    out += "node " + std::to_string(n) + ": ";
    if (node.is_transfer()) {
      out += "transfer " + program.describe_slot(node.slot) + " " +
             graph.endpoint(node.source).to_string() + " -> " +
             graph.endpoint(node.location).to_string() + " via " + node.provider;
    } else {
      out += "#" + std::to_string(node.instruction) + " " +
             std::string{to_string(program.instructions[node.instruction].kind)} + " at " +
             graph.endpoint(node.location).to_string();
    }
    if (!node.dependencies.empty()) {
      out += " after [";
      for (size_t k = 0; k < node.dependencies.size(); ++k)
        out += (k ? ", " : "") + std::to_string(node.dependencies[k]);
      out += "]";
    }
    out += "\n";
  }
  return out;
}

}  // namespace tenact
