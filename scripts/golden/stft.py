#!/usr/bin/env python3
"""Writes test/golden/torch/stft.json: the window functions, torch.stft and torch.istft of PyTorch
1.13 in float64. The windows (periodic and symmetric, hamming with its alpha and beta, kaiser with
its beta); the stft of a chirp (complex results as real/imaginary parts) with the defaults, with
centre padding 'constant', with win_length < n_fft, normalized and two-sided; the istft round trip
of that stft (with length); and the gradient of the magnitude's sum with respect to the signal.
Tiny sizes, so the test stays light.
Run: /usr/bin/python3 scripts/golden/stft.py"""
import json
import math
import os

import torch

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)


def flat(t):
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t)
    return {"shape": list(t.shape), "data": t.reshape(-1).double().tolist()}


out = {"windows": {}}
for periodic in (True, False):
    tag = "periodic" if periodic else "symmetric"
    w = out["windows"]
    w[f"hann_{tag}"] = flat(torch.hann_window(8, periodic=periodic))
    w[f"hamming_{tag}"] = flat(torch.hamming_window(8, periodic=periodic))
    w[f"hamming_ab_{tag}"] = flat(torch.hamming_window(8, periodic=periodic, alpha=0.5, beta=0.4))
    w[f"blackman_{tag}"] = flat(torch.blackman_window(8, periodic=periodic))
    w[f"bartlett_{tag}"] = flat(torch.bartlett_window(7, periodic=periodic))
    w[f"kaiser_{tag}"] = flat(torch.kaiser_window(8, periodic=periodic, beta=8.0))
    w[f"kaiser_default_{tag}"] = flat(torch.kaiser_window(8, periodic=periodic))

# A chirp: frequency rising over 50 samples.
n = 50
t = torch.arange(n, dtype=torch.float64)
x = torch.sin(2 * math.pi * (0.02 * t + 0.004 * t * t))
out["signal"] = x.tolist()

win = torch.hann_window(16)
cases = {
    "default": dict(n_fft=16, hop_length=4, window=win),
    "constant": dict(n_fft=16, hop_length=4, window=win, pad_mode="constant"),
    "short_window": dict(n_fft=16, hop_length=5, win_length=10, window=torch.hann_window(10)),
    "normalized_twosided": dict(n_fft=12, window=torch.hamming_window(12), normalized=True, onesided=False),
    "no_center": dict(n_fft=16, hop_length=4, window=win, center=False),
    "no_window": dict(n_fft=8),
}
out["stft"] = {k: flat(torch.stft(x, return_complex=True, **kw)) for k, kw in cases.items()}
out["stft_batch"] = flat(torch.stft(torch.stack([x, 2 * x]), 16, 4, window=win, return_complex=True))

S = torch.stft(x, 16, 4, window=win, return_complex=True)
out["istft"] = flat(torch.istft(S, 16, 4, window=win))
out["istft_length"] = flat(torch.istft(S, 16, 4, window=win, length=n))

xg = x.clone().requires_grad_()
torch.stft(xg, 16, 4, window=win, return_complex=True).abs().sum().backward()
out["grad_abs_sum"] = xg.grad.tolist()

with open(os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "stft.json"), "w") as f:
    json.dump({"torch_version": torch.__version__, **out}, f)
