#!/usr/bin/env python3
"""Writes test/golden/torch/losses_schedules.json from PyTorch 1.13: the losses of torch.nn
(value and the gradients of every differentiable input, for each reduction, in float64 from
seeded inputs) and the learning-rate schedules ConstantLR, MultiplicativeLR, PolynomialLR,
CosineAnnealingWarmRestarts (fractional epochs too), CyclicLR (rates and momentum),
SequentialLR, ChainedScheduler, and the closed forms the older schedules use for step(epoch).

A loss case holds the tailor functional's name, its options (tailor's camelCase names; tensor
options under tensorOptions), the arguments, and per reduction the output, the upstream gradient
the output was multiplied by before the sum, and the gradient of each argument (null where the
argument takes none).

Adam's beta1 under CyclicLR: PyTorch 1.13 cycles only an optimizer with `momentum` (Adam is
refused); 2.x cycles beta1 with the same formula, so that case is computed on an SGD twin.

Run: /usr/bin/python3 scripts/golden/losses_schedules.py"""
import json
import math
import os
import warnings

import torch
import torch.nn.functional as F

warnings.filterwarnings('ignore')
torch.set_num_threads(1)
ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.path.join(ROOT, 'test', 'golden', 'torch')
DT = torch.float64


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).double().tolist()]


def data(t):
    return {'shape': list(t.shape), 'dtype': 'int64' if t.dtype == torch.int64 else 'float64', 'data': flat(t)}


losses = []


def loss_case(name, fn, args, grad, call, options=None, tensor_options=None, reductions=('none', 'mean', 'sum'),
              seed=0):
    """args: the tensors (made from the seed before); grad: which take gradients; call(args, reduction)."""
    case = {'name': name, 'fn': fn, 'options': options or {}, 'tensorOptions':
            {k: data(v) for k, v in (tensor_options or {}).items()},
            'args': [data(a) for a in args], 'grad': list(grad), 'results': {}}
    g = torch.Generator().manual_seed(1000 + seed)
    for reduction in reductions:
        leaves = [a.clone().requires_grad_(True) if want else a.clone() for a, want in zip(args, grad)]
        out = call(leaves, reduction)
        upstream = torch.randn(out.shape, generator=g, dtype=DT) if out.dim() > 0 else torch.tensor(1.0, dtype=DT)
        (out * upstream).sum().backward()
        case['results'][reduction] = {
            'output': data(out), 'upstream': flat(upstream),
            'grads': [flat(l.grad) if want else None for l, want in zip(leaves, grad)]}
    losses.append(case)


