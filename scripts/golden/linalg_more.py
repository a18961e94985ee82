#!/usr/bin/env python3
"""Writes test/golden/torch/linalg_more.json: the rest of torch.linalg of PyTorch 1.13 for real
float64 tensors (matrix_power, matrix_rank, multi_dot, tensorinv, tensorsolve, cond, diagonal,
vander, vecdot, lu, lu_factor(_ex), lu_solve, ldl_factor(_ex), ldl_solve, householder_product,
inv_ex, cholesky_ex, solve_ex), in the format of scripts/golden/linalg_fft.py: the inputs, then
each case's outputs and, for the differentiable ones, the gradients with respect to the inputs of
sum_k (out_k * w_k).sum() over the float outputs, w_k = sin(1 + arange(numel)) in out_k's shape.
The LU and LDL factors are unique given LAPACK's pivoting, so they are compared as they are.
PyTorch 1.13's backward of cond fails for 'fro', ±1 and ±inf (an in-place fill of the inverse);
those gradients come from the same steps out of place, whose values equal cond's exactly.
Run: /usr/bin/python3 scripts/golden/linalg_more.py"""
import json
import math
import os

import torch
import torch.linalg as LA

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
torch.manual_seed(0)


def num(v):
    """JSON has no NaN or infinities: they are written as the strings "NaN", "Infinity", "-Infinity"."""
    return v if v == v and abs(v) != float("inf") else str(v).replace("nan", "NaN").replace("inf", "Infinity")


def data(x):
    x = x.detach()
    return {"shape": list(x.shape), "data": [num(v) for v in x.reshape(-1).double().tolist()]}


def weights(x):
    return torch.arange(x.numel(), dtype=torch.float64).add(1).sin().reshape(x.shape)


spd_base = torch.randn(3, 3)
inputs = {
    "A": torch.randn(3, 3) + 3 * torch.eye(3),
    "Ab": torch.randn(2, 3, 3) + 2 * torch.eye(3),
    "M": torch.randn(4, 3),
    "B": torch.randn(3, 2),
    "Bt": torch.randn(2, 3),
    "x4": torch.randn(4),
    "v2": torch.randn(2),
    "Sym": spd_base + spd_base.T,
    "Spd": spd_base @ spd_base.T + 3 * torch.eye(3),
    "T623": torch.randn(6, 2, 3) + 3 * torch.eye(6).reshape(6, 2, 3),
    "b6": torch.randn(6),
    "T": torch.randn(2, 3, 4),
    "Y": torch.randn(2, 3, 4),
    "tau": torch.rand(2) + 0.5,
    "Vb": torch.randn(2, 3),
}

inf = math.inf


def cond_out_of_place(A, p):
    """libtorch 1.13's linalg_cond for p in 'fro', ±1, ±inf, without its in-place fill."""
    inverse, info = LA.inv_ex(A)
    inverse = inverse.masked_fill(info.unsqueeze(-1).unsqueeze(-1) > 0, inf)
    result = LA.matrix_norm(A, p) * LA.matrix_norm(inverse, p)
    result = result.masked_fill(result.isnan(), inf)
    assert torch.equal(result.detach(), LA.cond(A.detach(), p)), p
    return result


# A rank-2 4x4 matrix (two rows repeat combinations of the others) for matrix_rank.
def rank_deficient(i):
    M = i["M"].detach()
    return torch.cat([M[:2], M[:1] + M[1:2], 2 * M[1:2]]) @ M.T


