#!/usr/bin/env python3
"""Writes test/golden/torch/linalg_fft.json: torch.linalg, torch.fft and a few other operators of
PyTorch 1.13 in float64. The inputs are written out; each case names a function of them whose
outputs are listed (complex ones as [..., 2] real/imaginary pairs). Where a decomposition is unique
only up to signs (svd, qr, eigh) the outputs are what is unique: the singular values or
eigenvalues, the reconstruction, and absolute values of the factors. For the differentiable cases,
the gradients with respect to the float inputs of sum_k (out_k * w_k).sum(), w_k =
sin(1 + arange(numel)) in out_k's shape (complex outputs through view_as_real).
Run: /usr/bin/python3 scripts/golden/linalg_fft.py"""
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


def real(x):
    return torch.view_as_real(x.resolve_conj()) if x.is_complex() else x


def data(x):
    x = real(x.detach())
    return {"shape": list(x.shape), "data": [num(v) for v in x.reshape(-1).double().tolist()]}


def weights(x):
    return torch.arange(x.numel(), dtype=torch.float64).add(1).sin().reshape(x.shape)


spd_base = torch.randn(3, 3)
inputs = {
    "x": torch.randn(8),
    "x7": torch.randn(7),
    "M": torch.randn(4, 3),
    "A": torch.randn(3, 3) + 3 * torch.eye(3),
    "Ab": torch.randn(2, 3, 3) + 2 * torch.eye(3),
    "B": torch.randn(3, 2),
    "Bt": torch.randn(2, 3),
    "b4": torch.randn(4, 2),
    "Sym": spd_base + spd_base.T,
    "Spd": spd_base @ spd_base.T + 3 * torch.eye(3),
    "a3": torch.randn(2, 3),
    "c3": torch.randn(2, 3),
    "img": torch.randn(4, 6),
    "vol": torch.randn(2, 3, 4),
    "re": torch.randn(5),
    "im": torch.randn(5),
    "reImg": torch.randn(4, 6),
    "imImg": torch.randn(4, 6),
    "seq": torch.tensor([1.0, 2.0, 2.0, 4.0, 7.0]),
    "vals": torch.tensor([[0.5, 2.0, 4.0], [7.5, -1.0, 2.0]]),
    "cat": torch.tensor([3.0, 1.0, 3.0, 3.0, 2.0, 1.0, 1.0]),
    "nan": torch.tensor([[1.0, float("nan"), 3.0], [float("nan"), float("nan"), 6.0]]),
    "K": torch.randn(2, 3),
    "L": torch.randn(3, 2),
    "T": torch.randn(2, 3, 4),
    "U": torch.randn(4, 3, 5),
    "p": torch.tensor([1.0, 2.0]),
    "q": torch.tensor([3.0, 4.0, 5.0]),
}


def svd_parts(A, full):
    U, S, Vh = LA.svd(A, full_matrices=full)
    k = S.shape[-1]
    recon = U[..., :, :k] @ torch.diag_embed(S) @ Vh[..., :k, :]
    return [S, recon, U.abs(), Vh.abs()]


def qr_parts(A, mode):
    Q, R = LA.qr(A, mode=mode)
    if mode == "r":
        return [R.abs(), Q]
    return [Q.abs(), R.abs(), Q @ R]


def eigh_parts(A, uplo):
    w, V = LA.eigh(A, UPLO=uplo)
    return [w, V.abs(), V @ torch.diag_embed(w) @ V.transpose(-2, -1)]


def z(i):
    return torch.complex(i["re"], i["im"])


def zimg(i):
    return torch.complex(i["reImg"], i["imImg"])


