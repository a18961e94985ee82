"""Writes test/golden/longtail/models.json: forward and backward of the multi-expert backbones
(ImageNet ResNet-50 / ResNeXt-50 32x4d / ResNet-152 and CIFAR ResNet-32) in PyTorch 1.13, built
here independently in the layout of RIDE/SADE (layer3s / layer4s / linears), run in float64 for
the expected values and in float32 to size the tolerances. Every parameter and the input are
filled by a deterministic integer hash, so the TypeScript test rebuilds the same numbers without
storing any weights.
Run: /usr/bin/python3 scripts/golden/longtail_models.py"""
import json
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(2)
OUT = os.path.join(os.path.dirname(__file__), '..', '..', 'test', 'golden', 'longtail', 'models.json')


# ---- deterministic values: the TypeScript test implements the same hash (exact uint32 math) ----
def name_hash(name):
    h = 0
    for ch in name:
        h = (h * 31 + ord(ch)) % 1000003
    return h


def hash_uniform(name, n):
    """n values in [-0.5, 0.5) from a murmur-style finaliser of (i * golden + hash(name))."""
    i = np.arange(n, dtype=np.uint64)
    x = (i * np.uint64(0x9E3779B1) + np.uint64(name_hash(name))) & np.uint64(0xFFFFFFFF)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x85EBCA6B)) & np.uint64(0xFFFFFFFF)
    x ^= x >> np.uint64(13)
    x = (x * np.uint64(0xC2B2AE35)) & np.uint64(0xFFFFFFFF)
    x ^= x >> np.uint64(16)
    return x.astype(np.float64) / 4294967296.0 - 0.5


def det_tensor(name, shape):
    n = int(np.prod(shape)) if len(shape) else 1
    u = hash_uniform(name, n)
    if len(shape) >= 2:
        fan_in = n // shape[0]
        v = u * np.sqrt(12.0 / fan_in)
    elif name.endswith('bn3.weight'):
        # Small last-BN scale in every bottleneck keeps the 16-50 block nets well conditioned in
        # float32 (otherwise float32 and float64 PyTorch disagree by percents on early gradients).
        v = 0.1 * (1.0 + 0.5 * u)
    elif name.endswith('weight'):
        v = 1.0 + 0.5 * u
    else:
        v = 0.2 * u
    return torch.tensor(v.astype(np.float32).reshape(shape))


# ---- ImageNet-size multi-expert ResNet / ResNeXt (SADE Expert_ResNet / Expert_ResNeXt layout) ----
class Bottleneck(nn.Module):
    def __init__(self, cin, planes, stride, groups, width_per_group):
        super().__init__()
        width = int(planes * (width_per_group / 64.0)) * groups
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.downsample = None
        if stride != 1 or cin != planes * 4:
            self.downsample = nn.Sequential(nn.Conv2d(cin, planes * 4, 1, stride=stride, bias=False), nn.BatchNorm2d(planes * 4))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return F.relu(out + (self.downsample(x) if self.downsample is not None else x))


class ImageNetBasicBlock(nn.Module):
    # torchvision / RIDE BasicBlock (two 3x3 convolutions, expansion 1)
    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or cin != planes:
            self.downsample = nn.Sequential(nn.Conv2d(cin, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(out + (self.downsample(x) if self.downsample is not None else x))


def stage(cin, planes, blocks, stride, groups, wpg, basic=False):
    if basic:
        return nn.Sequential(*[ImageNetBasicBlock(cin if i == 0 else planes, planes, stride if i == 0 else 1) for i in range(blocks)])
    return nn.Sequential(*[Bottleneck(cin if i == 0 else planes * 4, planes, stride if i == 0 else 1, groups, wpg) for i in range(blocks)])


class NormedLinear(nn.Module):
    def __init__(self, cin, classes):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(cin, classes))

    def forward(self, x):
        return F.normalize(x, dim=1).mm(F.normalize(self.weight, dim=0))


class ExpertResNet(nn.Module):
    def __init__(self, blocks, groups, wpg, experts, classes, planes3, planes4, use_norm, share_layer3, s=30, basic=False):
        super().__init__()
        e = 1 if basic else 4
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.layer1 = stage(64, 64, blocks[0], 1, groups, wpg, basic)
        self.layer2 = stage(64 * e, 128, blocks[1], 2, groups, wpg, basic)
        self.share_layer3 = share_layer3
        if share_layer3:
            self.layer3 = stage(128 * e, planes3, blocks[2], 2, groups, wpg, basic)
        else:
            self.layer3s = nn.ModuleList([stage(128 * e, planes3, blocks[2], 2, groups, wpg, basic) for _ in range(experts)])
        self.layer4s = nn.ModuleList([stage(planes3 * e, planes4, blocks[3], 2, groups, wpg, basic) for _ in range(experts)])
        make = (lambda: NormedLinear(planes4 * e, classes)) if use_norm else (lambda: nn.Linear(planes4 * e, classes))
        self.linears = nn.ModuleList([make() for _ in range(experts)])
        self.s = s if use_norm else 1
        self.experts = experts

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = self.layer2(self.layer1(x))
        if self.share_layer3:
            x = self.layer3(x)
        feats, outs = [], []
        for e in range(self.experts):
            h = x if self.share_layer3 else self.layer3s[e](x)
            h = F.adaptive_avg_pool2d(self.layer4s[e](h), 1).flatten(1)
            feats.append(h)
            outs.append(self.linears[e](h) * self.s)
        logits = torch.stack(outs, 0)
        return logits.mean(0), logits, torch.stack(feats, 0)


# ---- CIFAR ResNet-32 with option-A shortcuts (LDAM-DRW / RIDE expert_resnet_cifar layout) ----
class BasicBlock(nn.Module):
    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.pad = (planes - cin) // 2 if (stride != 1 or cin != planes) else None

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        short = x if self.pad is None else F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, self.pad, self.pad))
        return F.relu(out + short)


