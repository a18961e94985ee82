#!/usr/bin/env python3
"""Golden data for tailor's Rprop and ASGD, from PyTorch 1.13.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/golden/optim_rprop_asgd.py
Writes test/golden/torch/optim_rprop_asgd.json in the format of optim_more.json's first-order
cases (the same case builder): float64 parameters and gradients, every step's parameters, the
state before the first step and after the last. ASGD keeps eta and mu in float32 scalar tensors,
so its state holds their float32 values.
"""
import json
import os

import torch

from optim_more import OUT, first_order_case


def cases():
    O = torch.optim
    specs = [
        ('rprop_default', {'type': 'Rprop'}, lambda p: O.Rprop(p), None, None),
        # narrow step sizes and strong etas: steps clamp at both ends within a few steps
        ('rprop_custom', {'type': 'Rprop', 'lr': 0.01, 'etas': [0.3, 1.5], 'stepSizes': [0.004, 0.02],
                          'maximize': True},
         lambda p: O.Rprop(p, lr=0.01, etas=(0.3, 1.5), step_sizes=(0.004, 0.02), maximize=True), None, None),
        ('rprop_groups_skip', {'type': 'Rprop', 'lr': 0.05, 'etas': [0.5, 1.2], 'stepSizes': [1e-6, 0.1]},
         lambda p: O.Rprop(p, lr=0.05, etas=(0.5, 1.2), step_sizes=(1e-6, 0.1)), [0.2, None], (2, 1)),
        ('asgd_default', {'type': 'ASGD'}, lambda p: O.ASGD(p), None, None),
        # t0 2: the averaging (mu below 1) starts at the fourth step
        ('asgd_averaging', {'type': 'ASGD', 'lr': 0.05, 'lambd': 0.01, 'alpha': 0.6, 't0': 2, 'weightDecay': 0.03,
                            'maximize': True},
         lambda p: O.ASGD(p, lr=0.05, lambd=0.01, alpha=0.6, t0=2, weight_decay=0.03, maximize=True), None, None),
        ('asgd_groups_skip', {'type': 'ASGD', 'lr': 0.1, 'lambd': 0.05, 't0': 1},
         lambda p: O.ASGD(p, lr=0.1, lambd=0.05, t0=1), [0.02, None], (3, 0)),
    ]
    return [first_order_case(name, options, make, steps=8, seed=200 + i, groups_lr=groups, skip=skip)
            for i, (name, options, make, groups, skip) in enumerate(specs)]


def main():
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, 'optim_rprop_asgd.json')
    with open(path, 'w') as f:
        json.dump({'torch': torch.__version__, 'cases': cases()}, f)
    print('wrote', path)


if __name__ == '__main__':
    main()