def loss_cases():
    g = torch.Generator().manual_seed(7)

    def randn(*s):
        return torch.randn(*s, generator=g, dtype=DT)

    def rand(*s):
        return torch.rand(*s, generator=g, dtype=DT)

    def signs(*s):
        return torch.where(rand(*s) < 0.5, -1.0, 1.0).to(DT)

    R = lambda r: r  # noqa: E731

    # kl_div
    x, t = F.log_softmax(randn(3, 5), 1), F.softmax(randn(3, 5), 1)
    loss_case('kl_div', 'klDiv', [x, t], [True, True], lambda a, r: F.kl_div(a[0], a[1], reduction=r),
              reductions=('none', 'mean', 'sum', 'batchmean'))
    lt = F.log_softmax(randn(3, 5), 1)
    loss_case('kl_div_log_target', 'klDiv', [x, lt], [True, True],
              lambda a, r: F.kl_div(a[0], a[1], reduction=r, log_target=True), {'logTarget': True},
              reductions=('none', 'mean', 'sum', 'batchmean'), seed=1)
    # binary_cross_entropy (targets take no gradient in 1.13)
    p, t = rand(4, 3) * 0.9 + 0.05, rand(4, 3)
    loss_case('bce', 'binaryCrossEntropy', [p, t], [True, False], lambda a, r: F.binary_cross_entropy(a[0], a[1],
              reduction=r), seed=2)
    w = rand(3) + 0.5
    loss_case('bce_weight', 'binaryCrossEntropy', [p, t], [True, False],
              lambda a, r: F.binary_cross_entropy(a[0], a[1], weight=w, reduction=r), tensor_options={'weight': w},
              seed=3)
    # huber
    x, y = randn(4, 3) * 2, randn(4, 3)
    loss_case('huber', 'huberLoss', [x, y], [True, True], lambda a, r: F.huber_loss(a[0], a[1], reduction=r), seed=4)
    loss_case('huber_delta', 'huberLoss', [x, y], [True, True],
              lambda a, r: F.huber_loss(a[0], a[1], reduction=r, delta=0.5), {'delta': 0.5}, seed=5)
    loss_case('huber_broadcast', 'huberLoss', [x, y[:1]], [True, True],
              lambda a, r: F.huber_loss(a[0], a[1], reduction=r, delta=1.5), {'delta': 1.5}, seed=6)
    # soft margin
    x, s = randn(4, 3), signs(4, 3)
    loss_case('soft_margin', 'softMarginLoss', [x, s], [True, False],
              lambda a, r: F.soft_margin_loss(a[0], a[1], reduction=r), seed=7)
    # multilabel soft margin
    x, y01 = randn(4, 5), (rand(4, 5) < 0.4).to(DT)
    loss_case('multilabel_soft_margin', 'multilabelSoftMarginLoss', [x, y01], [True, True],
              lambda a, r: F.multilabel_soft_margin_loss(a[0], a[1], reduction=r), seed=8)
    w = rand(5) + 0.5
    loss_case('multilabel_soft_margin_weight', 'multilabelSoftMarginLoss', [x, y01], [True, False],
              lambda a, r: F.multilabel_soft_margin_loss(a[0], a[1], weight=w, reduction=r),
              tensor_options={'weight': w}, seed=9)
    # cosine embedding
    x1, x2, s = randn(5, 4), randn(5, 4), signs(5)
    loss_case('cosine_embedding', 'cosineEmbeddingLoss', [x1, x2, s], [True, True, False],
              lambda a, r: F.cosine_embedding_loss(a[0], a[1], a[2], reduction=r), seed=10)
    loss_case('cosine_embedding_margin', 'cosineEmbeddingLoss', [x1, x2, s], [True, True, False],
              lambda a, r: F.cosine_embedding_loss(a[0], a[1], a[2], margin=-0.2, reduction=r), {'margin': -0.2},
              seed=11)
    # margin ranking
    x1, x2, s = randn(6), randn(6), signs(6)
    loss_case('margin_ranking', 'marginRankingLoss', [x1, x2, s], [True, True, False],
              lambda a, r: F.margin_ranking_loss(a[0], a[1], a[2], reduction=r), seed=12)
    loss_case('margin_ranking_margin', 'marginRankingLoss', [x1, x2, s], [True, True, False],
              lambda a, r: F.margin_ranking_loss(a[0], a[1], a[2], margin=0.5, reduction=r), {'margin': 0.5},
              seed=13)
    # hinge embedding
    x, s = rand(4, 3) * 2, signs(4, 3)
    loss_case('hinge_embedding', 'hingeEmbeddingLoss', [x, s], [True, False],
              lambda a, r: F.hinge_embedding_loss(a[0], a[1], reduction=r), seed=14)
    loss_case('hinge_embedding_margin', 'hingeEmbeddingLoss', [x, s], [True, False],
              lambda a, r: F.hinge_embedding_loss(a[0], a[1], margin=0.7, reduction=r), {'margin': 0.7}, seed=15)
    # triplet margin
    an, po, ne = randn(5, 4), randn(5, 4), randn(5, 4)
    loss_case('triplet', 'tripletMarginLoss', [an, po, ne], [True, True, True],
              lambda a, r: F.triplet_margin_loss(a[0], a[1], a[2], reduction=r), seed=16)
    loss_case('triplet_options', 'tripletMarginLoss', [an, po, ne], [True, True, True],
              lambda a, r: F.triplet_margin_loss(a[0], a[1], a[2], margin=2.0, p=1, eps=1e-4, swap=True,
                                                 reduction=r),
              {'margin': 2, 'p': 1, 'eps': 1e-4, 'swap': True}, seed=17)
    # poisson nll
    x, counts = randn(4, 3), torch.randint(0, 6, (4, 3), generator=g).to(DT)
    loss_case('poisson_nll', 'poissonNllLoss', [x, counts], [True, False],
              lambda a, r: F.poisson_nll_loss(a[0], a[1], reduction=r), seed=18)
    loss_case('poisson_nll_full', 'poissonNllLoss', [x, counts], [True, False],
              lambda a, r: F.poisson_nll_loss(a[0], a[1], full=True, reduction=r), {'full': True}, seed=19)
    rate = rand(4, 3) * 3 + 0.01
    loss_case('poisson_nll_rate', 'poissonNllLoss', [rate, counts], [True, False],
              lambda a, r: F.poisson_nll_loss(a[0], a[1], log_input=False, eps=1e-3, reduction=r),
              {'logInput': False, 'eps': 1e-3}, seed=20)
    # gaussian nll: one variance below eps, whose gradient still flows (PyTorch clamps without recording)
    mu, y = randn(4, 3), randn(4, 3)
    var = rand(4, 3) + 0.1
    var[1, 2] = 1e-8
    loss_case('gaussian_nll', 'gaussianNllLoss', [mu, y, var], [True, True, True],
              lambda a, r: F.gaussian_nll_loss(a[0], a[1], a[2], reduction=r), seed=21)
    loss_case('gaussian_nll_full_eps', 'gaussianNllLoss', [mu, y, var], [True, True, True],
              lambda a, r: F.gaussian_nll_loss(a[0], a[1], a[2], full=True, eps=0.05, reduction=r),
              {'full': True, 'eps': 0.05}, seed=22)
    v4 = rand(4) + 0.2
    loss_case('gaussian_nll_one_per_sample', 'gaussianNllLoss', [mu, y, v4], [True, False, True],
              lambda a, r: F.gaussian_nll_loss(a[0], a[1], a[2], reduction=r), seed=23)
    loss_case('gaussian_nll_last_dim_1', 'gaussianNllLoss', [mu, y, v4.reshape(4, 1)], [True, False, True],
              lambda a, r: F.gaussian_nll_loss(a[0], a[1], a[2], reduction=r), seed=24)
    # multi margin
    x, cls = randn(5, 4), torch.tensor([0, 3, 1, 2, 3])
    loss_case('multi_margin', 'multiMarginLoss', [x, cls], [True, False],
              lambda a, r: F.multi_margin_loss(a[0], a[1], reduction=r), seed=25)
    w = rand(4) + 0.5
    loss_case('multi_margin_p2_weight', 'multiMarginLoss', [x, cls], [True, False],
              lambda a, r: F.multi_margin_loss(a[0], a[1], p=2, margin=0.7, weight=w, reduction=r),
              {'p': 2, 'margin': 0.7}, {'weight': w}, seed=26)
    # multilabel margin
    x = randn(3, 4)
    tgt = torch.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])
    loss_case('multilabel_margin', 'multilabelMarginLoss', [x, tgt], [True, False],
              lambda a, r: F.multilabel_margin_loss(a[0], a[1], reduction=r), seed=27)
    # ctc: padded targets, concatenated targets, and an input too short for its target (zero_infinity)
    lp = F.log_softmax(randn(8, 2, 5), 2)
    padded = torch.tensor([[1, 2, 2], [3, 4, 0]])
    il, tl = torch.tensor([8, 7]), torch.tensor([3, 2])
    loss_case('ctc', 'ctcLoss', [lp, padded, il, tl], [True, False, False, False],
              lambda a, r: F.ctc_loss(a[0], a[1], a[2], a[3], reduction=r), seed=28)
    loss_case('ctc_concatenated_blank', 'ctcLoss', [lp, torch.tensor([1, 2, 2, 3, 0]), il, tl],
              [True, False, False, False],
              lambda a, r: F.ctc_loss(a[0], a[1], a[2], a[3], blank=4, reduction=r), {'blank': 4}, seed=29)
    short = torch.tensor([2, 7])
    loss_case('ctc_zero_infinity', 'ctcLoss', [lp, padded, short, tl], [True, False, False, False],
              lambda a, r: F.ctc_loss(a[0], a[1], a[2], a[3], zero_infinity=True, reduction=r),
              {'zeroInfinity': True}, seed=30)
    # the losses that were there before, for their module classes
    x, y = randn(4, 3), randn(4, 3)
    loss_case('mse', 'mseLoss', [x, y], [True, True], lambda a, r: F.mse_loss(a[0], a[1], reduction=r), seed=31)
    loss_case('l1', 'l1Loss', [x, y], [True, True], lambda a, r: F.l1_loss(a[0], a[1], reduction=r), seed=32)
    loss_case('smooth_l1_beta', 'smoothL1Loss', [x, y], [True, True],
              lambda a, r: F.smooth_l1_loss(a[0], a[1], beta=0.5, reduction=r), {'beta': 0.5}, seed=33)
    logits, cls = randn(5, 4), torch.tensor([0, 3, 1, 2, 3])
    w = rand(4) + 0.5
    loss_case('cross_entropy_options', 'crossEntropy', [logits, cls], [True, False],
              lambda a, r: F.cross_entropy(a[0], a[1], weight=w, ignore_index=1, label_smoothing=0.1, reduction=r),
              {'ignoreIndex': 1, 'labelSmoothing': 0.1}, {'weight': w}, seed=34)
    logp = F.log_softmax(randn(5, 4), 1)
    loss_case('nll_options', 'nllLoss', [logp, cls], [True, False],
              lambda a, r: F.nll_loss(a[0], a[1], weight=w, ignore_index=2, reduction=r),
              {'ignoreIndex': 2}, {'weight': w}, seed=35)
    t01 = rand(5, 4)
    pw = rand(4) + 0.5
    loss_case('bce_logits_weights', 'binaryCrossEntropyWithLogits', [logits, t01], [True, True],
              lambda a, r: F.binary_cross_entropy_with_logits(a[0], a[1], weight=w, pos_weight=pw, reduction=r),
              tensor_options={'weight': w, 'posWeight': pw}, seed=36)