def basic_stage(cin, planes, blocks, stride):
    return nn.Sequential(*[BasicBlock(cin if i == 0 else planes, planes, stride if i == 0 else 1) for i in range(blocks)])


class ExpertResNetCifar(nn.Module):
    def __init__(self, in_channels, experts, classes, w2, w3, use_norm, s=30):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = basic_stage(16, 16, 5, 1)
        self.layer2s = nn.ModuleList([basic_stage(16, w2, 5, 2) for _ in range(experts)])
        self.layer3s = nn.ModuleList([basic_stage(w2, w3, 5, 2) for _ in range(experts)])
        make = (lambda: NormedLinear(w3, classes)) if use_norm else (lambda: nn.Linear(w3, classes))
        self.linears = nn.ModuleList([make() for _ in range(experts)])
        self.s = s if use_norm else 1
        self.experts = experts

    def forward(self, x):
        x = self.layer1(F.relu(self.bn1(self.conv1(x))))
        feats, outs = [], []
        for e in range(self.experts):
            h = self.layer3s[e](self.layer2s[e](x))
            h = F.avg_pool2d(h, h.size(3)).flatten(1)
            feats.append(h)
            outs.append(self.linears[e](h) * self.s)
        logits = torch.stack(outs, 0)
        return logits.mean(0), logits, torch.stack(feats, 0)


def ts_name(name):
    """SADE state-dict name -> the name in our modules (experts.E.layerK / experts.E.classifier)."""
    parts = name.split('.')
    head = {'layer2s': 'layer2', 'layer3s': 'layer3', 'layer4s': 'layer4', 'linears': 'classifier'}
    if parts[0] in head:
        return '.'.join(['experts', parts[1], head[parts[0]]] + parts[2:])
    return name


def flat(t, k=None):
    v = t.detach().reshape(-1).double()
    return (v if k is None else v[:k]).tolist()


def forward_backward(make_model, input_shape, watch, dtype):
    model = make_model()
    model.train()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(det_tensor(ts_name(name), list(p.shape)))
    model.to(dtype)
    x = (det_tensor('input', input_shape) * 4).to(dtype)  # uniform [-2, 2)
    x.requires_grad_(True)
    output, logits, feats = model(x)
    upstream = (det_tensor('upstream', list(output.shape)) * 4).to(dtype)
    (output * upstream).sum().backward()
    params = dict(model.named_parameters())
    values = {
        'output': flat(output),
        'logits': flat(logits),
        'feature_sums': feats.detach().double().sum(2).reshape(-1).tolist(),
        'feature_head': flat(feats[:, :, :4]),
        'input_grad_sum': [x.grad.double().sum().item()],
        'input_grad_abs_sum': [x.grad.double().abs().sum().item()],
    }
    for sade_name in watch:
        g = params[sade_name].grad.double()
        values['grad_abs_sum:' + ts_name(sade_name)] = [g.abs().sum().item()]
        values['grad_head:' + ts_name(sade_name)] = flat(g, 8)
    return model, values, list(logits.shape), list(feats.shape)


