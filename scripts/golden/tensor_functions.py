#!/usr/bin/env python3
"""Writes test/golden/torch/tensor_functions.json: PyTorch 1.13's everyday tensor functions
(torch.unique, torch.sort, torch.scatter_reduce, torch.kron, torch.tensor_split...) on float64 and
int64 inputs. The inputs are written out with their dtypes; each case names a function of them
whose outputs are listed with their dtypes. For the differentiable cases, the gradients with
respect to the float inputs of sum_k (out_k * w_k).sum() over the float outputs, w_k =
sin(1 + arange(numel)) in out_k's shape.
Run: /usr/bin/python3 scripts/golden/tensor_functions.py"""
import warnings

import torch
from tensor_cases import data, run, write

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
# torch.cross without dim warns that the default will change; the default is what is tested.
warnings.filterwarnings("ignore")


L = torch.tensor  # int64 for integer lists
inputs = {
    "x": torch.randn(6),
    "y": torch.randn(6),
    "w": torch.rand(6),
    "M": torch.randn(3, 4),
    "M2": torch.randn(3, 4),
    "K": torch.randn(2, 4),
    "P": torch.randn(3, 2),
    "Q": torch.randn(3, 1),
    "T": torch.randn(2, 3, 4),
    "N": torch.randn(4, 5),
    "R": torch.randn(3, 2, 5),
    "p": torch.randn(3),
    "q": torch.randn(4),
    "a3": torch.randn(2, 3),
    "b3": torch.randn(2, 3),
    "lo": torch.randn(4) * 0.5 - 0.5,
    "hi": torch.randn(4) * 0.5 + 0.5,
    "seq": torch.tensor([1.0, 2.0, 2.0, 4.0, 7.0]),
    "vals": torch.tensor([[0.5, 2.0, 4.0], [7.5, -1.0, 2.0]]),
    "dup": torch.tensor([3.0, 1.0, 3.0, 3.0, 2.0, 1.0, 1.0]),
    "nan": torch.tensor([[1.0, float("nan"), 3.0], [float("nan"), float("nan"), 6.0]]),
    "i": L([3, 1, 3, 3, 2, 1, 1, 5]),
    "iu": L([5, -2, 9, 0, 3, 7]),
    "im": L([[4, 1, 4], [2, 2, 9]]),
    "rows": L([[1, 2], [3, 4], [1, 2], [0, 5]]),
    "sorted": L([1, 3, 5, 7]),
    "I34": torch.randint(-1, 2, (3, 4)),
    "I24": torch.randint(-5, 6, (2, 4)),
    "I32": torch.randint(-5, 6, (3, 2)),
    "idx": L([[0, 1, 2, 0], [2, 0, 1, 1]]),
    "idxDup": L([[0, 0, 2, 1], [0, 1, 2, 1]]),
    "idxT": L([[0, 3], [1, 1], [2, 0]]),
    "counts": L([2, 0, 3]),
    "mask": L([[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]]),
}

