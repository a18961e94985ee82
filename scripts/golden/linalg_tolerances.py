#!/usr/bin/env python3
"""Writes test/golden/torch/linalg-tolerances.json: torch.linalg.matrix_rank and pinv of PyTorch
1.13 with tensor tolerances (one per matrix of a batch), float64: a batch of three 4x4 matrices of
known singular values, per-matrix atol and rtol tensors, and the hermitian form.
Run: /usr/bin/python3 scripts/golden/linalg_tolerances.py"""
import json
import os

import torch

torch.set_num_threads(1)
torch.manual_seed(0)
DT = torch.float64
# Matrices with singular values 10, 1, 0.1, 0.01 (rotated), so that each tolerance cuts elsewhere.
Q1, _ = torch.linalg.qr(torch.randn(3, 4, 4, dtype=DT))
Q2, _ = torch.linalg.qr(torch.randn(3, 4, 4, dtype=DT))
S = torch.tensor([10.0, 1.0, 0.1, 0.01], dtype=DT)
A = Q1 @ torch.diag_embed(S.expand(3, 4)) @ Q2.transpose(-1, -2)
H = A @ A.transpose(-1, -2)
atol = torch.tensor([0.5, 0.05, 0.005], dtype=DT)
rtol = torch.tensor([0.5, 0.05, 0.0], dtype=DT)
out = {
    "A": A.tolist(),
    "atol": atol.tolist(),
    "rtol": rtol.tolist(),
    "rank_atol": torch.linalg.matrix_rank(A, atol=atol).tolist(),
    "rank_rtol": torch.linalg.matrix_rank(A, rtol=rtol).tolist(),
    "rank_both": torch.linalg.matrix_rank(A, atol=atol, rtol=rtol).tolist(),
    "rank_hermitian": torch.linalg.matrix_rank(H, atol=atol, hermitian=True).tolist(),
    "pinv_atol": torch.linalg.pinv(A, atol=atol).flatten().tolist(),
    "pinv_rtol": torch.linalg.pinv(A, rtol=rtol).flatten().tolist(),
}
path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "linalg-tolerances.json")
with open(path, "w") as fh:
    json.dump(out, fh, indent=1)
    fh.write("\n")
print("wrote", os.path.normpath(path))
