"""The PyTorch side of bench/epoch-gpu.ts: full training epochs of the same Fashion-MNIST-LT
multi-expert model, loss and SGD (bench/longtail_torch.py) on one GPU, five ways:

  dataloader-W  as the official SADE / PRL train.py runs: a DataLoader with W worker processes and
                pinned memory, per-sample pad + random crop + flip + normalize on the host, the
                batch copied without blocking, loss.item() and the correct count read every step;
  device        the training set on the device as uint8, each batch drawn, cropped, flipped and
                normalized there, no host read inside the epoch;
  graph         'device' with the whole step (forward, loss, backward, SGD step) captured once in a
                CUDA graph and replayed per batch (torch.cuda.graph, after warm-up steps on a side
                stream): the ceiling of this GPU for this step, as the official code's model
                runs it (one stream);
  graph-streams 'graph' with each expert (and PRL draw) on a CUDA stream of its own
                (torch.cuda.stream per branch, as tailor's graph mode runs them): their kernels
                side by side.

Usage: python3 epoch_gpu_torch.py SPEC.json (written by bench/epoch-gpu.ts; "modes", "epochs",
"device" and "amp" (none or bf16: the forward and loss under autocast) in it). Prints one JSON line: per mode, the seconds of every epoch and the images/s of
the median epoch after the first."""
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from longtail_torch import Experiment, PadCropFlip  # noqa: E402

spec = json.load(open(sys.argv[1]))
device = spec["device"]
cuda = device.startswith("cuda")
C, H, W = spec["shape"]
batch = spec["batch"]
mean, std, pad = spec["mean"], spec["std"], spec["padding"]
train_y = np.fromfile(f"{spec['dir']}/train_y.i32", dtype=np.int32)
train_x = np.fromfile(f"{spec['dir']}/train_x.u8", dtype=np.uint8).reshape(len(train_y), C, H, W)
N = len(train_y)


autocast_dtype = {"bf16": torch.bfloat16}.get(spec.get("amp", "none"))


def forward_loss(experiment, x, y, preferences):
    with torch.autocast(device_type="cuda" if cuda else "cpu", dtype=autocast_dtype, enabled=autocast_dtype is not None):
        return experiment.forward_loss(x, y, preferences)


def sync():
    if cuda:
        torch.cuda.synchronize()


def preferences(experiment, rng):
    prl = experiment.prl
    if not prl:
        return None
    return [
        torch.tensor(rng.dirichlet([prl["alpha"]] * experiment.E), dtype=torch.float32).to(device, non_blocking=True)
        for _ in range(prl["draws"])
    ]


def epoch_dataloader(experiment, loader, rng):
    model, opt = experiment.model, experiment.opt
    correct, total = 0, 0.0
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True).long()
        out, loss = forward_loss(experiment, x, y, preferences(experiment, rng))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        total += loss.item() * len(y)
        correct += (out.argmax(1) == y).sum().item()
    return total


class DeviceData:
    """The training set on the device; batches drawn, cropped, flipped and normalized there."""

    def __init__(self):
        self.x = torch.from_numpy(train_x).to(device)
        self.y = torch.from_numpy(train_y).to(device).long()
        self.padded = F.pad(self.x, (pad, pad, pad, pad))
        self.rows = torch.arange(H, device=device).view(1, H, 1)
        self.cols = torch.arange(W, device=device).view(1, 1, W)

    def batches(self):
        order = torch.randperm(N, device=device)
        for i in range(0, N - batch + 1, batch):  # full batches: the last partial one is dropped
            idx = order[i : i + batch]
            imgs = self.padded[idx]  # [B, C, H+2p, W+2p]
            top = torch.randint(0, 2 * pad + 1, (batch, 1, 1), device=device)
            left = torch.randint(0, 2 * pad + 1, (batch, 1, 1), device=device)
            flip = torch.rand(batch, 1, 1, device=device) < 0.5
            cols = torch.where(flip, W - 1 - self.cols, self.cols) + left
            rows = self.rows + top
            b = torch.arange(batch, device=device).view(batch, 1, 1)
            crops = imgs.permute(0, 2, 3, 1)[b, rows, cols].permute(0, 3, 1, 2)
            yield crops.float().div_(255).sub_(mean).div_(std), self.y[idx]


