#!/usr/bin/env python3
"""Writes test/golden/torch/forward-ad.json: forward-mode AD (torch.autograd.forward_ad) in PyTorch
1.13 on fixed float64 values. Tangents of an elementwise chain, of a small MLP (Linear, tanh,
Linear, softmax) with fixed weights, of a 2-d convolution with batch norm in eval mode and max
pooling, of a matrix product with logsumexp, and the tangent of a tensor that is not dual (None).
Run: /usr/bin/python3 scripts/golden/forward_ad.py"""
import json
import os

import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
out = {}


def flat(t):
    return None if t is None else t.detach().reshape(-1).double().tolist()


torch.manual_seed(0)
x = torch.tensor([0.5, -1.0, 2.0, 0.25])
v = torch.tensor([1.0, 0.5, -2.0, 3.0])
with fwAD.dual_level():
    d = fwAD.make_dual(x, v)
    y = d.sin().mul(2).mul(d.exp()).div(d.pow(2).add(1))
    p, t = fwAD.unpack_dual(y)
    out["chain"] = {"x": flat(x), "v": flat(v), "y": flat(p), "tangent": flat(t),
                    "plain_tangent_none": fwAD.unpack_dual(x).tangent is None}

mlp = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2), nn.Softmax(dim=1))
xm = torch.randn(5, 3)
vm = torch.randn(5, 3)
with fwAD.dual_level():
    p, t = fwAD.unpack_dual(mlp(fwAD.make_dual(xm, vm)))
    out["mlp"] = {"weights": {k: flat(w) for k, w in mlp.state_dict().items()}, "x": flat(xm), "v": flat(vm),
                  "y": flat(p), "tangent": flat(t)}

conv = nn.Conv2d(2, 3, 3, padding=1)
bn = nn.BatchNorm2d(3)
with torch.no_grad():
    bn.running_mean.copy_(torch.tensor([0.1, -0.2, 0.3]))
    bn.running_var.copy_(torch.tensor([1.5, 0.5, 2.0]))
    bn.weight.copy_(torch.tensor([1.2, 0.8, -0.5]))
    bn.bias.copy_(torch.tensor([0.05, 0.0, -0.1]))
bn.eval()
xc = torch.randn(2, 2, 6, 6)
vc = torch.randn(2, 2, 6, 6)
with fwAD.dual_level():
    p, t = fwAD.unpack_dual(F.max_pool2d(F.relu(bn(conv(fwAD.make_dual(xc, vc)))), 2))
    out["conv"] = {"conv": {k: flat(w) for k, w in conv.state_dict().items()},
                   "bn": {k: flat(w) for k, w in bn.state_dict().items() if k != "num_batches_tracked"},
                   "x": flat(xc), "v": flat(vc), "y": flat(p), "tangent": flat(t), "shape": list(p.shape)}

a = torch.randn(3, 4)
b = torch.randn(4, 2)
va = torch.randn(3, 4)
with fwAD.dual_level():
    p, t = fwAD.unpack_dual(torch.logsumexp(fwAD.make_dual(a, va).matmul(b), dim=1))
    out["matmul"] = {"a": flat(a), "b": flat(b), "va": flat(va), "y": flat(p), "tangent": flat(t)}

path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "forward-ad.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print("wrote", os.path.normpath(path))
