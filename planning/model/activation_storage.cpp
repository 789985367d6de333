// Storage of op results (model_plan.hpp, step 4): must-alias results share
// their operand's storage; every other result is an activation, packed by
// liveness into its device's arena or given a resource of its own.
//
// Lifetimes are closed intervals of op indices: from the start of the
// producer's execution window to the end of the last reader's (the
// producer's alone when nobody reads it), an aliased operand's extended to
// its aliasing result's. A window is the op's own index, or the span of the
// fused regions around it (ModelPlan::op_windows): each device runs its
// units one at a time on one queue (model_execution.hpp), so an op whose
// window ends before another's starts has run before it. Two packed values
// of one device whose lifetimes intersect never share a byte. A region's
// result nobody outside it reads is never materialized: it gets no storage.
#include <algorithm>

#include "planning/model/plan_stages.hpp"
#include "planning/model/resource_ids.hpp"

namespace tenact {

namespace {

struct Lifetime {
  size_t first = 0;
  size_t last = 0;
  bool intersects(const Lifetime& o) const { return first <= o.last && o.first <= last; }
};

/// Per ValueId (meaningful for op results).
std::vector<Lifetime> lifetimes(const StorageInputs& in) {
  const std::vector<Op>& ops = in.program.ops();
  std::vector<Lifetime> life(in.program.values().size());
  const auto& window = in.execution.windows;
  for (size_t i = 0; i < ops.size(); ++i) {
    for (ValueId v : ops[i].inputs) life[v].last = std::max(life[v].last, window[i].second);
    for (ValueId r : ops[i].outputs) life[r] = Lifetime{window[i].first, window[i].second};
  }
  // Later ops first, so that a result's lifetime is final before it
  // extends its operand's.
  for (size_t i = ops.size(); i-- > 0;)
    for (size_t r = 0; r < ops[i].outputs.size(); ++r) {
      const AliasPolicy& alias = in.nodes[i].result_aliases[r];
      if (alias.kind == AliasPolicy::Kind::NoAlias || alias.input >= ops[i].inputs.size()) continue;
      Lifetime& operand = life[ops[i].inputs[alias.input]];
      operand.last = std::max(operand.last, life[ops[i].outputs[r]].last);
    }
  return life;
}

/// Per ValueId: whether an op on another device than its producer's reads it.
std::vector<bool> read_on_other_devices(const StorageInputs& in) {
  std::vector<bool> elsewhere(in.program.values().size(), false);
  for (size_t i = 0; i < in.program.ops().size(); ++i)
    for (ValueId v : in.program.ops()[i].inputs) {
      const int64_t producer = in.program.value(v).producer;
      if (producer >= 0 && in.nodes[static_cast<size_t>(producer)].endpoint != in.nodes[i].endpoint)
        elsewhere[v] = true;
    }
  return elsewhere;
}

/// Why result `v` of op `op` is not packed, or "".
std::string unpacked_reason(const StorageInputs& in, const StoragePass& pass, ValueId v, size_t op,
                            const std::vector<bool>& read_elsewhere) {
  if (!pass.alignment) return "the probe pass";
  if (!in.options.pack_activations) return "packing off";
  const std::vector<ValueId>& outputs = in.program.outputs();
  if (std::find(outputs.begin(), outputs.end(), v) != outputs.end()) return "a program output";
  if (std::binary_search(in.retained.begin(), in.retained.end(), v)) return "retained";
  for (const StateUpdate& u : in.program.state_updates())
    if (u.value == v) return "a state's new contents (no provider updates it in place)";
  if (in.program.ops()[op].kind == OpKind::Extension) return "an extension op's result";
  if (read_elsewhere[v]) return "read on another device";
  if (in.tensors[v].layout.kind != ResolvedTensorLayout::Kind::Contiguous) return "a non-contiguous layout";
  return "";
}

/// One activation to pack.
struct Packable {
  ValueId value = 0;
  uint64_t bytes = 0;
  uint64_t alignment = 1;
  Lifetime life;
  uint64_t offset = 0;
};

/// Places `values` (largest first, ties by ValueId) each at the lowest
/// aligned offset where it overlaps no placed value whose lifetime
/// intersects its own. The arena's bytes: the largest end.
Result<uint64_t> pack(std::vector<Packable>& values) {
  std::stable_sort(values.begin(), values.end(), [](const Packable& a, const Packable& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.value < b.value;
  });
  uint64_t arena = 0;
  for (size_t k = 0; k < values.size(); ++k) {
    Packable& v = values[k];
    std::vector<const Packable*> live;
    for (size_t j = 0; j < k; ++j)
      if (values[j].bytes > 0 && values[j].life.intersects(v.life)) live.push_back(&values[j]);
    std::sort(live.begin(), live.end(), [](const Packable* a, const Packable* b) { return a->offset < b->offset; });
    uint64_t candidate = 0;
    for (const Packable* p : live) {
      TENACT_ASSIGN_OR_RETURN(const uint64_t end, checked_end(candidate, v.bytes, "activation arena"));
      if (end <= p->offset) break;
      TENACT_ASSIGN_OR_RETURN(const uint64_t after, checked_end(p->offset, p->bytes, "activation arena"));
      TENACT_ASSIGN_OR_RETURN(const uint64_t aligned, checked_align_up(after, v.alignment, "activation arena"));
      candidate = std::max(candidate, aligned);
    }
    v.offset = candidate;
    TENACT_ASSIGN_OR_RETURN(const uint64_t end, checked_end(candidate, v.bytes, "activation arena"));
    arena = std::max(arena, end);
  }
  return arena;
}

/// Packs each device's packable activations into its arena (devices in
/// catalog order); sets their places and appends the arenas.
Status pack_devices(const StorageInputs& in, StoragePass& pass, std::vector<std::pair<Endpoint, Packable>> all,
                    uint64_t& arena_bytes) {
  std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    return engine_rank(in.catalog, a.first.engine) < engine_rank(in.catalog, b.first.engine);
  });
  for (size_t begin = 0; begin < all.size();) {
    size_t end = begin;
    std::vector<Packable> values;
    uint64_t alignment = 1;
    for (; end < all.size() && all[end].first == all[begin].first; ++end) {
      values.push_back(all[end].second);
      alignment = std::max(alignment, all[end].second.alignment);
    }
    const Endpoint& at = all[begin].first;
    TENACT_ASSIGN_OR_RETURN(const uint64_t bytes, pack(values));
    const std::string id = hashed_resource_id("activation-arena", in.family_fingerprint, at.to_string());
    pass.resources.push_back(StorageResource{id, ResourceKind::ActivationArena, at, DType::U8, bytes, alignment,
                                             std::to_string(values.size()) + " activations"});
    for (const Packable& v : values) pass.storage[v.value].places.push_back(StoragePlace{id, at, v.offset, v.bytes});
    TENACT_ASSIGN_OR_RETURN(arena_bytes, checked_end(arena_bytes, bytes, "activation arenas"));
    begin = end;
  }
  return ok_status();
}