# label -> (function of the inputs returning a list of tensors, differentiable?)
b = lambda i: i["mask"].bool()  # noqa: E731 (the mask is stored as int64)
cases = {
    "unique": (lambda i: [torch.unique(i["dup"])], False),
    "unique.int.inverse.counts": (lambda i: list(torch.unique(i["i"], return_inverse=True, return_counts=True)), False),
    "unique.dim.counts": (lambda i: list(torch.unique(i["rows"], dim=0, return_counts=True)), False),
    "uniqueConsecutive": (lambda i: [torch.unique_consecutive(i["seq"])], False),
    "uniqueConsecutive.int": (
        lambda i: list(torch.unique_consecutive(i["i"], return_inverse=True, return_counts=True)),
        False,
    ),
    "searchsorted": (lambda i: [torch.searchsorted(i["seq"], i["vals"])], False),
    "searchsorted.right": (lambda i: [torch.searchsorted(i["seq"], i["vals"], side="right")], False),
    "searchsorted.sorter": (lambda i: [torch.searchsorted(i["x"], i["y"], sorter=torch.argsort(i["x"]))], False),
    "searchsorted.int.scalar": (lambda i: [torch.searchsorted(i["sorted"], i["iu"]), torch.searchsorted(i["seq"], 2.0, right=True)], False),
    "bucketize": (lambda i: [torch.bucketize(i["vals"], i["seq"]), torch.bucketize(i["vals"], i["seq"], right=True)], False),
    "bucketize.int": (lambda i: [torch.bucketize(i["iu"], i["sorted"], out_int32=True)], False),
    "sort": (lambda i: list(torch.sort(i["M"], dim=1)), True),
    "sort.stable.descending": (lambda i: list(torch.sort(i["dup"], stable=True, dim=0, descending=True)), True),
    "sort.int": (lambda i: list(torch.sort(i["i"], stable=True)), False),
    "argsort": (lambda i: [torch.argsort(i["M"], dim=0, descending=True)], False),
    "argsort.int.stable": (lambda i: [torch.argsort(i["i"], stable=True)], False),
    "topk": (lambda i: list(torch.topk(i["M"], 2, dim=1)), True),
    "topk.smallest": (lambda i: list(torch.topk(i["x"], 3, largest=False)), True),
    "topk.int": (lambda i: list(torch.topk(i["iu"], 2)), False),
    "kthvalue": (lambda i: list(torch.kthvalue(i["M"], 2, dim=1, keepdim=True)), True),
    "kthvalue.int": (lambda i: list(torch.kthvalue(i["iu"], 3)), False),
    "median": (lambda i: [torch.median(i["x"])], True),
    "median.dim": (lambda i: list(torch.median(i["M"], 1)), True),
    "median.int": (lambda i: [torch.median(i["iu"])], False),
    "nanmedian": (lambda i: [torch.nanmedian(i["nan"])] + list(torch.nanmedian(i["nan"], 1)), False),
    "mode": (lambda i: list(torch.mode(i["dup"])), True),
    "mode.int": (lambda i: list(torch.mode(i["im"], 1)), False),
    "quantile": (lambda i: [torch.quantile(i["x"], 0.3)], True),
    "quantile.tensor.dim": (lambda i: [torch.quantile(i["M"], torch.tensor([0.25, 0.5, 0.9]), dim=1, keepdim=True)], True),
    "quantile.interpolations": (
        lambda i: [torch.quantile(i["M"], 0.4, dim=0, interpolation=m) for m in ["lower", "higher", "midpoint", "nearest"]],
        True,
    ),
    "histc": (lambda i: [torch.histc(i["x"], bins=5), torch.histc(i["M"], 4, min=-1, max=1)], False),
    "bincount": (lambda i: [torch.bincount(i["i"]), torch.bincount(i["i"], minlength=8)], False),
    "bincount.weights": (lambda i: [torch.bincount(i["i"][:6], weights=i["x"])], False),
    "cumsum": (lambda i: [torch.cumsum(i["M"], 1)], True),
    "cumsum.int": (lambda i: [torch.cumsum(i["i"], 0), torch.cumsum(i["i"], 0, dtype=torch.float64)], False),
    "cumprod": (lambda i: [torch.cumprod(i["M"], 0)], True),
    "cumprod.int": (lambda i: [torch.cumprod(i["iu"], 0)], False),
    "cummax": (lambda i: list(torch.cummax(i["M"], 1)), True),
    "cummin": (lambda i: list(torch.cummin(i["x"], 0)), True),
    "cummax.int": (lambda i: list(torch.cummax(i["i"], 0)) + list(torch.cummin(i["iu"], 0)), False),
    "logcumsumexp": (lambda i: [torch.logcumsumexp(i["M"], 0)], True),
    "nanmean": (lambda i: [torch.nanmean(i["nan"]), torch.nanmean(i["nan"], 1, keepdim=True)], True),
    "nansum": (lambda i: [torch.nansum(i["nan"]), torch.nansum(i["nan"], 0)], True),
    "nansum.int": (lambda i: [torch.nansum(i["im"], 1)], False),
    "stdMean": (lambda i: list(torch.std_mean(i["M"], 1)) + list(torch.std_mean(i["M"], None, correction=0)), True),
    "varMean": (lambda i: list(torch.var_mean(i["T"], [0, 2], unbiased=False, keepdim=True)), True),
    "gather": (lambda i: [torch.gather(i["M"], 0, i["idx"])], True),
    "gather.int": (lambda i: [torch.gather(i["im"], 1, i["idx"][:, :2])], False),
    "scatter": (lambda i: [torch.scatter(i["M"], 0, i["idx"], i["K"]), torch.scatter(i["M"], 1, i["idx"], 2.5)], True),
    "scatterAdd": (lambda i: [torch.scatter_add(i["M"], 0, i["idxDup"], i["K"])], True),
    "scatterAdd.int": (lambda i: [torch.scatter_add(i["I34"], 0, i["idxDup"], i["I24"])], False),
    "scatterReduce": (
        lambda i: [torch.scatter_reduce(i["M"], 0, i["idxDup"], i["K"], r) for r in ["sum", "prod", "mean", "amax", "amin"]],
        True,
    ),
    "scatterReduce.excludeSelf": (
        lambda i: [torch.scatter_reduce(i["M"], 0, i["idxDup"], i["K"], r, include_self=False) for r in ["mean", "amax"]],
        True,
    ),
    "scatterReduce.int": (lambda i: [torch.scatter_reduce(i["I34"], 0, i["idxDup"], i["I24"], "amax")], False),
    "indexAdd": (lambda i: [torch.index_add(i["M"], 0, L([2, 0]), i["K"], alpha=2)], True),
    "indexAdd.int": (lambda i: [torch.index_add(i["I34"], 1, L([3, 0]), i["I32"])], False),
    "indexCopy": (lambda i: [torch.index_copy(i["M"], 1, L([3, 0]), i["P"])], True),
    "indexFill": (
        lambda i: [torch.index_fill(i["M"], 1, L([1, 3]), -1.5), torch.index_fill(i["M"], 0, L([2]), torch.tensor(4.0))],
        True,
    ),
    "indexFill.int": (lambda i: [torch.index_fill(i["I34"], 0, L([0]), 7)], False),
    "maskedFill": (lambda i: [torch.masked_fill(i["M"], b(i), 0.5), torch.masked_fill(i["M"], b(i), torch.tensor(-2.0))], True),
    "maskedFill.int": (lambda i: [torch.masked_fill(i["I34"], b(i), -7)], False),
    "maskedSelect": (lambda i: [torch.masked_select(i["M"], b(i)), torch.masked_select(i["I34"], b(i))], True),
    "maskedScatter": (lambda i: [i["M"].masked_scatter(b(i), i["M2"])], True),
    "maskedScatter.int": (lambda i: [i["I34"].masked_scatter(b(i), i["I24"])], False),
    "nonzero": (lambda i: [torch.nonzero(i["I34"])] + list(torch.nonzero(i["I34"], as_tuple=True)), False),
    "takeAlongDim": (lambda i: [torch.take_along_dim(i["M"], i["idxT"], 1), torch.take_along_dim(i["M"], L([0, 5, 11]))], True),
    "takeAlongDim.int": (lambda i: [torch.take_along_dim(i["I34"], i["idxT"], 1)], False),
    "where.scalar": (lambda i: [torch.where(b(i), i["M"], 0.0), torch.where(b(i), 1.5, i["M"])], True),
    "where.int": (lambda i: [torch.where(b(i), 2, -1), torch.where(b(i), i["I34"], 9)], False),
    "clamp.tensors": (lambda i: [torch.clamp(i["M"], min=i["lo"], max=i["hi"]), torch.clamp(i["M"], max=i["hi"])], True),
    "clamp.mixed": (
        lambda i: [torch.clamp(i["M"], min=i["lo"], max=torch.tensor(0.2)), torch.clamp(i["M"], min=torch.tensor(-0.3), max=i["hi"])],
        True,
    ),
    "clamp.int": (lambda i: [torch.clamp(i["im"], 2, 5), torch.clamp(i["im"], min=i["im"][0], max=L(3))], False),
    "lerp": (lambda i: [torch.lerp(i["x"], i["y"], 0.3), torch.lerp(i["x"], i["y"], i["w"])], True),
    "hypot": (lambda i: [torch.hypot(i["M"], i["M2"])], True),
    "atan2": (lambda i: [torch.atan2(i["M"], i["M2"])], True),
    "kron": (lambda i: [torch.kron(i["p"], i["q"]), torch.kron(i["K"], i["P"])], True),
    "kron.int": (lambda i: [torch.kron(i["im"], i["rows"])], False),
    "tensordot": (
        lambda i: [torch.tensordot(i["T"], i["N"], 1), torch.tensordot(i["T"], i["R"], dims=([1, 0], [0, 1]))],
        True,
    ),
    "tensordot.int": (lambda i: [torch.tensordot(i["I34"], i["I34"], dims=2)], False),
    "diff": (lambda i: [torch.diff(i["x"]), torch.diff(i["M"], n=2, dim=1, prepend=i["Q"], append=i["P"])], True),
    "diff.int": (lambda i: [torch.diff(i["i"]), torch.diff(i["im"], dim=0)], False),
    "meshgrid": (lambda i: list(torch.meshgrid(i["p"], i["q"], indexing="ij")) + list(torch.meshgrid(i["p"], i["q"], indexing="xy")), True),
    "meshgrid.int": (lambda i: list(torch.meshgrid(i["sorted"], i["counts"], indexing="xy")), False),
    "cartesianProd": (lambda i: [torch.cartesian_prod(i["p"], i["q"])], True),
    "cartesianProd.int": (lambda i: [torch.cartesian_prod(i["sorted"], i["counts"])], False),
    "combinations": (lambda i: [torch.combinations(i["q"]), torch.combinations(i["p"], r=2, with_replacement=True)], True),
    "combinations.int": (lambda i: [torch.combinations(i["iu"], 3)], False),
    "trilTriuIndices": (lambda i: [torch.tril_indices(4, 5, 1), torch.triu_indices(3, 4, -1)], False),
    "trilTriu": (lambda i: [torch.tril(i["M"], -1), torch.triu(i["T"], 1)], True),
    "trilTriu.int": (lambda i: [torch.tril(i["I34"]), torch.triu(i["I34"], 2)], False),
    "roll": (lambda i: [torch.roll(i["M"], 1), torch.roll(i["M"], (1, -2), (0, 1))], True),
    "roll.int": (lambda i: [torch.roll(i["im"], -1, 1)], False),
    "flip": (lambda i: [torch.flip(i["T"], [0, 2])], True),
    "rot90": (lambda i: [torch.rot90(i["M"]), torch.rot90(i["T"], -1, [1, 2]), torch.rot90(i["M"], 2)], True),
    "rot90.int": (lambda i: [torch.rot90(i["im"], 3)], False),
    "diag": (lambda i: [torch.diag(i["p"], 1), torch.diag(i["M"], -1), torch.diagonal(i["T"], 1, 1, 2), torch.diag_embed(i["M"], 1)], True),
    "diag.int": (lambda i: [torch.diag(i["counts"]), torch.diagonal(i["I34"], -1)], False),
    "trace": (lambda i: [torch.trace(i["M"])], True),
    "trace.int": (lambda i: [torch.trace(i["im"])], False),
    "outer": (lambda i: [torch.outer(i["p"], i["q"])], True),
    "outer.int": (lambda i: [torch.outer(i["counts"], i["sorted"])], False),
    "cross": (lambda i: [torch.cross(i["a3"], i["b3"], dim=1), torch.cross(i["a3"], i["b3"])], True),
    "einsum": (lambda i: [torch.einsum("ij,jk->ik", i["M"], i["N"]), torch.einsum("bij->ji", i["T"])], True),
    "einsum.int": (lambda i: [torch.einsum("i,i->", i["iu"], i["iu"])], False),
    "broadcastTensors": (lambda i: list(torch.broadcast_tensors(i["p"].reshape(3, 1), i["q"])), True),
    "chunkSplit": (
        lambda i: list(torch.chunk(i["x"], 4)) + list(torch.split(i["M"], [1, 3], dim=1)) + list(torch.split(i["x"], 4)),
        True,
    ),
    "tensorSplit": (
        lambda i: list(torch.tensor_split(i["x"], 4))
        + list(torch.tensor_split(i["M"], [1, 3], dim=1))
        + list(torch.tensor_split(i["x"], L([2, 5]))),
        True,
    ),
    "tensorSplit.int": (lambda i: list(torch.tensor_split(i["i"], 3)), False),
    "tile": (lambda i: [torch.tile(i["p"], (2, 2)), torch.tile(i["M"], (2,))], True),
    "tile.int": (lambda i: [torch.tile(i["im"], (1, 2, 1))], False),
    "repeatInterleave": (
        lambda i: [torch.repeat_interleave(i["M"], 2, dim=0), torch.repeat_interleave(i["p"], i["counts"]), torch.repeat_interleave(i["M"], 2)],
        True,
    ),
    "repeatInterleave.int": (lambda i: [torch.repeat_interleave(i["counts"]), torch.repeat_interleave(i["im"], L([1, 3]), dim=0)], False),
}


write("tensor_functions.json", {"inputs": {k: data(v) for k, v in inputs.items()}, "cases": run(cases, inputs)})
