# depthwise_separable: a MobileNet-style depthwise-separable convolution block.
#
# Depthwise 3x3 conv (groups = channels, stride 2) - bn - relu6, then pointwise 1x1 conv to co
# channels - bn - hardswish (MobileNetV3's activation). Batch norm in inference form.
#
# ops: aten::conv2d, aten::batch_norm, aten::relu6, aten::hardswish
#
# inputs:
#   x    [b, c, hw, hw]   feature map (hw even)
#   wdw  [c, 1, 3, 3]     depthwise filters, one per channel
#   g1   [c]              bn after depthwise: scale, shift, running mean, running variance
#   be1  [c]
#   m1   [c]
#   v1   [c]
#   wpw  [co, c, 1, 1]    pointwise conv
#   g2   [co]             bn after pointwise
#   be2  [co]
#   m2   [co]
#   v2   [co]
#
# returns: y [b, co, hw/2, hw/2]


def forward(x: Tensor, wdw: Tensor, g1: Tensor, be1: Tensor, m1: Tensor, v1: Tensor,
            wpw: Tensor, g2: Tensor, be2: Tensor, m2: Tensor, v2: Tensor) -> Tensor:
    h = torch.conv2d(x, wdw, None, [2, 2], [1, 1], [1, 1], x.size(1))
    h = torch.relu6(torch.batch_norm(h, g1, be1, m1, v1, False, 0.1, 1e-5, True))
    h = torch.conv2d(h, wpw, None, [1, 1], [0, 0])
    return torch.hardswish(torch.batch_norm(h, g2, be2, m2, v2, False, 0.1, 1e-5, True))
