"""Reference values for src/nmr/train/losses.ts (the NMR training losses) computed with PyTorch 1.13.

Run: /usr/bin/python3 scripts/golden/nmr_losses.py  ->  test/golden/nmr/losses.json
The formulas are those documented in losses.ts: every point outside M has weight w_base, and
alpha_ij = T^(k_j - k_i).
"""
import json
import math
import os

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(1234)
B, G, L = 2, 3, 40
levels = [0, 1, 2]
T = [2.0, 1.7]
x = rng.normal(size=(B, G, L))
y = x * 0.6 + 0.1 * rng.normal(size=(B, G, L))
target = rng.normal(size=(B, L))
peak = (rng.uniform(size=(B, L)) < 0.3).astype(np.float64)
base = (1 - peak) * (rng.uniform(size=(B, L)) < 0.8)
w_peak, w_base = 6.0, 1.0
lam = dict(deriv=0.5, curv=0.1, cons=0.5, ratio=0.2)

X = torch.tensor(x)
Y = torch.tensor(y, requires_grad=True)
S = torch.tensor(target)
M = torch.tensor(peak)
Bm = torch.tensor(base)
Tt = torch.tensor(T)


def diff1(z):
    return z[..., 1:] - z[..., :-1]


def diff2(z):
    return z[..., 2:] - 2 * z[..., 1:-1] + z[..., :-2]


y0 = Y[:, 0, :]
W = w_base * (1 - M) + w_peak * M
rec = (W * (y0 - S).abs()).mean()
deriv = (diff1(y0) - diff1(S)).abs().mean()
curv = (diff2(y0) * Bm[..., 1:-1]).abs().mean()
pairs = [(g, h) for g in range(G) for h in range(g + 1, G)]
cons = sum((Y[:, g] - Y[:, h]).abs().mean() for g, h in pairs) / len(pairs)
eps = 1e-8
norms = (((X - Y) * Bm[:, None, :]) ** 2).sum(-1).add(1e-20).sqrt() + eps
ratio_loss = 0
for g, h in pairs:
    dev = (norms[:, g].log() - norms[:, h].log() - (levels[h] - levels[g]) * Tt.log()).abs()
    ratio_loss = ratio_loss + dev.mean()
ratio_loss = ratio_loss / len(pairs)
total = rec + lam['deriv'] * deriv + lam['curv'] * curv + lam['cons'] * cons + lam['ratio'] * ratio_loss
total.backward()

out = {
    'generator': 'scripts/golden/nmr_losses.py (torch %s)' % torch.__version__,
    'shape': [B, G, L],
    'levels': levels,
    'T': T,
    'weights': dict(peakWeight=w_peak, baseWeight=w_base, **lam),
    'x': x.ravel().tolist(),
    'y': y.ravel().tolist(),
    'target': target.ravel().tolist(),
    'peak': peak.ravel().tolist(),
    'base': base.ravel().tolist(),
    'rec': rec.item(),
    'deriv': deriv.item(),
    'curv': curv.item(),
    'cons': cons.item(),
    'ratio': ratio_loss.item(),
    'total': total.item(),
    'grad_y': Y.grad.ravel().tolist(),
}
path = os.path.join(os.path.dirname(__file__), '..', '..', 'test', 'golden', 'nmr', 'losses.json')
with open(path, 'w') as f:
    json.dump(out, f)
print('wrote', os.path.normpath(path), {k: out[k] for k in ['rec', 'deriv', 'curv', 'cons', 'ratio', 'total']})
