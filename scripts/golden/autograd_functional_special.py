#!/usr/bin/env python3
"""Writes test/golden/torch/autograd_functional_special.json: torch.autograd.functional and
torch.special of PyTorch 1.13 in float64.
"functional": for four functions (vector to vector; two inputs to two outputs; two scalar
functions, one of them of two inputs) the results of vjp, jvp, jacobian, hessian, vhp and hvp as
PyTorch nests them (a tensor or lists of them), and with create_graph=True the gradients of
(result * w).sum() with respect to the inputs, w = sin(1 + arange(numel)).
"special": every torch.special function on points that include 0, negative and large values,
poles and the ends of the domain, and the gradients of out.sum() with respect to the inputs
where libtorch has a derivative (null where it has none).
Run: /usr/bin/python3 scripts/golden/autograd_functional_special.py"""
import json
import os

import torch
import torch.autograd.functional as AF
import torch.special as S

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
t = torch.tensor


def num(v):
    """JSON has no NaN or infinities: they are written as the strings "NaN", "Infinity", "-Infinity"."""
    return v if v == v and abs(v) != float("inf") else str(v).replace("nan", "NaN").replace("inf", "Infinity")


def data(x):
    return {"shape": list(x.shape), "data": [num(v) for v in x.detach().reshape(-1).double().tolist()]}


def nested(r):
    """A tensor as {shape, data}; tuples (PyTorch's nesting) as lists."""
    return data(r) if isinstance(r, torch.Tensor) else [nested(e) for e in r]


def flat_tensors(r):
    return [r] if isinstance(r, torch.Tensor) else [x for e in r for x in flat_tensors(e)]


def weights(x):
    return torch.arange(x.numel()).add(1).sin().reshape(x.shape)


# ---- torch.autograd.functional ----

INPUTS = {
    "x": t([0.3, -1.2, 0.8]),
    "a": t([[0.5, -0.4], [1.1, 0.2]]),
    "b": t([0.7, -0.3, 1.5]),
    "p": t([0.4, -0.9]),
    "Q": t([[1.2, 0.3], [-0.5, 0.8]]),
}


def f_vec(x):
    return x.exp() * x.sum() + x.pow(3)


def f_multi(a, b):
    return a.matmul(a.t()) * b.sum(), a.sin().sum() * b.pow(2)


def f_scalar(x):
    return (x.tanh() * x.pow(2)).sum() + x[0] * x[1] * x[2]


def f_scalar2(p, Q):
    return p.matmul(Q).matmul(p) + Q.exp().sum() * p.sum().sin()


FUNCS = {"vec": (f_vec, ["x"]), "multi": (f_multi, ["a", "b"]),
         "scalar": (f_scalar, ["x"]), "scalar2": (f_scalar2, ["p", "Q"])}


def vector_like(shape_of, scale):
    """v for a product: a fixed pattern in the shape of each tensor."""
    return tuple(torch.linspace(-1, 1, s.numel()).mul(scale).add(0.2).reshape(s.shape) for s in shape_of)


functional = []


def run(label, op, fname, with_v=True, create_graph=False):
    fn, names = FUNCS[fname]
    ins = [INPUTS[n].clone().requires_grad_(create_graph) for n in names]
    arg = ins[0] if len(ins) == 1 else tuple(ins)
    entry = {"label": label, "op": op, "func": fname, "createGraph": create_graph}
    if op in ("vjp", "jvp", "vhp", "hvp"):
        v = None
        if with_v:
            if op == "vjp":
                outs = fn(*[INPUTS[n] for n in names])
                v = vector_like(outs if isinstance(outs, tuple) else (outs,), 0.7)
                v = v if isinstance(outs, tuple) else v[0]
            else:
                v = vector_like([INPUTS[n] for n in names], 1.3)
                v = v if len(ins) > 1 else v[0]
            entry["v"] = nested(v)
        result = getattr(AF, op)(fn, arg, v, create_graph=create_graph)
    else:
        result = getattr(AF, op)(fn, arg, create_graph=create_graph)
    entry["result"] = nested(result)
    if create_graph:
        loss = sum((r * weights(r)).sum() for r in flat_tensors(result) if r.requires_grad)
        grads = torch.autograd.grad(loss, ins, allow_unused=True)
        entry["graphGrads"] = [data(g) if g is not None else None for g in grads]
    functional.append(entry)


