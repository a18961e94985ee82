"""PyTorch side of bench/nmr-unet.ts: the same residual 1D U-Net as src/nmr/model/unet.ts
(stem k, stride-2 downs, one dilated ResBlock per level, ConvTranspose ups, 1x1 fuse, SE,
GroupNorm, GELU, zero head), timed in no-grad float32 inference on spectra of POINTS points.
Prints one JSON line per convolution mode:
  direct    : nn.Conv1d with dilation (what the TypeScript model did before)
  polyphase : a dilation-d conv as a dilation-1 conv over the d interleaved subsequences
Usage: python3 bench/nmr_unet_torch.py POINTS THREADS BATCH REPS CHANNELS(e.g. 64,128,256,256) [KERNEL] [LEVELS]"""
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

points, threads, batch, reps = (int(v) for v in sys.argv[1:5])
channels = [int(c) for c in sys.argv[5].split(",")]
kernel = int(sys.argv[6]) if len(sys.argv) > 6 else 9
levels = int(sys.argv[7]) if len(sys.argv) > 7 else 1
dilations = [1, 2, 4, 8][: len(channels)] + [8] * max(0, len(channels) - 4)
torch.set_num_threads(threads)
torch.manual_seed(0)


def polyphase_conv(x, conv, d):
    """Exact equivalent of conv(x) for a 'same'-padded dilation-d conv, with L % d == 0."""
    n, c, length = x.shape
    pad = d * (conv.kernel_size[0] - 1) // 2
    # [N, C, L] -> [N, C, L/d, d] -> [N*d, C, L/d]: phase p holds x[p::d].
    sub = x.reshape(n, c, length // d, d).permute(0, 3, 1, 2).reshape(n * d, c, length // d)
    y = F.conv1d(sub, conv.weight, conv.bias, 1, pad // d)
    return y.reshape(n, d, -1, length // d).permute(0, 2, 3, 1).reshape(n, -1, length)


class SE(nn.Module):
    def __init__(self, c, r):
        super().__init__()
        h = max(4, c // r)
        self.fc1, self.fc2 = nn.Linear(c, h), nn.Linear(h, c)

    def forward(self, x):
        return x * torch.sigmoid(self.fc2(F.relu(self.fc1(x.mean(2))))).unsqueeze(2)


class Block(nn.Module):
    def __init__(self, c, d, se, mode):
        super().__init__()
        self.conv = nn.Conv1d(c, c, kernel, padding=d * (kernel - 1) // 2, dilation=d)
        self.norm = nn.GroupNorm(min(8, c), c)
        self.se = SE(c, 16) if se else None
        self.d, self.mode = d, mode

    def forward(self, x):
        if self.mode == "polyphase" and self.d > 1:
            h = polyphase_conv(x, self.conv, self.d)
        else:
            h = self.conv(x)
        h = F.gelu(self.norm(h))
        if self.se is not None:
            h = self.se(h)
        return h + x


class UNet(nn.Module):
    def __init__(self, mode):
        super().__init__()
        ch, n = channels, len(channels)
        self.stem = nn.Conv1d(levels, ch[0], kernel, padding=(kernel - 1) // 2)
        self.mix = nn.Conv1d(levels, 1, 1, bias=False) if levels > 1 else None
        self.down = nn.ModuleList(nn.Conv1d(ch[i], ch[i + 1], 2, 2) for i in range(n - 1))
        self.enc = nn.ModuleList(Block(ch[i], dilations[i], i == n - 1, mode) for i in range(n))
        self.up = nn.ModuleList(nn.ConvTranspose1d(ch[i + 1], ch[i], 2, 2) for i in range(n - 1))
        self.fuse = nn.ModuleList(nn.Conv1d(2 * ch[i], ch[i], 1) for i in range(n - 1))
        self.dec = nn.ModuleList(Block(ch[i], dilations[i], i == 0, mode) for i in range(n - 1))
        self.head = nn.Conv1d(ch[0], 1, 1)

    def forward(self, x):
        scale = x[:, -1:].abs().amax(2, keepdim=True).clamp_min(1e-12)
        x = x / scale
        h, skips = self.stem(x), []
        for i in range(len(self.enc)):
            if i > 0:
                h = self.down[i - 1](h)
            h = self.enc[i](h)
            skips.append(h)
        for i in range(len(self.dec) - 1, -1, -1):
            h = self.dec[i](self.fuse[i](torch.cat([self.up[i](h), skips[i]], 1)))
        base = self.mix(x) if self.mix is not None else x
        return (base + self.head(h)) * scale


x = torch.randn(batch, levels, points)
params = sum(p.numel() for p in UNet("direct").parameters())
ref = None
for mode in ("direct", "polyphase"):
    torch.manual_seed(0)
    model = UNet(mode).eval()
    with torch.no_grad():
        y = model(x)  # warm-up
        ref = y if ref is None else ref
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(reps):
            model(x)
        s = (time.perf_counter() - t0) / reps
        cpu = (time.process_time() - c0) / (reps * batch)
    print(json.dumps({
        "impl": "pytorch", "mode": mode, "points": points, "threads": threads, "batch": batch,
        "channels": channels, "kernel": kernel, "parameters": params,
        
        "spectra_per_s": batch / s, "cpu_s_per_spectrum": cpu,"max_abs_diff_vs_direct": float((y - ref).abs().max()),
    }), flush=True)
