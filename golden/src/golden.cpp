#include "gauntlet/golden/golden.h"

#include "gauntlet/golden/inputs.h"

namespace gauntlet {

std::vector<NamedTensor> execute(const OpDef& def, const CaseKey& key, std::vector<at::Tensor> inputs) {
  const bool bwd = key.mode == Mode::EagerBwd;
  std::vector<std::size_t> grad_inputs;
  if (bwd) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (def.spec.inputs[i].differentiable && at::isFloatingType(inputs[i].scalar_type())) {
        inputs[i] = inputs[i].detach().requires_grad_(true);
        grad_inputs.push_back(i);
      }
    }
  }
  at::AutoGradMode grad_mode(bwd);
  const std::vector<at::Tensor> leaves = inputs;
  OpCall call(def.spec, key, std::move(inputs));
  std::vector<at::Tensor> outs = def.fn(call);

  std::vector<NamedTensor> named;
  for (std::size_t k = 0; k < outs.size(); ++k) {
    named.push_back({"out" + std::to_string(k), outs[k].detach()});
  }
  if (!bwd) return named;

  // Backward: seed every floating output with a deterministic gradient made in the case dtype,
  // so the golden's fp64 seed is exactly the upcast of the device's.
  std::vector<at::Tensor> diff_outs, seeds;
  for (std::size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k].requires_grad()) continue;
    // Only the output's shape matters to the seed: no read of device memory here.
    at::Tensor seed =
        make_grad_output(key, k, at::empty(outs[k].sizes(), at::TensorOptions().dtype(to_scalar_type(key.dtype))));
    diff_outs.push_back(outs[k]);
    seeds.push_back(seed.to(outs[k].options()));
  }
  std::vector<at::Tensor> wrt;
  for (std::size_t i : grad_inputs) wrt.push_back(leaves[i]);
  if (diff_outs.empty() || wrt.empty()) return named;
  std::vector<at::Tensor> grads = torch::autograd::grad(diff_outs, wrt, seeds, /*retain_graph=*/false,
                                                        /*create_graph=*/false, /*allow_unused=*/true);
  for (std::size_t j = 0; j < grads.size(); ++j) {
    if (!grads[j].defined()) continue;
    named.push_back({"grad." + def.spec.inputs[grad_inputs[j]].name, grads[j]});
  }
  return named;
}

std::vector<NamedTensor> compute_golden(const OpDef& def, const CaseKey& key, const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> up;
  up.reserve(inputs.size());
  for (const auto& t : inputs) {
    up.push_back(at::isFloatingType(t.scalar_type()) ? t.to(at::kDouble) : t);
  }
  return execute(def, key, std::move(up));
}

}  // namespace gauntlet
