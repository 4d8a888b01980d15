// Note [Deterministic inputs]: a case's inputs depend on its key alone: the generator is a
// splitmix64 stream seeded with (case id, input index), independent of the order in which cases
// run, of the shard and of the process, and independent of libtorch's own RNG (which may change
// between versions). Values are drawn in double inside the op's input domain, then rounded to
// the case dtype; that rounded tensor is the input, and its fp64 upcast is the golden's input.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/splitmix.h"
#include "gauntlet/suites/op_spec.h"

namespace gauntlet {

// The CPU inputs of a case, contiguous, in the case dtype (or the input's own type).
std::vector<at::Tensor> make_inputs(const CaseKey& key, const OpSpec& spec);
// The same values laid out as the key's layout asks (transposed, strided, channels_last).
at::Tensor apply_layout(const at::Tensor& t, Layout layout);
// Deterministic gradient seeds for the backward of `outputs` (one per floating output).
at::Tensor make_grad_output(const CaseKey& key, std::size_t output_index, const at::Tensor& like);
// A stable fingerprint of tensors' values (for tests and repro output).
std::uint64_t fingerprint(const std::vector<at::Tensor>& tensors);

}  // namespace gauntlet
