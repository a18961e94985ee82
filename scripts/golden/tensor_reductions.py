#!/usr/bin/env python3
"""Writes test/golden/torch/tensor_reductions.json: PyTorch 1.13's everyday reductions (torch.prod,
amin, aminmax, any, count_nonzero, isclose, logdet, cov, corrcoef, trapezoid, histogram), shape
functions (movedim, unflatten, the stacks and splits by axis, atleast_nd, diagflat, block_diag,
take, put, index_put, isin, msort), distances (cdist, pdist, cosine_similarity,
pairwise_distance) on float64 and int64 inputs, and the random fills and *_like draws after
torch.manual_seed. The inputs are written out with their dtypes; each case names a function of
them whose outputs are listed with their dtypes. For the differentiable cases, the gradients with
respect to the float inputs of sum_k (out_k * w_k).sum() over the float outputs, w_k =
sin(1 + arange(numel)) in out_k's shape.
Run: /usr/bin/python3 scripts/golden/tensor_reductions.py"""

import torch
from tensor_cases import data, run, write

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
torch.manual_seed(0)


L = torch.tensor  # int64 for integer lists
A0 = torch.randn(3, 3)
inputs = {
    "x": torch.randn(6),
    "y": torch.randn(6),
    "M": torch.randn(3, 4),
    "M2": torch.randn(3, 4),
    "T": torch.randn(2, 3, 4),
    "S": A0 @ A0.T + torch.eye(3),
    "Sb": torch.randn(2, 2, 2) + 2 * torch.eye(2),
    "A": torch.randn(4, 3),
    "A2": torch.randn(4, 3),
    "B": torch.randn(5, 3),
    "xs": torch.tensor([0.0, 0.5, 1.5, 3.0]),
    "aw": torch.rand(4) + 0.1,
    "W": torch.rand(3, 4),
    "edges": torch.tensor([-2.0, -0.5, 0.0, 0.5, 2.0]),
    "near": torch.tensor([1.0, 2.0, float("nan"), float("inf"), 1.0, -3.0]),
    "near2": torch.tensor([1.000001, 2.1, float("nan"), float("inf"), 1.0001, -3.2]),
    "src": torch.randn(4),
    "v": torch.randn(3),
    "im": L([[4, 0, 4, 1], [2, -2, 9, 0], [1, 3, 0, 5]]),
    "i": L([3, 1, 3, 0, 2, 5]),
    "test": L([1, 5, 7]),
    "fw": L([1, 2, 1, 3]),
    "mask": L([[1, 0, 0, 1], [0, 0, 1, 0], [1, 1, 1, 1]]),
    "idx": L([[0, 5], [11, 5]]),
    "rows": L([0, 2, 2]),
    "cols": L([1, 3, 3]),
}

