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
    return build_more(name, p)


def build_more(name, p):
    """The families after MultivariateNormal; composite ones are named `Outer-Inner`."""
    if name in ("Cauchy", "Gumbel"):
        return getattr(D, name)(p["loc"], p["scale"])
    if name in ("HalfNormal", "HalfCauchy"):
        return getattr(D, name)(p["scale"])
    if name == "Chi2":
        return D.Chi2(p["df"])
    if name == "Weibull":
        return D.Weibull(p["scale"], p["concentration"])
    if name == "Pareto":
        return D.Pareto(p["scale"], p["alpha"])
    if name == "Geometric":
        return D.Geometric(**p)
    if name == "Multinomial":
        return D.Multinomial(int(p["totalCount"].item()), **{k: v for k, v in p.items() if k != "totalCount"})
    if name == "Independent-Normal":
        return D.Independent(D.Normal(p["loc"], p["scale"]), 1)
    if name == "MixtureSameFamily-Normal":
        return D.MixtureSameFamily(D.Categorical(logits=p["mixLogits"]), D.Normal(p["loc"], p["scale"]))
    if name == "MixtureSameFamily-IndependentNormal":
        return D.MixtureSameFamily(D.Categorical(probs=p["mixProbs"]),
                                   D.Independent(D.Normal(p["loc"], p["scale"]), 1))
    if name == "VonMises":
        return D.VonMises(p["loc"], p["concentration"])
    if name == "Transformed-NormalExpAffine":
        T = D.transforms
        return D.TransformedDistribution(D.Normal(p["loc"], p["scale"]),
                                         [T.ExpTransform(), T.AffineTransform(p["aLoc"], p["aScale"])])
    if name == "Transformed-NormalSigmoid":
        return D.TransformedDistribution(D.Normal(p["loc"], p["scale"]), D.transforms.SigmoidTransform())
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
    for key in ("mean", "variance"):  # a TransformedDistribution has neither
        r = try_(lambda: getattr(d, key))
        if r is not None:
            out[key] = data(r)
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
# The families added after the first 21 cases (appended, so that those stay byte-identical).
case("cauchy", "Cauchy", {"loc": t([0.0, 1.5]), "scale": t([1.0, 0.4])}, t([0.7, -2.0]))
case("halfnormal", "HalfNormal", {"scale": t([1.0, 2.5])}, t([0.3, 4.0]))
case("halfcauchy", "HalfCauchy", {"scale": t([0.5, 2.0])}, t([1.2, 0.1]))
case("chi2", "Chi2", {"df": t([1.5, 4.0])}, t([0.8, 5.0]))
case("gumbel", "Gumbel", {"loc": t([0.0, 2.0]), "scale": t([1.0, 0.5])}, t([0.5, 1.8]))
case("weibull", "Weibull", {"scale": t([1.0, 2.0]), "concentration": t([0.8, 3.0])}, t([0.6, 2.5]))
case("pareto", "Pareto", {"scale": t([1.0, 0.5]), "alpha": t([0.8, 3.5])}, t([2.0, 0.9]))
case("geometric-probs", "Geometric", {"probs": t([0.2, 0.65, 1.0])}, t([3.0, 0.0, 0.0]))
case("geometric-logits", "Geometric", {"logits": t([-1.0, 0.5])}, t([2.0, 7.0]))
case("multinomial", "Multinomial", {"totalCount": t(6.0), "probs": t([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])}, t([[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]]))
case("multinomial-logits", "Multinomial", {"totalCount": t(4.0), "logits": t([0.3, -1.0, 0.0, 1.2])}, t([[0.0, 1.0, 0.0, 3.0], [2.0, 0.0, 1.0, 1.0]]))
case("independent-normal", "Independent-Normal", {"loc": t([[0.0, 1.0, -1.0], [0.5, 0.2, 0.0]]), "scale": t([[1.0, 0.5, 2.0], [0.3, 1.5, 1.0]])}, t([0.2, 1.1, -0.5]))
case("mixture-normal", "MixtureSameFamily-Normal", {"mixLogits": t([[0.1, -0.4, 1.0], [0.0, 0.0, 2.0]]), "loc": t([[-1.0, 0.0, 2.0], [0.5, 1.5, -2.0]]), "scale": t([[0.5, 1.0, 0.8], [2.0, 0.3, 1.2]])}, t([0.4, -1.0]))
case("mixture-independent", "MixtureSameFamily-IndependentNormal", {"mixProbs": t([0.3, 0.7]), "loc": t([[0.0, 1.0, -1.0], [2.0, 0.0, 0.5]]), "scale": t([[1.0, 0.5, 2.0], [0.7, 1.5, 1.0]])}, t([[0.2, 1.1, -0.5], [1.0, 0.0, 0.0]]))
case("transformed-exp-affine", "Transformed-NormalExpAffine", {"loc": t([0.0, 0.5, -0.3]), "scale": t([0.4, 1.0, 0.7]), "aLoc": t([[1.0], [-2.0]]), "aScale": t([[2.0], [-0.5]])}, t([[2.5, 4.0, 1.5], [-2.3, -3.0, -2.1]]))
case("transformed-sigmoid", "Transformed-NormalSigmoid", {"loc": t([0.0, 1.0]), "scale": t([1.0, 0.5])}, t([0.3, 0.8]))
case("vonmises", "VonMises", {"loc": t([0.0, 2.5, -1.0]), "concentration": t([0.5, 4.0, 12.0])}, t([0.3, -3.0, -1.2]))

