"""GPU training throughput of the SADE ImageNet-LT recipe in plain PyTorch: the 3-expert
ResNeXt-50 32x4d (reduce_dimension, cosine heads, 1000 classes; scripts/golden/longtail_models.py,
the layout tailor's ResNeXt50Model has), batch 64 of 224 x 224 images, SGD with Nesterov momentum,
cross-entropy on every expert's logits. Three modes on the same GPU:

  float32          the reference
  bf16             torch.autocast(bfloat16)
  bf16-cl          bfloat16 autocast + channels-last model and input

and the check that bf16 + channels-last agrees with float32: from the same weights and input,
the relative difference of the mean logits (forward) and of the first convolution's gradient.

Input batches come from pinned host memory, copied without blocking (what a pin_memory DataLoader
hands over), so the figure is the model's speed; the image pipeline's own speed is measured by
bench/images.ts. This is the PyTorch side of the training figure of `npm run bench -- images`,
run by scripts/gpu-check.sh on the GPU machine. Prints one JSON line.

    python3 bench/images_train_torch.py [--steps 30] [--batch 64] [--device cuda]
    python3 bench/images_train_torch.py --device cpu --steps 1 --batch 2 --size 64 --classes 10
                                        (a smoke run of the script itself, without a GPU)
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "golden"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from longtail_models import ExpertResNet  # noqa: E402
from op_counts import count_ops  # noqa: E402


def sade_resnext50(classes=1000, experts=3):
    return ExpertResNet([3, 4, 6, 3], 32, 4, experts, classes, 192, 384, True, False)


def init_normed(model):
    for name, p in model.named_parameters():
        if name.startswith("linears.") and p.dim() == 2:
            torch.nn.init.uniform_(p, -1, 1)


class GpuUtil:
    """utilization.gpu sampled every 0.2 s by a background nvidia-smi loop (bench/lib/gpu-util.ts's twin)."""

    def __init__(self, index=0):
        self.file = tempfile.NamedTemporaryFile(prefix="tailor-gpu-util-", delete=False).name
        query = f"nvidia-smi -i {index} --query-gpu=utilization.gpu --format=csv,noheader,nounits"
        self.proc = None
        if shutil.which("nvidia-smi"):
            loop = f'while :; do {query} >> "{self.file}"; sleep 0.2; done'
            self.proc = subprocess.Popen(["sh", "-c", loop], start_new_session=True)

    def stop(self):
        if self.proc is None:
            return None
        os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait()
        with open(self.file) as f:
            values = [float(v) for v in f.read().split() if v.replace(".", "", 1).isdigit()]
        os.unlink(self.file)
        return {"mean_percent": sum(values) / len(values), "samples": len(values)} if values else None


def model_and_opt(device, classes, channels_last, foreach=None):
    """The recipe's model in training mode (channels-last when asked) and its SGD (foreach as
    PyTorch picks it, unless given)."""
    model = sade_resnext50(classes).to(device).train()
    init_normed(model)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(
        model.parameters(), lr=0.025, momentum=0.9, weight_decay=5e-4, nesterov=True, foreach=foreach
    )
    return model, opt


def train_on(model, opt, x, y, device, channels_last, dtype):
    """One training step on a host batch: moved without blocking, every expert's cross-entropy
    in float32 under autocast where dtype is given."""
    x = x.to(device, non_blocking=True)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    y = y.to(device, non_blocking=True)
    kind = "cuda" if device.startswith("cuda") else "cpu"
    with torch.autocast(device_type=kind, dtype=dtype, enabled=dtype is not None):
        _, expert_logits, _ = model(x)
        loss = sum(F.cross_entropy(l.float(), y) for l in expert_logits)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return x.shape[0]


def make_step(device, mode, batch, classes, size, foreach=None):
    """The model, SGD and one host batch (pinned on CUDA): a step function."""
    torch.manual_seed(0)
    channels_last = mode == "bf16-cl"
    model, opt = model_and_opt(device, classes, channels_last, foreach)
    host_x = torch.randn(batch, 3, size, size)
    host_y = torch.randint(0, classes, (batch,))
    if device.startswith("cuda"):
        host_x, host_y = host_x.pin_memory(), host_y.pin_memory()
    dtype = torch.bfloat16 if mode.startswith("bf16") else None
    return lambda: train_on(model, opt, host_x, host_y, device, channels_last, dtype)


def train_rate(device, mode, steps, batch, classes, size):
    step = make_step(device, mode, batch, classes, size)
    cuda = device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for _ in range(5 if cuda else 1):
        step()
    sync()
    util = GpuUtil() if cuda else None
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    seconds = time.perf_counter() - t0
    gpu_util = util.stop() if util else None
    return {"images_per_s": steps * batch / seconds, "seconds": seconds, "steps": steps, "gpu_util": gpu_util}


def agreement(device, batch, classes, size):
    """bf16 + channels-last against float32 from the same weights and input."""
    torch.manual_seed(1)
    ref = sade_resnext50(classes).to(device).train()
    init_normed(ref)
    fast = sade_resnext50(classes).to(device).train()
    fast.load_state_dict(ref.state_dict())
    fast = fast.to(memory_format=torch.channels_last)
    x = torch.randn(batch, 3, size, size, device=device)
    y = torch.randint(0, classes, (batch,), device=device)

    def run(model, x, dtype):
        kind = "cuda" if device.startswith("cuda") else "cpu"
        with torch.autocast(device_type=kind, dtype=dtype, enabled=dtype is not None):
            mean, expert_logits, _ = model(x)
            loss = sum(F.cross_entropy(l.float(), y) for l in expert_logits)
        loss.backward()
        return mean.float().detach(), model.conv1.weight.grad.float()

    m32, g32 = run(ref, x, None)
    m16, g16 = run(fast, x.contiguous(memory_format=torch.channels_last), torch.bfloat16)
    rel = lambda a, b: ((a - b).norm() / b.norm()).item()  # noqa: E731
    top1 = (m16.argmax(1) == m32.argmax(1)).float().mean().item()
    return {"logits_rel_diff": rel(m16, m32), "conv1_grad_rel_diff": rel(g16, g32), "top1_agreement": top1}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--count-ops", action="store_true", help="print each mode's operator counts of one step (bench/ops.ts)")
    a = ap.parse_args()
    if a.count_ops:
        torch.set_num_threads(1)  # as bench/ops.ts (libtorch picks some CPU convolutions by thread count)
        counts = {}
        for mode in ("float32", "bf16", "bf16-cl"):
            # the multi-tensor SGD step, as PyTorch runs it on CUDA
            step = make_step(a.device, mode, a.batch, a.classes, a.size, foreach=True)
            step()
            counts[mode] = count_ops(step)
        print(json.dumps(counts))
        return
    cuda = a.device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        print(json.dumps({"error": "no CUDA device: this measurement needs the GPU machine"}))
        return
    torch.backends.cudnn.benchmark = True
    out = {
        "model": f"SADE ResNeXt-50 32x4d, 3 experts, {a.classes} classes",
        "batch": a.batch,
        "size": a.size,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
    }
    for mode in ("float32", "bf16", "bf16-cl"):
        out[mode] = train_rate(a.device, mode, a.steps, a.batch, a.classes, a.size)
        if cuda:
            torch.cuda.empty_cache()
    out["bf16_cl_vs_float32"] = agreement(a.device, min(16, a.batch), a.classes, a.size)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
