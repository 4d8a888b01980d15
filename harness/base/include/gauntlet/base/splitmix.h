// SplitMix64 (Steele, Lea and Flood 2014): the one generator behind every deterministic value
// Gauntlet makes (op inputs, collective inputs, model weights), so that a case's values depend on
// its key alone and never on libtorch's RNG, which may change between versions.
#pragma once

#include <cstdint>

namespace gauntlet {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::int64_t below(std::int64_t n) {
    return n <= 0 ? 0 : static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n));
  }

 private:
  std::uint64_t s_;
};

}  // namespace gauntlet