# label -> (function of the inputs returning a list of tensors, differentiable?)
inf = math.inf
cases = {
    "vectorNorm": (lambda i: [LA.vector_norm(i["x"])], True),
    "vectorNorm.inf.dim": (lambda i: [LA.vector_norm(i["M"], inf, dim=1)], True),
    "vectorNorm.3.keepdim": (lambda i: [LA.vector_norm(i["M"], 3, dim=[0], keepdim=True)], True),
    "vectorNorm.0": (lambda i: [LA.vector_norm(i["M"], 0)], False),
    "matrixNorm.fro": (lambda i: [LA.matrix_norm(i["Ab"])], True),
    "matrixNorm.nuc": (lambda i: [LA.matrix_norm(i["M"], "nuc")], True),
    "matrixNorm.2": (lambda i: [LA.matrix_norm(i["M"], 2)], True),
    "matrixNorm.-2": (lambda i: [LA.matrix_norm(i["M"], -2)], True),
    "matrixNorm.1": (lambda i: [LA.matrix_norm(i["Ab"], 1)], True),
    "matrixNorm.-inf.dim": (lambda i: [LA.matrix_norm(i["T"], -inf, dim=(0, 2))], True),
    "norm": (lambda i: [LA.norm(i["Ab"])], True),
    "norm.vector.3": (lambda i: [LA.norm(i["x"], 3)], True),
    "norm.matrix.inf": (lambda i: [LA.norm(i["A"], inf)], True),
    "norm.nuc": (lambda i: [LA.norm(i["A"], "nuc")], True),
    "norm.dim": (lambda i: [LA.norm(i["M"], None, dim=1)], True),
    "det": (lambda i: [LA.det(i["Ab"])], True),
    "slogdet": (lambda i: list(LA.slogdet(i["Ab"] - 2 * torch.eye(3))), True),
    "inv": (lambda i: [LA.inv(i["Ab"])], True),
    "solve": (lambda i: [LA.solve(i["A"], i["B"])], True),
    "solve.right": (lambda i: [LA.solve(i["A"], i["Bt"], left=False)], True),
    "solveTriangular": (lambda i: [LA.solve_triangular(i["A"].triu(), i["B"], upper=True)], True),
    "solveTriangular.lower.right.unit": (
        lambda i: [LA.solve_triangular(i["A"].tril(), i["Bt"], upper=False, left=False, unitriangular=True)],
        True,
    ),
    "cholesky": (lambda i: [LA.cholesky(i["Spd"])], True),
    "cholesky.upper": (lambda i: [LA.cholesky(i["Spd"], upper=True)], False),
    "eigh": (lambda i: eigh_parts(i["Sym"], "L"), False),
    "eigh.U": (lambda i: eigh_parts(i["Sym"].triu(), "U"), False),
    "eigvalsh": (lambda i: [LA.eigvalsh(i["Sym"])], True),
    "svd": (lambda i: svd_parts(i["M"], True), False),
    "svd.reduced": (lambda i: svd_parts(i["M"].T, False), False),
    "svdvals": (lambda i: [LA.svdvals(i["M"])], True),
    "qr": (lambda i: qr_parts(i["M"], "reduced"), False),
    "qr.complete": (lambda i: qr_parts(i["M"], "complete"), False),
    "qr.r": (lambda i: qr_parts(i["M"], "r"), False),
    "lstsq": (lambda i: [LA.lstsq(i["M"], i["b4"]).solution], False),
    "pinv": (lambda i: [LA.pinv(i["M"])], True),
    "pinv.hermitian": (lambda i: [LA.pinv(i["Spd"], hermitian=True)], False),
    "matrixExp": (lambda i: [LA.matrix_exp(i["A"] * 0.5)], True),
    "cross": (lambda i: [LA.cross(i["a3"], i["c3"])], True),
    "fft": (lambda i: [torch.fft.fft(i["x"])], True),
    "fft.n.ortho": (lambda i: [torch.fft.fft(i["x7"], n=10, norm="ortho")], True),
    "fft.forward.dim": (lambda i: [torch.fft.fft(i["img"], dim=0, norm="forward")], True),
    "ifft": (lambda i: [torch.fft.ifft(z(i))], False),
    "rfft": (lambda i: [torch.fft.rfft(i["x"])], True),
    "rfft.n.ortho": (lambda i: [torch.fft.rfft(i["x7"], n=6, norm="ortho")], True),
    "irfft": (lambda i: [torch.fft.irfft(z(i))], False),
    "irfft.n": (lambda i: [torch.fft.irfft(z(i), n=9, norm="forward")], False),
    "hfft": (lambda i: [torch.fft.hfft(z(i))], False),
    "hfft.n": (lambda i: [torch.fft.hfft(z(i), n=7, norm="ortho")], False),
    "ihfft": (lambda i: [torch.fft.ihfft(i["x7"])], True),
    "fft2": (lambda i: [torch.fft.fft2(i["img"])], True),
    "ifft2": (lambda i: [torch.fft.ifft2(zimg(i), s=[3, 8])], False),
    "rfft2": (lambda i: [torch.fft.rfft2(i["img"], norm="ortho")], True),
    "irfft2": (lambda i: [torch.fft.irfft2(zimg(i), s=[4, 10])], False),
    "fftn": (lambda i: [torch.fft.fftn(i["vol"])], True),
    "fftn.s.dim": (lambda i: [torch.fft.fftn(i["vol"], s=[4, 4], dim=[0, 2])], True),
    "ifftn": (lambda i: [torch.fft.ifftn(zimg(i))], False),
    "rfftn": (lambda i: [torch.fft.rfftn(i["vol"])], True),
    "irfftn": (lambda i: [torch.fft.irfftn(zimg(i), s=[4, 10], norm="forward")], False),
    "fftfreq": (lambda i: [torch.fft.fftfreq(5, dtype=torch.float64), torch.fft.fftfreq(8, 0.1, dtype=torch.float64)], False),
    "rfftfreq": (lambda i: [torch.fft.rfftfreq(8, 0.25, dtype=torch.float64), torch.fft.rfftfreq(7, dtype=torch.float64)], False),
    "fftshift": (lambda i: [torch.fft.fftshift(i["x7"]), torch.fft.fftshift(i["img"], dim=0), torch.fft.fftshift(i["img"])], False),
    "ifftshift": (lambda i: [torch.fft.ifftshift(i["x7"]), torch.fft.ifftshift(i["img"], dim=[1])], False),
}

