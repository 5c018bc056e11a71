#include "k8s/node_rules.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>

namespace ds::k8s {

namespace {

using nlohmann::json;

std::optional<std::int64_t> integer(const std::string& s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<NodeRequirement::Op> op_of(const std::string& s) {
  using Op = NodeRequirement::Op;
  if (s == "In") return Op::In;
  if (s == "NotIn") return Op::NotIn;
  if (s == "Exists") return Op::Exists;
  if (s == "DoesNotExist") return Op::DoesNotExist;
  if (s == "Gt") return Op::Gt;
  if (s == "Lt") return Op::Lt;
  return std::nullopt;
}

// One matchExpressions / matchFields entry; "" or why it cannot be read.
std::string read_requirement(const json& e, bool field, NodeRequirement& r) {
  if (!e.is_object() || !e.contains("key") || !e["key"].is_string())
    return "a node affinity requirement without a key";
  r.key = e["key"].get<std::string>();
  r.field = field;
  const auto o_field = e.find("operator");
  const std::string op =
      o_field != e.end() && o_field->is_string() ? o_field->get<std::string>() : std::string();
  const auto o = op_of(op);
  if (!o) return "node affinity operator '" + op + "' (key " + r.key + ")";
  r.op = *o;
  if (const auto v = e.find("values"); v != e.end() && v->is_array())
    for (const auto& x : *v)
      if (x.is_string()) r.values.push_back(x.get<std::string>());
  using Op = NodeRequirement::Op;
  if (field && (r.key != "metadata.name" || (r.op != Op::In && r.op != Op::NotIn)))
    return "matchFields other than metadata.name In/NotIn (key " + r.key + ")";
  if ((r.op == Op::Gt || r.op == Op::Lt) && (r.values.size() != 1 || !integer(r.values[0])))
    return "node affinity " + op + " needs one integer value (key " + r.key + ")";
  return "";
}

}  // namespace

bool NodeRequirement::holds(const std::string& node, const Labels& labels) const {
  const std::string* value = nullptr;
  if (field) {
    value = &node;
  } else if (auto it = labels.find(key); it != labels.end()) {
    value = &it->second;
  }
  const auto listed = [&] {
    return value && std::find(values.begin(), values.end(), *value) != values.end();
  };
  switch (op) {
    case Op::In:
      return listed();
    case Op::NotIn:
      return !listed();
    case Op::Exists:
      return value != nullptr;
    case Op::DoesNotExist:
      return value == nullptr;
    case Op::Gt:
    case Op::Lt: {
      const auto have = value ? integer(*value) : std::nullopt;
      const auto bound = values.size() == 1 ? integer(values.front()) : std::nullopt;
      return have && bound && (op == Op::Gt ? *have > *bound : *have < *bound);
    }
  }
  return false;
}

bool NodeRules::admit(const std::string& name, const Labels& labels) const {
  if (!invalid.empty()) return false;
  for (const auto& [k, v] : selector)
    if (auto it = labels.find(k); it == labels.end() || it->second != v) return false;
  if (!affinity) return true;
  return std::any_of(terms.begin(), terms.end(), [&](const std::vector<NodeRequirement>& t) {
    return !t.empty() && std::all_of(t.begin(), t.end(), [&](const NodeRequirement& r) {
      return r.holds(name, labels);
    });
  });
}

NodeRules node_rules(const json& spec) {
  NodeRules out;
  if (!spec.is_object()) return out;
  if (const auto s = spec.find("nodeSelector"); s != spec.end() && s->is_object())
    for (const auto& [k, v] : s->items())
      out.selector.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  const json* req = nullptr;
  if (const auto a = spec.find("affinity"); a != spec.end() && a->is_object())
    if (const auto n = a->find("nodeAffinity"); n != a->end() && n->is_object())
      if (const auto r = n->find("requiredDuringSchedulingIgnoredDuringExecution");
          r != n->end() && r->is_object())
        req = &*r;
  if (!req) return out;
  out.affinity = true;
  const auto terms = req->find("nodeSelectorTerms");
  if (terms == req->end() || !terms->is_array()) return out;
  for (const auto& t : *terms) {
    std::vector<NodeRequirement>& term = out.terms.emplace_back();
    for (const bool field : {false, true}) {
      const auto list = t.find(field ? "matchFields" : "matchExpressions");
      if (list == t.end() || !list->is_array()) continue;
      for (const auto& e : *list) {
        NodeRequirement r;
        if (std::string why = read_requirement(e, field, r); !why.empty()) {
          if (out.invalid.empty()) out.invalid = why;
          continue;
        }
        term.push_back(std::move(r));
      }
    }
  }
  return out;
}

}  // namespace ds::k8s