# ---- schedules ----
S = torch.optim.lr_scheduler
BASE = (0.1, 0.01)


def sgd(momentum=0.0):
    params = [torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)]
    return torch.optim.SGD([{'params': [params[0]], 'lr': BASE[0]}, {'params': [params[1]], 'lr': BASE[1]}],
                           lr=BASE[0], momentum=momentum)


def trajectory(make, steps, momentum=False):
    opt = sgd(0.9 if momentum else 0.0)
    sched = make(opt)
    lrs, momenta = [], []
    for _ in range(steps):
        lrs.append([g['lr'] for g in opt.param_groups])
        momenta.append([g['momentum'] for g in opt.param_groups])
        opt.step()
        sched.step()
    out = {'lrs': lrs}
    if momentum:
        out['momenta'] = momenta
    return out


def at_epochs(make, epochs):
    opt = sgd()
    sched = make(opt)
    lrs = []
    for e in epochs:
        opt.step()
        sched.step(e)
        lrs.append([g['lr'] for g in opt.param_groups])
    return {'epochs': epochs, 'lrs': lrs}


def schedule_cases():
    frac = [0, 0.5, 1.0, 2.7, 3.0, 4.99, 5.0, 9.2, 10.0, 21.5, 22, 45.3, 2.0]
    closed_epochs = [0, 3, 7, 2, 12, 5]
    return {
        'base': list(BASE),
        'constant': trajectory(lambda o: S.ConstantLR(o, factor=0.5, total_iters=4), 10),
        'constant_default': trajectory(lambda o: S.ConstantLR(o), 8),
        'multiplicative': trajectory(lambda o: S.MultiplicativeLR(o, lambda e: 0.95), 15),
        'multiplicative_per_group': trajectory(
            lambda o: S.MultiplicativeLR(o, [lambda e: 0.9 if e % 2 else 1.0, lambda e: 1.0 / (1 + 0.1 * e)]), 15),
        'polynomial': trajectory(lambda o: S.PolynomialLR(o, total_iters=6, power=2.0), 10),
        'polynomial_default': trajectory(lambda o: S.PolynomialLR(o), 8),
        'warm_restarts': trajectory(lambda o: S.CosineAnnealingWarmRestarts(o, T_0=5, eta_min=0.001), 23),
        'warm_restarts_mult': trajectory(lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2), 30),
        'warm_restarts_fractional': at_epochs(lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2), frac),
        'warm_restarts_fractional_mult1': at_epochs(
            lambda o: S.CosineAnnealingWarmRestarts(o, T_0=4, eta_min=0.002), frac),
        'cyclic_triangular': trajectory(
            lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4), 20, momentum=True),
        'cyclic_triangular2': trajectory(
            lambda o: S.CyclicLR(o, base_lr=[0.01, 0.001], max_lr=[0.1, 0.02], step_size_up=3, step_size_down=5,
                                 mode='triangular2', base_momentum=0.85, max_momentum=0.95), 33, momentum=True),
        'cyclic_exp_range': trajectory(
            lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode='exp_range', gamma=0.9), 20,
            momentum=True),
        'cyclic_scale_fn_cycle': trajectory(
            lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=lambda x: 1 / (1 + 0.5 * x),
                                 cycle_momentum=False), 20),
        'cyclic_scale_fn_iterations': trajectory(
            lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=lambda x: 1 / (1 + 0.5 * x),
                                 scale_mode='iterations', cycle_momentum=False), 20),
        'sequential_warmup_exponential': trajectory(
            lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=4), S.ExponentialLR(o, 0.9)],
                                     milestones=[4]), 15),
        'sequential_three': trajectory(
            lambda o: S.SequentialLR(o, [S.ConstantLR(o, factor=0.5, total_iters=3), S.CosineAnnealingLR(o, T_max=6),
                                         S.StepLR(o, step_size=3, gamma=0.5)], milestones=[3, 9]), 20),
        'sequential_restarts': trajectory(
            lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.5, total_iters=3),
                                         S.CosineAnnealingWarmRestarts(o, T_0=4)], milestones=[3]), 16),
        'chained': trajectory(
            lambda o: S.ChainedScheduler([S.ConstantLR(o, factor=0.1, total_iters=2), S.ExponentialLR(o, gamma=0.9)]),
            10),
        'chained_linear_multistep': trajectory(
            lambda o: S.ChainedScheduler([S.LinearLR(o, start_factor=0.5, total_iters=4),
                                          S.MultiStepLR(o, milestones=[3, 6], gamma=0.5)]), 10),
        'closed_step': at_epochs(lambda o: S.StepLR(o, step_size=3, gamma=0.5), closed_epochs),
        'closed_multistep': at_epochs(lambda o: S.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.5), closed_epochs),
        'closed_exponential': at_epochs(lambda o: S.ExponentialLR(o, gamma=0.9), closed_epochs),
        'closed_linear': at_epochs(lambda o: S.LinearLR(o, start_factor=0.25, total_iters=8), closed_epochs),
        'closed_cosine': at_epochs(lambda o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001), closed_epochs),
        'closed_constant': at_epochs(lambda o: S.ConstantLR(o, factor=0.5, total_iters=4), closed_epochs),
        'closed_polynomial': at_epochs(lambda o: S.PolynomialLR(o, total_iters=6, power=2.0), closed_epochs),
    }


def main():
    loss_cases()
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, 'losses_schedules.json')
    with open(path, 'w') as f:
        json.dump({'torch': torch.__version__, 'losses': losses, 'schedules': schedule_cases()}, f)
    print('wrote', path, len(losses), 'loss cases')


if __name__ == '__main__':
    main()
