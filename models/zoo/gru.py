# gru: a one-layer GRU over a sequence, the gate math written out (no aten::gru).
#
# The input projection of every step is one GEMM up front (as cuDNN does); the recurrence
# loops over the time steps (the sequence length is fixed per size config: the loop's trip
# count is x.size(0), a prim::Loop in the graph that an executor may unroll). Gates in PyTorch's
# order (reset, update, new):
#   r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
#   z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
#   n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
#   h = n + z * (h - n)
#
# ops: aten::linear, aten::select, aten::chunk, aten::add, aten::sigmoid, aten::mul, aten::tanh,
#      aten::sub, aten::stack
#
# inputs:
#   x     [s, b, i]     input sequence, time first
#   h0    [b, hh]       initial hidden state
#   w_ih  [hh*3, i]     input-to-hidden weights, gates r, z, n stacked
#   b_ih  [hh*3]
#   w_hh  [hh*3, hh]    hidden-to-hidden weights
#   b_hh  [hh*3]
#
# returns: (outputs [s, b, hh], h_last [b, hh])


def forward(x: Tensor, h0: Tensor, w_ih: Tensor, b_ih: Tensor, w_hh: Tensor,
            b_hh: Tensor) -> Tuple[Tensor, Tensor]:
    gi_all = torch.linear(x, w_ih, b_ih)
    h = h0
    outputs: List[Tensor] = []
    for t in range(x.size(0)):
        gi = gi_all[t]
        gh = torch.linear(h, w_hh, b_hh)
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        r = torch.sigmoid(i_r + h_r)
        z = torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        h = n + z * (h - n)
        outputs.append(h)
    return torch.stack(outputs, 0), h
