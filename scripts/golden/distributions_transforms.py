#!/usr/bin/env python3
"""Writes test/golden/torch/distributions-transforms.json: torch.distributions.transforms of
PyTorch 1.13 in float64 and the families built on them.
Transforms: per case the input x, y = t(x), t.inv(y) of a fresh copy of y (so no cache), log |det J|,
the event dims, shapes and sign, and the gradients of (y * w).sum() + ladj.sum() with respect to x
and every tensor parameter, and of t.inv(y).sum() with respect to y.
Families: as scripts/golden/distributions.py (logProb, entropy, mean, variance, cdf, icdf where
they exist, the gradients of their sum, seeded sample() and rsample() draws with the gradients of
(draws * weights).sum()). Then enumerate_support of the discrete families, expanded and not.
Run: /usr/bin/python3 scripts/golden/distributions_transforms.py"""
import json
import os

import torch
import torch.distributions as D
import torch.distributions.transforms as T
from torch.distributions.relaxed_bernoulli import LogitRelaxedBernoulli
from torch.distributions.relaxed_categorical import ExpRelaxedCategorical

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
t = torch.tensor


def num(v):
    """JSON has no NaN or infinities: they are written as the strings "NaN", "Infinity", "-Infinity"."""
    return v if v == v and abs(v) != float("inf") else str(v).replace("nan", "NaN").replace("inf", "Infinity")


def flat(x):
    return [num(v) for v in x.detach().reshape(-1).double().tolist()]


def data(x):
    return {"shape": list(x.shape), "data": flat(x)}


def make_transform(name, p):
    """The transform `name` of parameters p (the test's makeTransform mirrors it)."""
    simple = {"Exp": T.ExpTransform, "Sigmoid": T.SigmoidTransform, "Tanh": T.TanhTransform,
              "Softplus": T.SoftplusTransform, "Abs": T.AbsTransform, "Softmax": T.SoftmaxTransform,
              "StickBreaking": T.StickBreakingTransform}
    if name in simple:
        return simple[name]()
    if name == "Affine":
        return T.AffineTransform(p["loc"], p["scale"])
    if name == "Affine-event1":
        return T.AffineTransform(p["loc"], p["scale"], event_dim=1)
    if name == "Affine-event2-number":
        return T.AffineTransform(0.5, -2.0, event_dim=2)
    if name == "Power":
        return T.PowerTransform(p["exponent"])
    if name == "Power-number":
        return T.PowerTransform(2.5)
    if name == "Reshape":
        return T.ReshapeTransform(torch.Size([2, 3]), torch.Size([6]))
    if name == "Compose-AffineExp":
        return T.ComposeTransform([T.AffineTransform(p["loc"], p["scale"]), T.ExpTransform()])
    if name == "Compose-StickAffine":
        return T.ComposeTransform([T.StickBreakingTransform(), T.AffineTransform(0.0, p["scale"])])
    if name == "Compose-ExpIndependentAffine":
        return T.ComposeTransform([T.ExpTransform(), T.IndependentTransform(T.AffineTransform(1.0, p["scale"]), 1)])
    if name == "Independent-Tanh":
        return T.IndependentTransform(T.TanhTransform(), 2)
    if name == "Tanh-inv":
        return T.TanhTransform().inv
    if name == "Compose-inv":
        return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(p["loc"], p["scale"])]).inv
    if name == "CumulativeDistribution":
        return T.CumulativeDistributionTransform(D.Normal(p["loc"], p["scale"]))
    raise ValueError(name)


transforms = []


def transform_case(label, name, params, x):
    ps = {k: v.clone().requires_grad_() for k, v in params.items()}
    tr = make_transform(name, ps)
    xl = x.clone().requires_grad_()
    y = tr(xl)
    out = {"label": label, "name": name, "params": {k: data(v) for k, v in params.items()}, "x": data(x),
           "y": data(y), "domainEventDim": tr.domain.event_dim, "codomainEventDim": tr.codomain.event_dim,
           "bijective": tr.bijective, "forwardShape": list(tr.forward_shape(x.shape)),
           "inverseShape": list(tr.inverse_shape(y.shape))}
    try:
        s = tr.sign
        out["sign"] = data(s) if isinstance(s, torch.Tensor) else s
    except NotImplementedError:
        pass
    yl = y.detach().clone().requires_grad_()
    xi = tr.inv(yl)
    out["inverse"] = data(xi)
    out["inverseGrad"] = flat(torch.autograd.grad(xi.sum(), [yl])[0])
    w = torch.linspace(-1, 1, y.numel()).reshape(y.shape)
    total = (y * w).sum()
    try:
        ladj = tr.log_abs_det_jacobian(xl, y)
        out["logAbsDetJacobian"] = data(ladj)
        total = total + ladj.sum()
    except NotImplementedError:
        pass
    leaves = [xl] + list(ps.values())
    g = torch.autograd.grad(total, leaves, allow_unused=True)
    out["grads"] = {k: flat(v) if v is not None else None for k, v in zip(["x"] + list(ps), g)}
    transforms.append(out)


