#!/usr/bin/env python3
"""Writes test/golden/torch/nn_embedding_adaptive.json from PyTorch 1.13: Embedding (padding_idx,
max_norm with norm_type, scale_grad_by_freq, from_pretrained), EmbeddingBag (the modes sum, mean
and max, offsets or a 2-d input, include_last_offset, per_sample_weights, padding_idx, max_norm),
AdaptiveLogSoftmaxWithLoss (forward's output and loss, log_prob, predict) and
TripletMarginWithDistanceLoss (the default pairwise distance and a distance of one's own).

A module case holds the parameters as initialised from the seed (float32, as the layer draws
them), then runs in float64 (module.double()): the arguments, the output, the upstream gradient
the output was multiplied by before the sum, the gradient of each argument that takes one and of
every parameter (null where it takes none), and the parameters after the forward (max_norm
renormalises the looked-up rows in place). A triplet case holds, per reduction, the output, the
upstream and the gradients of anchor, positive and negative.

Run: /usr/bin/python3 scripts/golden/nn_embedding_adaptive.py"""
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..'))
DT = torch.float64


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).double().tolist()]


def data(t):
    dtype = 'int64' if t.dtype == torch.int64 else 'float64'
    return {'shape': list(t.shape), 'dtype': dtype, 'data': flat(t)}


def state(module):
    return {k: data(v) for k, v in module.state_dict().items()}


def long(values):
    return torch.tensor(values, dtype=torch.int64)


def module_case(name, make, args, grad, seed, call=None):
    """make(): the module, built right after manual_seed(seed); args: its forward's arguments
    (float ones in float64); grad: which of them take a gradient; call(module, *args): the
    forward (default module(*args))."""
    torch.manual_seed(seed)
    module = make()
    init = state(module)
    module.double()
    leaves = [None if a is None else a.clone().requires_grad_(True) if want else a.clone()
              for a, want in zip(args, grad)]
    out = call(module, *leaves) if call else module(*leaves)
    g = torch.Generator().manual_seed(2000 + seed)
    upstream = torch.randn(out.shape, generator=g, dtype=DT)
    (out * upstream).sum().backward()
    return {
        'name': name, 'seed': seed, 'params_init': init,
        'args': [None if a is None else data(a) for a in args], 'grad': list(grad),
        'output': data(out), 'upstream': flat(upstream),
        'arg_grads': [flat(l.grad) if want else None for l, want in zip(leaves, grad)],
        'param_grads': {k: flat(p.grad) if p.grad is not None else None for k, p in module.named_parameters()},
        'params_after': state(module),
    }


def randn(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=DT)


# Embedding: indices with repeats, so scale_grad_by_freq and the renormalisation of a row met
# twice are exercised.
IDX = long([[1, 2, 4, 1], [4, 3, 6, 2]])
embedding = [
    module_case('plain', lambda: nn.Embedding(7, 3), [IDX], [False], seed=1),
    module_case('padding_idx', lambda: nn.Embedding(7, 3, padding_idx=2), [IDX], [False], seed=2),
    module_case('padding_idx_negative', lambda: nn.Embedding(7, 3, padding_idx=-1), [IDX], [False], seed=3),
    module_case('max_norm', lambda: nn.Embedding(7, 3, max_norm=1.0), [IDX], [False], seed=4),
    module_case('max_norm_l1', lambda: nn.Embedding(7, 4, max_norm=1.5, norm_type=1.0), [IDX], [False], seed=5),
    module_case('max_norm_inf', lambda: nn.Embedding(7, 4, max_norm=0.8, norm_type=float('inf')), [IDX], [False],
                seed=6),
    module_case('scale_grad_by_freq', lambda: nn.Embedding(7, 3, scale_grad_by_freq=True), [IDX], [False], seed=7),
    module_case('all_options', lambda: nn.Embedding(7, 3, padding_idx=4, max_norm=1.2, scale_grad_by_freq=True),
                [IDX], [False], seed=8),
    module_case('one_index_1d', lambda: nn.Embedding(5, 2), [long([3, 0, 3])], [False], seed=9),
    module_case('from_pretrained', lambda: nn.Embedding.from_pretrained(randn(6, 3, seed=10).float(), freeze=False,
                                                                         padding_idx=1),
                [long([[0, 1, 5], [1, 2, 1]])], [False], seed=10),
]

