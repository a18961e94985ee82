#!/usr/bin/env python3
"""Golden data for tailor's Adagrad, Adadelta, Adamax, NAdam, RAdam and LBFGS, from PyTorch 1.13.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/golden/optim_more.py
Writes test/golden/torch/optim_more.json. Everything is in float64, so tailor's trajectories and
state must equal PyTorch's to a few units of double rounding.
"""
import json
import os

import torch

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.path.join(ROOT, 'test', 'golden', 'torch')
DT = torch.float64


def values(t):
    return [float(v) for v in t.detach().double().reshape(-1).tolist()]


def state_of(opt, params):
    out = {}
    for i, p in enumerate(params):
        if p not in opt.state:
            continue
        s = {}
        for k, v in opt.state[p].items():
            if torch.is_tensor(v):
                s[k] = values(v) if v.dim() > 0 else float(v)
            elif isinstance(v, list):
                s[k] = [values(x) if torch.is_tensor(x) and x.dim() > 0 else (None if x is None else float(x)) for x in v]
            else:
                s[k] = v
        out[str(i)] = s
    return out


def first_order_case(name, options, make, steps=6, seed=0, groups_lr=None, skip=None):
    shapes = [[3, 4], [5]]
    g = torch.Generator().manual_seed(seed)
    init = [torch.randn(s, generator=g, dtype=DT) for s in shapes]
    grads = [[torch.randn(s, generator=g, dtype=DT) for s in shapes] for _ in range(steps)]
    params = [p.clone().requires_grad_(True) for p in init]
    if groups_lr is None:
        opt = make(params)
    else:
        opt = make([{'params': [params[0]], 'lr': groups_lr[0]}, {'params': [params[1]]}])
    initial_state = state_of(opt, params)
    history = []
    for step in range(steps):
        for i, p in enumerate(params):
            p.grad = None if skip == (step, i) else grads[step][i].clone()
        opt.step()
        history.append([values(p) for p in params])
    return {'name': name, 'options': options, 'shapes': shapes, 'init': [values(p) for p in init],
            'grads': [[values(x) for x in s] for s in grads], 'groupLr': groups_lr,
            'skip': list(skip) if skip else None, 'initialState': initial_state, 'history': history,
            'state': state_of(opt, params)}


def first_order_cases():
    O = torch.optim
    specs = [
        ('adagrad_default', {'type': 'Adagrad'}, lambda p: O.Adagrad(p), None, None),
        ('adagrad_all_options', {'type': 'Adagrad', 'lr': 0.05, 'lrDecay': 0.1, 'weightDecay': 0.02,
                                 'initialAccumulatorValue': 0.3, 'eps': 1e-6, 'maximize': True},
         lambda p: O.Adagrad(p, lr=0.05, lr_decay=0.1, weight_decay=0.02, initial_accumulator_value=0.3, eps=1e-6,
                             maximize=True), None, None),
        ('adagrad_groups_skip', {'type': 'Adagrad', 'lr': 0.1, 'lrDecay': 0.05},
         lambda p: O.Adagrad(p, lr=0.1, lr_decay=0.05), [0.02, None], (2, 1)),
        ('adadelta_default', {'type': 'Adadelta'}, lambda p: O.Adadelta(p), None, None),
        ('adadelta_custom', {'type': 'Adadelta', 'lr': 0.5, 'rho': 0.8, 'eps': 1e-5, 'weightDecay': 0.01,
                             'maximize': True},
         lambda p: O.Adadelta(p, lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.01, maximize=True), None, None),
        ('adamax_default', {'type': 'Adamax'}, lambda p: O.Adamax(p), None, None),
        ('adamax_custom', {'type': 'Adamax', 'lr': 0.01, 'betas': [0.8, 0.95], 'eps': 1e-6, 'weightDecay': 0.05,
                           'maximize': True},
         lambda p: O.Adamax(p, lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.05, maximize=True),
         [0.003, None], (1, 0)),
        ('nadam_default', {'type': 'NAdam'}, lambda p: O.NAdam(p), None, None),
        ('nadam_custom', {'type': 'NAdam', 'lr': 0.01, 'betas': [0.85, 0.99], 'eps': 1e-6, 'weightDecay': 0.03,
                          'momentumDecay': 0.01},
         lambda p: O.NAdam(p, lr=0.01, betas=(0.85, 0.99), eps=1e-6, weight_decay=0.03, momentum_decay=0.01),
         [0.002, None], None),
        ('radam_default', {'type': 'RAdam'}, lambda p: O.RAdam(p), None, None),
        # beta2 0.5: the rectified branch (rho_t > 5) from the second step on
        ('radam_rectified', {'type': 'RAdam', 'lr': 0.01, 'betas': [0.9, 0.5], 'eps': 1e-6, 'weightDecay': 0.02},
         lambda p: O.RAdam(p, lr=0.01, betas=(0.9, 0.5), eps=1e-6, weight_decay=0.02), [0.004, None], (3, 0)),
    ]
    return [first_order_case(name, options, make, steps=8, seed=100 + i, groups_lr=groups, skip=skip)
            for i, (name, options, make, groups, skip) in enumerate(specs)]


