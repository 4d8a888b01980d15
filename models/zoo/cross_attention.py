# cross_attention: a pre-norm cross-attention layer (decoder queries attend to encoder memory).
#
# Queries come from one sequence (x: sq tokens of width d), keys and values from another
# (mem: skv tokens of width dm, a different length and width), as in an encoder-decoder
# Transformer or a vision-language adapter. The attention products are written as einsums.
# A residual around the whole layer.
#
# ops: aten::layer_norm, aten::reshape, aten::linear, aten::view, aten::einsum, aten::mul,
#      aten::softmax, aten::add
#
# inputs:
#   x    [b, sq, d]     queries' token states
#   mem  [b, skv, dm]   memory (encoder output)
#   g    [d]            LayerNorm on the queries: scale, shift
#   be   [d]
#   wq   [nh, hd, d]    query projection, per head
#   bq   [nh*hd]
#   wk   [nh, hd, dm]   key projection (from memory)
#   bk   [nh*hd]
#   wv   [nh, hd, dm]   value projection (from memory)
#   bv   [nh*hd]
#   wo   [d, nh*hd]     output projection
#   bo   [d]
#
# returns: y [b, sq, d]


def heads(x: Tensor, w: Tensor, bias: Tensor) -> Tensor:
    # [b, s, width] -> [b, s, nh, hd]
    nh, hd, width = w.size(0), w.size(1), w.size(2)
    return torch.linear(x, w.reshape(nh * hd, width), bias).view(x.size(0), x.size(1), nh, hd)


def forward(x: Tensor, mem: Tensor, g: Tensor, be: Tensor, wq: Tensor, bq: Tensor, wk: Tensor,
            bk: Tensor, wv: Tensor, bv: Tensor, wo: Tensor, bo: Tensor) -> Tensor:
    b, sq, d = x.size(0), x.size(1), x.size(2)
    hd = wq.size(1)
    h = torch.layer_norm(x, [d], g, be, 1e-5)
    q = heads(h, wq, bq)
    k = heads(mem, wk, bk)
    v = heads(mem, wv, bv)
    scores = torch.einsum("bqhe,bkhe->bhqk", [q, k]) * (1.0 / float(hd) ** 0.5)
    attn = torch.einsum("bhqk,bkhe->bqhe", [torch.softmax(scores, -1), v])
    return x + torch.linear(attn.reshape(b, sq, wo.size(1)), wo, bo)
