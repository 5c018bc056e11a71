// A 64-bit FNV-1a digest: what the manifests of output folders record per file, so that a
// file cut short, edited by hand or swapped with another run's is found when the folder
// is read back (`report`, `fidelity`). Not a cryptographic hash: it detects accidents,
// not an adversary who rewrites the manifest too.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace ds {

class Fnv1a {
 public:
  void add(std::string_view bytes) {
    for (const char c : bytes) {
      h_ ^= static_cast<unsigned char>(c);
      h_ *= 0x100000001b3ULL;
    }
  }
  [[nodiscard]] std::uint64_t value() const { return h_; }
  // "fnv1a64:0123456789abcdef"
  [[nodiscard]] std::string text() const {
    char buf[40];
    std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h_));
    return buf;
  }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace ds
