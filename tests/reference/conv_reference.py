#!/usr/bin/python3
"""torch.nn.functional's conv2d, conv1d, max_pool2d and avg_pool2d, and batch and group
normalization, on fixed inputs: the forward values and the gradients of sum(out * r) for each
input, written to conv_torch.txt, the fixture tests/autograd/test_conv.cpp and
tests/nn/test_conv_layers.cpp compare tinygpt against (the test suite itself needs no Python).
Inputs are closed-form (sin and cos of the element index), so the test makes the same ones.

Run from the repository root (Debian: apt-get install python3-torch; torch 1.13):
    /usr/bin/python3 tests/reference/conv_reference.py
"""
import math

import torch
import torch.nn.functional as F


def filled(shape, a, b):
    n = math.prod(shape)
    return torch.tensor([math.sin(a * i + b) for i in range(n)], dtype=torch.float64).reshape(shape).float()


def weights(shape):  # the upstream gradient r
    n = math.prod(shape)
    return torch.tensor([math.cos(0.21 * i) for i in range(n)], dtype=torch.float64).reshape(shape).float()


lines = []


def case(name, f, inputs):
    leaves = [t.clone().requires_grad_(True) if t is not None else None for t in inputs]
    out = f(*leaves)
    (out * weights(out.shape)).sum().backward()
    lines.append(f"{name}.shape " + " ".join(str(s) for s in out.shape))
    lines.append(f"{name}.out " + " ".join(f"{v:.9g}" for v in out.detach().flatten().tolist()))
    for k, t in enumerate(leaves):
        if t is not None:
            lines.append(f"{name}.grad{k} " + " ".join(f"{v:.9g}" for v in t.grad.flatten().tolist()))


x2 = filled((2, 4, 7, 6), 0.37, 0.1)
w2 = filled((6, 2, 3, 2), 0.53, 0.7)
b2 = filled((6,), 1.1, 0.3)
case("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 1), dilation=(1, 2), groups=2),
     [x2, w2, b2])
x1 = filled((2, 3, 9), 0.29, 0.5)
w1 = filled((4, 3, 3), 0.61, 0.2)
case("conv1d", lambda x, w: F.conv1d(x, w, None, stride=2, padding=1), [x1, w1])
xp = filled((1, 2, 5, 6), 0.83, 0.4)
case("max_pool2d", lambda x: F.max_pool2d(x, (2, 3), padding=(1, 1)), [xp])
case("avg_pool2d", lambda x: F.avg_pool2d(x, (3, 3), stride=(2, 2), padding=(1, 1)), [xp])

# BatchNorm2d: two training steps (the running statistics after them), then eval; GroupNorm.
xb = filled((3, 4, 3, 2), 0.71, 0.9) * 2 + 0.5
bn = torch.nn.BatchNorm2d(4)
with torch.no_grad():
    bn.weight.copy_(filled((4,), 0.9, 0.2) + 1)
    bn.bias.copy_(filled((4,), 0.4, 1.3))
bn.train()
bn(filled((3, 4, 3, 2), 0.37, 0.4))
case("batch_norm2d_train", lambda x, w, b: torch.nn.functional.batch_norm(
    x, bn.running_mean, bn.running_var, w, b, training=True, momentum=0.1, eps=1e-5),
     [xb, bn.weight.detach(), bn.bias.detach()])
lines.append("batch_norm2d_train.running_mean " + " ".join(f"{v:.9g}" for v in bn.running_mean.tolist()))
lines.append("batch_norm2d_train.running_var " + " ".join(f"{v:.9g}" for v in bn.running_var.tolist()))
case("batch_norm2d_eval", lambda x, w, b: torch.nn.functional.batch_norm(
    x, bn.running_mean, bn.running_var, w, b, training=False, eps=1e-5),
     [xb, bn.weight.detach(), bn.bias.detach()])
xg = filled((2, 6, 5), 0.47, 0.3) * 3 - 1
case("group_norm", lambda x, w, b: F.group_norm(x, 3, w, b, eps=1e-5),
     [xg, filled((6,), 0.8, 0.1) + 1, filled((6,), 0.5, 0.7)])

with open("tests/reference/conv_torch.txt", "w") as f:
    f.write(f"# torch {torch.__version__}: tests/reference/conv_reference.py\n")
    f.write("\n".join(lines) + "\n")