b = lambda i: i["mask"].bool()  # noqa: E731 (the mask is stored as int64)
cases = {
    "prod": (lambda i: [torch.prod(i["M"]), torch.prod(i["M"], 1), torch.prod(i["M"], 0, keepdim=True)], True),
    "prod.int": (lambda i: [torch.prod(i["im"]), torch.prod(i["im"], 1), torch.prod(i["im"], 1, dtype=torch.float64)], False),
    "argmin": (lambda i: [torch.argmin(i["M"]), torch.argmin(i["M"], 1), torch.argmin(i["im"], 0, keepdim=True)], False),
    "amin": (lambda i: [torch.amin(i["M"]), torch.amin(i["T"], [0, 2]), torch.amin(i["M"], 1, keepdim=True)], True),
    "aminmax": (lambda i: list(torch.aminmax(i["M"])) + list(torch.aminmax(i["im"], dim=1, keepdim=True)), False),
    "anyAll": (lambda i: [torch.any(b(i)), torch.any(b(i), 1), torch.all(b(i)), torch.all(b(i), 1, keepdim=True), torch.all(i["im"], 0)], False),
    "countNonzero": (lambda i: [torch.count_nonzero(i["im"]), torch.count_nonzero(i["im"], 1), torch.count_nonzero(i["T"] > 0, [0, 2])], False),
    "isclose": (
        lambda i: [
            torch.isclose(i["near"], i["near2"]),
            torch.isclose(i["near"], i["near2"], equal_nan=True),
            torch.isclose(i["near"], i["near2"], 0.1, 0.0),
        ],
        False,
    ),
    "logdet": (lambda i: [torch.logdet(i["S"]), torch.logdet(i["Sb"])], True),
    "cov": (
        lambda i: [torch.cov(i["M"]), torch.cov(i["M"], correction=0), torch.cov(i["M"], fweights=i["fw"], aweights=i["aw"]), torch.cov(i["x"])],
        True,
    ),
    "corrcoef": (lambda i: [torch.corrcoef(i["M"])], True),
    "trapezoid": (lambda i: [torch.trapezoid(i["M"]), torch.trapezoid(i["M"], dx=0.5, dim=0), torch.trapezoid(i["M"], i["xs"])], True),
    "cumulativeTrapezoid": (
        lambda i: [torch.cumulative_trapezoid(i["M"]), torch.cumulative_trapezoid(i["M"], dx=0.5, dim=0), torch.cumulative_trapezoid(i["M"], i["xs"])],
        True,
    ),
    "histogram": (
        lambda i: list(torch.histogram(i["x"], 4))
        + list(torch.histogram(i["M"], 3, range=(-1.0, 1.0), weight=i["W"], density=True))
        + list(torch.histogram(i["x"], i["edges"])),
        False,
    ),
    "cdist": (
        lambda i: [
            torch.cdist(i["A"], i["B"]),
            torch.cdist(i["A"], i["B"], p=1),
            torch.cdist(i["A"], i["B"], compute_mode="use_mm_for_euclid_dist"),
            torch.cdist(i["A"], i["B"], p=float("inf")),
        ],
        True,
    ),
    "pdist": (lambda i: [torch.pdist(i["A"]), torch.pdist(i["A"], 1)], True),
    "distances": (lambda i: [torch.cosine_similarity(i["M"], i["M2"]), torch.pairwise_distance(i["A"], i["A2"])], True),
    "movedim": (lambda i: [torch.movedim(i["T"], 0, -1), torch.movedim(i["T"], [0, 1], [2, 0]), torch.moveaxis(i["T"], 1, 0)], True),
    "swapaxes": (lambda i: [torch.swapaxes(i["T"], 0, 2), torch.swapdims(i["T"], 1, 2)], True),
    "unflatten": (lambda i: [torch.unflatten(i["T"], 2, (2, 2)), torch.unflatten(i["M"], 1, (-1, 2)), torch.flatten(i["T"], 1)], True),
    "ravel": (lambda i: [torch.ravel(i["T"].transpose(0, 2))], True),
    "stacks": (
        lambda i: [
            torch.vstack([i["M"], i["M2"]]),
            torch.vstack([i["x"], i["y"]]),
            torch.hstack([i["M"], i["M2"]]),
            torch.hstack([i["x"], i["y"]]),
            torch.dstack([i["M"], i["M2"]]),
            torch.column_stack([i["x"], i["y"]]),
            torch.row_stack([i["x"], i["y"]]),
        ],
        True,
    ),
    "stacks.int": (lambda i: [torch.vstack([i["im"], i["im"]]), torch.column_stack([i["i"], i["i"]])], False),
    "splits": (
        lambda i: list(torch.vsplit(i["M"], [1]))
        + list(torch.vsplit(i["M"], 3))
        + list(torch.hsplit(i["M"], 2))
        + list(torch.hsplit(i["x"], [2, 3]))
        + list(torch.dsplit(i["T"], 2))
        + list(torch.dsplit(i["T"], [1, 3])),
        True,
    ),
    "atleast": (
        lambda i: [torch.atleast_1d(i["x"][0]), torch.atleast_2d(i["x"]), torch.atleast_3d(i["M"]), torch.atleast_3d(i["x"])],
        True,
    ),
    "flips": (lambda i: [torch.fliplr(i["M"]), torch.flipud(i["M"]), torch.flipud(i["x"])], True),
    "diagflat": (lambda i: [torch.diagflat(i["v"]), torch.diagflat(i["M"][:2, :2], 1), torch.diagflat(i["v"], -2)], True),
    "blockDiag": (lambda i: [torch.block_diag(i["M"], i["v"], i["x"][0], i["S"])], True),
    "take": (lambda i: [torch.take(i["M"], i["idx"]), torch.take(i["im"], i["idx"])], True),
    "put": (lambda i: [torch.put(i["M"], i["idx"], i["src"].reshape(2, 2)), torch.put(i["M"], i["idx"], i["src"].reshape(2, 2), accumulate=True)], True),
    "indexPut": (
        lambda i: [
            torch.index_put(i["M"], (i["rows"], i["cols"]), i["v"]),
            torch.index_put(i["M"], (i["rows"], i["cols"]), i["v"], accumulate=True),
            torch.index_put(i["M"], (i["rows"],), i["M2"][0]),
        ],
        True,
    ),
    "isin": (
        lambda i: [
            torch.isin(i["i"], i["test"]),
            torch.isin(i["i"], i["test"], invert=True),
            torch.isin(i["i"], 3),
            torch.isin(5, i["test"]),
        ],
        False,
    ),
    "msort": (lambda i: [torch.msort(i["M"]), torch.msort(i["im"])], True),
}


