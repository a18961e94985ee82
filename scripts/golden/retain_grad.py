#!/usr/bin/env python3
"""Writes test/golden/torch/retain_grad.json: Tensor.retain_grad in PyTorch 1.13 on fixed values.
Non-leaf tensors retaining their gradient on a plain graph; before, at the output of and after a
Linear with a full backward hook that doubles its gradInput; the same graph run backward twice
(retain_graph), the retained gradients adding up; and retain_grad on a leaf (no change).
Tiny shapes, so the test stays light.
Run: /usr/bin/python3 scripts/golden/retain_grad.py"""
import json
import os

import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
out = {}


def flat(t):
    return None if t is None else t.detach().reshape(-1).double().tolist()


torch.manual_seed(0)
x0 = torch.randn(2, 3)
w0 = torch.randn(2, 3)

# Plain: y = 2x + 1 and h = tanh(y) retain their gradients of sum(w * h^2).
x = x0.clone().requires_grad_()
y = x * 2 + 1
y.retain_grad()
h = y.tanh()
h.retain_grad()
(w0 * h * h).sum().backward()
out["plain"] = {"x": flat(x0), "w": flat(w0), "y_grad": flat(y.grad), "h_grad": flat(h.grad),
                "x_grad": flat(x.grad)}

# A Linear(3, 4) with a full backward hook doubling gradInput: a = 1.5 x before it, its output o,
# and c = sin(o) after it retain their gradients of sum(v * c); then the same twice (retain_graph).
torch.manual_seed(1)
lin = nn.Linear(3, 4)
v0 = torch.randn(2, 4)
lin.register_full_backward_hook(lambda m, gi, go: tuple(None if g is None else g * 2 for g in gi))


def hooked(times):
    lin.zero_grad(set_to_none=True)
    x = x0.clone().requires_grad_()
    a = x * 1.5
    a.retain_grad()
    o = lin(a)
    o.retain_grad()
    c = o.sin()
    c.retain_grad()
    loss = (v0 * c).sum()
    for i in range(times):
        loss.backward(retain_graph=i < times - 1)
    return {"a_grad": flat(a.grad), "o_grad": flat(o.grad), "c_grad": flat(c.grad),
            "x_grad": flat(x.grad), "weight_grad": flat(lin.weight.grad), "bias_grad": flat(lin.bias.grad)}


out["hooked"] = {"weight": flat(lin.weight), "bias": flat(lin.bias), "v": flat(v0), **hooked(1)}
out["twice"] = hooked(2)

# A leaf: retain_grad changes nothing; retains_grad stays False.
x = x0.clone().requires_grad_()
x.retain_grad()
(x * w0).sum().backward()
out["leaf"] = {"retains_grad": x.retains_grad, "x_grad": flat(x.grad)}

with open(os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "retain_grad.json"), "w") as f:
    json.dump({"torch_version": torch.__version__, **out}, f)
