// One fuzz target = one function `int fuzz(const std::uint8_t* data, std::size_t size)`.
//
// DEEPSHARE_FUZZ_TARGET(name) defines it. In the fuzz build (preset `fuzz`, libFuzzer) it is
// LLVMFuzzerTestOneInput of that target's binary; in the other builds it registers the
// function under `name`, so that fuzz_regression_test replays every seed and every crash
// ever found (tests/fuzz/corpus, tests/fuzz/regressions) in the release and ASan builds.
//
// The contract every target checks: bad input may only be an InputError. Any other
// exception escapes (libFuzzer reports it as a crash), and the sanitizers abort on memory
// errors and undefined behaviour.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace ds::fuzz {

using Target = int (*)(const std::uint8_t* data, std::size_t size);
std::map<std::string, Target>& registry();

struct Register {
  Register(const char* name, Target t) { registry()[name] = t; }
};

}  // namespace ds::fuzz

#ifdef DEEPSHARE_FUZZING
#define DEEPSHARE_FUZZ_TARGET(name)                                                   \
  static int fuzz_one(const std::uint8_t* data, std::size_t size);                    \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
    return fuzz_one(data, size);                                                      \
  }                                                                                   \
  static int fuzz_one(const std::uint8_t* data, std::size_t size)
#else
#define DEEPSHARE_FUZZ_TARGET(name)                                         \
  static int fuzz_one(const std::uint8_t* data, std::size_t size);          \
  static const ::ds::fuzz::Register fuzz_register_##name(#name, &fuzz_one); \
  static int fuzz_one(const std::uint8_t* data, std::size_t size)
#endif
