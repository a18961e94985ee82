#!/usr/bin/env python3
"""Writes test/golden/torch/distributions-families.json: PyTorch 1.13's NegativeBinomial,
ContinuousBernoulli, FisherSnedecor, LowRankMultivariateNormal, LKJCholesky and Wishart in float64 (as
scripts/golden/distributions.py: logProb, entropy, mean, variance, cdf and icdf where they exist,
the gradients of their sum, sample() and rsample() draws after torch.manual_seed(7) with the
gradients of (draws * weights).sum()); expand() of the families that gained it (batch shape,
logProb, mean, its gradients, and sample((2,)) after manual_seed(7)); and the KL pairs of 1.13's
kl.py among tailor's families beyond the same-family ones of distributions.json, with gradients.
Run: /usr/bin/python3 scripts/golden/distributions_families.py"""
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


def pl(p):
    """The probs or logits keyword of p."""
    return {k: v for k, v in p.items() if k in ("probs", "logits")}


def build(name, p):
    """The distribution `name` of the named parameters; composite ones are named `Outer-Inner`."""
    simple = {
        "Normal": ("loc", "scale"), "Laplace": ("loc", "scale"), "Gumbel": ("loc", "scale"),
        "Uniform": ("low", "high"), "Exponential": ("rate",), "Poisson": ("rate",),
        "Gamma": ("concentration", "rate"), "Beta": ("concentration1", "concentration0"),
        "Pareto": ("scale", "alpha"), "Dirichlet": ("concentration",), "FisherSnedecor": ("df1", "df2"),
        "LowRankMultivariateNormal": ("loc", "covFactor", "covDiag"),
    }
    if name in simple:
        return getattr(D, name)(*[p[k] for k in simple[name]])
    if name in ("Bernoulli", "Categorical", "OneHotCategorical", "ContinuousBernoulli"):
        return getattr(D, name)(**pl(p))
    if name == "Binomial":
        return D.Binomial(total_count=p["totalCount"], **pl(p))
    if name == "NegativeBinomial":
        return D.NegativeBinomial(p["totalCount"], **pl(p))
    if name == "LKJCholesky":
        return D.LKJCholesky(int(p["dim"].item()), p["concentration"])
    if name == "Multinomial":
        return D.Multinomial(int(p["totalCount"].item()), **pl(p))
    kw = {"covarianceMatrix": "covariance_matrix", "precisionMatrix": "precision_matrix", "scaleTril": "scale_tril"}
    if name == "MultivariateNormal":
        return D.MultivariateNormal(p["loc"], **{kw[k]: v for k, v in p.items() if k != "loc"})
    if name == "Wishart":
        return D.Wishart(p["df"], **{kw[k]: v for k, v in p.items() if k != "df"})
    if name == "Independent-Normal":
        return D.Independent(D.Normal(p["loc"], p["scale"]), 1)
    if name == "MixtureSameFamily-Normal":
        return D.MixtureSameFamily(D.Categorical(logits=p["mixLogits"]), D.Normal(p["loc"], p["scale"]))
    if name == "Transformed-NormalExpAffine":
        T = D.transforms
        return D.TransformedDistribution(D.Normal(p["loc"], p["scale"]),
                                         [T.ExpTransform(), T.AffineTransform(p["aLoc"], p["aScale"])])
    raise ValueError(name)


INTEGRAL = ("totalCount", "dim")


def leafs(params):
    return {k: v.clone().requires_grad_(k not in INTEGRAL) for k, v in params.items()}


def try_(fn):
    try:
        return fn()
    except NotImplementedError:
        return None


def grads_of(total, ps):
    names = [k for k in ps if k.split(".")[-1] not in INTEGRAL]
    if not isinstance(total, torch.Tensor) or not total.requires_grad:
        return {k: None for k in names}
    g = torch.autograd.grad(total, [ps[k] for k in names], allow_unused=True)
    return {k: flat(x) if x is not None else None for k, x in zip(names, g)}


cases = []