def rosenbrock(a, b):
    """The 2-d Rosenbrock function summed over pairs: a holds the x's, b the y's. Written op for op
    as the TypeScript test computes it (tailor's square() is x * x), so the gradients are the same
    to the last bit and the trajectories can be compared tightly."""
    u = b - a * a
    v = a.neg().add(1)
    return (u * u).mul(100).add(v * v).sum()


def bowl(a, b):
    """A well-conditioned bowl (a quadratic with a quartic term), op for op as the TypeScript test
    computes it. The strong Wolfe line search on the Rosenbrock valley turns last-bit differences
    of the BLAS dot kernels (they differ between CPUs) into different trajectories within a few
    steps; on this bowl the trajectories agree across kernels to about 1e-12."""
    u = a.neg().add(1)
    v = b - a * 0.5
    return (u * u).mul(3).add(v * v).add((a * a) * (a * a) * 0.25).sum()


PROBLEMS = {'rosenbrock': rosenbrock, 'bowl': bowl}


def lbfgs_case(name, options, kwargs, steps, problem='rosenbrock'):
    init_a = torch.tensor([-1.5, 0.5, -0.8], dtype=DT)
    init_b = torch.tensor([[2.0], [1.5], [-0.2]], dtype=DT)
    a = init_a.clone().requires_grad_(True)
    b = init_b.clone().requires_grad_(True)
    opt = torch.optim.LBFGS([a, b], **kwargs)

    def closure():
        opt.zero_grad()
        loss = PROBLEMS[problem](a, b.reshape(-1))
        loss.backward()
        return loss

    losses, history = [], []
    for _ in range(steps):
        losses.append(float(opt.step(closure)))
        history.append([values(a), values(b)])
    state = state_of(opt, [a, b])
    state['0'].pop('al', None)  # PyTorch's scratch list
    return {'name': name, 'problem': problem, 'options': options, 'init': [values(init_a), values(init_b)],
            'shapes': [[3], [3, 1]],
            'losses': losses, 'history': history, 'state': state}


def lbfgs_cases():
    return [
        lbfgs_case('lbfgs_fixed_step', {'lr': 0.05, 'maxIter': 6}, dict(lr=0.05, max_iter=6), 4),
        lbfgs_case('lbfgs_strong_wolfe', {'lineSearchFn': 'strong_wolfe'}, dict(line_search_fn='strong_wolfe'), 3,
                   'bowl'),
        lbfgs_case('lbfgs_strong_wolfe_short_history',
                   {'lineSearchFn': 'strong_wolfe', 'historySize': 3, 'maxIter': 8, 'maxEval': 12, 'lr': 0.8},
                   dict(line_search_fn='strong_wolfe', history_size=3, max_iter=8, max_eval=12, lr=0.8), 4, 'bowl'),
        lbfgs_case('lbfgs_converged_tolerances',
                   {'lineSearchFn': 'strong_wolfe', 'toleranceGrad': 1e-4, 'toleranceChange': 1e-6, 'maxIter': 50},
                   dict(line_search_fn='strong_wolfe', tolerance_grad=1e-4, tolerance_change=1e-6, max_iter=50), 3,
                   'bowl'),
    ]


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, 'optim_more.json'), 'w') as f:
        json.dump({'torch': torch.__version__, 'cases': first_order_cases(), 'lbfgs': lbfgs_cases()}, f)
    print('wrote', os.path.join(OUT, 'optim_more.json'))


if __name__ == '__main__':
    main()
