# unet_block: one level of a U-Net: down path, bottleneck, up path with a skip connection.
#
# Down: conv3x3-relu (kept as the skip) then 2x2 max pool. Bottleneck: conv3x3-relu at half
# resolution, twice the channels. Up: bilinear upsampling back to the skip's size, concatenate
# with the skip, conv3x3-relu, then a 1x1 conv to k output channels (a segmentation head).
#
# ops: aten::conv2d, aten::relu, aten::max_pool2d, aten::upsample_bilinear2d, aten::cat
#
# inputs:
#   x    [b, ci, hw, hw]     images (hw even)
#   wd   [c, ci, 3, 3]       down conv
#   bd   [c]
#   wm   [c*2, c, 3, 3]      bottleneck conv
#   bm   [c*2]
#   wu   [c, c*3, 3, 3]      up conv on [upsampled, skip]
#   bu   [c]
#   wo   [k, c, 1, 1]        head
#   bo   [k]
#
# returns: y [b, k, hw, hw]


def forward(x: Tensor, wd: Tensor, bd: Tensor, wm: Tensor, bm: Tensor, wu: Tensor, bu: Tensor,
            wo: Tensor, bo: Tensor) -> Tensor:
    skip = torch.relu(torch.conv2d(x, wd, bd, [1, 1], [1, 1]))
    h = torch.max_pool2d(skip, [2, 2], [2, 2])
    h = torch.relu(torch.conv2d(h, wm, bm, [1, 1], [1, 1]))
    up = torch.upsample_bilinear2d(h, [skip.size(2), skip.size(3)], False, None, None)
    h = torch.cat([up, skip], 1)
    h = torch.relu(torch.conv2d(h, wu, bu, [1, 1], [1, 1]))
    return torch.conv2d(h, wo, bo, [1, 1], [0, 0])