# EmbeddingBag: bags by offsets (an empty bag among them), or the rows of a 2-d input.
BAG_IDX = long([1, 2, 4, 5, 4, 3, 2, 9])
BAG_OFF = long([0, 3, 3, 6])
bag = [
    module_case('sum_offsets', lambda: nn.EmbeddingBag(10, 3, mode='sum'), [BAG_IDX, BAG_OFF], [False, False],
                seed=21),
    module_case('mean_offsets', lambda: nn.EmbeddingBag(10, 3), [BAG_IDX, BAG_OFF], [False, False], seed=22),
    module_case('max_offsets', lambda: nn.EmbeddingBag(10, 3, mode='max'), [BAG_IDX, BAG_OFF], [False, False],
                seed=23),
    module_case('mean_2d', lambda: nn.EmbeddingBag(10, 3), [long([[1, 2, 4, 5], [4, 3, 2, 9]])], [False], seed=24),
    module_case('max_2d', lambda: nn.EmbeddingBag(10, 2, mode='max'), [long([[1, 7, 4], [0, 3, 3]])], [False],
                seed=25),
    module_case('sum_per_sample_weights', lambda: nn.EmbeddingBag(10, 3, mode='sum'),
                [BAG_IDX, BAG_OFF, randn(8, seed=26)], [False, False, True], seed=26),
    module_case('sum_per_sample_weights_2d', lambda: nn.EmbeddingBag(10, 3, mode='sum'),
                [long([[1, 2, 4], [4, 3, 9]]), None, randn(2, 3, seed=27)], [False, False, True], seed=27,
                call=lambda m, i, o, w: m(i, per_sample_weights=w)),
    module_case('mean_padding_idx', lambda: nn.EmbeddingBag(10, 3, padding_idx=2), [BAG_IDX, BAG_OFF],
                [False, False], seed=28),
    module_case('sum_padding_idx_2d', lambda: nn.EmbeddingBag(10, 3, mode='sum', padding_idx=4),
                [long([[1, 4, 4], [4, 3, 9]])], [False], seed=29),
    module_case('mean_include_last_offset', lambda: nn.EmbeddingBag(10, 3, include_last_offset=True),
                [BAG_IDX, long([0, 3, 5, 8])], [False, False], seed=30),
    module_case('sum_max_norm_scale_grad', lambda: nn.EmbeddingBag(10, 3, mode='sum', max_norm=1.0,
                                                                    scale_grad_by_freq=True),
                [BAG_IDX, BAG_OFF], [False, False], seed=31),
    module_case('max_from_pretrained', lambda: nn.EmbeddingBag.from_pretrained(randn(10, 2, seed=32).float(),
                                                                                 freeze=False, mode='max'),
                [BAG_IDX, BAG_OFF], [False, False], seed=32),
]


def adaptive_case(name, make, in_features, target, seed, unbatched=False):
    """The output is weighted by an upstream and the loss by loss_weight before the backward."""
    torch.manual_seed(seed)
    module = make()
    init = state(module)
    module.double()
    x = randn(*([in_features] if unbatched else [len(target), in_features]), seed=seed + 100)
    x.requires_grad_(True)
    t = long(target[0] if unbatched else target)
    out = module(x, t)
    g = torch.Generator().manual_seed(3000 + seed)
    upstream = torch.randn(out.output.shape, generator=g, dtype=DT)
    loss_weight = 1.7
    ((out.output * upstream).sum() + loss_weight * out.loss).backward()
    with torch.no_grad():
        batch = x if not unbatched else x.unsqueeze(0)
        log_prob = module.log_prob(batch)
        predict = module.predict(batch)
    return {
        'name': name, 'seed': seed, 'params_init': init,
        'input': data(x), 'target': data(t),
        'output': data(out.output), 'loss': float(out.loss), 'upstream': flat(upstream), 'loss_weight': loss_weight,
        'input_grad': flat(x.grad),
        'param_grads': {k: flat(p.grad) if p.grad is not None else None for k, p in module.named_parameters()},
        'log_prob': data(log_prob), 'predict': data(predict),
    }


