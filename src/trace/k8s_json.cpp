#include "trace/k8s_json.hpp"

#include <cctype>
#include <utility>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/trace_util.hpp"

namespace ds {
namespace {

using nlohmann::json;

constexpr const char* kTimeExpected =
    "an RFC 3339 time such as 2026-12-01T09:00:00Z (or with an offset, +01:00)";

std::optional<int> two_digits(std::string_view s, std::size_t at) {
  if (at + 2 > s.size() || !std::isdigit(static_cast<unsigned char>(s[at])) ||
      !std::isdigit(static_cast<unsigned char>(s[at + 1])))
    return std::nullopt;
  return (s[at] - '0') * 10 + (s[at + 1] - '0');
}

// The offset of "Z", "+HH:MM", "-HH:MM" in seconds east of UTC; nullopt when malformed.
std::optional<std::int64_t> utc_offset(std::string_view s) {
  if (s == "Z" || s == "z") return 0;
  if (s.size() != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':') return std::nullopt;
  const auto h = two_digits(s, 1), m = two_digits(s, 4);
  if (!h || !m || *h > 23 || *m > 59) return std::nullopt;
  return (s[0] == '-' ? -1 : 1) * (std::int64_t{*h} * 3600 + *m * 60);
}

std::string type_name(const json& v) {
  return v.is_null() ? "null" : v.type_name();
}

}  // namespace

std::optional<std::int64_t> parse_rfc3339(std::string_view s) {
  if (s.size() < 20 || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  const auto day = parse_date(s.substr(0, 10));
  const auto h = two_digits(s, 11), mi = two_digits(s, 14), sec = two_digits(s, 17);
  if (!day || !h || !mi || !sec || *h > 23 || *mi > 59 || *sec > 59) return std::nullopt;
  std::size_t at = 19;
  if (s[at] == '.') {
    const std::size_t first = ++at;
    while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at]))) ++at;
    if (at == first || at - first > 9) return std::nullopt;
  }
  const auto offset = utc_offset(s.substr(at));
  if (!offset) return std::nullopt;
  const std::int64_t t = *day * 86400 + *h * 3600 + *mi * 60 + *sec - *offset;
  if (t < -limits::kMaxAbsTime / kSecond || t > limits::kMaxAbsTime / kSecond) return std::nullopt;
  return t;
}

std::string k8s_path_text(std::initializer_list<std::string_view> path) {
  std::string s;
  for (const auto p : path) s += (s.empty() ? "" : ".") + std::string(p);
  return s;
}

void K8sItem::fail(const std::string& field, const std::string& expected) const {
  throw InputError(SourceLocation{file},
                   what + ": field " + quote_input(field, 200) + ": expected " + expected);
}

const json* K8sItem::find(std::initializer_list<std::string_view> path) const {
  const json* at = &object;
  std::string walked;
  for (const auto key : path) {
    if (!at->is_object())
      fail(walked.empty() ? "(the object)" : walked,
           "an object, got " + type_name(*at) + " " + quote_input(at->dump(), 40));
    const auto it = at->find(key);
    if (it == at->end() || it->is_null()) return nullptr;
    at = &*it;
    walked += (walked.empty() ? "" : ".") + std::string(key);
  }
  return at;
}

std::optional<std::string> K8sItem::string(std::initializer_list<std::string_view> path,
                                           bool required) const {
  const json* v = find(path);
  if (!v) {
    if (required) fail(k8s_path_text(path), "a string (the field is missing)");
    return std::nullopt;
  }
  if (!v->is_string())
    fail(k8s_path_text(path), "a string, got " + type_name(*v) + " " + quote_input(v->dump(), 40));
  std::string s = v->get<std::string>();
  if (required && s.empty()) fail(k8s_path_text(path), "a non-empty string");
  return s;
}

std::optional<std::int64_t> K8sItem::time(std::initializer_list<std::string_view> path,
                                          bool required) const {
  const auto s = string(path, required);
  if (!s) return std::nullopt;
  const auto t = parse_rfc3339(*s);
  if (!t)
    fail(k8s_path_text(path),
         std::string(kTimeExpected) + ", from 1869-12-31 to 2070-01-01, got " + quote_input(*s));
  return t;
}

std::int64_t K8sItem::quantity(const json& value, const std::string& field,
                               std::int64_t max) const {
  const std::string expected = "a whole GPU count in 0.." + std::to_string(max) + ", got ";
  std::optional<std::int64_t> n;
  if (value.is_number_integer()) {
    n = value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t{INT64_MAX}
            ? std::nullopt
            : std::optional<std::int64_t>(value.get<std::int64_t>());
  } else if (value.is_string()) {
    const std::string s = value.get<std::string>();
    const bool digits =
        !s.empty() && s.size() <= 18 && s.find_first_not_of("0123456789") == std::string::npos;
    if (digits) n = parse_int(s);
  }
  if (!n || *n < 0 || *n > max) fail(field, expected + quote_input(value.dump(), 40));
  return *n;
}

K8sList read_k8s_list(const std::string& path, const std::string& command) {
  return parse_k8s_list(read_input_file(path), path, command);
}

K8sList parse_k8s_list(const std::string& text, const std::string& source,
                       const std::string& command) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError(SourceLocation{source},
                     "file is empty; expected the output of `" + command + "`");
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // a parse error, or a number out of range (406)
    std::string what = e.what();        // "[json.exception.parse_error.101] parse error at ..."
    if (const auto at = what.find("] "); at != std::string::npos) what.erase(0, at + 2);
    if (what.size() > 200) what = what.substr(0, 200) + "...";
    throw InputError(SourceLocation{source},
                     "not JSON (" + what + "); expected the output of `" + command + "`");
  }
  return k8s_list(std::move(doc), source, command);
}

K8sList k8s_list(json list, const std::string& source, const std::string& command) {
  const auto items = list.is_object() ? list.find("items") : list.end();
  if (!list.is_object() || items == list.end() || !items->is_array())
    throw InputError(SourceLocation{source}, "no 'items' list; expected the output of `" + command +
                                                 "` (a List, not a single object or YAML)");
  return {source, std::move(list)};
}

const json& k8s_items(const K8sList& list) {
  return list.list.at("items");
}

}  // namespace ds
