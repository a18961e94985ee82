#!/usr/bin/env python3
"""Writes test/golden/torch/vmap.json: torch.vmap (PyTorch 1.13's, the batched tensors of
torch._vmap_internals) on fixed float64 values: a batched dot, a model with an unmapped weight and
the weight's gradient through it, in_dims/out_dims other than 0, nested vmaps, several outputs;
autograd.grad with is_grads_batched; autograd.functional.jacobian and hessian with vectorize=True
(and the forward-mode strategy), each equal to the loop form.
Run: /usr/bin/python3 scripts/golden/vmap.py"""
import json
import os
import warnings

import torch
import torch.nn.functional as F
from torch.autograd.functional import hessian, jacobian

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
from torch._vmap_internals import vmap  # torch.vmap of PyTorch 1.13 (not exported by this build)
out = {}


def flat(t):
    return None if t is None else t.detach().reshape(-1).double().tolist()


torch.manual_seed(0)
x, y = torch.randn(4, 5), torch.randn(4, 5)
out["dot"] = {"x": flat(x), "y": flat(y), "out": flat(vmap(torch.dot)(x, y))}

w = torch.randn(5, requires_grad=True)
r = vmap(lambda f: f.dot(w).relu() + f.sin().sum())(x)
r.pow(2).sum().backward()
out["model"] = {"w": flat(w), "out": flat(r), "w_grad": flat(w.grad)}

a = torch.randn(3, 6, 4)  # mapped over dim 1
b = torch.randn(4, 2)
r = vmap(lambda m, n: torch.mm(m, n).tanh(), in_dims=(1, None), out_dims=1)(a, b)
out["in_out_dims"] = {"a": flat(a), "b": flat(b), "out": flat(r), "shape": list(r.shape)}

p, q = torch.randn(2, 3, 4), torch.randn(2, 3, 5)
r = vmap(vmap(torch.outer))(p, q)
out["nested"] = {"p": flat(p), "q": flat(q), "out": flat(r), "shape": list(r.shape)}

m = torch.randn(3, 4)
s, t = vmap(lambda v: (v.sum(0), v * 2 + 1), out_dims=(0, 1))(m)
out["two_outputs"] = {"m": flat(m), "sum": flat(s), "affine": flat(t), "affine_shape": list(t.shape)}

W = torch.randn(4, 3)
bias = torch.randn(4)
xs = torch.randn(6, 3)
r = vmap(lambda v: F.linear(v, W, bias).softmax(0))(xs)
out["linear_softmax"] = {"W": flat(W), "bias": flat(bias), "x": flat(xs), "out": flat(r)}

z = torch.randn(3, requires_grad=True)
A = torch.randn(3, 3)
yz = (A @ z).sin() * z.exp()
basis = torch.eye(3)
(jac,) = torch.autograd.grad(yz, z, basis, is_grads_batched=True)
out["grads_batched"] = {"z": flat(z), "A": flat(A), "jacobian": flat(jac)}


def f2(u, v, unused):
    return (u.pow(2) * v.sum(), u.exp().outer(v))


u, v, unused = torch.randn(3), torch.randn(2), torch.randn(4)
J = jacobian(f2, (u, v, unused), vectorize=True)
Jloop = jacobian(f2, (u, v, unused))
Jfwd = jacobian(f2, (u, v, unused), vectorize=True, strategy="forward-mode")
out["jacobian"] = {
    "u": flat(u), "v": flat(v), "unused": flat(unused),
    "J": [[flat(t) for t in row] for row in J],
    "shapes": [[list(t.shape) for t in row] for row in J],
    "loop_equal": all(torch.allclose(a, b) for ra, rb in zip(J, Jloop) for a, b in zip(ra, rb)),
    "forward_equal": all(torch.allclose(a, b) for ra, rb in zip(J, Jfwd) for a, b in zip(ra, rb)),
}


def scalar(u, v):
    return (u.sin() * v[:3]).sum() * v.pow(2).sum()


v5 = torch.randn(5)
H = hessian(scalar, (u, v5), vectorize=True)
Hfwd = hessian(scalar, (u, v5), vectorize=True, outer_jacobian_strategy="forward-mode")
out["hessian"] = {"u": flat(u), "v": flat(v5), "H": [[flat(t) for t in row] for row in H],
                  "forward_equal": all(torch.allclose(a, b) for ra, rb in zip(H, Hfwd) for a, b in zip(ra, rb))}

path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "vmap.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print("wrote", os.path.normpath(path))