# label -> (function of the inputs returning a list of tensors, differentiable?)
cases = {
    "matrixPower.3": (lambda i: [LA.matrix_power(i["Ab"], 3)], True),
    "matrixPower.0": (lambda i: [LA.matrix_power(i["A"], 0)], False),
    "matrixPower.-2": (lambda i: [LA.matrix_power(i["A"], -2)], True),
    "matrixRank": (lambda i: [LA.matrix_rank(i["M"]), LA.matrix_rank(i["Ab"]), LA.matrix_rank(rank_deficient(i))], False),
    "matrixRank.tol": (
        lambda i: [
            LA.matrix_rank(i["A"], atol=2.5),
            LA.matrix_rank(i["A"], rtol=0.5),
            LA.matrix_rank(i["A"], atol=0.1, rtol=0.6),
            LA.matrix_rank(i["Spd"], hermitian=True, atol=3.5),
        ],
        False,
    ),
    "multiDot": (lambda i: [LA.multi_dot([i["M"], i["B"], i["Bt"]])], True),
    "multiDot.vectors": (lambda i: [LA.multi_dot([i["x4"], i["M"], i["B"], i["v2"]])], True),
    "tensorinv": (lambda i: [LA.tensorinv(i["T623"], ind=1)], True),
    "tensorinv.2": (lambda i: [LA.tensorinv(i["T623"].reshape(2, 3, 6))], True),
    "tensorsolve": (lambda i: [LA.tensorsolve(i["T623"], i["b6"])], True),
    "tensorsolve.dims": (lambda i: [LA.tensorsolve(i["T623"].permute(1, 0, 2), i["b6"], dims=(0,))], True),
    "cond": (lambda i: [LA.cond(i["M"])], True),
    "cond.2": (lambda i: [LA.cond(i["Ab"], 2)], True),
    "cond.-2": (lambda i: [LA.cond(i["M"], -2)], True),
    "cond.fro": (lambda i: [cond_out_of_place(i["Ab"], "fro")], True),
    "cond.nuc": (lambda i: [LA.cond(i["A"], "nuc")], True),
    "cond.1": (lambda i: [cond_out_of_place(i["A"], 1)], True),
    "cond.-1": (lambda i: [cond_out_of_place(i["A"], -1)], True),
    "cond.inf": (lambda i: [cond_out_of_place(i["Ab"], inf)], True),
    "cond.-inf": (lambda i: [cond_out_of_place(i["A"], -inf)], True),
    "cond.singular": (
        lambda i: [LA.cond(torch.tensor([[1.0, 2.0], [2.0, 4.0]]), p) for p in ["fro", 1, inf]]
        + [LA.cond(torch.zeros(2, 0, 0), "fro")],
        False,
    ),
    "diagonal": (lambda i: [LA.diagonal(i["Ab"])], True),
    "diagonal.offset.dims": (lambda i: [LA.diagonal(i["T"], offset=1, dim1=0, dim2=2)], True),
    "diagonal.negative": (lambda i: [LA.diagonal(i["M"], offset=-1)], True),
    "vander": (lambda i: [LA.vander(i["x4"])], True),
    "vander.N": (lambda i: [LA.vander(i["Vb"], N=5)], True),
    "vecdot": (lambda i: [LA.vecdot(i["T"], i["Y"])], True),
    "vecdot.dim": (lambda i: [LA.vecdot(i["T"], i["Y"][0], dim=1)], True),
    "lu": (lambda i: list(LA.lu(i["A"])), True),
    "lu.wide.batch": (lambda i: list(LA.lu(torch.cat([i["Bt"], i["Bt"].flip(0)]).reshape(2, 2, 3))), True),
    "lu.tall": (lambda i: list(LA.lu(i["M"])), True),
    "luFactor": (lambda i: list(LA.lu_factor(i["Ab"])), True),
    "luFactor.tall": (lambda i: list(LA.lu_factor(i["M"])), True),
    "luFactorEx": (lambda i: list(LA.lu_factor_ex(i["A"])), True),
    "luFactorEx.singular": (lambda i: list(LA.lu_factor_ex(torch.tensor([[1.0, 2.0], [2.0, 4.0]]))), False),
    "luSolve": (lambda i: [LA.lu_solve(*LA.lu_factor(i["A"]), i["B"])], True),
    "luSolve.right": (lambda i: [LA.lu_solve(*LA.lu_factor(i["A"]), i["Bt"], left=False)], True),
    "luSolve.adjoint": (lambda i: [LA.lu_solve(*LA.lu_factor(i["Ab"]), i["B"], adjoint=True)], True),
    "ldlFactor": (lambda i: list(LA.ldl_factor(i["Sym"])), False),
    "ldlFactorEx": (lambda i: list(LA.ldl_factor_ex(i["Sym"])), False),
    "ldlSolve": (lambda i: [LA.ldl_solve(*LA.ldl_factor(i["Sym"]), i["B"])], False),
    "householderProduct": (lambda i: [LA.householder_product(i["M"], i["tau"])], True),
    "householderProduct.geqrf": (lambda i: [LA.householder_product(*torch.geqrf(i["M"].detach())).abs()], False),
    "invEx": (lambda i: list(LA.inv_ex(i["Ab"])), True),
    "invEx.singular": (lambda i: [LA.inv_ex(torch.tensor([[1.0, 2.0], [2.0, 4.0]]))[1]], False),
    "choleskyEx": (lambda i: list(LA.cholesky_ex(i["Spd"])), True),
    "choleskyEx.upper": (lambda i: list(LA.cholesky_ex(i["Spd"], upper=True)), True),
    "choleskyEx.indefinite": (lambda i: [LA.cholesky_ex(i["Sym"] - 10 * torch.eye(3))[1]], False),
    "solveEx": (lambda i: list(LA.solve_ex(i["A"], i["B"])), True),
    "solveEx.right": (lambda i: list(LA.solve_ex(i["A"], i["Bt"], left=False)), True),
}


def run(table):
    out = []
    for label, (fn, differentiable) in table.items():
        leaves = {k: v.clone().requires_grad_(differentiable) for k, v in inputs.items()}
        outs = fn(leaves)
        case = {"label": label, "outputs": [data(o) for o in outs]}
        if differentiable:
            loss = sum((o * weights(o)).sum() for o in outs if o.is_floating_point())
            used = list(leaves)
            grads = torch.autograd.grad(loss, [leaves[k] for k in used], allow_unused=True)
            case["grads"] = {k: data(g) for k, g in zip(used, grads) if g is not None}
        out.append(case)
    return out


golden = {"inputs": {k: data(v) for k, v in inputs.items()}, "cases": run(cases)}
path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "linalg_more.json")
with open(path, "w") as f:
    json.dump(golden, f)
print(f"wrote {path}: {len(golden['cases'])} cases")
