# llama_block: one decoder layer of a Llama-style language model.
#
# Pre-norm with RMSNorm; causal self-attention with rotary position embeddings (RoPE, the
# rotate-half form) and grouped-query attention (nkv key/value heads shared by nh query heads);
# a SwiGLU feed-forward network; two residuals. No biases. The rotary cos/sin tables are
# computed in the graph from the token positions, in float32 as real implementations do, then
# cast to the model's dtype; the causal mask also comes from the positions (a key attends to a
# query when its position is not later).
#
# ops: aten::pow, aten::mean, aten::add, aten::rsqrt, aten::mul, aten::reshape, aten::linear,
#      aten::view, aten::transpose, aten::arange, aten::to, aten::unsqueeze, aten::cos,
#      aten::sin, aten::slice, aten::neg, aten::cat, aten::repeat_interleave, aten::matmul,
#      aten::gt, aten::masked_fill, aten::softmax, aten::silu
#
# inputs:
#   x      [b, s, d]       token states
#   pos    [s]             token positions (int64, 0..s-1)
#   g_att  [d]             RMSNorm scale before attention
#   wq     [nh, hd, d]     query projection, per head
#   wk     [nkv, hd, d]    key projection, per key/value head
#   wv     [nkv, hd, d]    value projection
#   wo     [d, nh*hd]      output projection
#   g_ffn  [d]             RMSNorm scale before the feed-forward network
#   w_gate [f, d]          SwiGLU gate
#   w_up   [f, d]          SwiGLU up
#   w_down [d, f]          SwiGLU down
#
# returns: y [b, s, d]


def rms_norm(x: Tensor, g: Tensor) -> Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g


def heads(x: Tensor, w: Tensor) -> Tensor:
    # [b, s, d] -> [b, heads, s, hd]
    n, hd, d = w.size(0), w.size(1), w.size(2)
    y = torch.linear(x, w.reshape(n * hd, d))
    return y.view(x.size(0), x.size(1), n, hd).transpose(1, 2)


def rotate_half(t: Tensor) -> Tensor:
    half = t.size(-1) // 2
    return torch.cat([-t[..., half:], t[..., :half]], -1)


def forward(x: Tensor, pos: Tensor, g_att: Tensor, wq: Tensor, wk: Tensor, wv: Tensor,
            wo: Tensor, g_ffn: Tensor, w_gate: Tensor, w_up: Tensor, w_down: Tensor) -> Tensor:
    b, s = x.size(0), x.size(1)
    nh, nkv, hd = wq.size(0), wk.size(0), wq.size(1)

    h = rms_norm(x, g_att)
    q = heads(h, wq)
    k = heads(h, wk)
    v = heads(h, wv)

    # RoPE: angle[p, i] = p * theta^(-2i/hd), the two halves of a head share frequency i.
    # (A float arange is float32, the default dtype; int64 positions times it promote to it.)
    inv_freq = torch.pow(10000.0, torch.arange(0.0, float(hd), 2.0, device=x.device) * (-1.0 / hd))
    angle = pos.unsqueeze(-1) * inv_freq
    angle = torch.cat([angle, angle], -1)
    cos = angle.cos().to(x.dtype)
    sin = angle.sin().to(x.dtype)
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin

    # Grouped-query attention: each key/value head serves nh // nkv query heads.
    k = k.repeat_interleave(nh // nkv, 1)
    v = v.repeat_interleave(nh // nkv, 1)
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / float(hd) ** 0.5)
    future = pos.unsqueeze(0) > pos.unsqueeze(1)
    scores = scores.masked_fill(future, float("-inf"))
    attn = torch.matmul(torch.softmax(scores, -1), v)
    x = x + torch.linear(attn.transpose(1, 2).reshape(b, s, nh * hd), wo)

    h = rms_norm(x, g_ffn)
    f = torch.linear(torch.silu(torch.linear(h, w_gate)) * torch.linear(h, w_up), w_down)
    return x + f
