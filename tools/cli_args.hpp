// Argument forms shared by the tenact commands: NAME=VALUE pairs (with the
// escapes that let a name hold '='), ENGINE[/STORAGE] endpoints, counts.
// Every parser returns nullopt-or-error text instead of printing, so each
// command reports usage errors in its own words (exit status 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "core/tensor_layout.hpp"
#include "planning/prepare_options.hpp"

namespace tenact::cli {

/// A parsed value, or the usage error's text.
template <class T>
using Parsed = std::variant<T, std::string>;

/// "NAME=VALUE": NAME ends at the first '=' that is not escaped. In NAME,
/// "\=" stands for '=' and "\\" for '\' (no other escape is allowed);
/// VALUE is taken as it is. `flag` and `value_word` word the error
/// ("--input expects NAME=FILE, got 'x'").
Parsed<std::pair<std::string, std::string>> parse_name_value(const std::string& arg, const std::string& flag,
                                                             const std::string& value_word);

/// "ENGINE" or "ENGINE/STORAGE", both parts non-empty; STORAGE defaults to
/// `default_storage` (which may be empty: the engine's own default).
struct EndpointArg {
  std::string engine;
  std::string storage_class;
};
Parsed<EndpointArg> parse_endpoint_arg(const std::string& text, const std::string& default_storage);

/// "--policy NAME": auto, earliest_finish, preference or round_robin.
Parsed<PlacementPolicy> parse_policy_arg(const std::string& text);

/// "DTYPE[D0,D1,...]" ("f32[4,784]", "i32[]"; spaces allowed after commas):
/// a contiguous tensor of concrete extents.
Parsed<ResolvedTensorSpec> parse_tensor_spec(const std::string& text);

/// A decimal count in [1, max]; nullopt otherwise.
std::optional<uint64_t> parse_count(const std::string& text, uint64_t max);

/// The help texts' description of the NAME escapes (a string literal, so
/// the commands' help texts stay compile-time constants).
#define TENACT_NAME_ESCAPES_HELP                                                   \
  "A NAME holding '=' writes it as '\\=' (and '\\' as '\\\\'), e.g.\n"    \
  "--input 'a\\=b=a.npy' for the input named a=b.\n"

}  // namespace tenact::cli
