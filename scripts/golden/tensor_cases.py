"""What the tensor-function golden scripts share (tensor_functions.py, tensor_elementwise.py,
tensor_reductions.py): tensors written out with their dtypes (non-finite floats as the strings
NaN, Infinity, -Infinity), a table of cases run on the inputs, and for the differentiable cases the
gradients with respect to the float inputs of sum_k (out_k * w_k).sum() over the float outputs,
w_k = sin(1 + arange(numel)) in out_k's shape. Imported by those scripts (their folder is on
sys.path when they run)."""
import json
import os

import torch


def num(v):
    return v if v == v and abs(v) != float("inf") else str(v).replace("nan", "NaN").replace("inf", "Infinity")


def data(x):
    x = x.detach()
    if x._is_zerotensor():  # the zero gradients of some operators have no storage
        x = torch.zeros(x.shape, dtype=x.dtype)
    return {
        "shape": list(x.shape),
        "dtype": str(x.dtype).replace("torch.", ""),
        "data": [num(v) for v in x.reshape(-1).double().tolist()] if x.is_floating_point() else x.reshape(-1).long().tolist(),
    }


def weights(x):
    return torch.arange(x.numel(), dtype=torch.float64).add(1).sin().reshape(x.shape)


def run(table, inputs):
    """Each case `label: (fn, differentiable)`: fn's outputs on the inputs, and their gradients."""
    out = []
    for label, (fn, differentiable) in table.items():
        leaves = {k: v.clone().requires_grad_(differentiable and v.is_floating_point()) for k, v in inputs.items()}
        outs = fn(leaves)
        case = {"label": label, "outputs": [data(o) for o in outs]}
        if differentiable:
            loss = sum((o * weights(o)).sum() for o in outs if o.is_floating_point())
            used = [k for k, v in leaves.items() if v.requires_grad]
            grads = torch.autograd.grad(loss, [leaves[k] for k in used], allow_unused=True)
            case["grads"] = {k: data(g) for k, g in zip(used, grads) if g is not None}
        out.append(case)
    return out


def write(name, golden):
    """Writes test/golden/torch/NAME with the inputs' and cases' data."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", name)
    with open(path, "w") as f:
        json.dump(golden, f)
    print(f"wrote {path}: {len(golden['cases'])} cases")
