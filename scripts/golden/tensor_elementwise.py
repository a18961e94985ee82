#!/usr/bin/env python3
"""Writes test/golden/torch/tensor_elementwise.json: PyTorch 1.13's elementwise math, tests,
logical and bitwise functions (torch.tan, torch.erfinv, torch.fmod, torch.div with rounding_mode,
torch.frexp, torch.nan_to_num, torch.isposinf, torch.bitwise_left_shift...) on float64 inputs at
ordinary points and at the edges (signed zeros, NaN, the infinities, the ends of a domain), and on
int64 and bool inputs for the integer and logical ones. The inputs are written out with their
dtypes; each case names a function of them whose outputs are listed with their dtypes. For the
differentiable cases, the gradients with respect to the float inputs of sum_k (out_k * w_k).sum()
over the float outputs, w_k = sin(1 + arange(numel)) in out_k's shape.
Run: /usr/bin/python3 scripts/golden/tensor_elementwise.py"""

import torch
from tensor_cases import data, run, write

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
nan, inf = float("nan"), float("inf")


T = torch.tensor
inputs = {
    # the edges: signed zeros, the ends of the domains, NaN and the infinities
    "x": T([-2.5, -1.0, -0.5, -0.0, 0.0, 0.3, 0.5, 1.0, 2.5, 7.0, nan, inf, -inf]),
    "xe": T([2.0, -2.0, 0.0, 3.0, -0.0, -1.5, nan, 0.0, inf, -inf, 1.0, 2.0, inf]),
    # ordinary points: mixed signs, inside (-1, 1), positive, probabilities
    "w": T([-2.3, -0.7, 0.4, 1.1, 2.6]),
    "y": T([1.5, -0.6, 2.0, -3.2, 0.9]),
    "u": T([-0.9, -0.4, 0.1, 0.35, 0.8]),
    "v": T([0.2, 0.7, 1.5, 3.0, 9.0]),
    "p": T([0.05, 0.3, 0.5, 0.8, 0.97]),
    "i": T([-7, -3, 0, 4, 9, 12]),
    "j": T([3, -2, 5, 6, -4, 8]),
    "k": T([0, 1, 2, 3, 1, 2]),
    "e": T([0, 1, -2, 3, 5]),
    "b1": T([1, 1, 0, 0]),
    "b2": T([1, 0, 1, 0]),
}

# The functions of one tensor, and the input whose points are ordinary for each (for gradients).
UNARY = {
    "tan": "w", "asin": "u", "acos": "u", "atan": "w", "sinh": "w", "cosh": "w", "asinh": "w",
    "acosh": None, "atanh": "u", "exp2": "w", "expm1": "w", "log2": "v", "log10": "v", "erf": "w",
    "erfc": "w", "erfinv": "u", "lgamma": "v", "digamma": "v", "sinc": "w", "ceil": "w",
    "trunc": "w", "fix": "w", "frac": "w", "sgn": "w", "positive": "w", "deg2rad": "w",
    "rad2deg": "w", "logit": "p", "nan_to_num": "w",
}
TESTS = ["isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal", "signbit", "logical_not"]
# The functions of two tensors, each with its ordinary operands (gradients) and its edge operands.
BINARY = {
    "fmod": ("w", "y"), "remainder": ("w", "y"), "true_divide": ("w", "y"), "xlogy": ("w", "v"),
    "float_power": ("v", "y"), "copysign": ("w", "y"), "logaddexp": ("w", "y"),
    "logaddexp2": ("w", "y"), "fmax": ("w", "y"), "fmin": ("w", "y"), "clamp_min": ("w", "y"),
    "clamp_max": ("w", "y"),
}
NOT_DIFFERENTIABLE = {"floor_divide": ("w", "y"), "nextafter": ("w", "y"), "heaviside": ("w", "y")}

cases = {}
for name, arg in UNARY.items():
    f = getattr(torch, name)
    cases[f"{name}.edges"] = (lambda i, f=f: [f(i["x"])], False)
    if arg is not None:
        cases[name] = (lambda i, f=f, arg=arg: [f(i[arg])], True)
cases["acosh"] = (lambda i: [torch.acosh(i["v"] + 1)], True)
cases["logit.eps"] = (lambda i: [torch.logit(i["p"], 0.1), torch.logit(i["x"], 0.25)], True)
cases["nan_to_num.values"] = (lambda i: [torch.nan_to_num(i["x"], 1.5, 100.0, -100.0)], False)
cases["nan_to_num.posinf"] = (lambda i: [torch.nan_to_num(i["x"], posinf=9.0)], False)
for name in TESTS:
    f = getattr(torch, name)
    cases[name] = (lambda i, f=f: [f(i["x"]), f(i["i"])], False)