x23 = t([[0.3, -1.2, 2.0], [0.0, 0.7, -0.4]])
transform_case("exp", "Exp", {}, x23)
transform_case("affine", "Affine", {"loc": t([1.0, -2.0, 0.5]), "scale": t([[2.0], [-0.5]])}, x23)
transform_case("affine-event1", "Affine-event1", {"loc": t([1.0, -2.0, 0.5]), "scale": t([2.0, -0.5, 3.0])}, x23)
transform_case("affine-event2-number", "Affine-event2-number", {}, x23)
transform_case("sigmoid", "Sigmoid", {}, x23)
transform_case("tanh", "Tanh", {}, x23)
transform_case("power", "Power", {"exponent": t([0.5, 2.0, 3.0])}, x23.abs() + 0.1)
transform_case("power-number", "Power-number", {}, x23.abs() + 0.1)
transform_case("softplus", "Softplus", {}, x23)
transform_case("abs", "Abs", {}, x23)
transform_case("softmax", "Softmax", {}, x23)
transform_case("stickbreaking", "StickBreaking", {}, x23)
transform_case("reshape", "Reshape", {}, t([[[0.3, -1.2, 2.0], [0.0, 0.7, -0.4]]]))
transform_case("compose-affine-exp", "Compose-AffineExp", {"loc": t([0.5, 0.0, -0.5]), "scale": t([1.5, -1.0, 0.2])}, x23)
transform_case("compose-stick-affine", "Compose-StickAffine", {"scale": t([1.0, 2.0, 0.5, 3.0])}, x23)
transform_case("compose-exp-independent-affine", "Compose-ExpIndependentAffine", {"scale": t([2.0, 0.5, -1.0])}, x23)
transform_case("independent-tanh", "Independent-Tanh", {}, x23)
transform_case("tanh-inv", "Tanh-inv", {}, t([[0.3, -0.9, 0.5], [0.0, 0.7, -0.4]]))
transform_case("compose-inv", "Compose-inv", {"loc": t([1.0, -1.0, 0.0]), "scale": t([2.0, 3.0, -1.0])}, t([[1.3, 0.9, -0.2], [2.5, 1.1, -0.9]]))
transform_case("cdf", "CumulativeDistribution", {"loc": t([0.0, 1.0, -1.0]), "scale": t([1.0, 0.5, 2.0])}, x23)

# Cache: with cache_size=1 the inverse of the forward's very output is the cached x (exact even
# where atanh of a rounded tanh is not), and without it it is recomputed.
xc = t([5.0, 19.0, -0.5])
cached = T.TanhTransform(cache_size=1)
yc = cached(xc)
cache = {"x": data(xc), "cachedInverse": data(cached.inv(yc)), "uncachedInverse": data(T.TanhTransform().inv(yc))}


def build(name, p):
    if name == "RelaxedBernoulli":
        return D.RelaxedBernoulli(p["temperature"], **{k: v for k, v in p.items() if k != "temperature"})
    if name == "LogitRelaxedBernoulli":
        return LogitRelaxedBernoulli(p["temperature"], **{k: v for k, v in p.items() if k != "temperature"})
    if name == "RelaxedOneHotCategorical":
        return D.RelaxedOneHotCategorical(p["temperature"], **{k: v for k, v in p.items() if k != "temperature"})
    if name == "ExpRelaxedCategorical":
        return ExpRelaxedCategorical(p["temperature"], **{k: v for k, v in p.items() if k != "temperature"})
    if name == "LogisticNormal":
        return D.LogisticNormal(p["loc"], p["scale"])
    if name == "Kumaraswamy":
        return D.Kumaraswamy(p["concentration1"], p["concentration0"])
    if name == "Transformed-NormalStickBreaking":
        return D.TransformedDistribution(D.Normal(p["loc"], p["scale"]), [T.StickBreakingTransform()])
    if name == "Transformed-NormalTanhAffine1":
        return D.TransformedDistribution(D.Normal(p["loc"], p["scale"]), [
            T.TanhTransform(), T.AffineTransform(p["aLoc"], p["aScale"], event_dim=1)])
    if name == "Transformed-NormalReshape":
        return D.TransformedDistribution(D.Normal(p["loc"], p["scale"]), [T.ReshapeTransform(torch.Size([2, 2]), torch.Size([4]))])
    if name == "Transformed-GammaPower":
        return D.TransformedDistribution(D.Gamma(p["concentration"], p["rate"]), [T.PowerTransform(p["exponent"])])
    raise ValueError(name)


def try_(fn):
    try:
        return fn()
    except NotImplementedError:
        return None


cases = []