# The new operators outside linalg and fft (the test calls them through torch.aten).
ops = {
    "searchsorted": (lambda i: [torch.searchsorted(i["seq"], i["vals"]), torch.searchsorted(i["seq"], i["vals"], right=True)], False),
    "bucketize": (lambda i: [torch.bucketize(i["vals"], i["seq"]), torch.bucketize(i["vals"], i["seq"], right=True)], False),
    "unique": (lambda i: list(torch.unique(i["cat"], sorted=True, return_inverse=True, return_counts=True)), False),
    "uniqueConsecutive": (lambda i: list(torch.unique_consecutive(i["cat"], return_inverse=True, return_counts=True)), False),
    "cummax": (lambda i: list(torch.cummax(i["K"], 1)), True),
    "cummin": (lambda i: list(torch.cummin(i["K"], 0)), True),
    "logcumsumexp": (lambda i: [torch.logcumsumexp(i["K"], 1)], True),
    "nanmean": (lambda i: [torch.nanmean(i["nan"]), torch.nanmean(i["nan"], dim=1)], False),
    "nansum": (lambda i: [torch.nansum(i["nan"]), torch.nansum(i["nan"], dim=0)], False),
    "stdMean": (lambda i: list(torch.std_mean(i["T"], dim=[1], correction=1)), True),
    "varMean": (lambda i: list(torch.var_mean(i["T"], dim=None, correction=0)), True),
    "lerp": (lambda i: [torch.lerp(i["K"], i["L"].T, 0.25), torch.lerp(i["K"], i["L"].T, i["a3"])], True),
    "hypot": (lambda i: [torch.hypot(i["K"], i["a3"])], True),
    "kron": (lambda i: [torch.kron(i["K"], i["L"])], True),
    "tensordot": (lambda i: [torch.tensordot(i["T"], i["U"], dims=([1, 2], [1, 0]))], True),
    "diff": (lambda i: [torch.diff(i["K"]), torch.diff(i["T"], n=2, dim=2, prepend=i["T"][:, :, :1])], True),
    "takeAlongDim": (lambda i: [torch.take_along_dim(i["K"], i["K"].argsort(dim=1), dim=1)], True),
    "indexCopy": (lambda i: [i["L"].index_copy(0, torch.tensor([2, 0]), i["Bt"][:, :2])], True),
    "indexFill": (lambda i: [i["L"].index_fill(0, torch.tensor([1]), -2.5)], True),
    "meshgrid.ij": (lambda i: list(torch.meshgrid(i["p"], i["q"], indexing="ij")), True),
    "meshgrid.xy": (lambda i: list(torch.meshgrid(i["p"], i["q"], indexing="xy")), True),
    "cartesianProd": (lambda i: [torch.cartesian_prod(i["p"], i["q"])], True),
    "combinations": (lambda i: [torch.combinations(i["q"]), torch.combinations(i["q"], r=2, with_replacement=True)], False),
    "trilTriuIndices": (lambda i: [torch.tril_indices(3, 4, 1), torch.triu_indices(4, 3, -1)], False),
}


def run(table):
    out = []
    for label, (fn, differentiable) in table.items():
        leaves = {k: v.clone().requires_grad_(differentiable) for k, v in inputs.items()}
        outs = fn(leaves)
        case = {"label": label, "outputs": [data(o) for o in outs]}
        if differentiable:
            loss = sum((real(o) * weights(real(o))).sum() for o in outs if o.is_floating_point() or o.is_complex())
            used = [k for k, v in leaves.items()]
            grads = torch.autograd.grad(loss, [leaves[k] for k in used], allow_unused=True)
            case["grads"] = {k: data(g) for k, g in zip(used, grads) if g is not None}
        out.append(case)
    return out


golden = {
    "inputs": {k: data(v) for k, v in inputs.items()},
    "cases": run(cases),
    "ops": run(ops),
}
path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "linalg_fft.json")
with open(path, "w") as f:
    json.dump(golden, f)
print(f"wrote {path}: {len(golden['cases'])} cases, {len(golden['ops'])} operator cases")