def run_device(experiment, data, rng, epochs):
    model, opt = experiment.model, experiment.opt
    times = []
    for _ in range(epochs):
        sync()
        t0 = time.perf_counter()
        total = torch.zeros((), device=device)
        for x, y in data.batches():
            out, loss = forward_loss(experiment, x, y, preferences(experiment, rng))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            total += loss.detach()
        total.item()
        sync()
        times.append(time.perf_counter() - t0)
    return times


def run_graph(experiment, data, rng, epochs):
    model, opt = experiment.model, experiment.opt
    static_x = torch.zeros(batch, C, H, W, device=device)
    static_y = torch.zeros(batch, dtype=torch.long, device=device)
    prl = experiment.prl
    static_r = [torch.zeros(experiment.E, device=device) for _ in range(prl["draws"])] if prl else None
    total = torch.zeros((), device=device)

    def step():
        out, loss = forward_loss(experiment, static_x, static_y, static_r)
        loss.backward()
        opt.step()
        total.add_(loss.detach())

    def load(x, y):
        static_x.copy_(x)
        static_y.copy_(y)
        for s, r in zip(static_r or [], preferences(experiment, rng) or []):
            s.copy_(r)

    batches = data.batches()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            load(*next(batches))
            step()
            opt.zero_grad(set_to_none=True)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        step()
    times = []
    for _ in range(epochs):
        sync()
        t0 = time.perf_counter()
        for x, y in data.batches():
            load(x, y)
            graph.replay()
        total.item()
        sync()
        times.append(time.perf_counter() - t0)
    return times


def median_after_first(times):
    rest = sorted(times[1:] or times)
    return rest[len(rest) // 2]


results = {"torch": torch.__version__, "images": N, "batch": batch}
full_batches = N // batch
torch.backends.cudnn.benchmark = True
for mode in spec["modes"]:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    experiment = Experiment(spec, device)
    experiment.model.train()
    trained = N  # images per epoch: the device-data modes train full batches only
    try:
        if mode.startswith("dataloader-"):
            workers = int(mode.split("-")[1])
            loader = torch.utils.data.DataLoader(
                PadCropFlip(train_x, train_y, pad, mean, std), batch_size=batch, shuffle=True, num_workers=workers,
                pin_memory=cuda, persistent_workers=workers > 0, drop_last=False,
            )
            times = []
            for _ in range(spec["epochs"]):
                sync()
                t0 = time.perf_counter()
                epoch_dataloader(experiment, loader, rng)
                sync()
                times.append(time.perf_counter() - t0)
            del loader
        elif mode == "device":
            if full_batches == 0:
                results[mode] = {"skipped": f"fewer images ({N}) than one batch ({batch})"}
                continue
            times = run_device(experiment, DeviceData(), rng, spec["epochs"])
            trained = full_batches * batch
        elif mode in ("graph", "graph-streams"):
            if not cuda:
                results[mode] = {"skipped": "CUDA graphs need a CUDA device"}
                continue
            if full_batches < 3:  # the warm-up takes three batches
                results[mode] = {"skipped": f"fewer images ({N}) than three batches ({3 * batch})"}
                continue
            if mode == "graph-streams":
                experiment.model.streams = [torch.cuda.Stream(priority=-1) for _ in experiment.model.experts]
            times = run_graph(experiment, DeviceData(), rng, spec["epochs"])
            trained = full_batches * batch
        else:
            raise ValueError(f"unknown mode {mode}")
        m = median_after_first(times)
        results[mode] = {"epoch_s": [round(t, 3) for t in times], "median_s": round(m, 3), "img_s": round(trained / m)}
        if trained != N:
            results[mode]["images"] = trained
    except Exception as e:  # one mode failing must not hide the others
        results[mode] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
print(json.dumps(results))
