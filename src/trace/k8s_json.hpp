// Reading what `kubectl get ... -o json` saved (docs/formats.md, "k8s"): the file as a v1 List,
// fields looked up by path with errors that name the file, the object and the field, RFC 3339
// times and the whole-number quantities of extended resources (nvidia.com/gpu).
//
// Assumptions:
//  1. A file holds one JSON object with an `items` array (kind List, or the kind's own list
//     kind such as PodList); anything else is an error that says which command writes it.
//  2. Times are RFC 3339 as the API writes them (metav1.Time: "2026-12-01T09:00:00Z"), read
//     strictly: a 'T' between date and time, an optional fraction (dropped: whole seconds),
//     and 'Z' or an offset "+HH:MM"/"-HH:MM" (converted to UTC). Seconds 60 (leap seconds)
//     and dates outside +-100 years of 1970 are refused.
//  3. A GPU quantity is a whole number: the API's canonical string ("4") or a JSON integer;
//     suffixes ("1k"), fractions and negative values are refused (a GPU is not divisible).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ds {

// One object of a List: its file, what it is called in messages ("pod 'ns/name'") and its JSON.
struct K8sItem {
  const std::string& file;
  std::string what;
  const nlohmann::json& object;

  // The value at `path` (keys from the object); nullptr when a key is absent or null. Throws
  // InputError when a step on the way is not an object.
  [[nodiscard]] const nlohmann::json* find(std::initializer_list<std::string_view> path) const;
  // A string at `path`: nullopt when absent; an error when it is not a string (or empty and
  // `required`); `required` also makes absence an error.
  [[nodiscard]] std::optional<std::string> string(std::initializer_list<std::string_view> path,
                                                  bool required) const;
  // An RFC 3339 time at `path` (assumption 2) as Unix seconds; nullopt when absent.
  [[nodiscard]] std::optional<std::int64_t> time(std::initializer_list<std::string_view> path,
                                                 bool required) const;
  // A GPU quantity (assumption 3) in 0..`max` held by `value`, found at `field`.
  [[nodiscard]] std::int64_t quantity(const nlohmann::json& value, const std::string& field,
                                      std::int64_t max) const;
  // Throws InputError "FILE: WHAT: field 'FIELD': expected EXPECTED".
  [[noreturn]] void fail(const std::string& field, const std::string& expected) const;
};

// A List (assumption 1) and where it came from, named in every message about its objects: a
// file kubectl wrote, or the API's URL when read straight from the API server.
struct K8sList {
  std::string source;
  nlohmann::json list;
};

// The parsed file (assumption 1); `command` is what writes it, for messages
// ("kubectl get pods -A -o json").
K8sList read_k8s_list(const std::string& path, const std::string& command);
// The same from text (a file's, or an API answer's), named `source` in messages.
K8sList parse_k8s_list(const std::string& text, const std::string& source,
                       const std::string& command);
// Checks that `list` is a List (an object with an `items` array), as read_k8s_list does.
K8sList k8s_list(nlohmann::json list, const std::string& source, const std::string& command);
// The list's items (an array, checked by k8s_list).
const nlohmann::json& k8s_items(const K8sList& list);

// "2026-12-01T09:00:00Z", "2026-12-01T10:00:00.5+01:00" -> Unix seconds; nullopt when not
// strict RFC 3339 or out of range (assumption 2).
std::optional<std::int64_t> parse_rfc3339(std::string_view s);

// "a.b.c" for messages.
std::string k8s_path_text(std::initializer_list<std::string_view> path);

}  // namespace ds
