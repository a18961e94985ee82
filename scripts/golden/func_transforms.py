#!/usr/bin/env python3
"""Writes test/golden/torch/func-transforms.json: functorch 1.13's function transforms (torch.func
in PyTorch 2.x) on fixed float64 values: grad (argnums, has_aux, grad of grad), grad_and_value,
vjp with two outputs, jvp, jacrev and jacfwd with respect to a dict of weights, hessian, and
torch.nn.utils.stateless.functional_call of an MLP with batch norm (its running statistics updated
in the given buffers), then per-example gradients by vmap(grad(loss)) over functional_call.
Run: /usr/bin/python3 scripts/golden/func_transforms.py"""
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from functorch import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp, vmap
from torch.nn.utils.stateless import functional_call

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
out = {}


def flat(t):
    return t.detach().reshape(-1).tolist()


x = torch.randn(4)
y = torch.randn(4)
f = lambda a: (a.sin() * a).sum()
out["grad"] = {"x": flat(x), "g": flat(grad(f)(x)), "gg": flat(grad(lambda a: grad(f)(a).sum())(x))}
g2 = lambda a, b: ((a * b).exp().sum(), {"mean": a.mean()})
(ga, gb), aux = grad(g2, argnums=(0, 1), has_aux=True)(x, y)
out["grad_argnums_aux"] = {"y": flat(y), "ga": flat(ga), "gb": flat(gb), "aux_mean": aux["mean"].item()}
gv, val = grad_and_value(f)(x)
out["grad_and_value"] = {"g": flat(gv), "value": val.item()}

h = lambda a, b: (a.pow(2) * b[:1], a.outer(b).tanh())
primal, fn = vjp(h, x, y)
ct = (torch.randn(4), torch.randn(4, 4))
va, vb = fn(ct)
out["vjp"] = {"out0": flat(primal[0]), "out1": flat(primal[1]), "ct0": flat(ct[0]), "ct1": flat(ct[1]),
              "va": flat(va), "vb": flat(vb)}
tx, ty = torch.randn(4), torch.randn(4)
po, to = jvp(h, (x, y), (tx, ty))
out["jvp"] = {"tx": flat(tx), "ty": flat(ty), "t0": flat(to[0]), "t1": flat(to[1])}

W = {"w": torch.randn(3, 4), "b": torch.randn(3)}
xin = torch.randn(4)
lin = lambda p, v: (p["w"] @ v + p["b"]).tanh()
Jr = jacrev(lin)(W, xin)
Jf = jacfwd(lin)(W, xin)
Jx = jacrev(lin, argnums=1)(W, xin)
out["jac"] = {"w": flat(W["w"]), "b": flat(W["b"]), "x": flat(xin), "Jw": flat(Jr["w"]), "Jb": flat(Jr["b"]),
              "Jw_shape": list(Jr["w"].shape), "Jx": flat(Jx),
              "fwd_equal": bool(torch.allclose(Jr["w"], Jf["w"]) and torch.allclose(Jr["b"], Jf["b"]))}
sc = lambda a: (a.sin() * a.roll(1)).sum() * a.pow(2).sum()
out["hessian"] = {"H": flat(hessian(sc)(x))}

model = nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 2))
params = {k: torch.randn_like(v) for k, v in model.named_parameters()}
buffers = {"1.running_mean": torch.zeros(5), "1.running_var": torch.ones(5)}
xb = torch.randn(6, 3)
yo = functional_call(model, {**params, **buffers}, (xb,))
out["functional_call"] = {"params": {k: flat(v) for k, v in params.items()}, "x": flat(xb), "out": flat(yo),
                          "running_mean": flat(buffers["1.running_mean"]), "running_var": flat(buffers["1.running_var"])}

model.eval()
targets = torch.tensor([0, 1, 1, 0, 1, 0])


def loss(p, v, t):
    return F.cross_entropy(functional_call(model, p, (v.unsqueeze(0),)), t.unsqueeze(0))


per = vmap(grad(loss), in_dims=(None, 0, 0))(params, xb, targets)
out["per_example"] = {"targets": targets.tolist(), "grads": {k: flat(v) for k, v in per.items()},
                      "shapes": {k: list(v.shape) for k, v in per.items()},
                      "eval_running_mean": flat(model[1].running_mean), "eval_running_var": flat(model[1].running_var)}

# Per-example Jacobians and Hessians: jacrev and hessian inside vmap (an unmapped weight too).
A = torch.randn(2, 3)
xs = torch.randn(4, 3)


def layer(w, x):
    return torch.tanh(w @ x)


def cubic(x):
    return (x ** 3).sum() + x.prod()


out["per_example_jacobians"] = {
    "A": flat(A), "x": flat(xs),
    "jacrev_x": flat(vmap(jacrev(layer, argnums=1), in_dims=(None, 0))(A, xs)),
    "jacrev_w": flat(vmap(jacrev(layer), in_dims=(None, 0))(A, xs)),
    "hessian": flat(vmap(hessian(cubic))(xs)),
}

path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "func-transforms.json")
with open(path, "w") as fh:
    json.dump(out, fh, indent=1)
    fh.write("\n")
print("wrote", os.path.normpath(path))
