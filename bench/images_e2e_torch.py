"""The PyTorch side of bench/images-e2e.ts: the SADE ImageNet-LT ResNeXt-50 (3 experts) trained
end to end from a JPEG image list, as the official train.py trains it: a DataLoader with
num_workers worker processes and pinned memory, the ImageNet training transform
(bench/images_torch.py: RandomResizedCrop, flip, ColorJitter 0.4, ToTensor, Normalize), the
model and loss of bench/images_train_torch.py, SGD, in float32 or bf16 autocast with a
channels-last model and input. Each epoch is timed (the device synchronized at its ends); the
GPU's utilisation is sampled over the last epoch.

Prints one JSON line: epoch_seconds, images (per epoch), images_per_s (the last epoch), gpu_util.

    python3 bench/images_e2e_torch.py ROOT LIST --workers 8 --batch 64 --epochs 2 --mode bf16-cl
    python3 bench/images_e2e_torch.py ROOT LIST --device cpu --workers 1 --batch 4 --epochs 1 --size 32
                                        (a smoke run without a GPU)
"""
import argparse
import json
import os
import random
import sys
import time

import torch
from torch.utils.data import DataLoader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from images_torch import ImageList, make_transform  # noqa: E402
from images_train_torch import GpuUtil, model_and_opt, train_on  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("list")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--mode", choices=["float32", "bf16-cl"], default="float32")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--classes", type=int, default=1000)
    a = ap.parse_args()
    cuda = a.device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        print(json.dumps({"error": "no CUDA device: this measurement needs the GPU machine"}))
        return
    torch.manual_seed(0)
    random.seed(0)
    if cuda:
        torch.backends.cudnn.benchmark = True
    channels_last = a.mode == "bf16-cl"
    model, opt = model_and_opt(a.device, a.classes, channels_last)
    dtype = torch.bfloat16 if channels_last else None
    ds = ImageList(a.root, a.list, make_transform(a.size))
    extra = {"prefetch_factor": 2, "persistent_workers": True} if a.workers > 0 else {}
    loader = DataLoader(ds, batch_size=a.batch, shuffle=True, num_workers=a.workers, pin_memory=cuda, **extra)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    times, images, util = [], 0, None
    for epoch in range(a.epochs):
        last = epoch == a.epochs - 1
        meter = GpuUtil() if cuda and last else None
        sync()
        t0 = time.perf_counter()
        images = 0
        for x, y in loader:
            images += train_on(model, opt, x, y, a.device, channels_last, dtype)
        sync()
        times.append(time.perf_counter() - t0)
        if meter:
            util = meter.stop()
    print(json.dumps({
        "mode": a.mode,
        "workers": a.workers,
        "batch": a.batch,
        "epoch_seconds": times,
        "images": images,
        "images_per_s": images / times[-1],
        "gpu_util": util,
        "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
