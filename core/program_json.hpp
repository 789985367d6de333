// The JSON door into a semantic program (docs/program-format.md, version 1).
//
// Contract: nothing malformed crashes, hangs or allocates without bound:
// nesting depth is bounded before parsing, constant data is counted
// against its shape before allocation, sizes are checked. Errors name the
// op ("op #3 (add -> 'z')"), the key and what is wrong. Thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/program.hpp"

namespace tenact {

/// Document text → draft. Schema and attribute errors of every op are
/// collected; syntax errors stop at the first.
struct DraftReport {
  std::optional<ProgramDraft> draft;  // set when errors is empty
  std::vector<Error> errors;
};
DraftReport parse_program_draft(std::string_view text);

/// parse_program_draft, then validate_all: every error found.
ValidationReport load_program_all(std::string_view text, const ExtensionRegistry& extensions = {});
/// The program or the first error (with a count of the others).
Result<SemanticProgram> load_program(std::string_view text, const ExtensionRegistry& extensions = {});
Result<SemanticProgram> load_program_file(const std::string& path,
                                          const ExtensionRegistry& extensions = {});

/// The canonical text of an extension op's attributes (keys sorted, no
/// spaces: ExtensionAttrs::attributes_json) from any JSON object's text;
/// "{}" for empty text. Errors: Parse for malformed JSON, Schema when it is
/// not an object, LimitExceeded past the loader's nesting limit.
Result<std::string> canonical_attributes_json(std::string_view text);

/// JSON text of a program (one op per line); load_program of it yields an
/// equal program (structural equality and the same fingerprint).
std::string save_program_json(const SemanticProgram& program);
std::string save_draft_json(const ProgramDraft& draft);

}  // namespace tenact
