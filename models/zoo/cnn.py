# cnn: a small image classifier, two conv-bn-relu-pool stages, global average pool, linear head.
#
# Batch norm in inference form: the running mean and variance are inputs (buffers), the
# statistics are not updated (training=False).
#
# ops: aten::conv2d, aten::batch_norm, aten::relu, aten::max_pool2d,
#      aten::adaptive_avg_pool2d, aten::flatten, aten::linear
#
# inputs:
#   x    [b, ci, hw, hw]  images
#   w1   [c1, ci, 3, 3]   stage 1 conv (no bias: batch norm follows)
#   g1   [c1]             stage 1 batch norm: scale
#   be1  [c1]             shift
#   m1   [c1]             running mean
#   v1   [c1]             running variance (positive)
#   w2   [c2, c1, 3, 3]   stage 2 conv
#   g2   [c2]
#   be2  [c2]
#   m2   [c2]
#   v2   [c2]
#   wf   [k, c2]          classifier
#   bf   [k]
#
# returns: logits [b, k]


def forward(x: Tensor, w1: Tensor, g1: Tensor, be1: Tensor, m1: Tensor, v1: Tensor,
            w2: Tensor, g2: Tensor, be2: Tensor, m2: Tensor, v2: Tensor,
            wf: Tensor, bf: Tensor) -> Tensor:
    h = torch.conv2d(x, w1, None, [1, 1], [1, 1])
    h = torch.batch_norm(h, g1, be1, m1, v1, False, 0.1, 1e-5, True)
    h = torch.max_pool2d(torch.relu(h), [2, 2], [2, 2])
    h = torch.conv2d(h, w2, None, [1, 1], [1, 1])
    h = torch.batch_norm(h, g2, be2, m2, v2, False, 0.1, 1e-5, True)
    h = torch.max_pool2d(torch.relu(h), [2, 2], [2, 2])
    h = torch.flatten(torch.adaptive_avg_pool2d(h, [1, 1]), 1)
    return torch.linear(h, wf, bf)