# The random fills and draws: label -> (seed, function returning the filled tensor). Each starts
# from torch.manual_seed(seed) on the global generator.
F = lambda *shape: torch.empty(*shape, dtype=torch.float64)  # noqa: E731
random_cases = {
    "uniform_": (1, lambda: F(7).uniform_(-2.0, 3.0)),
    "normal_": (2, lambda: F(2, 3).normal_(1.5, 0.5)),
    "bernoulli_": (3, lambda: F(8).bernoulli_(0.3)),
    "bernoulli_.tensor": (4, lambda: F(5).bernoulli_(torch.tensor([0.0, 0.2, 0.5, 0.9, 1.0]))),
    "exponential_": (5, lambda: F(6).exponential_(2.0)),
    "geometric_": (6, lambda: F(6).geometric_(0.25)),
    "cauchy_": (7, lambda: F(6).cauchy_(1.0, 0.5)),
    "logNormal_": (8, lambda: F(6).log_normal_(0.5, 0.25)),
    "random_": (9, lambda: torch.empty(6, dtype=torch.int64).random_(-5, 5)),
    "random_.to": (10, lambda: torch.empty(6, dtype=torch.int64).random_(100)),
    "random_.float": (11, lambda: F(4).random_(3, 9)),
    "uniform_.float32": (12, lambda: torch.empty(5, dtype=torch.float32).uniform_()),
    "randLike": (13, lambda: torch.rand_like(F(2, 3))),
    "randnLike": (14, lambda: torch.randn_like(F(4))),
    "randintLike": (15, lambda: torch.randint_like(F(5), 10)),
    "randintLike.low": (16, lambda: torch.randint_like(torch.empty(5, dtype=torch.int64), -3, 4)),
}


def run_random(table):
    out = []
    for label, (seed, fn) in table.items():
        torch.manual_seed(seed)
        out.append({"label": label, "seed": seed, "output": data(fn())})
    return out


golden = {"inputs": {k: data(v) for k, v in inputs.items()}, "cases": run(cases, inputs), "random": run_random(random_cases)}
write("tensor_reductions.json", golden)
print(f"{len(golden['random'])} random draws")
