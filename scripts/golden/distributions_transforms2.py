#!/usr/bin/env python3
"""Writes test/golden/torch/distributions-transforms2.json: the transforms CatTransform,
StackTransform, LowerCholeskyTransform, CorrCholeskyTransform and PositiveDefiniteTransform, the
constraints with bounds, Independent, cat, stack and the matrix ones, and biject_to/transform_to of
each, in float64 on fixed inputs.
Transforms: per case y = t(x), t.inv(y) of a fresh copy of y (so no cache), log |det J| where it
exists, the event dims, shapes, domain.check(x) and codomain.check(y), and the gradients of
(y * w).sum() + ladj.sum() with respect to x and of t.inv(y).sum() with respect to y.
Registry: per constraint, the same of biject_to(constraint) or transform_to(constraint), plus the
constraint's own check of y. Checks: constraint.check of values inside and outside.
PyTorch 1.13 has no PositiveDefiniteTransform: PyTorch 2.0's definition is written out below, and
transform_to(positive_definite) is it, as 2.0 registers it.
Run: /usr/bin/python3 scripts/golden/distributions_transforms2.py"""
import json
import os

import torch
import torch.distributions.constraints as C
import torch.distributions.transforms as T
from torch.distributions import biject_to, transform_to

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


class PositiveDefiniteTransform(T.Transform):
    """PyTorch 2.0's torch.distributions.transforms.PositiveDefiniteTransform."""
    domain = C.independent(C.real, 2)
    codomain = C.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        x = T.LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        y = torch.linalg.cholesky(y)
        return T.LowerCholeskyTransform().inv(y)


def make_transform(name):
    """The transform `name` (the test's makeTransform mirrors it)."""
    if name == "Cat-dim1":
        return T.CatTransform([T.ExpTransform(), T.SigmoidTransform(), T.AffineTransform(0.5, -2.0)], dim=1, lengths=[2, 2, 1])
    if name == "Cat-dim0-default-lengths":
        return T.CatTransform([T.ExpTransform(), T.TanhTransform()], dim=0)
    if name == "Cat-event-cat":
        return T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1), T.SigmoidTransform()], dim=0, lengths=[1, 1])
    if name == "Cat-event-sum":
        return T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1), T.IndependentTransform(T.SigmoidTransform(), 1)], dim=-1, lengths=[2, 1])
    if name == "Cat-stickbreaking-rows":
        return T.CatTransform([T.StickBreakingTransform(), T.StickBreakingTransform()], dim=0, lengths=[1, 1])
    if name == "Stack-dim1":
        return T.StackTransform([T.ExpTransform(), T.SigmoidTransform(), T.AffineTransform(1.0, 3.0)], dim=1)
    if name == "Stack-dim-last":
        return T.StackTransform([T.SoftplusTransform(), T.TanhTransform()], dim=-1)
    if name == "LowerCholesky":
        return T.LowerCholeskyTransform()
    if name == "CorrCholesky":
        return T.CorrCholeskyTransform()
    if name == "PositiveDefinite":
        return PositiveDefiniteTransform()
    raise ValueError(name)


def apply_case(out, tr, x, constraint=None):
    """Fills out with what tr does at x (constraint: whose check of y to record too)."""
    xl = x.clone().requires_grad_()
    y = tr(xl)
    out.update({"x": data(x), "y": data(y), "domainEventDim": tr.domain.event_dim,
                "codomainEventDim": tr.codomain.event_dim, "bijective": tr.bijective,
                "forwardShape": list(tr.forward_shape(x.shape)), "inverseShape": list(tr.inverse_shape(y.shape))})
    # A cat of constraints of different event dims fails its own check in PyTorch (torch.cat of
    # checks of different ranks): null there.
    for key, c, v in (("domainCheck", tr.domain, x), ("codomainCheck", tr.codomain, y.detach())):
        try:
            out[key] = data(c.check(v).double())
        except RuntimeError:
            out[key] = None
    if constraint is not None:
        out["constraintCheck"] = data(constraint.check(y.detach()).double())
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
    out["gradX"] = flat(torch.autograd.grad(total, [xl])[0])
    return out


transforms = []


def transform_case(label, name, x):
    transforms.append(apply_case({"label": label, "name": name}, make_transform(name), x))


x23 = t([[0.3, -1.2, 2.0], [0.0, 0.7, -0.4]])
x25 = t([[0.3, -1.2, 2.0, 0.1, -0.6], [0.0, 0.7, -0.4, 1.5, 0.9]])
x33 = t([[[0.3, -1.2, 2.0], [0.5, 0.7, -0.4], [1.1, -0.2, 0.25]],
         [[-0.5, 0.4, 0.1], [0.9, -1.0, 0.3], [0.2, 0.6, -0.7]]])
transform_case("cat-dim1", "Cat-dim1", x25)
transform_case("cat-dim0-default-lengths", "Cat-dim0-default-lengths", x23)
transform_case("cat-event-cat", "Cat-event-cat", x23)
transform_case("cat-event-sum", "Cat-event-sum", x23)
transform_case("cat-stickbreaking-rows", "Cat-stickbreaking-rows", x23)
transform_case("stack-dim1", "Stack-dim1", x23)
transform_case("stack-dim-last", "Stack-dim-last", x23.t().contiguous())
transform_case("lower-cholesky", "LowerCholesky", x33)
transform_case("corr-cholesky-3", "CorrCholesky", x23)
transform_case("corr-cholesky-4", "CorrCholesky", t([0.3, -1.2, 2.0, 0.5, 0.7, -0.4]))
transform_case("positive-definite", "PositiveDefinite", x33)


