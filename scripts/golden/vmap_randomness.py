#!/usr/bin/env python3
"""Writes test/golden/torch/vmap-randomness.json: functorch 1.13's vmap randomness ('different',
'same') after torch.manual_seed(0): randn added to zeros, dropout of ones (p 0.5, training),
rand_like, randint and feature dropout of ones, over a batch of 4.
Run: /usr/bin/python3 scripts/golden/vmap_randomness.py"""
import json
import os
import warnings

import torch
import torch.nn.functional as F
from functorch import vmap

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
cases = {
    "randn": (lambda v: v + torch.randn(3), torch.zeros(4, 3)),
    "dropout": (lambda v: F.dropout(v, 0.5, True), torch.ones(4, 6)),
    "rand_like": (lambda v: torch.rand_like(v), torch.zeros(4, 2)),
    "randint": (lambda v: v + torch.randint(0, 10, (5,)), torch.zeros(4, 5, dtype=torch.int64)),
    "feature_dropout": (lambda v: F.dropout2d(v, 0.5, True), torch.ones(4, 2, 3, 2, 2)),
}
out = {}
for name, (fn, x) in cases.items():
    for mode in ("different", "same"):
        torch.manual_seed(0)
        y = vmap(fn, randomness=mode)(x)
        out[f"{name}_{mode}"] = {"shape": list(y.shape), "data": y.double().flatten().tolist()}

path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "vmap-randomness.json")
with open(path, "w") as fh:
    json.dump(out, fh, indent=1)
    fh.write("\n")
print("wrote", os.path.normpath(path))
