#!/usr/bin/env python3
"""bench/activation-checkpoint.ts's reference side: the same deep MLP's training step in PyTorch,
plain or with checkpoint_sequential, one mode per process; prints its peak resident memory
(getrusage's maxrss) and the median seconds of a step as JSON.
Usage: activation_checkpoint_torch.py plain|checkpoint LAYERS WIDTH BATCH SEGMENTS STEPS"""
import json
import resource
import sys
import time

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint_sequential

mode = sys.argv[1]
layers, width, batch, segments, steps = (int(v) for v in sys.argv[2:7])
torch.set_num_threads(1)
torch.manual_seed(0)
model = nn.Sequential(*[m for _ in range(layers) for m in (nn.Linear(width, width), nn.ReLU())])
x = torch.randn(batch, width, requires_grad=True)


def step():
    model.zero_grad()
    y = model(x) if mode == "plain" else checkpoint_sequential(model, segments, x)
    y.square().mean().backward()


step()
times = []
for _ in range(steps):
    t0 = time.perf_counter()
    step()
    times.append(time.perf_counter() - t0)
times.sort()
print(json.dumps({"peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "step_s": times[len(times) // 2]}))
