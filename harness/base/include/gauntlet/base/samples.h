// Timed repetitions as the database stores them (results.samples): float32 little-endian, 4 bytes
// each, in the order they ran. Note [Stored samples]: float32's 24-bit mantissa is far finer than
// timer noise. Shared by the store (writes, reads) and compare (reads). No torch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gauntlet {

std::string pack_samples(const std::vector<double>& samples);
std::vector<double> unpack_samples(std::string_view bytes);             // a trailing partial value is ignored
void unpack_samples(std::string_view bytes, std::vector<double>& out);  // into a reused buffer

}  // namespace gauntlet
