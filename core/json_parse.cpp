// parse_json: JSON text to a nlohmann DOM, with the depth limit and
// duplicate keys refused (see json_internal.hpp).
//
// Contract: no nlohmann exception escapes; every failure is a tenact::Error.
// Cost: linear in the text. The nesting depth is checked on the raw text
// first (one pass, no allocation), so a hostile document ("[[[[..." x 10^6)
// cannot exhaust the stack; then nlohmann's SAX parser drives DomBuilder,
// which places every value once, in the container on top of its stack of
// open containers, and finds a duplicate key with the one map insertion
// that places the value (nlohmann's callback DOM parser, which this
// replaces, rescanned the parent container at every closing brace:
// quadratic in the number of objects in one array).
#include "core/json_internal.hpp"

#include <exception>
#include <new>
#include <optional>
#include <type_traits>

namespace tenact::json_io {

namespace {

// Byte position of the first array/object opening deeper than the limit,
// or nullopt. Brackets inside strings (escapes honoured) do not count.
std::optional<size_t> first_too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (in_string) {
      if (c == '\\') ++pos;  // skip the escaped character
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > kMaxJsonDepth) return pos;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;  // unbalanced text is the parser's to report
        break;
      default: break;
    }
  }
  return std::nullopt;
}

// nlohmann's what() starts with "[json.exception.parse_error.101] "; keep
// only the part meant for a person.
std::string strip_exception_id(const char* what) {
  std::string_view w = what;
  if (!w.empty() && w.front() == '[') {
    auto close = w.find("] ");
    if (close != std::string_view::npos) w.remove_prefix(close + 2);
  }
  return std::string(w);
}

std::string depth_message(std::string_view what) {
  return std::string(what) + ": JSON nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels";
}

// The SAX handler nlohmann's parser calls (the interface of
// nlohmann::json_sax): builds the DOM into `root`. A callback returning
// false stops the parse; failure() then says why. Not thread-safe: one
// parse per builder.
class DomBuilder {
 public:
  explicit DomBuilder(Json& root, std::string_view what) : root_(root), what_(what) {}

  bool null() { return place(Json(nullptr)); }
  bool boolean(bool v) { return place(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return place(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return place(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return place(Json(v)); }
  bool string(Json::string_t& v) { return place(Json(std::move(v))); }
  bool binary(Json::binary_t& v) { return place(Json(std::move(v))); }  // never produced by JSON text

  bool start_object(std::size_t) { return open(Json::value_t::object); }
  bool start_array(std::size_t) { return open(Json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  // Duplicate keys are an error, not "last one wins": a typo must not be
  // silently shadowed. The insertion that makes the member's slot finds
  // an earlier one: O(log members), no second lookup.
  bool key(Json::string_t& k) {
    auto& members = open_.back()->get_ref<Json::object_t&>();
    auto [it, inserted] = members.try_emplace(std::move(k));
    if (!inserted) {
      failure_ = Error{ErrorCode::Parse, std::string(what_) + ": duplicate key '" + it->first + "' in a JSON object"};
      return false;
    }
    member_ = &it->second;
    return true;
  }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string&, const Exception& e) {
    if constexpr (std::is_same_v<Exception, Json::parse_error>) {
      failure_ = Error{ErrorCode::Parse, std::string(what_) + ": JSON syntax error at byte " +
                                             std::to_string(e.byte) + ": " + strip_exception_id(e.what())};
    } else {
      (void)position;
      failure_ = Error{ErrorCode::Parse,
                       std::string(what_) + ": JSON could not be parsed: " + strip_exception_id(e.what())};
    }
    return false;
  }

  /// Why the parse stopped (set whenever a callback returned false).
  std::optional<Error>& failure() { return failure_; }

 private:
  // Puts `v` where the next value goes: the root, the end of the open
  // array, or the member slot the last key made. Pointers to open
  // containers stay valid: a container only grows while it is on top.
  Json* put(Json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& top = *open_.back();
    if (top.is_array()) {
      auto& items = top.get_ref<Json::array_t&>();
      items.push_back(std::move(v));
      return &items.back();
    }
    *member_ = std::move(v);
    return member_;
  }
  bool place(Json&& v) {
    put(std::move(v));
    return true;
  }
  bool open(Json::value_t type) {
    // The raw-text pass already refused deeper documents; this guards the
    // stack should the two ever disagree.
    if (open_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      failure_ = Error{ErrorCode::LimitExceeded, depth_message(what_)};
      return false;
    }
    open_.push_back(put(Json(type)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  Json& root_;
  std::string_view what_;
  std::vector<Json*> open_;  // the containers not yet closed, innermost last
  Json* member_ = nullptr;   // the slot of the object member being read
  std::optional<Error> failure_;
};

}  // namespace

Result<Json> parse_json(std::string_view text, std::string_view what) {
  if (auto pos = first_too_deep(text))
    return Error{ErrorCode::LimitExceeded, depth_message(what) + " at byte " + std::to_string(*pos)};
  try {
    Json root;
    DomBuilder builder{root, what};
    const bool parsed = Json::sax_parse(text.begin(), text.end(), &builder);
    if (auto& failure = builder.failure()) return std::move(*failure);
    if (!parsed) return Error{ErrorCode::Parse, std::string(what) + ": JSON could not be parsed"};
    return root;
  } catch (const std::bad_alloc&) {
    // The DOM of a document costs several times its text; the text limit
    // of each reader bounds it, but the machine may still run out first.
    return Error{ErrorCode::ResourceExhausted, std::string(what) + ": the JSON document (" +
                                               std::to_string(text.size()) +
                                               " bytes) did not fit in memory while parsing"};
  } catch (const std::exception& e) {
    return Error{ErrorCode::Parse,
                 std::string(what) + ": JSON could not be parsed: " + strip_exception_id(e.what())};
  }
}

}  // namespace tenact::json_io
