#!/usr/bin/python3
"""An independent NumPy (float64) implementation of the GPT in docs/architectures.md, forward and a
hand-written backward, for a fixed tiny model and batch. It writes gpt_tiny.txt, the fixture that
tests/nn/test_gpt_reference.cpp compares tinygpt against (the test suite itself needs no Python).

Run from the repository root (Debian: apt-get install python3-numpy):
    /usr/bin/python3 tests/reference/gpt_reference.py
"""
import numpy as np

V, BLOCK, L, NH, C, B, T = 11, 8, 2, 2, 8, 2, 5
HS = C // NH
rng = np.random.RandomState(0)


def param_shapes():
    shapes = [("transformer.wte.weight", (V, C)), ("transformer.wpe.weight", (BLOCK, C))]
    for i in range(L):
        p = f"transformer.h.{i}."
        shapes += [(p + "ln_1.weight", (C,)), (p + "ln_1.bias", (C,)),
                   (p + "attn.c_attn.weight", (3 * C, C)), (p + "attn.c_attn.bias", (3 * C,)),
                   (p + "attn.c_proj.weight", (C, C)), (p + "attn.c_proj.bias", (C,)),
                   (p + "ln_2.weight", (C,)), (p + "ln_2.bias", (C,)),
                   (p + "mlp.c_fc.weight", (4 * C, C)), (p + "mlp.c_fc.bias", (4 * C,)),
                   (p + "mlp.c_proj.weight", (C, 4 * C)), (p + "mlp.c_proj.bias", (C,))]
    return shapes + [("transformer.ln_f.weight", (C,)), ("transformer.ln_f.bias", (C,))]


# Values chosen to exercise every path: LayerNorm weights near 1, biases non-zero, weights large
# enough that attention is far from uniform. Stored as float32 so both sides start from the same bits.
params = {}
for name, shape in param_shapes():
    if ".ln_" in name and name.endswith("weight"):
        v = 1.0 + 0.2 * rng.randn(*shape)
    elif name.endswith("bias"):
        v = 0.1 * rng.randn(*shape)
    else:
        v = 0.3 * rng.randn(*shape)
    params[name] = v.astype(np.float32).astype(np.float64)
idx = rng.randint(0, V, size=(B, T))
targets = rng.randint(0, V, size=(B, T))


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    xhat = (x - mean) * rstd
    return xhat * w + b, (xhat, rstd, w)


def layer_norm_backward(dy, cache):
    xhat, rstd, w = cache
    dxhat = dy * w
    dx = rstd * (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True))
    return dx, (dy * xhat).reshape(-1, C).sum(0), dy.reshape(-1, C).sum(0)


def linear_backward(dy, x, w):  # y = x wᵀ + b
    return dy @ w, dy.reshape(-1, dy.shape[-1]).T @ x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1]).sum(0)


S2PI = np.sqrt(2.0 / np.pi)


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(S2PI * (x + 0.044715 * x ** 3)))


def gelu_backward(dy, x):
    t = np.tanh(S2PI * (x + 0.044715 * x ** 3))
    return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * S2PI * (1 + 3 * 0.044715 * x * x))


