#!/usr/bin/env python3
"""Writes test/golden/torch/distributions.json: torch.distributions of PyTorch 1.13 in float64.
Per case: the parameters, a value, logProb, entropy, mean, variance, cdf and icdf where the
distribution has them, the gradients of their sum with respect to every float parameter, draws
of sample() after torch.manual_seed(7) and, for reparameterised ones, rsample() draws after the
same seed with the gradients of (draws * weights).sum() (libtorch's generator is the same, so the
draws are too). Then KL divergences of the registered same-family pairs with their gradients.
Run: /usr/bin/python3 scripts/golden/distributions.py"""
import json
import os

import torch
import torch.distributions as D

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


def build(name, params):
    p = params
    if name in ("Normal", "LogNormal", "Laplace"):
        return getattr(D, name)(p["loc"], p["scale"])
    if name == "Uniform":
        return D.Uniform(p["low"], p["high"])
    if name in ("Exponential", "Poisson"):
        return getattr(D, name)(p["rate"])
    if name == "StudentT":
        return D.StudentT(p["df"], p["loc"], p["scale"])
    if name == "Gamma":
        return D.Gamma(p["concentration"], p["rate"])
    if name == "Beta":
        return D.Beta(p["concentration1"], p["concentration0"])
    if name == "Dirichlet":
        return D.Dirichlet(p["concentration"])
    if name in ("Bernoulli", "Categorical", "OneHotCategorical"):
        return getattr(D, name)(**p)
    if name == "Binomial":
        return D.Binomial(total_count=p["totalCount"], **{k: v for k, v in p.items() if k != "totalCount"})
    if name == "MultivariateNormal":
        kw = {"covarianceMatrix": "covariance_matrix", "precisionMatrix": "precision_matrix", "scaleTril": "scale_tril"}
        return D.MultivariateNormal(p["loc"], **{kw[k]: v for k, v in p.items() if k != "loc"})
    raise ValueError(name)


def leafs(params):
    return {k: v.clone().requires_grad_(k != "totalCount") for k, v in params.items()}


def try_(fn):
    try:
        return fn()
    except NotImplementedError:
        return None


cases = []


def case(label, name, params, value, rsample=True, sample=True):
    ps = leafs(params)
    d = build(name, ps)
    out = {"label": label, "name": name, "params": {k: data(v) for k, v in params.items()},
           "batchShape": list(d.batch_shape), "eventShape": list(d.event_shape), "value": data(value)}
    total = 0
    lp = d.log_prob(value)
    out["logProb"] = data(lp)
    total = lp.sum()
    for key, fn in (("entropy", d.entropy), ("cdf", lambda: d.cdf(value)),
                    ("icdf", lambda: d.icdf(torch.full(d.batch_shape, 0.3)))):
        r = try_(fn)
        if r is not None:
            out[key] = data(r)
            total = total + r.sum()
    out["mean"] = data(d.mean)
    out["variance"] = data(d.variance)
    float_params = [k for k in ps if k != "totalCount"]
    grads = torch.autograd.grad(total, [ps[k] for k in float_params], allow_unused=True)
    out["grads"] = {k: flat(g) if g is not None else None for k, g in zip(float_params, grads)}
    if sample:
        torch.manual_seed(7)
        out["sample"] = data(d.sample((3,)))
    if rsample and d.has_rsample:
        ps2 = leafs(params)
        d2 = build(name, ps2)
        torch.manual_seed(7)
        r = d2.rsample((3,))
        w = torch.linspace(-1, 1, r.numel()).reshape(r.shape)
        g = torch.autograd.grad((r * w).sum(), [ps2[k] for k in float_params], allow_unused=True)
        out["rsample"] = data(r)
        out["rsampleGrads"] = {k: flat(x) if x is not None else None for k, x in zip(float_params, g)}
    cases.append(out)


