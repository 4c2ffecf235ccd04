#!/usr/bin/python3
"""bench_cnn.cpp's step in PyTorch: the same network, batch and optimizer, timed the same way.
    /usr/bin/python3 bench/cnn_torch.py THREADS [ITERS] [BATCH]
"""
import sys
import time

import torch
import torch.nn as nn

threads = int(sys.argv[1])
iters = int(sys.argv[2]) if len(sys.argv) > 2 else 20
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 64
torch.set_num_threads(threads)
torch.manual_seed(1)
net = nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
x = torch.randn(batch, 1, 28, 28)
y = torch.arange(batch) % 10
ms = []
for i in range(iters + 2):
    t0 = time.perf_counter()
    optimizer.zero_grad()
    nn.functional.cross_entropy(net(x), y).backward()
    optimizer.step()
    if i >= 2:
        ms.append((time.perf_counter() - t0) * 1000)
ms.sort()
median = ms[len(ms) // 2]
print(f"torch {torch.__version__} cnn: {threads} threads, batch {batch}: {median:.2f} ms/step, "
      f"{1000 * batch / median:.0f} images/s")
