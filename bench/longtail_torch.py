# The plain-PyTorch form of the Fashion-MNIST-LT multi-expert models that tailor's benchmarks
# compare against (bench/epoch_torch.py on the CPU, bench/epoch_gpu_torch.py on a GPU): SADE's
# 3-expert CIFAR ResNet-32 with reduce_dimension and cosine classifiers (1 input channel), its
# loss (per-expert logit-adjusted cross-entropy, summed) and PRL (a hypernetwork generating the
# classifiers from a Dirichlet preference, linear scalarization averaged over the draws), written
# the way plain PyTorch code is.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class PadCropFlip(torch.utils.data.Dataset):
    """The training transform of the Fashion-MNIST-LT configs on uint8 [N, C, H, W] images: pad,
    random crop back to H x W, flip with probability 1/2, normalize. rng: one generator for every
    item (a single process, reproducible), or None for a fresh one per item (DataLoader workers)."""

    def __init__(self, x, y, pad, mean, std, rng=None):
        self.x, self.y, self.pad, self.mean, self.std, self.rng = x, y, pad, mean, std, rng

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        rng = self.rng if self.rng is not None else np.random.default_rng()
        _, h, w = self.x.shape[1:]
        p = self.pad
        img = np.pad(self.x[i], ((0, 0), (p, p), (p, p)))
        top, left = rng.integers(0, 2 * p + 1, size=2)
        img = img[:, top : top + h, left : left + w]
        if rng.random() < 0.5:
            img = img[:, :, ::-1]
        x = torch.from_numpy(np.ascontiguousarray(img)).float().div_(255).sub_(self.mean).div_(self.std)
        return x, int(self.y[i])


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.pad = (cout - cin) // 2 if stride != 1 or cin != cout else -1
        self.stride = stride

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        if self.pad >= 0:
            x = F.pad(x[:, :, :: self.stride, :: self.stride], (0, 0, 0, 0, self.pad, self.pad))
        return F.relu(out + x)


def stage(cin, cout, stride):
    return nn.Sequential(*[Block(cin if i == 0 else cout, cout, stride if i == 0 else 1) for i in range(5)])


def cosine(x, w):
    return F.normalize(x, dim=1).mm(F.normalize(w, dim=0)) * 30


class Expert(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.layer2 = stage(16, 24, 2)
        self.layer3 = stage(24, 48, 2)
        self.weight = nn.Parameter(torch.empty(48, classes).uniform_(-1, 1))

    def features(self, s):
        return F.adaptive_avg_pool2d(self.layer3(self.layer2(s)), 1).flatten(1)


class Model(nn.Module):
    def __init__(self, channels, classes, experts):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = stage(16, 16, 1)
        self.experts = nn.ModuleList([Expert(classes) for _ in range(experts)])
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight)
        # each expert on a CUDA stream of its own (tailor's branch streams, written as a PyTorch
        # user would): epoch_gpu_torch.py's 'graph-streams' mode
        self.streams = None

    def features(self, x):
        s = self.layer1(F.relu(self.bn1(self.conv1(x))))
        if self.streams is None:
            return [e.features(s) for e in self.experts]
        current = torch.cuda.current_stream()
        out = []
        for e, stream in zip(self.experts, self.streams):
            stream.wait_stream(current)
            with torch.cuda.stream(stream):
                out.append(e.features(s))
        for f, stream in zip(out, self.streams):
            current.wait_stream(stream)
            f.record_stream(current)
        return out


class Experiment:
    """The model, hypernetwork (PRL), SGD and loss of a spec written by bench/epoch.ts or epoch-gpu.ts."""

    def __init__(self, spec, device="cpu"):
        C = spec["shape"][0]
        self.classes = classes = spec["classes"]
        self.E = E = spec["experts"]
        self.model = Model(C, classes, E).to(device)
        self.biases = [None if b is None else torch.tensor(b, device=device) for b in spec["biases"]]
        self.prl = prl = spec["prl"]
        params = list(self.model.parameters())
        self.hyper = None
        if prl:
            layers, width = [], E
            for h in prl["hidden"]:
                layers += [nn.Linear(width, h), nn.ReLU()]
                width = h
            self.hyper = nn.Sequential(*layers, nn.Linear(width, E * 48 * classes)).to(device)
            params += list(self.hyper.parameters())
        self.opt = torch.optim.SGD(
            params,
            lr=spec["lr"],
            momentum=spec["momentum"],
            weight_decay=spec["weight_decay"],
            nesterov=spec["nesterov"],
        )

    def expert_losses(self, logits, y):
        return torch.stack(
            [F.cross_entropy(z if b is None else z + b, y) for z, b in zip(logits, self.biases)]
        )

    def forward_loss(self, x, y, preferences=None):
        """(output, loss); PRL: preferences is a list of draws (tensors [E] on x's device)."""
        model, E = self.model, self.E
        feats = model.features(x)
        if not self.prl:
            logits = [cosine(f, e.weight) for f, e in zip(feats, model.experts)]
            return torch.stack(logits).mean(0), self.expert_losses(logits, y).sum()

        def draw(r):
            w = self.hyper(r.reshape(1, E)).reshape(E, 48, self.classes)
            logits = [cosine(f, w[e]) for e, f in enumerate(feats)]
            out = (torch.stack(logits) * r.reshape(-1, 1, 1)).sum(0)
            return out, (r * self.expert_losses(logits, y)).sum()

        # with the experts on streams, the draws too (not under autocast: its cast cache of the
        # shared hypernetwork weights would be read across streams)
        if model.streams is None or torch.is_autocast_enabled():
            parts = [draw(r) for r in preferences]
        else:
            current = torch.cuda.current_stream()
            if len(getattr(self, "draw_streams", [])) < len(preferences):
                self.draw_streams = [torch.cuda.Stream(priority=-1) for _ in preferences]
            parts = []
            for r, stream in zip(preferences, self.draw_streams):
                stream.wait_stream(current)
                with torch.cuda.stream(stream):
                    parts.append(draw(r))
            for (out, loss), stream in zip(parts, self.draw_streams):
                current.wait_stream(stream)
                out.record_stream(current)
                loss.record_stream(current)
        return parts[0][0], sum(loss for _, loss in parts) / len(preferences)
