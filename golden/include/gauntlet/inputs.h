// Note [Deterministic inputs]: a case's inputs depend on its key alone: the generator is a
// splitmix64 stream seeded with (case id, input index), independent of the order in which cases
// run, of the shard and of the process, and independent of libtorch's own RNG (which may change
// between versions). Values are drawn in double inside the op's input domain, then rounded to
// the case dtype; that rounded tensor is the input, and its fp64 upcast is the golden's input.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "gauntlet/case_key.h"
#include "gauntlet/op_spec.h"

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
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::int64_t below(std::int64_t n) { return n <= 0 ? 0 : std::int64_t(next() % std::uint64_t(n)); }

 private:
  std::uint64_t s_;
};

// The CPU inputs of a case, contiguous, in the case dtype (or the input's own type).
std::vector<at::Tensor> make_inputs(const CaseKey& key, const OpSpec& spec);
// The same values laid out as the key's layout asks (transposed, strided, channels_last).
at::Tensor apply_layout(const at::Tensor& t, Layout layout);
// Deterministic gradient seeds for the backward of `outputs` (one per floating output).
at::Tensor make_grad_output(const CaseKey& key, std::size_t output_index, const at::Tensor& like);
// A stable fingerprint of tensors' values (for tests and repro output).
std::uint64_t fingerprint(const std::vector<at::Tensor>& tensors);

}  // namespace gauntlet
