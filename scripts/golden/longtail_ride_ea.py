"""Writes test/golden/longtail/ride_ea.json: RIDE-EA's router training loss (and its gradients)
and routed test-time output, computed by RIDE's own ResNet_s (model/ldam_drw_resnets/
ea_resnet_cifar.py, read from the fetched reference repository at run time, never stored) in
PyTorch 1.13. The backbone is bypassed: the stem is replaced by identities so that the shared
part carries each image's row index, and _separate_part returns stored per-expert logits and sets
stored pooled features, so RIDE's forward (router inputs, BCE targets, routing) runs unchanged on
tiny tensors. Router weights, features, logits and labels are stored (a few hundred numbers).
Run: /usr/bin/python3 scripts/golden/longtail_ride_ea.py"""
import importlib.util
import json
import os
import subprocess
import tempfile

import torch
import torch.nn as nn

torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', '..', 'test', 'golden', 'longtail', 'ride_ea.json')
REF = '/work/.mirror/frank-xwang+RIDE-LongTailRecognition/repo'


def load_ride():
    src = subprocess.run(['git', '-C', REF, 'show', 'HEAD:model/ldam_drw_resnets/ea_resnet_cifar.py'],
                         check=True, capture_output=True, text=True).stdout
    d = tempfile.mkdtemp()
    path = os.path.join(d, 'ea_resnet_cifar.py')
    with open(path, 'w') as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location('ea_resnet_cifar', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def r(t):
    return [round(float(v), 7) for v in t.detach().reshape(-1).tolist()]


def run_case(ride, name, experts, n, dim, classes, top, pos_weight, share, force_all, seed):
    g = torch.Generator().manual_seed(seed)
    model = ride.ResNet_s(ride.BasicBlock, [1, 1, 1], experts, num_classes=classes, layer3_output_dim=dim,
                          top_choices_num=top, pos_weight=pos_weight, share_expert_help_pred_fc=share,
                          force_all=force_all)
    model.conv1 = nn.Identity()
    model.bn1 = nn.Identity()
    model.layer1 = nn.Identity()
    # Pooled features are post-ReLU (non-negative); logits spread so that some routers say yes.
    feats = torch.rand((experts, n, dim), generator=g)
    logits = torch.randn((experts, n, classes), generator=g) * 3
    target = torch.randint(0, classes, (n,), generator=g)
    with torch.no_grad():
        for mod in list(model.expert_help_pred_hidden_fcs) + (
                [model.expert_help_pred_fc] if share else list(model.expert_help_pred_fcs)):
            mod.weight.copy_(torch.randn(mod.weight.shape, generator=g) * 0.7)
            mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.3)

    def separate(shared, i):
        idx = shared[:, 0].long()
        model.feat = feats[i][idx].view(-1, dim, 1, 1)
        return logits[i][idx].clone()

    model._separate_part = separate
    x = torch.arange(n, dtype=torch.float32).view(n, 1)
    model.train()
    out_train, loss = model(x, target=target)
    loss.backward()
    params = {'hidden': [[r(m.weight), r(m.bias)] for m in model.expert_help_pred_hidden_fcs],
              'fc': [[r(m.weight), r(m.bias)] for m in
                     ([model.expert_help_pred_fc] if share else model.expert_help_pred_fcs)]}
    grads = {'hidden': [[r(m.weight.grad), r(m.bias.grad)] for m in model.expert_help_pred_hidden_fcs],
             'fc': [[r(m.weight.grad), r(m.bias.grad)] for m in
                    ([model.expert_help_pred_fc] if share else model.expert_help_pred_fcs)]}
    model.eval()
    with torch.no_grad():
        out_test, counts = model(x)
    counts = counts.view(-1).float()
    return {'name': name, 'experts': experts, 'n': n, 'dim': dim, 'classes': classes, 'top_choices_num': top,
            'pos_weight': pos_weight, 'share_expert_help_pred_fc': share, 'force_all': force_all,
            'features': r(feats), 'logits': r(logits), 'target': target.tolist(), 'params': params,
            'expected': {'train_output': r(out_train), 'loss': r(loss), 'grads': grads,
                         'test_output': r(out_test), 'experts_per_image': r(counts)}}


def main():
    ride = load_ride()
    cases = [run_case(ride, 'shared fc, 3 experts', 3, 10, 6, 7, 3, 20, True, False, 1),
             run_case(ride, 'per-router fcs, 4 experts', 4, 10, 5, 6, 2, 5, False, False, 7),
             run_case(ride, 'force_all', 3, 6, 4, 5, 3, 20, True, True, 3)]
    for c in cases:
        print(c['name'], 'experts per image', c['expected']['experts_per_image'])
    with open(OUT + '.tmp', 'w') as f:
        json.dump({'cases': cases}, f, separators=(',', ':'))
        f.write('\n')
    os.replace(OUT + '.tmp', OUT)


if __name__ == '__main__':
    main()