def run_case(case_name, make_model, input_shape, classes, watch):
    """Expected values from float64; each quantity's tolerance from float32's own disagreement
    with them (5x, at least 2e-3 of the quantity's magnitude): deep nets in training mode route
    gradients through max-pool near-ties and ReLU kinks that float32 resolves differently."""
    model, v64, logits_shape, feature_shape = forward_backward(make_model, input_shape, watch, torch.float64)
    _, v32, _, _ = forward_backward(make_model, input_shape, watch, torch.float32)
    tolerance = {}
    for key, ref in v64.items():
        scale = max(abs(r) for r in ref)
        err = max(abs(a - b) for a, b in zip(v32[key], ref))
        tolerance[key] = max(5 * err, 2e-3 * scale, 1e-6)
    return {
        'name': case_name,
        'input_shape': input_shape,
        'classes': classes,
        'parameters': [[ts_name(n), list(p.shape)] for n, p in model.named_parameters()],
        'num_parameters': sum(p.numel() for p in model.parameters()),
        'logits_shape': logits_shape,
        'feature_shape': feature_shape,
        'expected': v64,
        'tolerance': tolerance,
    }


def main():
    cases = []
    cases.append(dict(
        options={'arch': 'resnet50', 'experts': 1, 'reduceDimension': False, 'normedClassifier': False},
        **run_case('resnet50 plain, linear head', lambda: ExpertResNet([3, 4, 6, 3], 1, 64, 1, 7, 256, 512, False, False), [2, 3, 64, 64], 7,
                   ['conv1.weight', 'layer4s.0.2.conv3.weight', 'linears.0.weight', 'linears.0.bias'])))
    cases.append(dict(
        options={'arch': 'resnext50_32x4d', 'experts': 2, 'reduceDimension': True, 'normedClassifier': True},
        **run_case('resnext50_32x4d, 2 experts, reduce_dimension, cosine head', lambda: ExpertResNet([3, 4, 6, 3], 32, 4, 2, 5, 192, 384, True, False),
                   [2, 3, 64, 64], 5, ['conv1.weight', 'layer2.3.conv2.weight', 'layer3s.1.0.downsample.0.weight', 'linears.1.weight'])))
    cases.append(dict(
        options={'arch': 'resnet152', 'experts': 2, 'reduceDimension': True, 'normedClassifier': True, 'shareLayer3': True},
        **run_case('resnet152, 2 experts, shared layer 3', lambda: ExpertResNet([3, 8, 36, 3], 1, 64, 2, 3, 192, 384, True, True),
                   [2, 3, 64, 64], 3, ['conv1.weight', 'layer3.35.conv3.weight', 'layer4s.1.2.bn3.weight', 'linears.0.weight'])))
    cases.append(dict(
        options={'arch': 'resnet10', 'experts': 3, 'reduceDimension': True, 'normedClassifier': True},
        **run_case('resnet10 (RIDE), 3 experts, reduce_dimension, cosine head',
                   lambda: ExpertResNet([1, 1, 1, 1], 1, 64, 3, 6, 192, 384, True, False, basic=True),
                   [2, 3, 64, 64], 6, ['conv1.weight', 'layer1.0.conv2.weight', 'layer3s.2.0.downsample.0.weight',
                                       'layer4s.1.0.bn2.weight', 'linears.0.weight'])))
    cases.append(dict(
        options={'inChannels': 3, 'experts': 3, 'reduceDimension': True, 'normedClassifier': True},
        **run_case('cifar resnet32, 3 experts, reduce_dimension, cosine head', lambda: ExpertResNetCifar(3, 3, 10, 24, 48, True),
                   [4, 3, 32, 32], 10, ['conv1.weight', 'layer2s.0.0.conv1.weight', 'layer3s.2.4.conv2.weight', 'linears.2.weight'])))
    cases.append(dict(
        options={'inChannels': 1, 'experts': 1, 'reduceDimension': False, 'normedClassifier': False},
        **run_case('cifar resnet32, 1 channel 28x28, linear head', lambda: ExpertResNetCifar(1, 1, 10, 32, 64, False),
                   [4, 1, 28, 28], 10, ['conv1.weight', 'layer3s.0.0.conv1.weight', 'linears.0.weight', 'linears.0.bias'])))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w') as f:
        json.dump({'generator': 'scripts/golden/longtail_models.py', 'torch': torch.__version__, 'cases': cases}, f)
    print('wrote', OUT)
    for c in cases:
        print(c['name'], c['num_parameters'], {k: round(v / max(1e-12, max(abs(r) for r in c['expected'][k])), 6) for k, v in c['tolerance'].items()})


if __name__ == '__main__':
    main()
