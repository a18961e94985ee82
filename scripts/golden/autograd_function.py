#!/usr/bin/env python3
"""Writes test/golden/torch/autograd-function.json: custom autograd Functions, tensor hooks on
non-leaf tensors and full backward hooks around a residual connection in PyTorch 1.13, on fixed
float64 values. Exp (a saved output; its second derivative through createGraph), a function of two
tensors, a number and two outputs, a non-differentiable output with and without materialized
gradients, a gradient that broadcasts over its input (summed down), an in-place function (mark_dirty),
a hook on a non-leaf tensor that replaces its total gradient, a residual block with a full backward
hook, and autograd.grad through a hooked module.
Run: /usr/bin/python3 scripts/golden/autograd_function.py"""
import json
import os

import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
out = {}


def flat(t):
    return None if t is None else t.detach().reshape(-1).double().tolist()


X = [0.5, -1.0, 2.0, 0.25]
W = [1.5, -0.5, 0.75, 2.0]


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


x = torch.tensor(X, requires_grad=True)
w = torch.tensor(W)
y = Exp.apply(x)
(gx,) = torch.autograd.grad((y * w).sum(), x, create_graph=True)
(ggx,) = torch.autograd.grad((gx * gx).sum(), x)
out["exp"] = {"x": X, "w": W, "y": flat(y), "grad": flat(gx), "grad2": flat(ggx), "grad_fn": type(y.grad_fn).__name__}


class MulAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, k):
        ctx.save_for_backward(a, b)
        ctx.k = k
        return a * b * k, a + b

    @staticmethod
    def backward(ctx, gp, gs):
        a, b = ctx.saved_tensors
        ga = gp * b * ctx.k + gs if ctx.needs_input_grad[0] else None
        gb = gp * a * ctx.k + gs if ctx.needs_input_grad[1] else None
        return ga, gb, None


a = torch.tensor(X, requires_grad=True)
b = torch.tensor(W, requires_grad=True)
p, s = MulAdd.apply(a, b, 3.0)
(p.pow(2).sum() + (s * torch.tensor(W)).sum()).backward()
out["muladd"] = {"k": 3.0, "p": flat(p), "s": flat(s), "grad_a": flat(a.grad), "grad_b": flat(b.grad)}
a2 = torch.tensor(X, requires_grad=True)
b2 = torch.tensor(W)
p2, s2 = MulAdd.apply(a2, b2, 3.0)
p2.sum().backward()
out["muladd_one"] = {"grad_a": flat(a2.grad)}


def make_sort(materialize):
    class SortFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            ctx.set_materialize_grads(materialize)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            seen.append(gi is None)
            g = torch.zeros_like(gv)
            return g.scatter(0, i, gv)

    return SortFn


sorted_case = {}
for materialize in (True, False):
    seen = []
    x = torch.tensor(X, requires_grad=True)
    v, i = make_sort(materialize).apply(x)
    (v * torch.tensor(W)).sum().backward()
    sorted_case["materialize" if materialize else "none"] = {
        "values": flat(v), "indices": i.tolist(), "indices_requires_grad": i.requires_grad,
        "grad": flat(x.grad), "index_grad_none": seen[0]}
out["sort"] = sorted_case


class RowScale(torch.autograd.Function):
    """Multiplies a [4, 1] column by a [4, 3] matrix; backward returns the column's gradient
    unsummed ([4, 3]), which PyTorch sums down to [4, 1]."""

    @staticmethod
    def forward(ctx, col, m):
        ctx.save_for_backward(col, m)
        return col * m

    @staticmethod
    def backward(ctx, g):
        col, m = ctx.saved_tensors
        return g * m, g * col


col = torch.tensor(X, requires_grad=True).reshape(4, 1).detach().requires_grad_()
m = torch.arange(12.0).reshape(4, 3).div(4).requires_grad_()
RowScale.apply(col, m).pow(2).sum().backward()
out["broadcast"] = {"m": flat(m), "grad_col": flat(col.grad), "grad_m": flat(m.grad)}


class Double_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


w0 = torch.tensor(X, requires_grad=True)
h = w0 * 1.5
r = Double_.apply(h)
(r * torch.tensor(W)).sum().backward()
out["dirty"] = {"result": flat(r), "grad": flat(w0.grad), "same": r is h}

# A hook on a non-leaf tensor used twice: it sees the total gradient once and replaces it.
x = torch.tensor(X, requires_grad=True)
y = x * 2
hook_seen = []


def hook(g):
    hook_seen.append(flat(g))
    return g * 3


y.register_hook(hook)
(y.pow(2).sum() + (y * torch.tensor(W)).sum()).backward()
out["nonleaf_hook"] = {"seen": hook_seen, "grad": flat(x.grad)}

# A full backward hook on a block with a residual connection around it.
pre = nn.Linear(3, 3)
block = nn.Linear(3, 3)
with torch.no_grad():
    pre.weight.copy_(torch.tensor([[0.2, -0.1, 0.4], [0.3, 0.5, -0.2], [-0.6, 0.1, 0.25]]))
    pre.bias.copy_(torch.tensor([0.1, -0.2, 0.05]))
    block.weight.copy_(torch.tensor([[0.7, 0.2, -0.3], [-0.1, 0.4, 0.6], [0.05, -0.5, 0.3]]))
    block.bias.copy_(torch.tensor([-0.05, 0.15, 0.2]))
recorded = {}


def full(m, gin, gout):
    recorded["grad_input"] = flat(gin[0])
    recorded["grad_output"] = flat(gout[0])
    return (gin[0] * 2,)


block.register_full_backward_hook(full)
xr = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]], requires_grad=True)
a = pre(xr)
(block(a) + a).pow(2).sum().backward()
out["residual"] = {
    "pre": {"weight": flat(pre.weight), "bias": flat(pre.bias)},
    "block": {"weight": flat(block.weight), "bias": flat(block.bias)},
    "x": flat(xr), **recorded,
    "grad_x": flat(xr.grad), "grad_pre_weight": flat(pre.weight.grad), "grad_block_weight": flat(block.weight.grad)}
xg = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]], requires_grad=True)
(gxg,) = torch.autograd.grad((block(pre(xg)) + pre(xg)).pow(2).sum(), xg)
out["residual"]["autograd_grad_x"] = flat(gxg)

path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "autograd-function.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print("wrote", os.path.normpath(path))
