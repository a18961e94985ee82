"""Writes test/golden/longtail/reference_checkpoints/: checkpoints as the SADE / RIDE / BalPoE
trainers save them (base_trainer._save_checkpoint: {'arch', 'epoch', 'state_dict', 'optimizer',
'monitor_best', 'config', 'criterion'}, the config a parse_config.ConfigParser object), made from
the reference model classes themselves (read from the SADE checkout with git show and imported
from a temporary directory), and expected.json with their logits for a fixed input.

- sade_resnet32_3experts.pth: expert_resnet_cifar.ResNet_s (ResNet32Model with num_experts 3,
  cosine classifiers) at one block per stage and 16-channel stages so the file stays small,
  wrapped in DataParallel (names 'module.backbone.layer2s.N...'), BN statistics moved off their
  initial values by a few training-mode passes.
- resnet32_single.pth: resnet_cifar.ResNet_s (ResNet32Model with num_experts 1, a linear
  classifier), saved without DataParallel ('backbone.layer2...', 'backbone.linear...').
- expected.json also lists, for the ImageNet backbones (Expert_ResNet / Expert_ResNeXt / ResNeXt
  single, small stage widths), every state-dict name with its shape: the name mapping is checked
  against the real modules without storing their weights.
- RIDE's and BalPoE's classes (ride_resnet_cifar / RIDEResNet / RIDEResNeXt, BalPoE's
  expert_resnet_cifar / Expert_ResNet / Expert_ResNeXt, from their checkouts beside SADE's) are
  checked to name and shape their tensors exactly as SADE's.

Run: /usr/bin/python3 scripts/golden/longtail_reference_checkpoints.py [SADE checkout]
(default /work/.mirror/Vanint+SADE-AgnosticLT/repo)."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import types

import torch
import torch.nn as nn

torch.set_num_threads(2)
REPO = sys.argv[1] if len(sys.argv) > 1 else '/work/.mirror/Vanint+SADE-AgnosticLT/repo'
OUT = os.path.join(os.path.dirname(__file__), '..', '..', 'test', 'golden', 'longtail', 'reference_checkpoints')

FILES = [
    'model/ldam_drw_resnets/expert_resnet_cifar.py',
    'model/ldam_drw_resnets/resnet_cifar.py',
    'model/fb_resnets/Expert_ResNet.py',
    'model/fb_resnets/Expert_ResNeXt.py',
    'model/fb_resnets/ResNet.py',
    'model/fb_resnets/ResNeXt.py',
]

tmp = tempfile.mkdtemp()
for f in FILES:
    src = subprocess.run(['git', '-C', REPO, 'show', 'HEAD:' + f], check=True, capture_output=True).stdout
    with open(os.path.join(tmp, os.path.basename(f)), 'wb') as out:
        out.write(src)
# The fb_resnets files import autocast / load_state_dict from the trainer's utils package; the
# forward passes here do not use them.
utils = types.ModuleType('utils')
utils.autocast = torch.cuda.amp.autocast
utils.load_state_dict = lambda *a, **k: None
sys.modules['utils'] = utils
sys.path.insert(0, tmp)
import expert_resnet_cifar  # noqa: E402
import resnet_cifar  # noqa: E402
import Expert_ResNet  # noqa: E402
import Expert_ResNeXt  # noqa: E402
import ResNet  # noqa: E402
import ResNeXt  # noqa: E402

# The trainer pickles its parse_config.ConfigParser: a class of the reference code, which a reader
# of the checkpoint cannot (and must not) construct.
parse_config = types.ModuleType('parse_config')


class ConfigParser:
    def __init__(self, config):
        self._config = config
        self.resume = None


ConfigParser.__module__ = 'parse_config'
parse_config.ConfigParser = ConfigParser
sys.modules['parse_config'] = parse_config


class Model(nn.Module):
    """model/model.py's Model: the network under 'backbone'."""

    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def forward(self, x):
        return self.backbone(x)


def save(model, arch, config, name):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    state = {
        'arch': arch,
        'epoch': 3,
        'state_dict': model.state_dict(),
        'optimizer': optimizer.state_dict(),
        'monitor_best': 0.25,
        'config': ConfigParser(config),
        'criterion': {},
    }
    torch.save(state, os.path.join(OUT, name))


def settle_bn(model, x):
    # A few training-mode passes so the running statistics differ from their initial 0 / 1.
    model.train()
    with torch.no_grad():
        for i in range(3):
            model(x * (1 + 0.5 * i) + 0.1 * i)
    model.eval()


def as_list(t):
    return [round(float(v), 7) for v in t.detach().reshape(-1)]


os.makedirs(OUT, exist_ok=True)
torch.manual_seed(0)
x = torch.randn(2, 3, 8, 8)
expected = {'input': {'shape': list(x.shape), 'values': as_list(x)}}

# Multi-expert ResNet-32 (SADE/RIDE/BalPoE layout), DataParallel-wrapped.
cfg = dict(num_classes=4, num_experts=3, layer2_output_dim=16, layer3_output_dim=16, use_norm=True, s=30)
torch.manual_seed(1)
backbone = expert_resnet_cifar.ResNet_s(
    expert_resnet_cifar.BasicBlock, [1, 1, 1], num_experts=3, num_classes=4, layer2_output_dim=16,
    layer3_output_dim=16, use_norm=True, returns_feat=True, s=30)
multi = nn.DataParallel(Model(backbone))
settle_bn(multi, x)
with torch.no_grad():
    out = multi(x)
save(multi, 'ResNet32Model', {'arch': {'type': 'ResNet32Model', 'args': cfg}}, 'sade_resnet32_3experts.pth')
expected['multi'] = {
    'file': 'sade_resnet32_3experts.pth',
    'args': cfg,
    'output': as_list(out['output']),
    # [N, E, C] in the reference; stored [E, N, C] as tailor's MultiExpertOutput.logits
    'logits': as_list(out['logits'].transpose(0, 1)),
}