def case(label, name, params, value, icdf=False):
    ps = {k: v.clone().requires_grad_() for k, v in params.items()}
    d = build(name, ps)
    out = {"label": label, "name": name, "params": {k: data(v) for k, v in params.items()},
           "batchShape": list(d.batch_shape), "eventShape": list(d.event_shape), "value": data(value)}
    lp = d.log_prob(value)
    out["logProb"] = data(lp)
    total = lp.sum()
    fns = [("entropy", d.entropy), ("cdf", lambda: d.cdf(value))]
    if icdf:
        fns.append(("icdf", lambda: d.icdf(torch.full(d.batch_shape, 0.3))))
    for key, fn in fns:
        r = try_(fn)
        if r is not None:
            out[key] = data(r)
            total = total + r.sum()
    for key in ("mean", "variance"):
        r = try_(lambda: getattr(d, key))
        if r is not None:
            out[key] = data(r)
            total = total + r.sum()
    g = torch.autograd.grad(total, list(ps.values()), allow_unused=True)
    out["grads"] = {k: flat(v) if v is not None else None for k, v in zip(ps, g)}
    torch.manual_seed(7)
    out["sample"] = data(d.sample((3,)))
    ps2 = {k: v.clone().requires_grad_() for k, v in params.items()}
    d2 = build(name, ps2)
    torch.manual_seed(7)
    r = d2.rsample((3,))
    w = torch.linspace(-1, 1, r.numel()).reshape(r.shape)
    g = torch.autograd.grad((r * w).sum(), list(ps2.values()), allow_unused=True)
    out["rsample"] = data(r)
    out["rsampleGrads"] = {k: flat(x) if x is not None else None for k, x in zip(ps2, g)}
    cases.append(out)


case("relaxed-bernoulli-probs", "RelaxedBernoulli", {"temperature": t(0.7), "probs": t([0.1, 0.5, 0.85])}, t([0.2, 0.6, 0.99]))
case("relaxed-bernoulli-logits", "RelaxedBernoulli", {"temperature": t([1.5, 0.4]), "logits": t([-2.0, 0.3])}, t([0.05, 0.5]))
case("logit-relaxed-bernoulli", "LogitRelaxedBernoulli", {"temperature": t(0.5), "logits": t([[-1.0, 0.5], [2.0, 0.0]])}, t([0.3, -2.0]))
case("relaxed-onehot-probs", "RelaxedOneHotCategorical", {"temperature": t(0.8), "probs": t([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])}, t([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))
case("relaxed-onehot-logits", "RelaxedOneHotCategorical", {"temperature": t([2.0]), "logits": t([0.1, -1.2, 2.0, 0.4])}, t([0.4, 0.1, 0.3, 0.2]))
case("exp-relaxed-categorical", "ExpRelaxedCategorical", {"temperature": t(0.6), "logits": t([[0.5, -0.5, 1.0]])}, t([-1.5, -0.5, -1.2]))
case("logistic-normal", "LogisticNormal", {"loc": t([[0.0, 1.0, -0.5], [0.3, 0.2, 0.1]]), "scale": t([[1.0, 0.5, 2.0], [0.4, 1.2, 0.9]])}, t([0.1, 0.2, 0.3, 0.4]))
case("logistic-normal-scalar", "LogisticNormal", {"loc": t(0.4), "scale": t(1.3)}, t([0.3, 0.7]))
case("kumaraswamy", "Kumaraswamy", {"concentration1": t([0.5, 2.0, 5.0]), "concentration0": t([0.8, 3.0, 1.2])}, t([0.1, 0.4, 0.9]), icdf=True)
case("transformed-stickbreaking", "Transformed-NormalStickBreaking", {"loc": t([0.5, -0.5]), "scale": t([1.0, 2.0])}, t([0.2, 0.5, 0.3]))
case("transformed-tanh-affine1", "Transformed-NormalTanhAffine1", {"loc": t([[0.0, 0.5], [1.0, -1.0]]), "scale": t([[1.0, 0.5], [2.0, 0.7]]), "aLoc": t([0.5, -0.5]), "aScale": t([2.0, -3.0])}, t([[0.9, 1.0], [-1.0, -2.0]]))
case("transformed-reshape", "Transformed-NormalReshape", {"loc": t([[0.0, 0.5], [1.0, -1.0]]), "scale": t([[1.0, 0.5], [2.0, 0.7]])}, t([0.2, 0.1, 0.0, -1.0]))
case("transformed-gamma-power", "Transformed-GammaPower", {"concentration": t([2.0, 0.7]), "rate": t([1.0, 3.0]), "exponent": t([[0.5], [2.0]])}, t([[1.1, 0.3], [0.8, 0.05]]))

enumerate = []
for label, d in (("bernoulli", D.Bernoulli(probs=t([0.1, 0.5]))),
                 ("categorical", D.Categorical(probs=t([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]))),
                 ("onehot", D.OneHotCategorical(logits=t([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]))),
                 ("binomial", D.Binomial(total_count=t([3.0, 3.0]), probs=t([0.2, 0.7])))):
    enumerate.append({"label": label, "expanded": data(d.enumerate_support()),
                      "unexpanded": data(d.enumerate_support(expand=False)),
                      "dtype": str(d.enumerate_support().dtype).replace("torch.", "")})

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "distributions-transforms.json")
with open(out, "w") as f:
    json.dump({"transforms": transforms, "cache": cache, "cases": cases, "enumerate": enumerate}, f)
print("wrote", out)
