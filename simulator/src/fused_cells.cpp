// Note [Fused RNN cells]: on 2.x, LSTMCell and GRUCell on a PrivateUse1 device take the fused
// path CUDA takes (aten/src/ATen/native/RNN.cpp: the gate matmuls, then _thnn_fused_lstm_cell or
// _thnn_fused_gru_cell, whose backward ops are device ops too). Those ops have no CPU kernel, so a
// CPU fallback cannot run them: every backend that runs LSTM/GRU cells must implement them, and so
// does the simulator. Each is written here as device ops (sigmoid, tanh, mul, add, cat, sum), which
// dispatch to the simulator's kernels or its fallback and are charged and faulted as such.
// Workspaces hold what CUDA's kernels hold, so the two ops of a pair agree with each other:
//   LSTM: workspace [B, 4H] = the activated gates i, f, g, o;
//   GRU:  workspace [B, 5H] = r, z, n (activated), hx, and the hidden gate n with its bias.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <tuple>

#include "sim_torch.h"

namespace gauntlet::sim {

namespace {

at::Tensor biased(const at::Tensor& gates, const c10::optional<at::Tensor>& bias) {
  return bias && bias->defined() ? gates + *bias : gates;
}

at::Tensor or_zeros(const c10::optional<at::Tensor>& t, const at::Tensor& like) {
  return t && t->defined() ? *t : at::zeros_like(like);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                         const at::Tensor& cx,
                                                         const c10::optional<at::Tensor>& input_bias,
                                                         const c10::optional<at::Tensor>& hidden_bias) {
  const auto gates = biased(input_gates, input_bias) + biased(hidden_gates, hidden_bias);
  const auto chunks = gates.chunk(4, 1);
  const at::Tensor i = chunks[0].sigmoid(), f = chunks[1].sigmoid(), g = chunks[2].tanh(), o = chunks[3].sigmoid();
  at::Tensor cy = f * cx + i * g;
  at::Tensor hy = o * cy.tanh();
  return {hy, cy, at::cat({i, f, g, o}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell_backward(const c10::optional<at::Tensor>& grad_hy,
                                                                  const c10::optional<at::Tensor>& grad_cy,
                                                                  const at::Tensor& cx, const at::Tensor& cy,
                                                                  const at::Tensor& workspace, bool has_bias) {
  const auto w = workspace.chunk(4, 1);
  const at::Tensor &i = w[0], &f = w[1], &g = w[2], &o = w[3];
  const at::Tensor ghy = or_zeros(grad_hy, cy), gcy = or_zeros(grad_cy, cy);
  const at::Tensor tanh_cy = cy.tanh();
  const at::Tensor gc = ghy * o * (1 - tanh_cy * tanh_cy) + gcy;
  const at::Tensor gi = gc * g * i * (1 - i);
  const at::Tensor gf = gc * cx * f * (1 - f);
  const at::Tensor gg = gc * i * (1 - g * g);
  const at::Tensor go = ghy * tanh_cy * o * (1 - o);
  at::Tensor grad_gates = at::cat({gi, gf, gg, go}, 1);
  at::Tensor grad_cx = gc * f;
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {grad_gates, grad_cx, grad_bias};
}

std::tuple<at::Tensor, at::Tensor> gru_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                            const at::Tensor& hx, const c10::optional<at::Tensor>& input_bias,
                                            const c10::optional<at::Tensor>& hidden_bias) {
  const auto ig = biased(input_gates, input_bias).chunk(3, 1);
  const auto hg = biased(hidden_gates, hidden_bias).chunk(3, 1);
  const at::Tensor r = (ig[0] + hg[0]).sigmoid();
  const at::Tensor z = (ig[1] + hg[1]).sigmoid();
  const at::Tensor n = (ig[2] + r * hg[2]).tanh();
  at::Tensor hy = n + z * (hx - n);
  return {hy, at::cat({r, z, n, hx, hg[2]}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> gru_cell_backward(const at::Tensor& grad_hy,
                                                                                         const at::Tensor& workspace,
                                                                                         bool has_bias) {
  const auto w = workspace.chunk(5, 1);
  const at::Tensor &r = w[0], &z = w[1], &n = w[2], &hx = w[3], &hn = w[4];
  const at::Tensor gz = grad_hy * (hx - n) * z * (1 - z);
  const at::Tensor gn = grad_hy * (1 - z) * (1 - n * n);
  const at::Tensor gr = gn * hn * r * (1 - r);
  at::Tensor grad_input_gates = at::cat({gr, gz, gn}, 1);
  at::Tensor grad_hidden_gates = at::cat({gr, gz, gn * r}, 1);
  at::Tensor grad_hx = grad_hy * z;
  at::Tensor gib = has_bias ? grad_input_gates.sum(0) : at::Tensor();
  at::Tensor ghb = has_bias ? grad_hidden_gates.sum(0) : at::Tensor();
  return {grad_input_gates, grad_hidden_gates, grad_hx, gib, ghb};
}

}  // namespace

std::vector<std::string> register_fused_cells(torch::Library& aten) {
  aten.impl("_thnn_fused_lstm_cell", TORCH_FN(lstm_cell));
  aten.impl("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(lstm_cell_backward));
  aten.impl("_thnn_fused_gru_cell", TORCH_FN(gru_cell));
  aten.impl("_thnn_fused_gru_cell_backward", TORCH_FN(gru_cell_backward));
  return {"aten::_thnn_fused_gru_cell", "aten::_thnn_fused_gru_cell_backward", "aten::_thnn_fused_lstm_cell",
          "aten::_thnn_fused_lstm_cell_backward_impl"};
}

}  // namespace gauntlet::sim
