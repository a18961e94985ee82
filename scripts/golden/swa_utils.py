#!/usr/bin/env python3
"""Golden data for tailor's optim.swaUtils (AveragedModel, SWALR, updateBn), from PyTorch 1.13.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/golden/swa_utils.py
Writes test/golden/torch/swa_utils.json. A small float64 model (Linear + BatchNorm1d + Linear)
with fixed weights trains a few SGD steps (two parameter groups) under SWALR; after each step
three averaged models are updated (the default running mean without and with buffers, and the
EMA of PyTorch 2.x's get_ema_avg_fn with buffers). Recorded: the rates after construction and
after each scheduler step, every averaged model's state dict at the end (n_averaged included),
update_bn's running statistics on the buffer-less average, and BatchNorm1d with momentum=None.
"""
import json
import math
import os

import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, SWALR, update_bn

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.path.join(ROOT, 'test', 'golden', 'torch')
DT = torch.float64


def values(t):
    return [float(v) for v in t.detach().double().reshape(-1).tolist()]


def state_of(module):
    return {k: values(v) for k, v in module.state_dict().items()}


def get_ema_avg_fn(decay):
    """PyTorch 2.x's torch.optim.swa_utils.get_ema_avg_fn (not in 1.13)."""

    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def make_model():
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).to(DT)


torch.manual_seed(7)
INIT = make_model()
with torch.no_grad():
    # BatchNorm's affine parameters away from 1 and 0, so they matter in the averages
    INIT[1].weight.copy_(torch.rand(4, dtype=DT) + 0.5)
    INIT[1].bias.copy_(torch.randn(4, dtype=DT) * 0.1)
INIT_STATE = state_of(INIT)
STEPS = 5
BATCHES = [(torch.randn(6, 3, dtype=DT), torch.randn(6, 2, dtype=DT)) for _ in range(STEPS)]
# update_bn's loader: (input, target) pairs of different batch sizes
BN_LOADER = [(torch.randn(n, 3, dtype=DT), torch.randn(n, 2, dtype=DT)) for n in (5, 8, 3)]


def train_case(name, swa_lr, anneal_epochs, strategy, resume=False):
    model = make_model()
    model.load_state_dict(INIT.state_dict())
    opt = torch.optim.SGD(
        [
            {'params': list(model[0].parameters()) + list(model[1].parameters()), 'lr': 0.1},
            {'params': list(model[2].parameters()), 'lr': 0.05},
        ],
        lr=0.1,
        momentum=0.9,
    )
    last_epoch = -1
    if resume:
        # another scheduler recorded initial_lr first, so SWALR may start at a later epoch
        torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        last_epoch = 4
    sched = SWALR(opt, swa_lr=swa_lr, anneal_epochs=anneal_epochs, anneal_strategy=strategy,
                  last_epoch=last_epoch)
    averaged = {
        'mean': AveragedModel(model),
        'meanBuffers': AveragedModel(model, use_buffers=True),
        'emaBuffers': AveragedModel(model, avg_fn=get_ema_avg_fn(0.9), use_buffers=True),
    }
    rates = [[g['lr'] for g in opt.param_groups]]
    for x, y in BATCHES:
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        for avg in averaged.values():
            avg.update_parameters(model)
        sched.step()
        rates.append([g['lr'] for g in opt.param_groups])
    averaged_states = {k: state_of(v) for k, v in averaged.items()}
    bn_model = averaged['mean']
    bn_model.eval()
    update_bn(BN_LOADER, bn_model)
    return {
        'name': name,
        'swaLr': swa_lr,
        'annealEpochs': anneal_epochs,
        'annealStrategy': strategy,
        'resume': resume,
        'rates': rates,
        'lastEpoch': sched.last_epoch,
        'model': state_of(model),
        'averaged': averaged_states,
        'afterUpdateBn': state_of(bn_model),
        'trainingAfterUpdateBn': bn_model.training,
        'momentumAfterUpdateBn': bn_model.module[1].momentum,
    }


def cumulative_bn():
    """BatchNorm1d(momentum=None): the running statistics as a cumulative average, then eval."""
    bn = nn.BatchNorm1d(4, momentum=None).to(DT)
    inputs = [torch.randn(n, 4, dtype=DT) * 2 + 1 for n in (4, 7, 2)]
    states = []
    for x in inputs:
        bn(x)
        states.append(state_of(bn))
    bn.eval()
    probe = torch.randn(3, 4, dtype=DT)
    return {
        'inputs': [{'shape': list(x.shape), 'values': values(x)} for x in inputs],
        'states': states,
        'probe': values(probe),
        'evalOutput': values(bn(probe)),
        'repr': repr(bn),
    }


def main():
    cases = [
        train_case('cos_per_group', [0.02, 0.01], 3, 'cos'),
        train_case('linear_scalar', 0.03, 2, 'linear'),
        train_case('cos_no_anneal_resume', 0.05, 0, 'cos', resume=True),
    ]
    out = {
        'torch': torch.__version__,
        'init': INIT_STATE,
        'batches': [{'x': values(x), 'y': values(y)} for x, y in BATCHES],
        'bnLoader': [{'n': x.shape[0], 'x': values(x), 'y': values(y)} for x, y in BN_LOADER],
        'cases': cases,
        'cumulativeBn': cumulative_bn(),
    }
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, 'swa_utils.json')
    with open(path, 'w') as f:
        json.dump(out, f)
    print('wrote', path)


if __name__ == '__main__':
    main()
