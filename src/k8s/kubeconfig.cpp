#include "k8s/kubeconfig.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace ds::k8s {
namespace {

// Where a node sits in the file, for messages.
struct Where {
  const std::string& file;
  SourceLocation at(const YAML::Node& n) const {
    const auto m = n.Mark();
    return {file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1};
  }
};

std::string scalar(const Where& w, const YAML::Node& parent, const char* key,
                   const std::string& field) {
  const auto n = parent[key];
  if (!n) return "";
  if (!n.IsScalar()) throw InputError(w.at(n), "field '" + field + "." + key + "': not a string");
  return n.as<std::string>();
}

// The entry of list `key` (clusters, users, contexts) named `name`, and its `inner` map.
YAML::Node named(const Where& w, const YAML::Node& root, const char* key, const char* inner,
                 const std::string& name, const std::string& wanted_by) {
  const auto list = root[key];
  if (list && !list.IsSequence())
    throw InputError(w.at(list), std::string("field '") + key + "': not a list");
  if (list) {
    for (const auto& e : list) {
      if (e.IsMap() && e["name"] && e["name"].IsScalar() && e["name"].as<std::string>() == name) {
        const auto body = e[inner];
        if (!body || !body.IsMap())
          throw InputError(w.at(e), std::string("field '") + key + "[" + name + "]." + inner +
                                        "': missing or not a map");
        return body;
      }
    }
  }
  throw InputError(w.at(root), std::string("no entry '") + name + "' in '" + key + "' (named by " +
                                   wanted_by + ")");
}

std::string read_file(const Where& w, const YAML::Node& n, const std::string& path,
                      const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(w.at(n), "field '" + field + "': cannot read file '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `<key>-data` (base64 PEM) or `<key>` (a file path), as kubectl reads them.
std::string pem(const Where& w, const YAML::Node& body, const std::string& key,
                const std::string& field, const std::string& base_dir) {
  const std::string data_key = key + "-data";
  if (const auto d = body[data_key]) {
    const auto text = scalar(w, body, data_key.c_str(), field);
    const auto bytes = YAML::DecodeBase64(text);
    if (bytes.empty() && !text.empty())
      throw InputError(w.at(d), "field '" + field + "." + data_key + "': not valid base64");
    return {bytes.begin(), bytes.end()};
  }
  auto path = scalar(w, body, key.c_str(), field);
  if (path.empty()) return "";
  if (path[0] != '/' && !base_dir.empty()) path = base_dir + "/" + path;
  return read_file(w, body[key], path, field + "." + key);
}

void refuse(const Where& w, const YAML::Node& body, const char* key, const std::string& field,
            const char* why) {
  if (body[key])
    throw InputError(w.at(body[key]),
                     "field '" + field + "." + key + "': not supported (" + why + ")");
}

void read_cluster(const Where& w, const YAML::Node& c, const std::string& field,
                  const std::string& base_dir, Kubeconfig& k) {
  k.server = scalar(w, c, "server", field);
  if (k.server.rfind("https://", 0) != 0 && k.server.rfind("http://", 0) != 0)
    throw InputError(w.at(c), "field '" + field + ".server': expected https://HOST:PORT, got " +
                                  quote_input(k.server));
  k.ca_pem = pem(w, c, "certificate-authority", field, base_dir);
  k.insecure_skip_tls_verify =
      c["insecure-skip-tls-verify"] && c["insecure-skip-tls-verify"].as<bool>(false);
  refuse(w, c, "tls-server-name", field, "the server is named by its URL");
  refuse(w, c, "proxy-url", field, "the client talks to the API server directly");
}

void read_user(const Where& w, const YAML::Node& u, const std::string& field,
               const std::string& base_dir, Kubeconfig& k) {
  refuse(w, u, "exec", field, "the client never runs credential plugins");
  refuse(w, u, "auth-provider", field, "the client never runs credential plugins");
  k.client_cert_pem = pem(w, u, "client-certificate", field, base_dir);
  k.client_key_pem = pem(w, u, "client-key", field, base_dir);
  if (k.client_cert_pem.empty() != k.client_key_pem.empty())
    throw InputError(w.at(u),
                     "field '" + field + "': client-certificate and client-key go together");
  k.token = scalar(w, u, "token", field);
  if (const auto tf = scalar(w, u, "tokenFile", field); !tf.empty() && k.token.empty()) {
    k.token =
        read_file(w, u["tokenFile"], tf[0] == '/' ? tf : base_dir + "/" + tf, field + ".tokenFile");
    while (!k.token.empty() && (k.token.back() == '\n' || k.token.back() == '\r'))
      k.token.pop_back();
  }
}

}  // namespace

Kubeconfig parse_kubeconfig(std::string_view text, const std::string& file,
                            const std::string& base_dir, const std::string& context) {
  const Where w{file};
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw InputError(SourceLocation{file, e.mark.line + 1, e.mark.column + 1}, e.msg);
  }
  if (!root.IsMap())
    throw InputError(SourceLocation{file, 1, 1}, "not a kubeconfig (expected a map)");
  Kubeconfig k;
  k.context = context.empty() ? scalar(w, root, "current-context", "") : context;
  if (k.context.empty()) throw InputError(w.at(root), "no context: current-context is empty");
  const auto ctx = named(w, root, "contexts", "context", k.context,
                         context.empty() ? "current-context" : "the caller");
  const std::string cfield = "contexts[" + k.context + "].context";
  k.cluster = scalar(w, ctx, "cluster", cfield);
  k.user = scalar(w, ctx, "user", cfield);
  if (const auto ns = scalar(w, ctx, "namespace", cfield); !ns.empty()) k.namespace_ = ns;
  if (k.cluster.empty()) throw InputError(w.at(ctx), "field '" + cfield + ".cluster': missing");
  read_cluster(w, named(w, root, "clusters", "cluster", k.cluster, cfield + ".cluster"),
               "clusters[" + k.cluster + "].cluster", base_dir, k);
  if (!k.user.empty())
    read_user(w, named(w, root, "users", "user", k.user, cfield + ".user"),
              "users[" + k.user + "].user", base_dir, k);
  return k;
}

Kubeconfig load_kubeconfig(const std::string& path, const std::string& context) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "cannot read kubeconfig");
  std::ostringstream s;
  s << in.rdbuf();
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  return parse_kubeconfig(s.str(), path, dir.empty() ? "/" : dir, context);
}

std::string default_kubeconfig_path() {
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    const std::string list = env;
    return list.substr(0, list.find(':'));
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + "/.kube/config";
}

}  // namespace ds::k8s
