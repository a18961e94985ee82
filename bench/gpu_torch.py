"""PyTorch side of bench/gpu.ts: the same 3-expert ResNet-32 (Fashion-MNIST-LT layout: 1x28x28,
widths 16/24/48, normed heads, from scripts/golden/longtail_models.py), batch, SGD step, pinned
host batches copied without blocking, optional autocast, on the same device. Prints one JSON line.
Usage: python3 gpu_torch.py DEVICE STEPS BATCH AMP(none|bf16|fp16)"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scripts', 'golden'))
from longtail_models import ExpertResNetCifar  # noqa: E402

device, steps, batch, amp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
torch.manual_seed(0)
model = ExpertResNetCifar(1, 3, 10, 24, 48, True).to(device).train()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
scaler = torch.cuda.amp.GradScaler() if amp == 'fp16' else None
dtype = {'bf16': torch.bfloat16, 'fp16': torch.float16}.get(amp)
cuda = device.startswith('cuda')
host_x = torch.randn(batch, 1, 28, 28)
host_y = torch.randint(0, 10, (batch,))
if cuda:
    host_x, host_y = host_x.pin_memory(), host_y.pin_memory()


def sync():
    if cuda:
        torch.cuda.synchronize()


def step():
    x = host_x.to(device, non_blocking=True)
    y = host_y.to(device, non_blocking=True)
    with torch.autocast(device_type='cuda' if cuda else 'cpu', dtype=dtype, enabled=dtype is not None):
        loss = F.cross_entropy(model(x)[0], y)
    if scaler:
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    else:
        loss.backward()
        opt.step()
    opt.zero_grad(set_to_none=True)


for _ in range(5):
    step()
sync()
t0 = time.perf_counter()
for _ in range(steps):
    step()
sync()
print(json.dumps({'train_img_s': steps * batch / (time.perf_counter() - t0), 'torch': torch.__version__}))