def case(label, name, params, value):
    ps = leafs(params)
    d = build(name, ps)
    out = {"label": label, "name": name, "params": {k: data(v) for k, v in params.items()},
           "batchShape": list(d.batch_shape), "eventShape": list(d.event_shape), "value": data(value)}
    lp = d.log_prob(value)
    out["logProb"] = data(lp)
    total = lp.sum()
    for key, fn in (("entropy", d.entropy), ("cdf", lambda: d.cdf(value)),
                    ("icdf", lambda: d.icdf(torch.full(d.batch_shape, 0.3)))):
        r = try_(fn)
        if r is not None:
            out[key] = data(r)
            total = total + r.sum()
    for key in ("mean", "variance"):  # LKJCholesky has neither
        r = try_(lambda: getattr(d, key))
        if r is not None:
            out[key] = data(r)
    out["grads"] = grads_of(total, ps)
    torch.manual_seed(7)
    out["sample"] = data(d.sample((3,)))
    if d.has_rsample:
        ps2 = leafs(params)
        d2 = build(name, ps2)
        torch.manual_seed(7)
        r = d2.rsample((3,))
        w = torch.linspace(-1, 1, r.numel()).reshape(r.shape)
        out["rsample"] = data(r)
        try:
            out["rsampleGrads"] = grads_of((r * w).sum(), ps2)
        except RuntimeError:
            # 1.13's Wishart.rsample changes its redraw mask in place, which its backward needs.
            # Its draws are the redraw of every sample (its is_singular is the support check
            # itself): the gradient is that of the second Bartlett draw, replayed here.
            ps3 = leafs(params)
            d3 = build(name, ps3)
            torch.manual_seed(7)
            d3._bartlett_sampling(torch.Size((3,)))
            replay = d3._bartlett_sampling(torch.Size((3,)))
            assert torch.equal(replay.detach(), r.detach())
            out["rsampleGrads"] = grads_of((replay * w).sum(), ps3)
    cases.append(out)


case("negbin-probs", "NegativeBinomial", {"totalCount": t([3.0, 0.0, 7.5]), "probs": t([0.4, 0.2, 0.0])}, t([2.0, 0.0, 0.0]))
case("negbin-logits", "NegativeBinomial", {"totalCount": t([5.0, 2.5]), "logits": t([-0.7, 1.3])}, t([[1.0, 4.0], [0.0, 9.0]]))
case("contbern-probs", "ContinuousBernoulli", {"probs": t([0.1, 0.4995, 0.5, 0.8, 0.0])}, t([0.3, 0.7, 0.5, 1.0, 0.2]))
case("contbern-logits", "ContinuousBernoulli", {"logits": t([-2.0, 0.001, 3.0])}, t([0.0, 0.6, 0.9]))
case("fisher", "FisherSnedecor", {"df1": t([1.0, 4.0, 10.0]), "df2": t([1.5, 3.0, 12.0])}, t([0.5, 2.0, 1.1]))
W = t([[1.0, 0.2], [-0.5, 0.3], [0.4, -1.0]])
case("lowrank", "LowRankMultivariateNormal", {"loc": t([0.0, 1.0, -1.0]), "covFactor": W, "covDiag": t([0.5, 1.0, 2.0])},
     t([[0.3, 0.1, 0.0], [1.0, 2.0, -3.0]]))
case("lowrank-batch", "LowRankMultivariateNormal",
     {"loc": t([[0.0, 1.0, -1.0], [0.5, 0.0, 0.2]]), "covFactor": t([[1.0], [0.3], [-0.7]]), "covDiag": t([[0.5, 1.0, 2.0]])},
     t([0.3, 0.1, 0.0]))
corr = t([[1.0, 0.3, -0.2], [0.3, 1.0, 0.5], [-0.2, 0.5, 1.0]])
corr2 = t([[1.0, -0.6, 0.1], [-0.6, 1.0, 0.0], [0.1, 0.0, 1.0]])
case("lkj", "LKJCholesky", {"dim": t(3.0), "concentration": t([0.5, 1.0, 4.0])},
     torch.linalg.cholesky(torch.stack([corr, corr2, torch.eye(3)])))
case("lkj-2", "LKJCholesky", {"dim": t(2.0), "concentration": t(2.5)}, torch.linalg.cholesky(t([[1.0, 0.4], [0.4, 1.0]])))
cov = t([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 1.5]])
spd = t([[3.0, 0.2, -0.5], [0.2, 2.0, 0.4], [-0.5, 0.4, 1.0]])
case("wishart-cov", "Wishart", {"df": t([3.5, 6.0]), "covarianceMatrix": cov}, torch.stack([spd, cov]))
case("wishart-precision", "Wishart", {"df": t(4.0), "precisionMatrix": torch.linalg.inv(cov)}, spd)
case("wishart-scaletril", "Wishart", {"df": t([1.5, 2.0]), "scaleTril": t([[[1.0, 0.0], [0.3, 0.7]], [[0.5, 0.0], [-0.2, 2.0]]])},
     t([[1.0, 0.2], [0.2, 0.5]]))

