// The golden result of a case: the same op on the CPU with floating inputs upcast to float64
// (integers and bools exact). The fp64 outputs are kept for error metrics; comparison also uses
// them rounded to the output dtype.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "gauntlet/golden/execute.h"

namespace gauntlet {

// Golden method version: bump when the way goldens are computed changes (golden store key).
inline constexpr int kGoldenMethodVersion = 1;

// `inputs` are the case's CPU inputs in the case dtype (make_inputs).
std::vector<NamedTensor> compute_golden(const OpDef& def, const CaseKey& key, const std::vector<at::Tensor>& inputs);

}  // namespace gauntlet