# Single ResNet-32 with a linear classifier, no DataParallel.
cfg1 = dict(num_classes=4, num_experts=1, layer2_output_dim=16, layer3_output_dim=16, use_norm=False)
torch.manual_seed(2)
single = Model(resnet_cifar.ResNet_s(resnet_cifar.BasicBlock, [1, 1, 1], num_classes=4,
                                     layer2_output_dim=16, layer3_output_dim=16, use_norm=False))
settle_bn(single, x)
with torch.no_grad():
    out1 = single(x)
save(single, 'ResNet32Model', {'arch': {'type': 'ResNet32Model', 'args': cfg1}}, 'resnet32_single.pth')
expected['single'] = {'file': 'resnet32_single.pth', 'args': cfg1, 'output': as_list(out1)}


def names(model):
    return {k: list(v.shape) for k, v in Model(model).state_dict().items()}


# ImageNet backbones as model/model.py builds them, stage widths small (names and shapes only).
expected['imagenet'] = [
    {'arch': 'resnet10', 'experts': 3, 'layer3': 32, 'layer4': 32, 'use_norm': True, 'share_layer3': False,
     'names': names(Expert_ResNet.ResNet(ResNet.BasicBlock, [1, 1, 1, 1], num_experts=3, num_classes=5,
                                         use_norm=True, layer3_output_dim=32, layer4_output_dim=32))},
    {'arch': 'resnet50', 'experts': 2, 'layer3': 32, 'layer4': 32, 'use_norm': False, 'share_layer3': True,
     'names': names(Expert_ResNet.ResNet(Expert_ResNet.Bottleneck, [3, 4, 6, 3], num_experts=2, num_classes=5,
                                         layer3_output_dim=32, layer4_output_dim=32, share_layer3=True))},
    {'arch': 'resnext50_32x4d', 'experts': 3, 'layer3': 32, 'layer4': 32, 'use_norm': False, 'share_layer3': False,
     'names': names(Expert_ResNeXt.ResNext(Expert_ResNeXt.Bottleneck, [3, 4, 6, 3], groups=32, width_per_group=4,
                                           num_experts=3, num_classes=5, layer3_output_dim=32,
                                           layer4_output_dim=32))},
    {'arch': 'resnext50_32x4d', 'experts': 1, 'layer3': 32, 'layer4': 32, 'use_norm': False, 'share_layer3': False,
     'names': names(ResNeXt.ResNext(ResNeXt.Bottleneck, [3, 4, 6, 3], groups=32, width_per_group=4, num_classes=5,
                                    layer3_output_dim=32, layer4_output_dim=32))},
]


# RIDE's and BalPoE's classes name and shape their tensors as SADE's do: checked here, so the one
# set of files above stands for all three.
def load_from(repo, path, name):
    src = subprocess.run(['git', '-C', repo, 'show', 'HEAD:' + path], check=True, capture_output=True).stdout
    file = os.path.join(tmp, name + '.py')
    with open(file, 'wb') as out:
        out.write(src)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MIRROR = os.path.dirname(os.path.dirname(os.path.abspath(REPO)))
OTHERS = {
    'ride': (os.path.join(MIRROR, 'frank-xwang+RIDE-LongTailRecognition', 'repo'),
             'model/ldam_drw_resnets/ride_resnet_cifar.py', 'model/fb_resnets/RIDEResNet.py',
             'model/fb_resnets/RIDEResNeXt.py'),
    'balpoe': (os.path.join(MIRROR, 'emasa+BalPoE-CalibratedLT', 'repo'),
               'model/ldam_drw_resnets/expert_resnet_cifar.py', 'model/fb_resnets/Expert_ResNet.py',
               'model/fb_resnets/Expert_ResNeXt.py'),
}
sade_cifar = names(expert_resnet_cifar.ResNet_s(
    expert_resnet_cifar.BasicBlock, [1, 1, 1], num_experts=3, num_classes=4, layer2_output_dim=16,
    layer3_output_dim=16, use_norm=True))
for key, (repo, cifar_path, resnet_path, resnext_path) in OTHERS.items():
    if not os.path.isdir(repo):
        print(f'skipping the {key} cross-check: no checkout at {repo}')
        continue
    c = load_from(repo, cifar_path, key + '_cifar')
    r = load_from(repo, resnet_path, key + '_resnet')
    x = load_from(repo, resnext_path, key + '_resnext')
    assert names(c.ResNet_s(c.BasicBlock, [1, 1, 1], num_experts=3, num_classes=4, layer2_output_dim=16,
                            layer3_output_dim=16, use_norm=True)) == sade_cifar, key
    assert names(r.ResNet(r.BasicBlock, [1, 1, 1, 1], num_experts=3, num_classes=5, use_norm=True,
                          layer3_output_dim=32, layer4_output_dim=32)) == expected['imagenet'][0]['names'], key
    assert names(r.ResNet(r.Bottleneck, [3, 4, 6, 3], num_experts=2, num_classes=5, layer3_output_dim=32,
                          layer4_output_dim=32, share_layer3=True)) == expected['imagenet'][1]['names'], key
    assert names(x.ResNext(x.Bottleneck, [3, 4, 6, 3], groups=32, width_per_group=4, num_experts=3, num_classes=5,
                           layer3_output_dim=32, layer4_output_dim=32)) == expected['imagenet'][2]['names'], key
    print(f'{key}: the same names and shapes as SADE')

with open(os.path.join(OUT, 'expected.json'), 'w') as f:
    json.dump(expected, f, separators=(',', ':'))
    f.write('\n')