expands = []


def expand(label, name, params, batch_shape, value):
    ps = leafs(params)
    d = build(name, ps).expand(torch.Size(batch_shape))
    lp = d.log_prob(value)
    mean = try_(lambda: d.mean)
    total = lp.sum() + (mean.sum() if mean is not None and mean.isfinite().all() else 0)
    out = {"label": label, "name": name, "params": {k: data(v) for k, v in params.items()},
           "batchShape": list(d.batch_shape), "eventShape": list(d.event_shape), "value": data(value),
           "logProb": data(lp), "grads": grads_of(total, ps)}
    if mean is not None:
        out["mean"] = data(mean)
    torch.manual_seed(7)
    out["sample"] = data(d.sample((2,)))
    expands.append(out)


expand("bernoulli-probs", "Bernoulli", {"probs": t([0.2, 0.9])}, [3, 2], t([1.0, 0.0]))
expand("bernoulli-logits", "Bernoulli", {"logits": t([[-1.0], [2.0]])}, [2, 3], t([1.0, 0.0, 1.0]))
expand("binomial", "Binomial", {"totalCount": t([4.0, 9.0]), "probs": t([0.3, 0.6])}, [3, 2], t([1.0, 7.0]))
expand("binomial-logits", "Binomial", {"totalCount": t(5.0), "logits": t([0.4])}, [2, 3], t([2.0]))
expand("categorical-probs", "Categorical", {"probs": t([0.2, 0.3, 0.5])}, [4], t([2.0, 0.0, 1.0, 2.0]))
expand("categorical-logits", "Categorical", {"logits": t([[0.1, -1.0], [2.0, 0.0]])}, [3, 2], t([1.0, 0.0]))
expand("onehot", "OneHotCategorical", {"logits": t([0.1, -1.0, 0.5])}, [2], t([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]))
expand("multinomial", "Multinomial", {"totalCount": t(5.0), "probs": t([0.2, 0.3, 0.5])}, [2], t([[1.0, 1.0, 3.0], [0.0, 5.0, 0.0]]))
expand("dirichlet", "Dirichlet", {"concentration": t([0.5, 1.0, 2.0])}, [2], t([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]))
mloc = t([0.0, 1.0, -1.0])
expand("mvn-cov", "MultivariateNormal", {"loc": mloc, "covarianceMatrix": cov}, [2], t([0.3, 0.1, 0.0]))
expand("mvn-precision", "MultivariateNormal", {"loc": mloc, "precisionMatrix": torch.linalg.inv(cov)}, [2, 1], t([0.3, 0.1, 0.0]))
expand("mvn-scaletril", "MultivariateNormal", {"loc": t([[0.0, 1.0, -1.0]]), "scaleTril": torch.linalg.cholesky(cov)}, [3, 2], t([0.3, 0.1, 0.0]))
expand("lowrank", "LowRankMultivariateNormal", {"loc": mloc, "covFactor": W, "covDiag": t([0.5, 1.0, 2.0])}, [2], t([0.3, 0.1, 0.0]))
expand("negbin", "NegativeBinomial", {"totalCount": t(3.0), "logits": t([0.2, -0.4])}, [2, 2], t([1.0, 4.0]))
expand("contbern", "ContinuousBernoulli", {"probs": t([0.3, 0.5])}, [3, 2], t([0.2, 0.7]))
expand("fisher", "FisherSnedecor", {"df1": t(3.0), "df2": t([5.0, 9.0])}, [2, 2], t([0.8, 1.5]))
expand("lkj", "LKJCholesky", {"dim": t(4.0), "concentration": t([0.7, 2.0])}, [3, 2], torch.eye(4))
expand("wishart", "Wishart", {"df": t(5.0), "scaleTril": torch.linalg.cholesky(cov)}, [2], spd)
expand("mixture", "MixtureSameFamily-Normal", {"mixLogits": t([0.1, -0.4, 1.0]), "loc": t([-1.0, 0.0, 2.0]), "scale": t([0.5, 1.0, 0.8])},
       [2], t([0.4, -1.0]))
