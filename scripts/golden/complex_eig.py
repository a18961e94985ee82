#!/usr/bin/env python3
"""Writes test/golden/torch/complex-eig.json: PyTorch 1.13's complex tensors and torch.linalg.eig.
Complex tensors made from parts (complex, polar) and read back (real, imag, view_as_real, angle,
abs, conj), a gradient through complex arithmetic to the real parts; the eigenvalues of a real
non-symmetric 4x4 matrix (sorted by real then imaginary part, since their order is LAPACK's) and
of a batch, eigvals, and the gradients of two losses that do not depend on the eigenvectors'
phases (|L| summed, |V| summed). Float64, tiny sizes.
Run: /usr/bin/python3 scripts/golden/complex_eig.py"""
import json
import os

import torch

torch.set_num_threads(1)
torch.manual_seed(0)


def flat(t):
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t.resolve_conj())
    return {"shape": list(t.shape), "data": t.reshape(-1).double().tolist()}


def sorted_eigenvalues(L):
    return sorted(zip(L.real.tolist(), L.imag.tolist()))


out = {}
re = torch.tensor([1.0, -2.0, 0.5, 0.0], dtype=torch.float64, requires_grad=True)
im = torch.tensor([3.0, 0.25, -1.5, -2.0], dtype=torch.float64, requires_grad=True)
z = torch.complex(re, im)
w = torch.polar(re.abs() + 0.5, im)
loss = (z * z.conj() + w * z).real.sum() + z.abs().sum() + z.angle().sum()
loss.backward()
out["parts"] = {
    "re": re.tolist(), "im": im.tolist(), "z": flat(z), "polar": flat(w), "real": flat(z.real),
    "imag": flat(z.imag), "angle": flat(z.angle()), "abs": flat(z.abs()), "conj": flat(z.conj()),
    "product": flat(z * w), "loss": loss.item(), "re_grad": re.grad.tolist(), "im_grad": im.grad.tolist(),
}

A = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
L, V = torch.linalg.eig(A)
(L.abs().sum() + V.abs().sum()).backward()
batch = torch.randn(2, 3, 3, dtype=torch.float64)
Lb = torch.linalg.eigvals(batch)
out["eig"] = {
    "A": A.tolist(), "eigenvalues": sorted_eigenvalues(L), "A_grad": A.grad.tolist(),
    "batch": batch.tolist(), "batch_eigenvalues": [sorted_eigenvalues(l) for l in Lb],
    "rotation": sorted_eigenvalues(torch.linalg.eigvals(torch.tensor([[0.0, 1.0], [-1.0, 0.0]]))),
}

path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "complex-eig.json")
with open(path, "w") as fh:
    json.dump(out, fh, indent=1)
    fh.write("\n")
print("wrote", os.path.normpath(path))
