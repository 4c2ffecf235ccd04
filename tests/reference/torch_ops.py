#!/usr/bin/python3
"""PyTorch's values for the tests that compare tinygpt with it (the test suite itself needs no
Python): conv2d, conv1d, max_pool2d and avg_pool2d, batch and group normalization, the GRU and
LSTM layers (the forward values and the gradients of sum(out * r) for each input and parameter),
and einsum's common forms, written to torch_ops.txt (tests/torch_fixture.h reads it).
Inputs are closed-form (sin and cos of the element index), so the test makes the same ones.

Run from the repository root (Debian: apt-get install python3-torch; torch 1.13):
    /usr/bin/python3 tests/reference/torch_ops.py
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



# GRU and LSTM: parameter k (in named_parameters order) filled with sin((0.3 + 0.07 k) i + 0.1 k) / 2;
# the loss sums output, h_n and (LSTM) c_n, each times r.
def recurrent(name, module, x, h0):
    with torch.no_grad():
        for k, (_, p) in enumerate(module.named_parameters()):
            p.copy_(filled(tuple(p.shape), 0.3 + 0.07 * k, 0.1 * k) / 2)
    x = x.clone().requires_grad_(True)
    h = h0.clone().requires_grad_(True) if h0 is not None else None
    out, state = module(x, h) if h is not None else module(x)
    states = list(state) if isinstance(state, tuple) else [state]
    loss = (out * weights(out.shape)).sum() + sum((s * weights(s.shape)).sum() for s in states)
    loss.backward()
    for key, t in [("out", out)] + [(f"state{k}", s) for k, s in enumerate(states)]:
        lines.append(f"{name}.{key} " + " ".join(f"{v:.9g}" for v in t.detach().flatten().tolist()))
    lines.append(f"{name}.grad_x " + " ".join(f"{v:.9g}" for v in x.grad.flatten().tolist()))
    if h is not None:
        lines.append(f"{name}.grad_h0 " + " ".join(f"{v:.9g}" for v in h.grad.flatten().tolist()))
    for pname, p in module.named_parameters():
        lines.append(f"{name}.grad.{pname} " + " ".join(f"{v:.9g}" for v in p.grad.flatten().tolist()))


recurrent("lstm", torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True),
          filled((2, 5, 3), 0.43, 0.2), None)
recurrent("gru", torch.nn.GRU(3, 4), filled((5, 2, 3), 0.57, 0.6), filled((1, 2, 4), 0.91, 0.3))

# einsum's common forms.
ea, eb, ec = filled((3, 4), 0.31, 0.2), filled((4, 5), 0.27, 0.9), filled((5, 2), 0.63, 0.1)
e3a, e3b = filled((2, 3, 4), 0.41, 0.5), filled((2, 4, 5), 0.23, 0.7)
ev, ew = filled((4,), 0.5, 0.3), filled((5,), 0.7, 0.6)
q, k = filled((2, 2, 3, 4), 0.19, 0.4), filled((2, 2, 5, 4), 0.37, 0.8)
for name, eq, ops in [("mm", "ij,jk->ik", [ea, eb]), ("bmm", "bij,bjk->bik", [e3a, e3b]),
                      ("transpose", "ij->ji", [ea]), ("total", "ij->", [ea]), ("dot", "i,i->", [ev, ev]),
                      ("outer", "i,j->ij", [ev, ew]), ("scores", "bhqd,bhkd->bhqk", [q, k]),
                      ("chain", "ij,jk,kl->il", [ea, eb, ec]), ("implicit", "ij,jk", [ea, eb]),
                      ("partial", "bij->jb", [e3a]), ("hadamard", "ij,ij->ij", [ea, ea])]:
    out = torch.einsum(eq, *ops)
    lines.append(f"einsum.{name} " + " ".join(f"{v:.9g}" for v in out.flatten().tolist()))

with open("tests/reference/torch_ops.txt", "w") as f:
    f.write(f"# torch {torch.__version__}: tests/reference/torch_ops.py\n")
    f.write("\n".join(lines) + "\n")
