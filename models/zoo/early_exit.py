# early_exit: an early-exit classifier (adaptive computation): a first block with its own exit
# head; when the exit head is confident enough on the whole batch its logits are the answer,
# otherwise a second block runs and the final head refines the exit head's logits.
#
# The exit is decided on the host from a value computed on the device (`float(t)`): a
# data-dependent branch. torch.compile breaks its graph there (the read, then a graph per branch
# taken); a graph compiler without control flow breaks at the read and at the branch. The
# threshold sits far above what the exit head's confidence reaches with the zoo's weights, so the
# device and the fp64 golden take the same branch.
#
# ops: aten::linear, aten::relu, aten::softmax, aten::amax, aten::mean, aten::add
#
# inputs:
#   x    [b, d]  features
#   w1   [h, d]  first block
#   b1   [h]
#   we   [c, h]  exit head
#   be   [c]
#   w2   [h, h]  second block
#   b2   [h]
#   wf   [c, h]  final head
#   bf   [c]
#
# returns: logits [b, c]


def forward(x: Tensor, w1: Tensor, b1: Tensor, we: Tensor, be: Tensor, w2: Tensor, b2: Tensor, wf: Tensor,
            bf: Tensor) -> Tensor:
    h = torch.relu(torch.linear(x, w1, b1))
    early = torch.linear(h, we, be)
    confidence = float(torch.softmax(early, -1).amax(-1).mean())
    if confidence > 0.99:
        return early
    h2 = torch.relu(torch.linear(h, w2, b2))
    return early + torch.linear(h2, wf, bf)  # the final head refines the exit head's logits