for table, differentiable in ((BINARY, True), (NOT_DIFFERENTIABLE, False)):
    for name, (a, b) in table.items():
        f = getattr(torch, name)
        cases[name] = (lambda i, f=f, a=a, b=b: [f(i[a], i[b])], differentiable)
        cases[f"{name}.edges"] = (lambda i, f=f: [f(i["x"], i["xe"])], False)
cases["div.trunc"] = (lambda i: [torch.div(i["w"], i["y"], rounding_mode="trunc")], True)
cases["div.floor"] = (lambda i: [torch.div(i["w"], i["y"], rounding_mode="floor")], True)
cases["div.modes.edges"] = (
    lambda i: [torch.div(i["x"], i["xe"], rounding_mode=m) for m in (None, "trunc", "floor")],
    False,
)
cases["frexp"] = (lambda i: list(torch.frexp(i["x"])) + list(torch.frexp(i["w"])), False)
cases["ldexp"] = (lambda i: [torch.ldexp(i["w"], i["e"]), torch.ldexp(i["x"], i["xe"])], True)
# A number as the second argument (and as the first, where PyTorch takes one).
cases["scalar.second"] = (
    lambda i: [
        torch.fmod(i["w"], 1.5),
        torch.remainder(i["w"], -1.5),
        torch.xlogy(i["w"], 3.0),
        torch.float_power(i["v"], 2.5),
        torch.copysign(i["w"], -1.0),
        torch.div(i["w"], 0.7, rounding_mode="floor"),
        torch.true_divide(i["w"], 4),
        torch.clamp_min(i["w"], 0.3),
        torch.clamp_max(i["w"], 0.5),
    ],
    True,
)
cases["scalar.first"] = (
    lambda i: [torch.xlogy(2.0, i["v"]), torch.float_power(2.0, i["y"])],
    True,
)
# PyTorch has no derivative of remainder with respect to its divisor.
cases["remainder.scalar.first"] = (lambda i: [torch.remainder(3.0, i["y"])], False)
cases["floor_divide.scalar"] = (lambda i: [torch.floor_divide(i["w"], 0.8)], False)
def with_float32_default(fn):
    """Integer true division and copysign give the default dtype: tailor's is float32, as PyTorch's own default."""
    torch.set_default_dtype(torch.float32)
    try:
        return fn()
    finally:
        torch.set_default_dtype(torch.float64)


# Integer inputs: exact int64 results (or float64 where PyTorch promotes).
cases["int.arithmetic"] = (
    lambda i: [
        torch.fmod(i["i"], i["j"]),
        torch.remainder(i["i"], i["j"]),
        torch.floor_divide(i["i"], i["j"]),
        torch.div(i["i"], i["j"], rounding_mode="trunc"),
        torch.div(i["i"], i["j"], rounding_mode="floor"),
        *with_float32_default(lambda: [torch.div(i["i"], i["j"]), torch.true_divide(i["i"], 4)]),
        torch.fmod(i["i"], 3),
        torch.remainder(i["i"], -4),
        torch.float_power(i["i"], 2),
        torch.gcd(i["i"], i["j"]),
        torch.lcm(i["i"], i["j"]),
        torch.sgn(i["i"]),
        torch.clamp_min(i["i"], 0),
        *with_float32_default(lambda: [torch.copysign(i["i"], i["j"])]),
    ],
    False,
)
cases["int.bitwise"] = (
    lambda i: [
        torch.bitwise_and(i["i"], i["j"]),
        torch.bitwise_or(i["i"], i["j"]),
        torch.bitwise_xor(i["i"], i["j"]),
        torch.bitwise_not(i["i"]),
        torch.bitwise_left_shift(i["i"], i["k"]),
        torch.bitwise_right_shift(i["i"], i["k"]),
        torch.bitwise_and(i["i"], 12),
        torch.bitwise_or(i["i"], 5),
        torch.bitwise_xor(i["i"], -1),
        torch.bitwise_left_shift(i["i"], 2),
        torch.bitwise_right_shift(i["i"], 1),
    ],
    False,
)
cases["logical"] = (
    lambda i: [
        torch.logical_and(i["b1"].bool(), i["b2"].bool()),
        torch.logical_or(i["b1"].bool(), i["b2"].bool()),
        torch.logical_xor(i["b1"].bool(), i["b2"].bool()),
        torch.logical_and(i["x"], i["xe"]),
        torch.logical_or(i["i"], i["j"] - 3),
        torch.logical_xor(i["x"], i["xe"]),
        torch.bitwise_and(i["b1"].bool(), i["b2"].bool()),
        torch.bitwise_not(i["b1"].bool()),
    ],
    False,
)


write("tensor_elementwise.json", {"inputs": {k: data(v) for k, v in inputs.items()}, "cases": run(cases, inputs)})
