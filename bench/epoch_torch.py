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
import torch.nn as nn
import torch.nn.functional as F

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


class Train(torch.utils.data.Dataset):
    def __len__(self):
        return len(train_y)

    def __getitem__(self, i):
        img = np.pad(train_x[i], ((0, 0), (pad, pad), (pad, pad)))
        top, left = rng.integers(0, 2 * pad + 1, size=2)
        img = img[:, top : top + H, left : left + W]
        if rng.random() < 0.5:
            img = img[:, :, ::-1]
        x = torch.from_numpy(np.ascontiguousarray(img)).float().div_(255).sub_(mean).div_(std)
        return x, int(train_y[i])


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
    def __init__(self):
        super().__init__()
        self.layer2 = stage(16, 24, 2)
        self.layer3 = stage(24, 48, 2)
        self.weight = nn.Parameter(torch.empty(48, classes).uniform_(-1, 1))

    def features(self, s):
        return F.adaptive_avg_pool2d(self.layer3(self.layer2(s)), 1).flatten(1)


class Model(nn.Module):
    def __init__(self, experts):
        super().__init__()
        self.conv1 = nn.Conv2d(C, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = stage(16, 16, 1)
        self.experts = nn.ModuleList([Expert() for _ in range(experts)])
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight)

    def features(self, x):
        s = self.layer1(F.relu(self.bn1(self.conv1(x))))
        return [e.features(s) for e in self.experts]


E = spec["experts"]
model = Model(E)
biases = [None if b is None else torch.tensor(b) for b in spec["biases"]]
prl = spec["prl"]
params = list(model.parameters())
hyper = None
if prl:
    layers, width = [], E
    for h in prl["hidden"]:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    hyper = nn.Sequential(*layers, nn.Linear(width, E * 48 * classes))
    params += list(hyper.parameters())
opt = torch.optim.SGD(
    params,
    lr=spec["lr"],
    momentum=spec["momentum"],
    weight_decay=spec["weight_decay"],
    nesterov=spec["nesterov"],
)


def expert_losses(logits, y):
    return torch.stack(
        [F.cross_entropy(z if b is None else z + b, y) for z, b in zip(logits, biases)]
    )


def forward_loss(x, y):
    feats = model.features(x)
    if not prl:
        logits = [cosine(f, e.weight) for f, e in zip(feats, model.experts)]
        return torch.stack(logits).mean(0), expert_losses(logits, y).sum()
    total, first = 0, None
    for _ in range(prl["draws"]):
        r = torch.tensor(rng.dirichlet([prl["alpha"]] * E), dtype=torch.float32)
        w = hyper(r.reshape(1, E)).reshape(E, 48, classes)
        logits = [cosine(f, w[e]) for e, f in enumerate(feats)]
        out = (torch.stack(logits) * r.reshape(-1, 1, 1)).sum(0)
        first = out if first is None else first
        total = total + (r * expert_losses(logits, y)).sum()
    return first, total / prl["draws"]


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
loader = torch.utils.data.DataLoader(Train(), batch_size=spec["batch"], shuffle=True, num_workers=0)
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
    "seconds": time.perf_counter() - started,
    "cpu_s": time.process_time() - cpu_started,
    "phases": {"wall": phases, "cpu": cpu},
    "loss": value,
}
print(json.dumps(result))