def make_constraint(label):
    """The constraint of `label` (the test's makeConstraint mirrors it)."""
    return {
        "greater-than": lambda: C.greater_than(2.0),
        "greater-than-eq": lambda: C.greater_than_eq(-1.5),
        "less-than": lambda: C.less_than(0.5),
        "interval": lambda: C.interval(-1.0, 3.0),
        "half-open-unit": lambda: C.half_open_interval(0.0, 1.0),
        "half-open": lambda: C.half_open_interval(0.5, 2.5),
        "unit-interval": lambda: C.unit_interval,
        "positive": lambda: C.positive,
        "interval-tensor": lambda: C.interval(t([0.0, -1.0, 2.0]), t([1.0, 5.0, 2.5])),
        "greater-than-tensor": lambda: C.greater_than(t([[0.5], [-2.0]])),
        "independent-interval": lambda: C.independent(C.interval(-1.0, 3.0), 1),
        "independent-positive-2": lambda: C.independent(C.positive, 2),
        "cat": lambda: C.cat([C.positive, C.interval(0.0, 2.0), C.real], dim=-1, lengths=[1, 1, 1]),
        "stack": lambda: C.stack([C.greater_than(1.0), C.less_than(0.0)], dim=0),
        "simplex": lambda: C.simplex,
        "corr-cholesky": lambda: C.corr_cholesky,
        "lower-cholesky": lambda: C.lower_cholesky,
        "positive-definite": lambda: C.positive_definite,
    }[label]()


registry = []


def registry_case(label, which, x):
    constraint = make_constraint(label)
    if which == "biject":
        tr = biject_to(constraint)
    elif label == "positive-definite":
        tr = PositiveDefiniteTransform()
    else:
        tr = transform_to(constraint)
    out = {"label": label, "which": which}
    if "tensor" not in label and label not in ("cat", "stack"):
        out["constraintName"] = repr(constraint)
    registry.append(apply_case(out, tr, x, constraint))


for label in ("greater-than", "greater-than-eq", "less-than", "interval", "half-open-unit", "half-open",
              "unit-interval", "positive", "interval-tensor", "greater-than-tensor", "independent-interval",
              "independent-positive-2", "simplex"):
    registry_case(label, "biject", x23)
    registry_case(label, "transform", x23)
registry_case("cat", "biject", x23)
registry_case("cat", "transform", x23)
registry_case("stack", "biject", x23)
registry_case("stack", "transform", x23)
registry_case("corr-cholesky", "biject", x23)
registry_case("corr-cholesky", "transform", x23)
registry_case("lower-cholesky", "transform", x33)
registry_case("positive-definite", "transform", x33)

checks = []


def check_case(label, value):
    checks.append({"label": label, "value": data(value), "result": data(make_constraint(label).check(value).double())})


v23 = t([[2.0, -1.5, 0.5], [3.0, 2.5, -1.0]])
for label in ("greater-than", "greater-than-eq", "less-than", "interval", "half-open", "interval-tensor",
              "greater-than-tensor", "independent-interval", "independent-positive-2", "cat", "stack"):
    check_case(label, v23)
check_case("half-open-unit", t([0.0, 0.5, 1.0, -0.1]))
check_case("lower-cholesky", t([[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.1], [0.5, 2.0]], [[-1.0, 0.0], [0.5, 2.0]]]))
check_case("corr-cholesky", t([[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.7]]]))
check_case("positive-definite", t([[[2.0, 0.5], [0.5, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]))

# validate_args=False: the formulas at parameters and values outside the constraints (no error).
import torch.distributions as D  # noqa: E402

validate = []


def unvalidated(label, d, value, cdf=False):
    out = {"label": label, "value": data(value), "logProb": data(d.log_prob(value))}
    if cdf:
        out["cdf"] = data(d.cdf(value))
    validate.append(out)


unvalidated("exponential", D.Exponential(t(2.0), validate_args=False), t([-1.0, 0.5]), cdf=True)
unvalidated("exponential-expanded", D.Exponential(t(2.0), validate_args=False).expand([2, 2]), t(-1.0))
unvalidated("normal-negative-scale", D.Normal(t(0.0), t(-1.0), validate_args=False), t([0.5]))
unvalidated("uniform", D.Uniform(t(0.0), t(1.0), validate_args=False), t([2.0, 0.5]))
unvalidated("poisson", D.Poisson(t(2.0), validate_args=False), t([1.5, -1.0]))
unvalidated("lognormal", D.LogNormal(t(0.0), t(1.0), validate_args=False), t([-1.0, 2.0]))
unvalidated("halfnormal", D.HalfNormal(t(1.0), validate_args=False), t([-1.0, 2.0]))
unvalidated("gamma-negative", D.Gamma(t(-1.0), t(1.0), validate_args=False), t([1.0]))
unvalidated("beta", D.Beta(t(2.0), t(3.0), validate_args=False), t([1.5, 0.5]))

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "distributions-transforms2.json")
with open(out, "w") as f:
    json.dump({"transforms": transforms, "registry": registry, "checks": checks, "validate": validate}, f)
print("wrote", out)