expand("transformed", "Transformed-NormalExpAffine", {"loc": t([0.0, 0.5]), "scale": t([0.4, 1.0]), "aLoc": t(1.0), "aScale": t(2.0)},
       [3, 2], t([2.5, 4.0]))
expand("independent", "Independent-Normal", {"loc": t([0.0, 1.0, -1.0]), "scale": t([1.0, 0.5, 2.0])}, [2], t([0.2, 1.1, -0.5]))

kls = []


def kl(label, pname, pp, qname, qp):
    a, b = leafs(pp), leafs(qp)
    r = D.kl_divergence(build(pname, a), build(qname, b))
    g = grads_of(r.sum() if r.requires_grad else None, {**{"p." + k: v for k, v in a.items()}, **{"q." + k: v for k, v in b.items()}})
    kls.append({"label": label, "p": {"name": pname, "params": {k: data(v) for k, v in pp.items()}},
                "q": {"name": qname, "params": {k: data(v) for k, v in qp.items()}}, "kl": data(r),
                "pGrads": {k[2:]: v for k, v in g.items() if k.startswith("p.")},
                "qGrads": {k[2:]: v for k, v in g.items() if k.startswith("q.")}})


P = {
    "Normal": {"loc": t([0.3, -1.0]), "scale": t([0.8, 1.5])},
    "Laplace": {"loc": t([0.3, -1.0]), "scale": t([0.8, 1.5])},
    "Gumbel": {"loc": t([0.3, -1.0]), "scale": t([0.8, 1.5])},
    "Uniform": {"low": t([0.2, 0.1]), "high": t([0.7, 0.95])},
    "Exponential": {"rate": t([0.7, 2.0])},
    "Gamma": {"concentration": t([0.8, 3.0]), "rate": t([1.5, 0.6])},
    "Beta": {"concentration1": t([0.7, 2.0]), "concentration0": t([1.5, 3.0])},
    "Pareto": {"scale": t([1.0, 1.5]), "alpha": t([2.5, 3.5])},
    "ContinuousBernoulli": {"probs": t([0.3, 0.8])},
    "Bernoulli": {"probs": t([0.3, 0.8])},
    "Poisson": {"rate": t([0.7, 2.0])},
}
Q = dict(P)
Q.update({
    "Uniform": {"low": t([0.0, -1.0]), "high": t([1.5, 0.9])},
    "Pareto": {"scale": t([0.5, 0.1]), "alpha": t([1.5, 0.7])},
    "Binomial": {"totalCount": t([3.0, 5.0]), "probs": t([0.3, 0.6])},
})
pairs = [
    ("Bernoulli", "Poisson"), ("Beta", "ContinuousBernoulli"), ("Beta", "Pareto"), ("Beta", "Exponential"),
    ("Beta", "Gamma"), ("Beta", "Normal"), ("Beta", "Uniform"), ("ContinuousBernoulli", "Pareto"),
    ("ContinuousBernoulli", "Exponential"), ("ContinuousBernoulli", "Normal"), ("ContinuousBernoulli", "Uniform"),
    ("Exponential", "Beta"), ("Exponential", "ContinuousBernoulli"), ("Exponential", "Pareto"), ("Exponential", "Uniform"),
    ("Exponential", "Gamma"), ("Exponential", "Gumbel"), ("Exponential", "Normal"),
    ("Gamma", "Beta"), ("Gamma", "ContinuousBernoulli"), ("Gamma", "Pareto"), ("Gamma", "Uniform"),
    ("Gamma", "Exponential"), ("Gamma", "Gumbel"), ("Gamma", "Normal"),
    ("Gumbel", "Beta"), ("Gumbel", "ContinuousBernoulli"), ("Gumbel", "Exponential"), ("Gumbel", "Gamma"),
    ("Gumbel", "Pareto"), ("Gumbel", "Uniform"), ("Gumbel", "Normal"),
    ("Laplace", "Beta"), ("Laplace", "ContinuousBernoulli"), ("Laplace", "Exponential"), ("Laplace", "Gamma"),
    ("Laplace", "Pareto"), ("Laplace", "Uniform"), ("Laplace", "Normal"),
    ("Normal", "Beta"), ("Normal", "ContinuousBernoulli"), ("Normal", "Exponential"), ("Normal", "Gamma"),
    ("Normal", "Pareto"), ("Normal", "Uniform"), ("Normal", "Gumbel"), ("Normal", "Laplace"),
    ("Pareto", "Beta"), ("Pareto", "ContinuousBernoulli"), ("Pareto", "Uniform"), ("Pareto", "Exponential"),
    ("Pareto", "Gamma"), ("Pareto", "Normal"), ("Poisson", "Bernoulli"), ("Poisson", "Binomial"),
    ("Uniform", "Beta"), ("Uniform", "ContinuousBernoulli"), ("Uniform", "Exponential"), ("Uniform", "Gamma"),
    ("Uniform", "Gumbel"), ("Uniform", "Normal"), ("Uniform", "Pareto"),
]
for pn, qn in pairs:
    kl(f"{pn}-{qn}", pn, P[pn], qn, Q[qn])
