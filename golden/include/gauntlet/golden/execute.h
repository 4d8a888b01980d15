// Runs one op case on given inputs, forward and (in eager-bwd mode) backward, and names the
// outputs to compare: "out0", "out1", ... then "grad.<input name>" for every differentiable
// input. The runner calls it on the device; the golden calls it on fp64 CPU inputs.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "gauntlet/suites/op_impl.h"

namespace gauntlet {

struct NamedTensor {
  std::string name;
  at::Tensor value;
};

std::vector<NamedTensor> execute(const OpDef& def, const CaseKey& key, std::vector<at::Tensor> inputs);

}  // namespace gauntlet
