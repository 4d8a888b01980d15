# mlp: a three-layer perceptron classifier (features -> hidden -> hidden -> class logits).
#
# The plainest dense workload: two GEMMs with bias and a ReLU between them, then a classifier
# GEMM. The hidden width is the arithmetic-intensity knob.
#
# ops: aten::linear, aten::relu
#
# inputs:
#   x    [b, d]  features
#   w1   [h, d]  first layer
#   b1   [h]
#   w2   [h, h]  second layer
#   b2   [h]
#   w3   [c, h]  classifier
#   b3   [c]
#
# returns: logits [b, c]


def forward(x: Tensor, w1: Tensor, b1: Tensor, w2: Tensor, b2: Tensor, w3: Tensor,
            b3: Tensor) -> Tensor:
    h = torch.relu(torch.linear(x, w1, b1))
    h = torch.relu(torch.linear(h, w2, b2))
    return torch.linear(h, w3, b3)
