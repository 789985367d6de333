// A prepared program described for people and tools (`tenact inspect`):
// where each instruction runs, each transfer and its route, the elementwise
// regions, the prepared-entry key's digest and the retained bytes.
//
// Pure functions; thread-safe. Cost: O(size of the plan).
#pragma once

#include <string>

#include "core/error.hpp"
#include "planning/prepared_program.hpp"

namespace tenact {

/// Plain text, one section per aspect, stable line formats (tests and
/// scripts may grep them):
///   "instruction #2 add -> 'z1' at cpu/host (region 0)"
///   with cost-aware placement: "..., stream 1, placed by earliest_finish:
///   estimated start 5000 ns, finish 9000 ns, 4096 bytes moved"
///   "transfer node 3: 'x' cpu:1/host -> cpu/host via host_copy"
///   "region 0: ..." (describe_region)
///   "key digest 0123...ef (32 hex digits)"
/// Errors: Internal when `report` lacks its context or key; Overflow from
/// the byte accounting.
Result<std::string> plan_to_text(const PreparedProgram& program, const PrepareReport& report);

/// The same as a JSON document:
/// {"program", "runtime_id", "epoch", "engines": [{"id", "hardware_class",
///  "registration"}], "inputs": [{"name", "dtype", "shape", "endpoint"}],
///  "instructions": [{"index", "op", "outputs", "engine", "storage_class",
///  "region", "stream", "placement": {"policy", "est_start_ns",
///  "est_finish_ns", "transfer_bytes"}}], "transfers": [{"node", "value", "from", "to", "provider",
///  "after"}], "regions": [{"index", "instructions", "splat_constants",
///  "broadcasts", "inputs", "outputs", "endpoint", "shape"}], "outputs": [{"name",
///  "endpoint"}], "specialization", "redirects", "search_attempts",
///  "key": {"digest", "key_bytes", "root_bytes", "entry_bytes",
///  "total_bytes"}}; "region" is null outside regions, "stream" without a
///  planned queue; "placement" holds only "policy" ("preference") when the
///  preference search placed the program.
Result<std::string> plan_to_json(const PreparedProgram& program, const PrepareReport& report);

}  // namespace tenact
