// A kubeconfig file (the format kubectl reads), resolved to the one context the client uses.
//
// Supported, as kubectl reads them: clusters[].cluster.{server, certificate-authority[-data],
// insecure-skip-tls-verify}, users[].user.{client-certificate[-data],
// client-key[-data], token, tokenFile}, contexts[].context.{cluster, user, namespace},
// current-context. Relative file paths are relative to the kubeconfig's folder. Anything
// that would run code or reach elsewhere (exec, auth-provider, proxy-url), and
// tls-server-name (libcurl cannot set SNI apart from the URL), is refused with an error
// naming the field: the client never runs a plugin.
#pragma once

#include <string>
#include <string_view>

namespace ds::k8s {

struct Kubeconfig {
  std::string server;  // "https://127.0.0.1:6443"
  std::string ca_pem;  // empty: the system's CAs
  bool insecure_skip_tls_verify = false;
  std::string client_cert_pem;  // with client_key_pem: TLS client authentication
  std::string client_key_pem;
  std::string token;                   // bearer token (with or instead of a certificate)
  std::string namespace_ = "default";  // the context's namespace
  std::string context;                 // names, for messages
  std::string user;
  std::string cluster;
};

// Reads `path`; `context` empty means current-context. Throws InputError naming the file,
// line and field for anything missing, unreadable or unsupported.
Kubeconfig load_kubeconfig(const std::string& path, const std::string& context = "");

// The same from text; `file` names it in errors and `base_dir` resolves relative paths.
Kubeconfig parse_kubeconfig(std::string_view text, const std::string& file,
                            const std::string& base_dir, const std::string& context = "");

// The kubeconfig to use when none is given: $KUBECONFIG (its first entry), else
// ~/.kube/config.
std::string default_kubeconfig_path();

}  // namespace ds::k8s