# The infinities and NaNs of 1.13 where q's support misses p's, or a moment is infinite.
kl("Uniform-Exponential-outside", "Uniform", {"low": t([-0.5, 0.5]), "high": t([1.0, 2.0])}, "Exponential", {"rate": t([1.0, 2.0])})
kl("Uniform-Normal-wide", "Uniform", {"low": t([-3.0, 0.5]), "high": t([1.0, 20.0])}, "Normal", {"loc": t([1.0, 2.0]), "scale": t([0.5, 3.0])})
kl("Pareto-Normal-heavy", "Pareto", {"scale": t([1.0, 2.0]), "alpha": t([1.5, 4.0])}, "Normal", {"loc": t([0.0, 1.0]), "scale": t([1.0, 2.0])})
kl("Pareto-Exponential-heavy", "Pareto", {"scale": t([1.0, 2.0]), "alpha": t([0.9, 4.0])}, "Exponential", {"rate": t([1.0, 2.0])})
kl("Beta-Uniform-narrow", "Beta", {"concentration1": t([0.7, 2.0]), "concentration0": t([1.5, 3.0])}, "Uniform", {"low": t([0.0, 0.1]), "high": t([1.0, 1.0])})
# The newer families with themselves, and the (low-rank) multivariate normals with each other.
kl("ContinuousBernoulli-ContinuousBernoulli", "ContinuousBernoulli", {"logits": t([0.4, -2.0])}, "ContinuousBernoulli", {"probs": t([0.5, 0.9])})
kl("Binomial-Binomial", "Binomial", {"totalCount": t([5.0, 5.0]), "probs": t([0.3, 0.6])}, "Binomial", {"totalCount": t([5.0, 3.0]), "logits": t([0.1, -0.5])})
kl("OneHotCategorical-OneHotCategorical", "OneHotCategorical", {"probs": t([0.2, 0.3, 0.5])}, "OneHotCategorical", {"logits": t([[0.1, 0.2, -0.5], [1.0, 0.0, 0.0]])})
Wq = t([[0.3], [-0.2], [0.8]])
lr_p = {"loc": t([0.0, 1.0, -1.0]), "covFactor": W, "covDiag": t([0.5, 1.0, 2.0])}
lr_q = {"loc": t([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5]]), "covFactor": Wq, "covDiag": t([1.0, 0.7, 1.5])}
mvn_p = {"loc": t([0.2, 0.0, -0.5]), "covarianceMatrix": cov}
mvn_q = {"loc": t([[1.0, 0.0, 0.0], [0.0, 0.3, 0.0]]), "scaleTril": t([[1.0, 0.0, 0.0], [0.2, 0.9, 0.0], [-0.1, 0.3, 1.4]])}
kl("LowRankMultivariateNormal-LowRankMultivariateNormal", "LowRankMultivariateNormal", lr_p, "LowRankMultivariateNormal", lr_q)
kl("MultivariateNormal-LowRankMultivariateNormal", "MultivariateNormal", mvn_p, "LowRankMultivariateNormal", lr_q)
kl("LowRankMultivariateNormal-MultivariateNormal", "LowRankMultivariateNormal", lr_p, "MultivariateNormal", mvn_q)

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "distributions-families.json")
with open(out, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases, "expand": expands, "kl": kls}, f)
print(out, len(cases), "cases,", len(expands), "expansions,", len(kls), "KL pairs")