for fname in ("vec", "multi"):
    run(f"vjp.{fname}", "vjp", fname)
    run(f"jvp.{fname}", "jvp", fname)
    run(f"jacobian.{fname}", "jacobian", fname)
for fname in ("scalar", "scalar2"):
    run(f"vjp.{fname}.noV", "vjp", fname, with_v=False)
    run(f"hessian.{fname}", "hessian", fname)
    run(f"vhp.{fname}", "vhp", fname)
    run(f"hvp.{fname}", "hvp", fname)
    run(f"jacobian.{fname}", "jacobian", fname)
run("jacobian.vec.createGraph", "jacobian", "vec", create_graph=True)
run("jacobian.multi.createGraph", "jacobian", "multi", create_graph=True)
run("vjp.multi.createGraph", "vjp", "multi", create_graph=True)
run("jvp.vec.createGraph", "jvp", "vec", create_graph=True)
run("hessian.scalar2.createGraph", "hessian", "scalar2", create_graph=True)
run("hvp.scalar.createGraph", "hvp", "scalar", create_graph=True)
run("vhp.scalar2.createGraph", "vhp", "scalar2", create_graph=True)

# ---- torch.special ----

X = t([-30.0, -3.5, -1.0, -0.5, 0.0, 0.25, 1.0, 2.5, 10.0, 30.0])
POS = t([0.0, 0.1, 0.5, 1.0, 2.5, 10.0, 30.0, 100.0])
UNIT = t([-1.0, -0.9, -0.5, 0.0, 0.3, 0.99, 1.0])
PROB = t([0.0, 0.01, 0.3, 0.5, 0.9, 1.0])
GAMMA = t([-2.5, -1.0, 0.0, 0.5, 1.0, 3.0, 30.0])
POLY_X = t([-1.0, -0.5, 0.0, 0.3, 1.0, 2.0])
POLY_N = t([0.0, 1.0, 2.0, 3.0, 5.0, 10.0])
SHIFT_X = t([0.0, 0.1, 0.25, 0.5, 0.8, 1.0])
M = t([[1.0, -2.0, 0.5], [1000.0, 999.0, -1000.0]])

special = []


def sp(label, fn, inputs, diff=None):
    """fn on leaves of `inputs` (a dict); gradients of out.sum() w.r.t. `diff` (default: all)."""
    diff = list(inputs) if diff is None else diff
    leaves = {k: v.clone().requires_grad_(k in diff) for k, v in inputs.items()}
    out = fn(**leaves)
    entry = {"label": label, "inputs": {k: data(v) for k, v in inputs.items()}, "output": data(out), "grads": None}
    if diff and out.requires_grad:
        try:
            grads = torch.autograd.grad(out.sum(), [leaves[k] for k in diff], allow_unused=True)
            entry["grads"] = {k: data(g) for k, g in zip(diff, grads) if g is not None}
        except RuntimeError as e:
            if "not implemented" not in str(e):
                raise
    special.append(entry)


for name, points in [("erf", X), ("erfc", X), ("erfcx", t([-3.5, -1.0, 0.0, 0.5, 2.5, 30.0, 1e5])),
                     ("erfinv", UNIT), ("ndtr", X), ("ndtri", PROB), ("log_ndtr", X),
                     ("exp2", X), ("expm1", X), ("log1p", t([-2.0, -1.0, -0.5, 0.0, 0.25, 10.0, 1e10])),
                     ("expit", X), ("entr", t([-1.0, 0.0, 0.3, 1.0, 5.0])), ("sinc", X),
                     ("gammaln", GAMMA), ("digamma", GAMMA), ("psi", GAMMA),
                     ("i0", X), ("i0e", X), ("i1", X), ("i1e", X),
                     ("airy_ai", t([-10.0, -1.0, 0.0, 1.0, 5.0])), ("bessel_j0", X), ("bessel_j1", X),
                     ("bessel_y0", POS), ("bessel_y1", POS), ("modified_bessel_i0", X),
                     ("modified_bessel_i1", X), ("modified_bessel_k0", POS), ("modified_bessel_k1", POS),
                     ("scaled_modified_bessel_k0", POS), ("scaled_modified_bessel_k1", POS),
                     ("spherical_bessel_j0", X)]:
    sp(name, lambda input, f=getattr(S, name): f(input), {"input": points})

