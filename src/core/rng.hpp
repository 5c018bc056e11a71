// Seeded random numbers with portable, bit-exact results.
//
// std::*_distribution differ between standard libraries, which would make runs
// depend on the compiler; these helpers build every draw from SplitMix64 so the
// same seed yields the same numbers everywhere.
#pragma once

#include <cmath>
#include <cstdint>

namespace ds {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  // Standard normal (Box-Muller, one value per call).
  double normal() {
    double u1 = uniform();
    double u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  double exponential(double mean) {
    double u = uniform();
    return -mean * std::log(1.0 - u);
  }

 private:
  std::uint64_t state_;
};

}  // namespace ds