kls = []


def kl(label, name, pp, qp, family=None):
    a, b = leafs(pp), leafs(qp)
    p, q = build(name, a), build(name, b)
    r = D.kl_divergence(p, q)
    pn = [k for k in a if k != "totalCount"]
    qn = [k for k in b if k != "totalCount"]
    g = torch.autograd.grad(r.sum(), [a[k] for k in pn] + [b[k] for k in qn], allow_unused=True)
    kls.append({"label": label, "name": name, "p": {k: data(v) for k, v in pp.items()},
                "q": {k: data(v) for k, v in qp.items()}, "kl": data(r),
                "pGrads": {k: flat(x) if x is not None else None for k, x in zip(pn, g[:len(pn)])},
                "qGrads": {k: flat(x) if x is not None else None for k, x in zip(qn, g[len(pn):])}})
    if family is not None:
        kls[-1]["family"] = family


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
# The families added later; "family" is the registered pair's family where the name is composite
# or a subclass (Chi2 takes Gamma's formula).
kl("halfnormal", "HalfNormal", {"scale": t([1.0, 0.4])}, {"scale": t([2.0, 0.9])})
kl("cauchy", "Cauchy", {"loc": t([0.0, 1.0]), "scale": t([1.0, 0.4])}, {"loc": t([0.5, -1.0]), "scale": t([2.0, 0.9])})
kl("gumbel", "Gumbel", {"loc": t([0.0, 1.0]), "scale": t([1.0, 0.4])}, {"loc": t([0.5, -1.0]), "scale": t([2.0, 0.9])})
kl("pareto", "Pareto", {"scale": t([1.0, 0.5, 2.0]), "alpha": t([0.8, 3.5, 2.0])}, {"scale": t([0.5, 0.5, 3.0]), "alpha": t([2.0, 1.0, 1.5])})
kl("geometric", "Geometric", {"probs": t([0.2, 0.65])}, {"logits": t([0.3, -1.5])})
kl("independent", "Independent-Normal", {"loc": t([[0.0, 1.0], [0.5, -1.0]]), "scale": t([[1.0, 2.0], [0.7, 0.4]])}, {"loc": t([[0.5, -1.0], [0.0, 0.0]]), "scale": t([[0.7, 1.5], [1.0, 1.0]])}, family="Independent")
kl("lognormal", "LogNormal", {"loc": t([0.0, 1.0]), "scale": t([1.0, 2.0])}, {"loc": t([0.5, -1.0]), "scale": t([0.7, 1.5])})
kl("transformed", "Transformed-NormalExpAffine", {"loc": t([0.0, 1.0]), "scale": t([1.0, 2.0]), "aLoc": t([1.0]), "aScale": t([-2.0])}, {"loc": t([0.5, -1.0]), "scale": t([0.7, 1.5]), "aLoc": t([1.0]), "aScale": t([-2.0])}, family="TransformedDistribution")
kl("chi2", "Chi2", {"df": t([1.5, 4.0])}, {"df": t([3.0, 2.5])}, family="Gamma")

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "distributions.json")
with open(out, "w") as f:
    json.dump({"cases": cases, "kl": kls}, f)
print(f"wrote {len(cases)} cases and {len(kls)} KL pairs to {os.path.normpath(out)}")