sp("logit", lambda input: S.logit(input), {"input": PROB})
sp("logit.eps", lambda input: S.logit(input, eps=0.05), {"input": PROB})
sp("round", lambda input: S.round(input), {"input": t([-2.5, -0.5, 0.5, 1.5, 2.675, 1234.5678])})
sp("round.decimals2", lambda input: S.round(input, decimals=2), {"input": t([-2.555, 0.125, 2.675, 1234.5678])})
sp("round.decimals-2", lambda input: S.round(input, decimals=-2), {"input": t([-250.0, 149.0, 1234.5678])})
sp("polygamma.1", lambda input: S.polygamma(1, input), {"input": GAMMA})
sp("polygamma.3", lambda input: S.polygamma(3, input), {"input": GAMMA})
sp("multigammaln", lambda input: S.multigammaln(input, 3), {"input": t([1.2, 2.0, 3.5, 10.0, 30.0])})
sp("softmax", lambda input: S.softmax(input, 1), {"input": M})
sp("softmax.dim0", lambda input: S.softmax(input, 0), {"input": M})
sp("log_softmax", lambda input: S.log_softmax(input, 1), {"input": M})
sp("logsumexp", lambda input: S.logsumexp(input, 1), {"input": M})
sp("logsumexp.keepdim", lambda input: S.logsumexp(input, [0, 1], keepdim=True), {"input": M})
XY = {"input": t([0.0, 0.0, 1.0, 2.5, -3.0, 0.5]), "other": t([0.0, 2.0, 0.0, 0.5, 4.0, -0.5])}
sp("xlogy", lambda input, other: S.xlogy(input, other), XY)
sp("xlogy.scalarOther", lambda input: S.xlogy(input, 3.0), {"input": XY["input"]})
sp("xlogy.scalarInput", lambda other: S.xlogy(2.0, other), {"other": XY["other"]})
sp("xlog1py", lambda input, other: S.xlog1py(input, other), {"input": XY["input"], "other": t([0.0, -1.0, -1.0, 0.5, 4.0, -0.5])})
sp("xlog1py.scalarOther", lambda input: S.xlog1py(input, 3.0), {"input": XY["input"]})
sp("xlog1py.scalarInput", lambda other: S.xlog1py(2.0, other), {"other": XY["other"]})
ZQ = {"input": t([2.0, 3.0, 4.5, 1.0, 0.5]), "other": t([1.0, 0.5, 2.0, 1.0, 3.0])}
sp("zeta", lambda input, other: S.zeta(input, other), ZQ, diff=["other"])
sp("zeta.scalarOther", lambda input: S.zeta(input, 2.0), {"input": ZQ["input"]}, diff=[])
sp("zeta.scalarInput", lambda other: S.zeta(2.0, other), {"other": ZQ["other"]})
GI = {"input": t([0.5, 1.0, 3.0, 10.0, 2.0]), "other": t([0.0, 0.5, 2.0, 12.0, 100.0])}
sp("gammainc", lambda input, other: S.gammainc(input, other), GI)
sp("gammaincc", lambda input, other: S.gammaincc(input, other), GI)
for poly in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
             "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
             "laguerre_polynomial_l", "legendre_polynomial_p"):
    f = getattr(S, poly)
    sp(poly, lambda input, n, f=f: f(input, n), {"input": POLY_X, "n": POLY_N}, diff=[])
    sp(f"{poly}.scalarN", lambda input, f=f: f(input, 3), {"input": POLY_X}, diff=[])
    sp(f"{poly}.scalarX", lambda n, f=f: f(0.3, n), {"n": POLY_N}, diff=[])
for poly in ("shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
             "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w"):
    f = getattr(S, poly)
    sp(poly, lambda input, n, f=f: f(input, n), {"input": SHIFT_X, "n": POLY_N}, diff=[])
    sp(f"{poly}.scalarN", lambda input, f=f: f(input, 3), {"input": SHIFT_X}, diff=[])

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "autograd_functional_special.json")
with open(out, "w") as fh:
    json.dump({"inputs": {k: data(v) for k, v in INPUTS.items()}, "functional": functional, "special": special}, fh)
print(f"{len(functional)} functional cases, {len(special)} special cases -> {os.path.normpath(out)}")
