#include "core/manifest.hpp"

#include <algorithm>
#include <fstream>

#include "core/cleanup.hpp"
#include "core/digest.hpp"
#include "core/error.hpp"

namespace ds {
namespace fs = std::filesystem;

void Manifest::add(const AtomicFile& f) {
  files.push_back({fs::path(f.path()).filename().string(), f.bytes(), f.digest().text()});
}

const ManifestEntry* Manifest::find(const std::string& name) const {
  for (const auto& f : files)
    if (f.name == name) return &f;
  return nullptr;
}

std::string Manifest::json() const {
  nlohmann::ordered_json j;
  j["manifest"] = kManifestFormat;
  j["kind"] = kind;
  j["command"] = command;
  j["version"] = version;
  j["identity"] = identity;
  auto& fl = j["files"] = nlohmann::ordered_json::array();
  for (const auto& f : files)
    fl.push_back({{"name", f.name}, {"bytes", f.bytes}, {"digest", f.digest}});
  j["folders"] = folders;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

[[noreturn]] void bad(const fs::path& file, const std::string& what) {
  throw InputError(SourceLocation{file.string()}, what);
}

const nlohmann::json& member(const fs::path& file, const nlohmann::json& obj, const char* key,
                             nlohmann::json::value_t type, const char* expected) {
  const auto it = obj.find(key);
  if (it == obj.end()) bad(file, std::string("missing key '") + key + "'");
  const bool ok = type == nlohmann::json::value_t::number_unsigned ? it->is_number_unsigned()
                                                                   : it->type() == type;
  if (!ok) bad(file, std::string("key '") + key + "': expected " + expected);
  return *it;
}

std::string plain_name(const fs::path& file, const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos)
    bad(file, "names " + quote_input(name) + ", which is not a file in this folder");
  return name;
}

}  // namespace

Manifest read_manifest(const fs::path& dir) {
  using T = nlohmann::json::value_t;
  const fs::path file = dir / kManifestName;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    bad(file,
        "missing: the folder is incomplete (a command that failed or was interrupted) or "
        "was written by a DeepShare without manifests; run the command again");
  constexpr std::uintmax_t kMaxBytes = 64 << 20;
  if (fs::file_size(file, ec) > kMaxBytes) bad(file, "larger than 64 MiB: not a manifest");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(file.string()));
  } catch (const nlohmann::json::exception& e) {
    bad(file, "not valid JSON: " + quote_input(e.what(), 200));
  }
  if (!j.is_object()) bad(file, "expected a JSON object");
  if (member(file, j, "manifest", T::string, "a string").get<std::string>() != kManifestFormat)
    bad(file, "key 'manifest': expected '" + std::string(kManifestFormat) + "'");
  Manifest m;
  m.kind = member(file, j, "kind", T::string, "a string").get<std::string>();
  m.command = member(file, j, "command", T::string, "a string").get<std::string>();
  m.version = member(file, j, "version", T::string, "a string").get<std::string>();
  m.identity = member(file, j, "identity", T::object, "an object");
  for (const auto& f : member(file, j, "files", T::array, "a list")) {
    if (!f.is_object()) bad(file, "key 'files': expected a list of objects");
    ManifestEntry e;
    e.name = plain_name(file, member(file, f, "name", T::string, "a string").get<std::string>());
    e.bytes = member(file, f, "bytes", T::number_unsigned, "a size in bytes").get<std::uint64_t>();
    e.digest = member(file, f, "digest", T::string, "a string").get<std::string>();
    if (m.find(e.name)) bad(file, "lists " + quote_input(e.name) + " twice");
    m.files.push_back(std::move(e));
  }
  for (const auto& f : member(file, j, "folders", T::array, "a list")) {
    if (!f.is_string()) bad(file, "key 'folders': expected a list of folder names");
    m.folders.push_back(plain_name(file, f.get<std::string>()));
  }
  return m;
}

std::string file_digest(const fs::path& file, std::uint64_t* bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(SourceLocation{file.string()}, "cannot open for reading");
  Fnv1a d;
  std::uint64_t n = 0;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    d.add(std::string_view(buf, static_cast<std::size_t>(in.gcount())));
    n += static_cast<std::uint64_t>(in.gcount());
  }
  if (in.bad()) throw InputError(SourceLocation{file.string()}, "read error");
  if (bytes) *bytes = n;
  return d.text();
}

void verify_manifest(const fs::path& dir, const Manifest& m,
                     const std::vector<std::string>& allowed_extra) {
  const fs::path mf = dir / kManifestName;
  for (const auto& f : m.files) {
    const fs::path p = dir / f.name;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      bad(p, "missing, though " + mf.string() + " lists it: the folder is incomplete");
    std::uint64_t bytes = 0;
    const std::string digest = file_digest(p, &bytes);
    if (bytes != f.bytes)
      bad(p, "has " + std::to_string(bytes) + " bytes, " + mf.string() + " records " +
                 std::to_string(f.bytes) + ": cut short or changed since it was written");
    if (digest != f.digest)
      bad(p, "changed since it was written (its digest differs from " + mf.string() + ")");
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n == kManifestName || m.find(n) ||
        std::find(m.folders.begin(), m.folders.end(), n) != m.folders.end() ||
        std::find(allowed_extra.begin(), allowed_extra.end(), n) != allowed_extra.end() ||
        is_transient_name(n))  // e.g. `fidelity` writing REPLAY/fidelity right now
      continue;
    bad(e.path(), "is not part of the results " + mf.string() +
                      " lists (another run's, or added by hand): remove it or run again");
  }
  for (const auto& f : m.folders)
    if (!fs::is_directory(dir / f, ec))
      bad(dir / f, "missing, though " + mf.string() + " lists it: the folder is incomplete");
}

}  // namespace ds