def attention(x, i):
    p = f"transformer.h.{i}.attn."
    qkv = x @ params[p + "c_attn.weight"].T + params[p + "c_attn.bias"]
    q, k, v = (qkv[..., j * C:(j + 1) * C].reshape(B, T, NH, HS).transpose(0, 2, 1, 3) for j in range(3))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(HS)
    scores = np.where(np.tril(np.ones((T, T))) == 1, scores, -np.inf)
    P = np.exp(scores - scores.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    y = (P @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    out = y @ params[p + "c_proj.weight"].T + params[p + "c_proj.bias"]
    return out, (x, q, k, v, P, y)


def attention_backward(dout, cache, i, grads):
    p = f"transformer.h.{i}.attn."
    x, q, k, v, P, y = cache
    dy, grads[p + "c_proj.weight"], grads[p + "c_proj.bias"] = linear_backward(dout, y, params[p + "c_proj.weight"])
    dyh = dy.reshape(B, T, NH, HS).transpose(0, 2, 1, 3)
    dv = P.transpose(0, 1, 3, 2) @ dyh
    dP = dyh @ v.transpose(0, 1, 3, 2)
    dS = P * (dP - (dP * P).sum(-1, keepdims=True)) / np.sqrt(HS)
    dq, dk = dS @ k, dS.transpose(0, 1, 3, 2) @ q
    dqkv = np.concatenate([t.transpose(0, 2, 1, 3).reshape(B, T, C) for t in (dq, dk, dv)], axis=-1)
    dx, grads[p + "c_attn.weight"], grads[p + "c_attn.bias"] = linear_backward(dqkv, x, params[p + "c_attn.weight"])
    return dx


def main():
    grads = {}
    x = params["transformer.wte.weight"][idx] + params["transformer.wpe.weight"][:T]
    caches = []
    for i in range(L):
        p = f"transformer.h.{i}."
        a_in, ln1 = layer_norm(x, params[p + "ln_1.weight"], params[p + "ln_1.bias"])
        a_out, att = attention(a_in, i)
        x1 = x + a_out
        m_in, ln2 = layer_norm(x1, params[p + "ln_2.weight"], params[p + "ln_2.bias"])
        h = m_in @ params[p + "mlp.c_fc.weight"].T + params[p + "mlp.c_fc.bias"]
        g = gelu(h)
        x = x1 + g @ params[p + "mlp.c_proj.weight"].T + params[p + "mlp.c_proj.bias"]
        caches.append((ln1, att, ln2, m_in, h, g))
    xf, lnf = layer_norm(x, params["transformer.ln_f.weight"], params["transformer.ln_f.bias"])
    logits = xf @ params["transformer.wte.weight"].T
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    loss = -np.take_along_axis(logp, targets[..., None], -1).mean()

    # Backward, in reverse.
    dlogits = np.exp(logp)
    np.put_along_axis(dlogits, targets[..., None], np.take_along_axis(dlogits, targets[..., None], -1) - 1, -1)
    dlogits /= B * T
    dxf = dlogits @ params["transformer.wte.weight"]
    dwte = dlogits.reshape(-1, V).T @ xf.reshape(-1, C)
    dx, grads["transformer.ln_f.weight"], grads["transformer.ln_f.bias"] = layer_norm_backward(dxf, lnf)
    for i in reversed(range(L)):
        p = f"transformer.h.{i}."
        ln1, att, ln2, m_in, h, g = caches[i]
        dg, grads[p + "mlp.c_proj.weight"], grads[p + "mlp.c_proj.bias"] = linear_backward(
            dx, g, params[p + "mlp.c_proj.weight"])
        dm_in, grads[p + "mlp.c_fc.weight"], grads[p + "mlp.c_fc.bias"] = linear_backward(
            gelu_backward(dg, h), m_in, params[p + "mlp.c_fc.weight"])
        dx1, grads[p + "ln_2.weight"], grads[p + "ln_2.bias"] = layer_norm_backward(dm_in, ln2)
        dx1 = dx1 + dx
        da_in = attention_backward(dx1, att, i, grads)
        dx, grads[p + "ln_1.weight"], grads[p + "ln_1.bias"] = layer_norm_backward(da_in, ln1)
        dx = dx + dx1
    grads["transformer.wpe.weight"] = np.zeros((BLOCK, C))
    grads["transformer.wpe.weight"][:T] = dx.sum(0)
    np.add.at(dwte, idx.reshape(-1), dx.reshape(-1, C))
    grads["transformer.wte.weight"] = dwte

    with open("tests/reference/gpt_tiny.txt", "w") as f:
        f.write("# written by tests/reference/gpt_reference.py; do not edit\n")
        f.write(f"config {V} {BLOCK} {L} {NH} {C} {B} {T}\n")
        f.write("ids " + " ".join(map(str, idx.reshape(-1))) + "\n")
        f.write("targets " + " ".join(map(str, targets.reshape(-1))) + "\n")
        fmt = lambda a: " ".join(f"{v:.17g}" for v in np.asarray(a).reshape(-1))
        for name, _ in param_shapes():
            f.write(f"param {name} {fmt(params[name])}\n")
        f.write(f"logits {fmt(logits)}\n")
        f.write(f"loss {loss:.17g}\n")
        for name, _ in param_shapes():
            f.write(f"grad {name} {fmt(grads[name])}\n")


if __name__ == "__main__":
    main()
