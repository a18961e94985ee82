#!/usr/bin/env python3
"""Writes test/golden/torch/parametrizations.json: torch.nn.utils.parametrizations in PyTorch 1.13
(float64). orthogonal on a wide Linear weight [3, 5] and a Conv2d weight [2, 4, 3, 2] (a batch of
tall 3 x 2 matrices) for each map, with and without trivialization: the state-dict keys, original,
base, the weight, the output and the gradients of `original` after a forward/backward.
spectral_norm on the same layers: u and v after registration (15 power iterations, then one check
forward), the outputs of 3 training-mode forwards, u, v and the gradient of `original` after them,
and the weight and output in evaluation mode; a square orthogonal weight kept as base, and
spectral_norm along dim 1 of the Conv2d. Each registration follows torch.manual_seed(7).
Run: /usr/bin/python3 scripts/golden/parametrizations.py"""
import json
import os

import torch
import torch.nn as nn
from torch.nn.utils import parametrizations as PZ

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)


def flat(t):
    return t.detach().reshape(-1).double().tolist()


def linear():
    torch.manual_seed(0)
    return nn.Linear(5, 3)


def conv():
    torch.manual_seed(1)
    return nn.Conv2d(4, 2, (3, 2))


torch.manual_seed(2)
inputs = {"linear": torch.randn(4, 5), "conv": torch.randn(2, 4, 5, 4)}
makers = {"linear": linear, "conv": conv}


def loss_of(y):
    # a weighted sum, so that every output element has its own gradient
    return (y * torch.linspace(-1, 2, y.numel()).reshape(y.shape)).sum()


out = {"inputs": {k: flat(v) for k, v in inputs.items()}, "params": {}, "orthogonal": {}, "spectral": {}}
for kind, make in makers.items():
    out["params"][kind] = {k: flat(v) for k, v in make().state_dict().items()}
    cases = {}
    for omap in ["matrix_exp", "cayley", "householder"]:
        for triv in [True, False]:
            m = make()
            torch.manual_seed(7)
            PZ.orthogonal(m, "weight", orthogonal_map=omap, use_trivialization=triv)
            p = m.parametrizations.weight
            case = {"keys": list(m.state_dict().keys()), "original": flat(p.original),
                    "base": flat(p[0].base) if triv else None, "weight": flat(m.weight)}
            y = m(inputs[kind])
            loss_of(y).backward()
            case.update(output=flat(y), original_grad=flat(p.original.grad), bias_grad=flat(m.bias.grad))
            cases[f"{omap}_{'triv' if triv else 'plain'}"] = case
    out["orthogonal"][kind] = cases

    m = make()
    torch.manual_seed(7)
    PZ.spectral_norm(m, n_power_iterations=2)
    sn = m.parametrizations.weight[0]
    case = {"keys": list(m.state_dict().keys()), "u0": flat(sn._u), "v0": flat(sn._v), "outputs": []}
    for i in range(3):
        m.zero_grad()
        y = m(inputs[kind])
        case["outputs"].append(flat(y))
    loss_of(y).backward()
    case.update(u=flat(sn._u), v=flat(sn._v), original_grad=flat(m.parametrizations.weight.original.grad))
    m.eval()
    case.update(eval_weight=flat(m.weight), eval_output=flat(m(inputs[kind])))
    case.update(eval_u=flat(sn._u))
    out["spectral"][kind] = case

# a square orthogonal weight is kept as base (default map matrix_exp); spectral norm along dim 1
torch.manual_seed(3)
sq = nn.Linear(3, 3, bias=False)
with torch.no_grad():
    sq.weight.copy_(torch.linalg.qr(torch.randn(3, 3))[0])
square = {"weight0": flat(sq.weight)}
PZ.orthogonal(sq)
square.update(base=flat(sq.parametrizations.weight[0].base), weight=flat(sq.weight),
              original=flat(sq.parametrizations.weight.original))
out["square"] = square
m = conv()
torch.manual_seed(7)
PZ.spectral_norm(m, dim=1)
m.eval()
out["spectral_dim1"] = {"u": flat(m.parametrizations.weight[0]._u), "weight": flat(m.weight)}

path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "parametrizations.json")
with open(path, "w") as f:
    json.dump(out, f)
print("wrote", path)
