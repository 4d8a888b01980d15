# resnet_block: one ResNet stage of two basic blocks (conv3x3-bn-relu-conv3x3-bn + shortcut, relu).
#
# The first block halves the resolution (stride 2) and widens ci -> c, so its shortcut is a
# projection (conv1x1 stride 2 + bn); the second block keeps the shape, so its shortcut is the
# identity. Batch norm in inference form (running stats are inputs).
#
# ops: aten::conv2d, aten::batch_norm, aten::relu, aten::add
#
# inputs:
#   x    [b, ci, hw, hw]  feature map
#   w1   [c, ci, 3, 3]    block 1, conv a (stride 2)
#   g1   [c]              block 1, bn a: scale, shift, running mean, running variance
#   be1  [c]
#   m1   [c]
#   v1   [c]
#   w2   [c, c, 3, 3]     block 1, conv b
#   g2   [c]
#   be2  [c]
#   m2   [c]
#   v2   [c]
#   wp   [c, ci, 1, 1]    block 1, projection shortcut (stride 2)
#   gp   [c]
#   bep  [c]
#   mp   [c]
#   vp   [c]
#   w3   [c, c, 3, 3]     block 2, conv a
#   g3   [c]
#   be3  [c]
#   m3   [c]
#   v3   [c]
#   w4   [c, c, 3, 3]     block 2, conv b
#   g4   [c]
#   be4  [c]
#   m4   [c]
#   v4   [c]
#
# returns: y [b, c, hw/2, hw/2]


def bn(x: Tensor, g: Tensor, b: Tensor, m: Tensor, v: Tensor) -> Tensor:
    return torch.batch_norm(x, g, b, m, v, False, 0.1, 1e-5, True)


def forward(x: Tensor,
            w1: Tensor, g1: Tensor, be1: Tensor, m1: Tensor, v1: Tensor,
            w2: Tensor, g2: Tensor, be2: Tensor, m2: Tensor, v2: Tensor,
            wp: Tensor, gp: Tensor, bep: Tensor, mp: Tensor, vp: Tensor,
            w3: Tensor, g3: Tensor, be3: Tensor, m3: Tensor, v3: Tensor,
            w4: Tensor, g4: Tensor, be4: Tensor, m4: Tensor, v4: Tensor) -> Tensor:
    # Block 1: downsample, projection shortcut.
    h = torch.relu(bn(torch.conv2d(x, w1, None, [2, 2], [1, 1]), g1, be1, m1, v1))
    h = bn(torch.conv2d(h, w2, None, [1, 1], [1, 1]), g2, be2, m2, v2)
    s = bn(torch.conv2d(x, wp, None, [2, 2], [0, 0]), gp, bep, mp, vp)
    y = torch.relu(h + s)
    # Block 2: identity shortcut.
    h = torch.relu(bn(torch.conv2d(y, w3, None, [1, 1], [1, 1]), g3, be3, m3, v3))
    h = bn(torch.conv2d(h, w4, None, [1, 1], [1, 1]), g4, be4, m4, v4)
    return torch.relu(h + y)
