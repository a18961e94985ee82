"""PyTorch side of bench/resnet32.ts: the same CIFAR ResNet-32 (option-A shortcuts, linear head),
same batch, same SGD step. Prints one JSON line. Usage: python3 resnet32_torch.py STEPS THREADS BATCH"""
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from longtail_torch import Block  # the CIFAR basic block with option-A shortcuts

steps, threads, batch = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
mode = sys.argv[4] if len(sys.argv) > 4 else "speed"
torch.set_num_threads(threads)
torch.manual_seed(0)


class ResNet32(nn.Module):
    def __init__(self, classes=100):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        layers, inp = [], 16
        for planes, stride in [(16, 1), (32, 2), (64, 2)]:
            for i in range(5):
                layers.append(Block(inp, planes, stride if i == 0 else 1))
                inp = planes
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.layers(F.relu(self.bn1(self.conv1(x))))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


model = ResNet32()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
x = torch.randn(batch, 3, 32, 32)
y = torch.randint(0, 100, (batch,))


def train_step():
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024


if mode == "rss":
    model.train()
    samples = []
    for i in range(steps):
        train_step()
        if i % max(1, steps // 20) == 0 or i == steps - 1:
            samples.append(rss_mb())
    print(json.dumps({"rss_mb": samples}))
    sys.exit(0)

model.train()
for _ in range(3):
    train_step()
t0 = time.perf_counter()
for _ in range(steps):
    train_step()
train = steps * batch / (time.perf_counter() - t0)
model.eval()
with torch.no_grad():
    for _ in range(2):
        model(x)
    t0 = time.perf_counter()
    for _ in range(steps):
        model(x)
    infer = steps * batch / (time.perf_counter() - t0)
a = torch.ones(1)
b = torch.ones(1)
n = 100000
t0 = time.perf_counter()
for _ in range(n):
    torch.add(a, b)
op_us = (time.perf_counter() - t0) / n * 1e6
print(json.dumps({"train_img_s": train, "infer_img_s": infer, "tiny_op_us": op_us, "rss_mb": rss_mb()}))