case("normal", "Normal", {"loc": t([0.0, 1.5, -2.0]), "scale": t([1.0, 0.5, 2.5])}, t([0.3, 1.0, 4.0]))
case("normal-broadcast", "Normal", {"loc": t([[0.0], [1.0]]), "scale": t([0.7, 1.3])}, t([0.2, -0.4]))
case("lognormal", "LogNormal", {"loc": t([0.0, 0.5]), "scale": t([0.4, 1.2])}, t([1.3, 0.2]))
case("laplace", "Laplace", {"loc": t([0.0, 2.0]), "scale": t([1.5, 0.3])}, t([-1.0, 2.2]))
case("uniform", "Uniform", {"low": t([0.0, -2.0]), "high": t([1.0, 3.0])}, t([0.25, 2.0]))
case("exponential", "Exponential", {"rate": t([0.5, 3.0])}, t([1.2, 0.1]))
case("studentt", "StudentT", {"df": t([3.0, 7.5]), "loc": t([0.5, -1.0]), "scale": t([2.0, 0.8])}, t([1.0, 0.0]))
case("gamma", "Gamma", {"concentration": t([0.7, 2.5, 9.0]), "rate": t([1.0, 1.5, 0.3])}, t([0.4, 2.0, 30.0]))
case("beta", "Beta", {"concentration1": t([0.5, 2.0, 5.0]), "concentration0": t([0.5, 3.0, 1.2])}, t([0.1, 0.4, 0.9]))
case("dirichlet", "Dirichlet", {"concentration": t([[0.5, 1.0, 2.0], [3.0, 0.8, 1.5]])}, t([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]))
case("bernoulli-probs", "Bernoulli", {"probs": t([0.1, 0.5, 0.85])}, t([1.0, 0.0, 1.0]))
case("bernoulli-logits", "Bernoulli", {"logits": t([-2.0, 0.3, 4.0])}, t([0.0, 1.0, 1.0]))
case("categorical-probs", "Categorical", {"probs": t([[0.2, 0.3, 0.5], [1.0, 1.0, 2.0]])}, t([2.0, 0.0]))
case("categorical-logits", "Categorical", {"logits": t([[0.1, -1.2, 2.0, 0.4]])}, t([3.0]))
case("onehot", "OneHotCategorical", {"probs": t([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])}, t([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]))
case("poisson", "Poisson", {"rate": t([0.5, 4.0, 20.0])}, t([0.0, 3.0, 25.0]))
case("binomial-probs", "Binomial", {"totalCount": t([10.0, 10.0]), "probs": t([0.3, 0.8])}, t([2.0, 10.0]))
case("binomial-logits", "Binomial", {"totalCount": t([5.0, 12.0]), "logits": t([-0.5, 1.0])}, t([5.0, 3.0]))
cov = t([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 1.5]])
case("mvn-cov", "MultivariateNormal", {"loc": t([0.0, 1.0, -1.0]), "covarianceMatrix": cov}, t([[0.3, 0.1, 0.0], [1.0, 2.0, -3.0]]))
case("mvn-precision", "MultivariateNormal", {"loc": t([[0.5, -0.5, 0.0]]), "precisionMatrix": torch.linalg.inv(cov)}, t([0.3, 0.1, 0.0]))
case("mvn-scaletril", "MultivariateNormal", {"loc": t([1.0, 2.0]), "scaleTril": t([[[1.0, 0.0], [0.3, 0.7]], [[0.5, 0.0], [-0.2, 2.0]]])}, t([0.0, 1.0]))

kls = []


def kl(label, name, pp, qp):
    a, b = leafs(pp), leafs(qp)
    p, q = build(name, a), build(name, b)
    r = D.kl_divergence(p, q)
    pn = [k for k in a if k != "totalCount"]
    qn = [k for k in b if k != "totalCount"]
    g = torch.autograd.grad(r.sum(), [a[k] for k in pn] + [b[k] for k in qn], allow_unused=True)
    kls.append({"label": label, "name": name, "p": {k: data(v) for k, v in pp.items()},
                "q": {k: data(v) for k, v in qp.items()}, "kl": data(r),
                "pGrads": {k: flat(x) for k, x in zip(pn, g[:len(pn)])},
                "qGrads": {k: flat(x) for k, x in zip(qn, g[len(pn):])}})


kl("normal", "Normal", {"loc": t([0.0, 1.0]), "scale": t([1.0, 2.0])}, {"loc": t([0.5, -1.0]), "scale": t([0.7, 1.5])})
kl("bernoulli", "Bernoulli", {"probs": t([0.2, 0.7])}, {"probs": t([0.5, 0.1])})
kl("categorical", "Categorical", {"probs": t([0.2, 0.3, 0.5])}, {"logits": t([0.1, 0.2, -0.5])})
kl("beta", "Beta", {"concentration1": t([0.5, 2.0]), "concentration0": t([1.5, 3.0])}, {"concentration1": t([1.0, 4.0]), "concentration0": t([2.0, 0.7])})
kl("dirichlet", "Dirichlet", {"concentration": t([0.5, 1.0, 2.0])}, {"concentration": t([1.5, 0.8, 1.0])})
kl("gamma", "Gamma", {"concentration": t([0.7, 3.0]), "rate": t([1.0, 2.0])}, {"concentration": t([1.5, 2.0]), "rate": t([0.5, 4.0])})
kl("exponential", "Exponential", {"rate": t([0.5, 3.0])}, {"rate": t([1.5, 1.0])})
kl("laplace", "Laplace", {"loc": t([0.0, 1.0]), "scale": t([1.0, 0.4])}, {"loc": t([0.5, -1.0]), "scale": t([2.0, 0.9])})
kl("poisson", "Poisson", {"rate": t([0.5, 3.0])}, {"rate": t([1.5, 2.5])})
kl("mvn", "MultivariateNormal", {"loc": t([0.0, 1.0, -1.0]), "covarianceMatrix": cov}, {"loc": t([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), "scaleTril": t([[1.0, 0.0, 0.0], [0.2, 0.9, 0.0], [-0.1, 0.3, 1.4]])})
kl("uniform", "Uniform", {"low": t([0.0, 0.0, 0.5]), "high": t([1.0, 2.0, 1.0])}, {"low": t([-1.0, 0.5, 0.0]), "high": t([2.0, 3.0, 1.0])})

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "distributions.json")
with open(out, "w") as f:
    json.dump({"cases": cases, "kl": kls}, f)
print(f"wrote {len(cases)} cases and {len(kls)} KL pairs to {os.path.normpath(out)}")