adaptive = [
    adaptive_case('two_clusters', lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0),
                  8, [0, 4, 9, 2, 6, 5, 7], seed=41),
    adaptive_case('head_bias_one_cluster', lambda: nn.AdaptiveLogSoftmaxWithLoss(6, 9, [4], head_bias=True),
                  6, [1, 8, 4, 0, 5], seed=42),
    adaptive_case('empty_cluster', lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 12, [2, 5, 9], div_value=2.0),
                  8, [0, 1, 10, 11, 3], seed=43),
    adaptive_case('unbatched', lambda: nn.AdaptiveLogSoftmaxWithLoss(5, 7, [2, 4], div_value=1.5),
                  5, [5], seed=44, unbatched=True),
    # a shortlist of one: most rows' best head entry is a cluster, so predict looks into the tails
    adaptive_case('predict_in_clusters', lambda: nn.AdaptiveLogSoftmaxWithLoss(6, 8, [1, 3], div_value=1.0),
                  6, [0, 2, 7, 4, 1, 6, 3, 5], seed=45),
]


def cosine_distance(a, b):
    return 1 - F.cosine_similarity(a, b)


def triplet_case(name, shape, options, seed, distance=None):
    a, p, n = (randn(*shape, seed=seed + k) for k in range(3))
    case = {'name': name, 'distance': distance or 'default', 'options': options,
            'args': [data(a), data(p), data(n)], 'results': {}}
    fn = cosine_distance if distance == 'cosine' else None
    g = torch.Generator().manual_seed(4000 + seed)
    for reduction in ('none', 'mean', 'sum'):
        leaves = [v.clone().requires_grad_(True) for v in (a, p, n)]
        out = F.triplet_margin_with_distance_loss(*leaves, distance_function=fn, reduction=reduction,
                                                  margin=options.get('margin', 1.0), swap=options.get('swap', False))
        module = nn.TripletMarginWithDistanceLoss(distance_function=fn, reduction=reduction,
                                                  margin=options.get('margin', 1.0), swap=options.get('swap', False))
        assert torch.equal(module(*leaves), out)
        upstream = torch.randn(out.shape, generator=g, dtype=DT) if out.dim() > 0 else torch.tensor(1.0, dtype=DT)
        (out * upstream).sum().backward()
        case['results'][reduction] = {'output': data(out), 'upstream': flat(upstream),
                                      'grads': [flat(v.grad) for v in leaves]}
    return case


triplet = [
    triplet_case('default', [5, 4], {}, seed=51),
    triplet_case('margin_swap', [6, 3], {'margin': 2.5, 'swap': True}, seed=52),
    triplet_case('cosine', [5, 4], {'margin': 0.3}, seed=53, distance='cosine'),
    triplet_case('cosine_swap', [4, 6], {'margin': 0.5, 'swap': True}, seed=54, distance='cosine'),
    triplet_case('unbatched', [4], {'margin': 1.2}, seed=55),
]

with open(os.path.join(ROOT, 'test', 'golden', 'torch', 'nn_embedding_adaptive.json'), 'w') as f:
    json.dump({'torch_version': torch.__version__, 'embedding': embedding, 'embedding_bag': bag,
               'adaptive': adaptive, 'triplet': triplet}, f)
