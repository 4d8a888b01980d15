#include "gauntlet/base/samples.h"

#include <cstdint>
#include <cstring>

namespace gauntlet {

std::string pack_samples(const std::vector<double>& samples) {
  std::string out(samples.size() * 4, '\0');
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const float f = static_cast<float>(samples[i]);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    for (std::size_t b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

void unpack_samples(std::string_view bytes, std::vector<double>& out) {
  out.resize(bytes.size() / 4);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t bits = 0;
    for (std::size_t b = 0; b < 4; ++b) bits |= std::uint32_t{static_cast<unsigned char>(bytes[i * 4 + b])} << (8 * b);
    float f;
    std::memcpy(&f, &bits, 4);
    out[i] = f;
  }
}

std::vector<double> unpack_samples(std::string_view bytes) {
  std::vector<double> out;
  unpack_samples(bytes, out);
  return out;
}

}  // namespace gauntlet
