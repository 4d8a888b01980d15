# transformer_encoder: one post-norm Transformer encoder layer (BERT style).
#
# Multi-head self-attention (softmax(q k^T / sqrt(hd)) v, no mask), residual, LayerNorm; then a
# GELU feed-forward network, residual, LayerNorm. The query/key/value weights are [nh, hd, d] so
# the head count comes from a shape (arguments are tensors only); each is used as one
# [nh*hd, d] linear layer, as a fused QKV projection would be.
#
# ops: aten::reshape, aten::linear, aten::view, aten::transpose, aten::matmul, aten::mul,
#      aten::softmax, aten::add, aten::layer_norm, aten::gelu
#
# inputs:
#   x    [b, s, d]      token states
#   wq   [nh, hd, d]    query projection, per head
#   bq   [nh*hd]
#   wk   [nh, hd, d]    key projection
#   bk   [nh*hd]
#   wv   [nh, hd, d]    value projection
#   bv   [nh*hd]
#   wo   [d, nh*hd]     output projection
#   bo   [d]
#   g1   [d]            LayerNorm after attention: scale, shift
#   be1  [d]
#   w1   [f, d]         feed-forward up
#   b1   [f]
#   w2   [d, f]         feed-forward down
#   b2   [d]
#   g2   [d]            LayerNorm after the feed-forward network
#   be2  [d]
#
# returns: y [b, s, d]


def heads(x: Tensor, w: Tensor, bias: Tensor) -> Tensor:
    # [b, s, d] -> [b, nh, s, hd]
    nh, hd, d = w.size(0), w.size(1), w.size(2)
    y = torch.linear(x, w.reshape(nh * hd, d), bias)
    return y.view(x.size(0), x.size(1), nh, hd).transpose(1, 2)


def forward(x: Tensor, wq: Tensor, bq: Tensor, wk: Tensor, bk: Tensor, wv: Tensor, bv: Tensor,
            wo: Tensor, bo: Tensor, g1: Tensor, be1: Tensor, w1: Tensor, b1: Tensor,
            w2: Tensor, b2: Tensor, g2: Tensor, be2: Tensor) -> Tensor:
    b, s, d = x.size(0), x.size(1), x.size(2)
    hd = wq.size(1)
    q = heads(x, wq, bq)
    k = heads(x, wk, bk)
    v = heads(x, wv, bv)
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / float(hd) ** 0.5)
    attn = torch.matmul(torch.softmax(scores, -1), v)
    attn = attn.transpose(1, 2).reshape(b, s, wo.size(1))
    x = torch.layer_norm(x + torch.linear(attn, wo, bo), [d], g1, be1, 1e-5)
    f = torch.linear(torch.gelu(torch.linear(x, w1, b1)), w2, b2)
    return torch.layer_norm(x + f, [d], g2, be2, 1e-5)
