# embedding_bag_mlp: a DLRM-style recommendation model.
#
# Two sparse features, each a bag of ids per sample pooled by EmbeddingBag (sum over the bag
# given by offsets; an empty bag pools to zero); dense features through a bottom MLP; pairwise
# dot-product interaction of the three vectors (a batched matmul); a top MLP to one click logit.
#
# ops: aten::linear, aten::relu, aten::embedding_bag, aten::stack, aten::transpose, aten::bmm,
#      aten::flatten, aten::cat
#
# inputs:
#   dense  [b, nd]        dense features
#   idx0   [b*p0]         ids of sparse feature 0 (int64, < v0)
#   off0   [b]            bag starts of feature 0 (int64, sorted, first 0)
#   idx1   [b*p1]         ids of sparse feature 1 (int64, < v1)
#   off1   [b]            bag starts of feature 1
#   wb     [e, nd]        bottom MLP
#   bb     [e]
#   t0     [v0, e]        embedding table of feature 0
#   t1     [v1, e]        embedding table of feature 1
#   wt1    [h, e+9]       top MLP: the dense vector and the 3x3 interactions
#   bt1    [h]
#   wt2    [1, h]
#   bt2    [1]
#
# returns: logit [b, 1]


def forward(dense: Tensor, idx0: Tensor, off0: Tensor, idx1: Tensor, off1: Tensor,
            wb: Tensor, bb: Tensor, t0: Tensor, t1: Tensor, wt1: Tensor, bt1: Tensor,
            wt2: Tensor, bt2: Tensor) -> Tensor:
    d = torch.relu(torch.linear(dense, wb, bb))
    # mode 0 = sum; no per-sample weights; offsets hold bag starts only.
    e0 = torch.embedding_bag(t0, idx0, off0, False, 0, False, None, False)[0]
    e1 = torch.embedding_bag(t1, idx1, off1, False, 0, False, None, False)[0]
    z = torch.stack([d, e0, e1], 1)
    inter = torch.bmm(z, z.transpose(1, 2))
    top = torch.cat([d, torch.flatten(inter, 1)], 1)
    top = torch.relu(torch.linear(top, wt1, bt1))
    return torch.linear(top, wt2, bt2)
