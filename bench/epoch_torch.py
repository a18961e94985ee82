# The PyTorch side of bench/epoch.ts: one epoch of the same multi-expert ResNet-32 (SADE's
# 3-expert CIFAR ResNet-32 with reduce_dimension and cosine classifiers, 1 input channel), the
# same loss (per-expert logit-adjusted cross-entropy, summed; PRL: a hypernetwork generating the
# classifiers, linear scalarization averaged over the draws), the same data and augmentation
# (pad + random crop + horizontal flip + normalize, per sample, DataLoader with num_workers=0),
# SGD with Nesterov momentum, then the evaluation of the given (validation) set, written the way plain PyTorch
# code is. Usage: python3 epoch_torch.py SPEC.json (written by bench/epoch.ts); prints one JSON
# line {"seconds", "cpu_s",
# "phases": {"wall", "cpu"}: {"data", "forward", "backward", "optimizer", "eval"}} (process_time
# counts all threads, like process.cpuUsage() on the tailor side).
import json
import sys
import time

import numpy as np
import torch

from longtail_torch import Experiment, PadCropFlip, cosine

spec = json.load(open(sys.argv[1]))
torch.set_num_threads(spec["threads"])
torch.manual_seed(0)
rng = np.random.default_rng(0)
C, H, W = spec["shape"]
classes = spec["classes"]


def load(name, dtype, shape):
    return np.fromfile(f"{spec['dir']}/{name}", dtype=dtype).reshape(shape)


train_y = load("train_y.i32", np.int32, (-1,))
train_x = load("train_x.u8", np.uint8, (len(train_y), C, H, W))
test_y = load("test_y.i32", np.int32, (-1,))
test_x = load("test_x.u8", np.uint8, (len(test_y), C, H, W))
mean, std, pad = spec["mean"], spec["std"], spec["padding"]


E = spec["experts"]
experiment = Experiment(spec)
model, hyper, opt, prl = experiment.model, experiment.hyper, experiment.opt, experiment.prl


def forward_loss(x, y):
    preferences = None
    if prl:
        preferences = [
            torch.tensor(rng.dirichlet([prl["alpha"]] * E), dtype=torch.float32) for _ in range(prl["draws"])
        ]
    return experiment.forward_loss(x, y, preferences)


def evaluate(limit):
    model.eval()
    # With a batch limit, the same fraction of the test set as of the training set (as tailor).
    n = len(test_y)
    if limit:
        n = max(1, min(n, -(-(n * limit * spec["batch"]) // len(train_y))))
    idx = (np.arange(n) * len(test_y)) // n
    correct = 0
    with torch.no_grad():
        r = torch.full((E,), 1.0 / E)
        w = hyper(r.reshape(1, E)).reshape(E, 48, classes) if prl else None
        for i in range(0, n, 256):
            j = idx[i : i + 256]
            x = torch.from_numpy(test_x[j]).float().div_(255).sub_(mean).div_(std)
            feats = model.features(x)
            ws = [w[e] if prl else model.experts[e].weight for e in range(E)]
            out = sum(cosine(f, we) * r[e] for e, (f, we) in enumerate(zip(feats, ws))) if prl else None
            if out is None:
                out = torch.stack([cosine(f, we) for f, we in zip(feats, ws)]).mean(0)
            correct += (out.argmax(1).numpy() == test_y[j]).sum()
    return correct / n


phases = dict(data=0.0, forward=0.0, backward=0.0, optimizer=0.0, eval=0.0)
cpu = dict(phases)
loader = torch.utils.data.DataLoader(PadCropFlip(train_x, train_y, pad, mean, std, rng), batch_size=spec["batch"], shuffle=True, num_workers=0)
limit = spec["max_batches"]
started = time.perf_counter()
cpu_started = time.process_time()
mark = (started, cpu_started)


def lap(phase):
    global mark
    now = (time.perf_counter(), time.process_time())
    phases[phase] += now[0] - mark[0]
    cpu[phase] += now[1] - mark[1]
    mark = now


model.train()
correct = 0
for step, (x, y) in enumerate(loader, 1):
    y = y.long()
    lap("data")
    out, loss = forward_loss(x, y)
    value = loss.item()
    lap("forward")
    loss.backward()
    correct += (out.argmax(1) == y).sum().item()
    lap("backward")
    opt.step()
    opt.zero_grad()
    lap("optimizer")
    if limit and step >= limit:
        break
mark = (time.perf_counter(), time.process_time())
evaluate(limit)
lap("eval")
result = {
    "torch": torch.__version__,
    "seconds": time.perf_counter() - started,
    "cpu_s": time.process_time() - cpu_started,
    "phases": {"wall": phases, "cpu": cpu},
    "loss": value,
}
print(json.dumps(result))
