#!/usr/bin/env python3
"""bench/vmap.ts's reference side: PyTorch 1.13 (functorch for the per-example gradients) on the
same shapes; prints the median seconds of each form as JSON.
Usage: vmap_torch.py N BATCH REPEATS"""
import json
import sys
import time
import warnings

import torch
import torch.nn.functional as F
from functorch import grad, hessian, vmap
from torch.autograd.functional import jacobian
from torch.nn.utils.stateless import functional_call

warnings.filterwarnings("ignore")
n, batch, repeats = (int(v) for v in sys.argv[1:4])
torch.set_num_threads(1)
torch.manual_seed(0)


def median(fn):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


W = torch.randn(n, n) / n ** 0.5
x = torch.randn(n)
f = lambda v: torch.tanh(W @ v)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
params = {k: v.detach() for k, v in model.named_parameters()}
xs = torch.randn(batch, 32)
ys = torch.randint(0, 10, (batch,))


def loss(p, v, t):
    return F.cross_entropy(functional_call(model, p, (v.unsqueeze(0),)), t.unsqueeze(0))


cnn = torch.nn.Sequential(
    torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
    torch.nn.Linear(8 * 8 * 8, 10))
cnn_params = {k: v.detach() for k, v in cnn.named_parameters()}
images = torch.randn(batch, 3, 16, 16)
points = torch.randn(batch, 16)
W16 = W[:16, :16]


def energy(v):
    return torch.tanh(W16 @ v).pow(2).sum()


def cnn_loss(p, v, t):
    return F.cross_entropy(functional_call(cnn, p, (v.unsqueeze(0),)), t.unsqueeze(0))


def loop():
    for i in range(batch):
        grad(loss)(params, xs[i], ys[i])


print(json.dumps({
    "jacobian_loop_s": median(lambda: jacobian(f, x)),
    "jacobian_vectorized_s": median(lambda: jacobian(f, x, vectorize=True)),
    "per_example_loop_s": median(loop),
    "per_example_vmap_s": median(lambda: vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)),
    "per_example_hessian_vmap_s": median(lambda: vmap(hessian(energy))(points)),
    "per_example_cnn_vmap_s": median(lambda: vmap(grad(cnn_loss), in_dims=(None, 0, 0))(cnn_params, images, ys)),
}))
