#!/usr/bin/env python3
"""Writes test/golden/torch/activation-checkpoint.json: torch.utils.checkpoint (the reentrant form)
in PyTorch 1.13 on fixed float64 weights. A Linear-ReLU-Dropout-Linear block checkpointed (the
dropout mask redrawn in backward from the restored generator, so the gradients equal an
uncheckpointed run's), the generator's next draw after backward, a function of two tensors and a
number with two outputs of which the loss uses one, and checkpoint_sequential over six layers in
three segments.
Run: /usr/bin/python3 scripts/golden/activation_checkpoint.py"""
import json
import os

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
out = {}


def flat(t):
    return None if t is None else t.detach().reshape(-1).double().tolist()


def weights(m):
    return {k: flat(v) for k, v in m.state_dict().items()}


torch.manual_seed(0)
block = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 3))
X = torch.randn(5, 4).tolist()
W = torch.randn(5, 3).tolist()


def run_block(use_checkpoint):
    block.zero_grad()
    x = torch.tensor(X, requires_grad=True)
    torch.manual_seed(5)
    y = checkpoint(block, x, use_reentrant=True) if use_checkpoint else block(x)
    (y * torch.tensor(W)).sum().backward()
    after = torch.rand(3)
    return {"y": flat(y), "grad_x": flat(x.grad), "grads": {k: flat(p.grad) for k, p in block.named_parameters()},
            "rand_after": flat(after)}


out["block"] = {"weights": weights(block), "x": X, "w": W, "checkpointed": run_block(True), "plain": run_block(False)}


def two(a, b, k):
    return a * b * k, (a + b).tanh()


a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
b = torch.tensor([1.5, 0.25, -0.75], requires_grad=True)
p, s = checkpoint(two, a, b, 3.0, use_reentrant=True)
(p * p).sum().backward()
out["two"] = {"p": flat(p), "s": flat(s), "grad_a": flat(a.grad), "grad_b": flat(b.grad)}

torch.manual_seed(1)
seq = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 6), nn.Sigmoid(), nn.Linear(6, 2), nn.Tanh())
xs = torch.randn(4, 3).requires_grad_()
ys = checkpoint_sequential(seq, 3, xs)
ys.pow(2).sum().backward()
out["sequential"] = {"weights": weights(seq), "x": flat(xs), "y": flat(ys), "grad_x": flat(xs.grad),
                     "grads": {k: flat(p.grad) for k, p in seq.named_parameters()}}

path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "activation-checkpoint.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print("wrote", os.path.normpath(path))
