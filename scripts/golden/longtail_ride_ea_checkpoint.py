"""Writes test/golden/longtail/reference_checkpoints/ride_ea_resnet32_3experts.pth and
ride_ea_expected.json: a RIDE-EA checkpoint as RIDE's trainer saves it (base_trainer's
{'arch', 'epoch', 'state_dict', 'optimizer', 'monitor_best', 'config'}, the config a
parse_config.ConfigParser object; the model EAModel wrapped in DataParallel, so names read
'module.backbone.layer2s.N...' and 'module.backbone.expert_help_pred_*'), made by RIDE's own
ea_resnet_cifar.ResNet_s (read from the fetched reference repository at run time, never stored)
in PyTorch 1.13, with the routed test-time output and experts per image for a fixed input.

Small: one block per stage, 16-channel stages, 3 experts, cosine classifiers (s = 30), a router
per expert (share_expert_help_pred_fc false) and top_choices_num 3. The batch-norm statistics are
moved off their initial values by training-mode passes, and the routers get random weights,
their biases set so that images stop after one, two and three experts.
Run: /usr/bin/python3 scripts/golden/longtail_ride_ea_checkpoint.py"""
import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import types

import torch
import torch.nn as nn

torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', '..', 'test', 'golden', 'longtail', 'reference_checkpoints')
REF = '/work/.mirror/frank-xwang+RIDE-LongTailRecognition/repo'

src = subprocess.run(['git', '-C', REF, 'show', 'HEAD:model/ldam_drw_resnets/ea_resnet_cifar.py'],
                     check=True, capture_output=True, text=True).stdout
path = os.path.join(tempfile.mkdtemp(), 'ea_resnet_cifar.py')
with open(path, 'w') as f:
    f.write(src)
spec = importlib.util.spec_from_file_location('ea_resnet_cifar', path)
ride = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ride)

# The trainer pickles its parse_config.ConfigParser, a class of the reference code.
parse_config = types.ModuleType('parse_config')


class ConfigParser:
    def __init__(self, config):
        self._config = config


ConfigParser.__module__ = 'parse_config'
parse_config.ConfigParser = ConfigParser
sys.modules['parse_config'] = parse_config


class EAModel(nn.Module):
    """model/model.py's EAModel: the network under 'backbone', forward(x, target)."""

    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def forward(self, x, target=None):
        return self.backbone(x, target=target)


def as_list(t):
    return [round(float(v), 7) for v in t.detach().reshape(-1)]


args = dict(num_classes=4, num_experts=3, layer2_output_dim=16, layer3_output_dim=16, use_norm=True,
            top_choices_num=3, share_expert_help_pred_fc=False, pos_weight=20)
torch.manual_seed(5)
backbone = ride.ResNet_s(ride.BasicBlock, [1, 1, 1], num_experts=3, num_classes=4, layer2_output_dim=16,
                         layer3_output_dim=16, use_norm=True, s=30, top_choices_num=3,
                         share_expert_help_pred_fc=False, pos_weight=20)
model = nn.DataParallel(EAModel(backbone))
x = torch.randn(16, 3, 8, 8)
target = torch.randint(0, 4, (16,))
model.train()
with torch.no_grad():
    for i in range(3):  # training-mode passes move the batch-norm statistics
        model(x * (1 + 0.5 * i) + 0.1 * i, target=target)
    g = torch.Generator().manual_seed(6)
    for name, p in backbone.named_parameters():
        if 'expert_help_pred' in name:
            p.copy_(torch.randn(p.shape, generator=g) * (0.7 if name.endswith('weight') else 0.3))
    # An untrained backbone gives every image about the same logits, so each router's threshold
    # is moved into the widest gap between its logits near the middle of the batch: images go on
    # or stop by a margin that float rounding in another engine cannot flip.
    model.eval()
    shared = backbone.layer1(torch.relu(backbone.bn1(backbone.conv1(x))))
    running = torch.zeros(16, 4)
    for i in range(2):
        running += backbone._separate_part(shared, i)
        pred = backbone.pred_expert_help((backbone.feat, running / (i + 1)), i).view(-1)
        v = pred.sort().values
        k = max(range(4, 12), key=lambda j: float(v[j + 1] - v[j]))
        margin = float(v[k + 1] - v[k]) / 2
        assert margin > 1e-3, f'router {i}: images too close to the threshold ({margin})'
        backbone.expert_help_pred_fcs[i].bias -= (v[k] + v[k + 1]) / 2
model.eval()
with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()):  # RIDE prints the routing rates
    output, experts_per_image = model(x)
counts = experts_per_image.view(-1).tolist()
assert len(set(counts)) >= 2, f'routing too uniform for a check: {counts}'

optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01, momentum=0.9)
torch.save({
    'arch': 'ResNet32EAModel',
    'epoch': 5,
    'state_dict': model.state_dict(),
    'optimizer': optimizer.state_dict(),
    'monitor_best': 0.5,
    'config': ConfigParser({'arch': {'type': 'ResNet32EAModel', 'args': args}}),
}, os.path.join(OUT, 'ride_ea_resnet32_3experts.pth'))
with open(os.path.join(OUT, 'ride_ea_expected.json'), 'w') as f:
    json.dump({
        'file': 'ride_ea_resnet32_3experts.pth',
        'args': args,
        'input': {'shape': list(x.shape), 'values': as_list(x)},
        'output': as_list(output),
        'experts_per_image': [int(c) for c in counts],
    }, f)
    f.write('\n')
print('experts per image:', counts)