/// The most bytes of activations live at one op.
Result<uint64_t> peak_live_bytes(const StorageInputs& in, const StoragePass& pass) {
  std::vector<int64_t> delta(in.program.ops().size() + 1, 0);
  for (ValueId v = 0; v < pass.storage.size(); ++v) {
    const ValueStorage& s = pass.storage[v];
    if (s.kind != ValueStorage::Kind::Activation || s.fused) continue;
    TENACT_ASSIGN_OR_RETURN(const uint64_t bytes, in.tensors[v].minimum_storage_bytes());
    delta[s.first_op] += static_cast<int64_t>(bytes);
    delta[s.last_op + 1] -= static_cast<int64_t>(bytes);
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta) peak = std::max(peak, live += d);
  return static_cast<uint64_t>(peak);
}

}  // namespace

Status place_activations(const StorageInputs& in, StoragePass& pass) {
  const std::vector<Lifetime> life = lifetimes(in);
  const std::vector<bool> read_elsewhere = read_on_other_devices(in);
  const std::vector<Op>& ops = in.program.ops();
  std::vector<std::pair<Endpoint, Packable>> packable;
  std::vector<StorageResource> unpacked;
  uint64_t unpacked_bytes = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Endpoint& at = in.nodes[i].endpoint;
    for (size_t r = 0; r < ops[i].outputs.size(); ++r) {
      const ValueId v = ops[i].outputs[r];
      const AliasPolicy& alias = in.nodes[i].result_aliases[r];
      ValueStorage& s = pass.storage[v];
      if (alias.kind == AliasPolicy::Kind::MustAlias && alias.input < ops[i].inputs.size()) {
        const ValueId operand = ops[i].inputs[alias.input];
        s = pass.storage[operand];
        s.kind = ValueStorage::Kind::Aliased;
        if (!s.aliases) s.aliases = operand;
        s.first_op = life[v].first;
        s.last_op = life[v].last;
        continue;
      }
      s.kind = ValueStorage::Kind::Activation;
      s.first_op = life[v].first;
      s.last_op = life[v].last;
      if (in.execution.fused[v]) {
        s.fused = true;
        s.unpacked_because = "fused into a region (never materialized)";
        continue;
      }
      const ResolvedTensorSpec& tensor = in.tensors[v];
      TENACT_ASSIGN_OR_RETURN(const uint64_t bytes, tensor.minimum_storage_bytes());
      TENACT_ASSIGN_OR_RETURN(pass.activation_bytes.total,
                              checked_end(pass.activation_bytes.total, bytes, "activations"));
      const uint64_t alignment = std::max<uint64_t>(pass.alignment.value_or(1), size_of(tensor.dtype));
      s.unpacked_because = unpacked_reason(in, pass, v, i, read_elsewhere);
      s.packed = s.unpacked_because.empty();
      if (s.packed) {
        packable.emplace_back(at, Packable{v, bytes, alignment, life[v], 0});
        continue;
      }
      const std::string& name = in.program.value(v).name;
      const std::string id = hashed_resource_id("activation", in.family_fingerprint, name);
      unpacked.push_back(
          StorageResource{id, ResourceKind::Activation, at, tensor.dtype, bytes, alignment, "value " + name});
      s.places.push_back(StoragePlace{id, at, 0, bytes});
      TENACT_ASSIGN_OR_RETURN(unpacked_bytes, checked_end(unpacked_bytes, bytes, "activations"));
    }
  }
  uint64_t arena_bytes = 0;
  TENACT_TRY(pack_devices(in, pass, std::move(packable), arena_bytes));
  pass.resources.insert(pass.resources.end(), unpacked.begin(), unpacked.end());
  TENACT_ASSIGN_OR_RETURN(pass.activation_bytes.planned, checked_end(arena_bytes, unpacked_bytes, "activations"));
  TENACT_ASSIGN_OR_RETURN(pass.activation_bytes.peak_live, peak_live_bytes(in, pass));
  return ok_status();
}

}  // namespace tenact
