# moe: a mixture-of-experts feed-forward layer with top-2 routing (Mixtral style).
#
# A router scores each token against ne experts; the token goes to its 2 best experts with
# weights softmax(their 2 logits). The combine is dense and deterministic: the routing weights
# are scattered into an [n, ne] gate matrix (zero for experts not chosen), every expert runs on
# every token as one batched matmul, and the outputs are summed weighted by the gates. No
# data-dependent shapes and no atomics, at ne/2 times the FLOPs of sparse dispatch.
#
# ops: aten::reshape, aten::linear, aten::topk, aten::gather, aten::softmax, aten::zeros_like,
#      aten::scatter, aten::unsqueeze, aten::transpose, aten::matmul, aten::add, aten::gelu,
#      aten::t, aten::mul, aten::sum, aten::view
#
# inputs:
#   x    [b, s, d]      token states
#   wr   [ne, d]        router
#   w1   [ne, f, d]     experts' up projections
#   b1   [ne, f]
#   w2   [ne, d, f]     experts' down projections
#   b2   [ne, d]
#
# returns: y [b, s, d]


def forward(x: Tensor, wr: Tensor, w1: Tensor, b1: Tensor, w2: Tensor, b2: Tensor) -> Tensor:
    b, s, d = x.size(0), x.size(1), x.size(2)
    tokens = x.reshape(b * s, d)
    logits = torch.linear(tokens, wr)
    top = torch.topk(logits, 2, -1)
    weights = torch.softmax(torch.gather(logits, 1, top[1]), -1)
    gates = torch.zeros_like(logits).scatter(1, top[1], weights)
    # Every expert on every token: [ne, n, f] then [ne, n, d].
    h = torch.matmul(tokens.unsqueeze(0), w1.transpose(1, 2)) + b1.unsqueeze(1)
    y = torch.matmul(torch.gelu(h), w2.transpose(1, 2)) + b2.unsqueeze(1)
    out = (gates.t().unsqueeze(-1) * y).sum(0)
    return out.view(b, s, d)
