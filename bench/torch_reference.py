#!/usr/bin/python3
"""The same GPT and training step as `tinygpt bench`, in PyTorch, for comparison (not a test).

Model: nanoGPT with bias, tied lm_head, GELU (tanh), no dropout; attention spelled out (PyTorch
1.13 has no fused scaled_dot_product_attention). --arch llama: llama2.c's model.py (RMSNorm, RoPE
on pairs (2i, 2i+1), SwiGLU of width 2/3 4C rounded up to 32, no biases, tied, --kv-heads shared
key/value heads), as `tinygpt bench --arch llama`. Step: forward, backward, clip to 1.0, AdamW
(betas 0.9/0.99, weight decay 0.1 on 2-d tensors). Prints one JSON object like `tinygpt bench --json`.
--precision bf16 runs the forward (and so its backward) under torch.autocast for bfloat16.

Debian's python3-torch calls the system libblas.so.3, whichever build LD_LIBRARY_PATH puts first
(bench/compare_torch.sh picks OpenBLAS's OpenMP or pthreads build and OPENBLAS_CORETYPE by measuring):
    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp OPENBLAS_CORETYPE=SkylakeX \
        /usr/bin/python3 bench/torch_reference.py --threads 2
The JSON names the BLAS library the process loaded, its build and the core type it runs.
"""
import ctypes
import argparse
import json
import math
import resource
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, C, nh):
        super().__init__()
        self.nh = nh
        self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.c_attn, self.attn_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.c_fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def attn(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.nh, C // self.nh).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        return self.attn_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class RMSNorm(nn.Module):  # PyTorch 1.13 has none
    def __init__(self, C, eps=1e-5):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(C))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, cos, sin):  # x [B, nh, T, hs]: pairs (2i, 2i+1) turned, as llama2.c
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


class LlamaBlock(nn.Module):
    def __init__(self, C, nh, kv, hidden):
        super().__init__()
        self.nh, self.kv, self.hs = nh, kv, C // nh
        self.ln_1, self.ln_2 = RMSNorm(C), RMSNorm(C)
        self.c_attn = nn.Linear(C, (nh + 2 * kv) * self.hs, bias=False)
        self.attn_proj = nn.Linear(C, C, bias=False)
        self.c_fc, self.mlp_proj = nn.Linear(C, 2 * hidden, bias=False), nn.Linear(hidden, C, bias=False)

    def attn(self, x, cos, sin):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split([self.nh * self.hs, self.kv * self.hs, self.kv * self.hs], dim=2)
        q = rope(q.view(B, T, self.nh, self.hs).transpose(1, 2), cos, sin)
        k = rope(k.view(B, T, self.kv, self.hs).transpose(1, 2), cos, sin)
        v = v.view(B, T, self.kv, self.hs).transpose(1, 2)
        k, v = (t.repeat_interleave(self.nh // self.kv, dim=1) for t in (k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.hs)
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        return self.attn_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))

    def forward(self, x, cos, sin):
        x = x + self.attn(self.ln_1(x), cos, sin)
        gate, up = self.c_fc(self.ln_2(x)).chunk(2, dim=-1)
        return x + self.mlp_proj(F.silu(gate) * up)


class Llama(nn.Module):
    def __init__(self, V, T, L, nh, C, kv):
        super().__init__()
        hidden = (2 * 4 * C // 3 + 31) // 32 * 32
        self.wte = nn.Embedding(V, C)
        self.h = nn.ModuleList(LlamaBlock(C, nh, kv, hidden) for _ in range(L))
        self.ln_f = RMSNorm(C)
        hs = C // nh
        angles = torch.outer(torch.arange(T, dtype=torch.float64),
                             10000.0 ** (-torch.arange(0, hs, 2, dtype=torch.float64) / hs))
        self.cos, self.sin = angles.cos().float(), angles.sin().float()
        for p in self.parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, 0.0, 0.02)

    def forward(self, idx, targets):
        T = idx.size(1)
        x = self.wte(idx)
        for block in self.h:
            x = block(x, self.cos[:T], self.sin[:T])
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class GPT(nn.Module):
    def __init__(self, V, T, L, nh, C):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
        self.h = nn.ModuleList(Block(C, nh) for _ in range(L))
        self.ln_f = nn.LayerNorm(C)
        for p in self.parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, 0.0, 0.02)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        for block in self.h:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def blas_in_use():
    """The BLAS library this process mapped, and OpenBLAS's own description of itself."""
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "blas" in line.split()[-1]})
    info = {"blas": paths[0] if paths else "none"}
    try:
        lib = ctypes.CDLL(paths[0])
        lib.openblas_get_config.restype = lib.openblas_get_corename.restype = ctypes.c_char_p
        info["blas_config"] = lib.openblas_get_config().decode()
        info["blas_core"] = lib.openblas_get_corename().decode()
    except (IndexError, OSError, AttributeError):
        pass
    return info


def main():
    ap = argparse.ArgumentParser()
    for name, default in [("layers", 4), ("heads", 4), ("embd", 128), ("block", 64), ("batch", 12),
                          ("vocab-size", 65), ("iters", 20), ("threads", 0)]:
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--arch", choices=["gpt2", "llama"], default="gpt2")
    ap.add_argument("--kv-heads", type=int, default=0, help="llama: key/value heads (0: --heads)")
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                    help="bf16: the forward under torch.autocast('cpu', torch.bfloat16), as PyTorch recommends")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(1337)
    if a.arch == "llama":
        model = Llama(a.vocab_size, a.block, a.layers, a.heads, a.embd, a.kv_heads or a.heads)
    else:
        model = GPT(a.vocab_size, a.block, a.layers, a.heads, a.embd)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99))
    times = []
    for step in range(3 + a.iters):
        idx = torch.randint(0, a.vocab_size, (a.batch, a.block))
        targets = torch.randint(0, a.vocab_size, (a.batch, a.block))
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            loss = model(idx, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step >= 3:
            times.append(time.perf_counter() - t0)
    ms = statistics.median(times) * 1e3
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"tokens_per_s": a.batch * a.block / (ms / 1e3), "ms_per_step": ms, "peak_rss_mb": rss,
                      "threads": torch.get_num_threads(), "torch": torch.__version__,
                      "precision": a.precision, "arch": a.arch, **blas_in_use()}))


if __name__ == "__main__":
    main()
