#!/usr/bin/env python3
"""Writes test/golden/torch/parametrize.json: torch.nn.utils.parametrize in PyTorch 1.13 on a
Linear layer: a symmetric parametrization of the weight (state-dict keys, the weight, output and
the gradient of `original`), a second parametrization appended, removal leaving the parametrized
weight, and a parametrization with right_inverse (original = right_inverse(weight)).
Run: /usr/bin/python3 scripts/golden/parametrize.py"""
import json
import os

import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)


def flat(t):
    return t.detach().reshape(-1).double().tolist()


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Scale(nn.Module):
    def forward(self, X):
        return X * 3

    def right_inverse(self, W):
        return W / 3


torch.manual_seed(0)
lin = nn.Linear(3, 3)
params = {k: flat(v) for k, v in lin.state_dict().items()}
x = torch.randn(4, 3)
P.register_parametrization(lin, "weight", Symmetric())
keys = list(lin.state_dict().keys())
named = [n for n, _ in lin.named_parameters()]
y = lin(x)
(y * torch.arange(12.).reshape(4, 3)).sum().backward()
sym = {"keys": keys, "named_parameters": named, "weight": flat(lin.weight), "output": flat(y),
       "original_grad": flat(lin.parametrizations.weight.original.grad), "bias_grad": flat(lin.bias.grad)}
P.register_parametrization(lin, "weight", Scale())
both = {"keys": list(lin.state_dict().keys()), "weight": flat(lin.weight), "output": flat(lin(x)),
        "original": flat(lin.parametrizations.weight.original)}
P.remove_parametrizations(lin, "weight", leave_parametrized=True)
removed = {"keys": list(lin.state_dict().keys()), "weight": flat(lin.weight)}

torch.manual_seed(1)
lin2 = nn.Linear(3, 2)
params2 = {k: flat(v) for k, v in lin2.state_dict().items()}
P.register_parametrization(lin2, "weight", Scale())
inv = {"original": flat(lin2.parametrizations.weight.original), "weight": flat(lin2.weight)}
P.remove_parametrizations(lin2, "weight", leave_parametrized=False)
inv["removed_weight"] = flat(lin2.weight)

out = {"params": params, "input": flat(x), "symmetric": sym, "both": both, "removed": removed,
       "params2": params2, "inverse": inv}
path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "parametrize.json")
with open(path, "w") as f:
    json.dump(out, f)
print("wrote", path)
