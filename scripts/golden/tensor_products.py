#!/usr/bin/env python3
"""Writes test/golden/torch/tensor-products.json: PyTorch 1.13's matrix and vector products on
fixed float64 values (torch.matmul with broadcasting, mm, bmm, dot, vdot, mv, inner, and addmm,
addmv, addr, baddbmm, addbmm with beta and alpha), each value with the gradients of the sum of its
squares with respect to every argument.
Run: /usr/bin/python3 scripts/golden/tensor_products.py"""
import json
import os

import torch

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
torch.manual_seed(0)


def flat(t):
    return t.detach().reshape(-1).tolist()


shapes = {
    "matmul": ([2, 1, 3, 4], [5, 4, 2]),
    "matmul_vec_mat": ([4], [4, 3]),
    "mm": ([3, 4], [4, 2]),
    "bmm": ([2, 3, 4], [2, 4, 5]),
    "dot": ([6], [6]),
    "vdot": ([6], [6]),
    "mv": ([3, 4], [4]),
    "inner": ([2, 3, 4], [5, 4]),
    "addmm": ([1, 2], [3, 4], [4, 2]),
    "addmv": ([3], [3, 4], [4]),
    "addr": ([3, 1], [3], [2]),
    "baddbmm": ([2, 3, 5], [2, 3, 4], [2, 4, 5]),
    "addbmm": ([3, 5], [2, 3, 4], [2, 4, 5]),
}
scales = {"addmm": (0.5, 2.0), "addmv": (-1.0, 0.25), "addr": (2.0, -3.0), "baddbmm": (0.0, 1.5), "addbmm": (1.0, 1.0)}
out = {}
for name, shp in shapes.items():
    args = [torch.randn(*s, requires_grad=True) for s in shp]
    fn = getattr(torch, name.split("_")[0])
    if name in scales:
        beta, alpha = scales[name]
        y = fn(*args, beta=beta, alpha=alpha)
    else:
        beta = alpha = None
        y = fn(*args)
    y.pow(2).sum().backward()
    out[name] = {"args": [flat(a) for a in args], "shapes": shp, "beta": beta, "alpha": alpha,
                 "out": flat(y), "out_shape": list(y.shape), "grads": [flat(a.grad) for a in args]}

path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "tensor-products.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print("wrote", os.path.normpath(path))
