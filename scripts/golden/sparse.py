#!/usr/bin/env python3
"""Writes test/golden/torch/sparse.json from PyTorch 1.13: sparse COO tensors (creation with
duplicate indices and their coalesce, to_sparse with a dense dimension), torch.sparse.mm and
addmm with their gradients, torch.sparse.sum and softmax, the sparse gradients of Embedding and
EmbeddingBag (coalesced indices and values), and several steps of SparseAdam, SGD (with and
without momentum) and Adagrad on sparse gradients from the same starting weights.

Run: /usr/bin/python3 scripts/golden/sparse.py"""
import json
import os

import torch
import torch.nn as nn

torch.set_num_threads(1)
ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..'))


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).double().tolist()]


def ints(t):
    return [int(v) for v in t.reshape(-1).tolist()]


def coo(s):
    s = s.coalesce()
    return {'shape': list(s.shape), 'indices': ints(s.indices()), 'values': flat(s.values()),
            'nnz': s._nnz()}


# creation: duplicates at (1, 2) and (0, 0), size given
indices = [[1, 0, 1, 0], [2, 0, 2, 1]]
values = [1.5, -2.0, 0.25, 4.0]
s = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values, dtype=torch.float64), (2, 3))
creation = {'indices': indices, 'values': values, 'size': [2, 3], 'nnz_before': s._nnz(),
            'dense': flat(s.to_dense()), 'coalesced': coo(s),
            'inferred_shape': list(torch.sparse_coo_tensor(torch.tensor(indices),
                                                          torch.tensor(values)).shape)}

# to_sparse with one sparse dimension (rows) and a dense one
x = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 3.0, 0.0]],
                 dtype=torch.float64)
hybrid = x.to_sparse(1)
to_sparse = {'dense': flat(x), 'shape': list(x.shape), 'sparse_dim': hybrid.sparse_dim(),
             'dense_dim': hybrid.dense_dim(), 'indices': ints(hybrid.indices()),
             'values': flat(hybrid.values()), 'values_shape': list(hybrid.values().shape)}

# sparse.mm (sparse @ dense) and addmm, with gradients
torch.manual_seed(1)
a_dense = torch.randn(4, 5, dtype=torch.float64) * (torch.rand(4, 5) > 0.6)
b = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
a = a_dense.to_sparse().requires_grad_(True)
out = torch.sparse.mm(a, b)
up = torch.randn(4, 3, dtype=torch.float64)
(out * up).sum().backward()
c = torch.randn(4, 3, dtype=torch.float64)
addmm = torch.sparse.addmm(c, a.detach(), b.detach(), beta=0.5, alpha=2.0)
mm = {'a': flat(a_dense), 'b': flat(b), 'out': flat(out), 'upstream': flat(up),
      'grad_a': coo(a.grad), 'grad_b': flat(b.grad), 'c': flat(c), 'addmm': flat(addmm)}

# sparse.sum and softmax over the stored entries
sum_all = torch.sparse.sum(s).item()
sum_dim1 = flat(torch.sparse.sum(s, dim=1).to_dense())
softmax = flat(torch.sparse.softmax(s.coalesce(), 1).to_dense())
log_softmax = coo(torch.sparse.log_softmax(s.coalesce(), 1))
reductions = {'sum_all': sum_all, 'sum_dim1': sum_dim1, 'softmax_dense': softmax,
              'log_softmax': log_softmax}

# Embedding / EmbeddingBag sparse gradients
W0 = torch.randn(6, 3, dtype=torch.float64)
emb_input = [[1, 4, 1], [0, 4, 5]]
emb = nn.Embedding.from_pretrained(W0.clone(), freeze=False, sparse=True)
emb_up = torch.randn(2, 3, 3, dtype=torch.float64)
(emb(torch.tensor(emb_input)) * emb_up).sum().backward()
bag = nn.EmbeddingBag.from_pretrained(W0.clone(), freeze=False, sparse=True, mode='sum')
bag_input = [1, 2, 4, 5, 4, 3]
bag_offsets = [0, 2]
bag_up = torch.randn(2, 3, dtype=torch.float64)
(bag(torch.tensor(bag_input), torch.tensor(bag_offsets)) * bag_up).sum().backward()
embedding = {'weight': flat(W0), 'input': emb_input, 'upstream': flat(emb_up),
             'grad_uncoalesced_nnz': emb.weight.grad._nnz(), 'grad': coo(emb.weight.grad),
             'bag_input': bag_input, 'bag_offsets': bag_offsets, 'bag_upstream': flat(bag_up),
             'bag_grad': coo(bag.weight.grad)}

# optimizers: 3 steps each, lookups of these index batches, loss sum(out * upstream)
batches = [[1, 4, 1], [0, 2], [4, 5, 4, 4]]
ups = [torch.randn(len(b), 3, dtype=torch.float64) for b in batches]


def run(dtype, make):
    e = nn.Embedding.from_pretrained(W0.clone().to(dtype), freeze=False, sparse=True)
    opt = make(e.parameters())
    for idx, u in zip(batches, ups):
        opt.zero_grad()
        (e(torch.tensor(idx)) * u.to(dtype)).sum().backward()
        opt.step()
    return flat(e.weight)


optimizers = {}
for dtype, name in [(torch.float64, 'float64'), (torch.float32, 'float32')]:
    optimizers[name] = {
        'sparse_adam': run(dtype, lambda p: torch.optim.SparseAdam(p, lr=0.1)),
        'sparse_adam_betas': run(dtype, lambda p: torch.optim.SparseAdam(
            p, lr=0.05, betas=(0.8, 0.99), eps=1e-6)),
        'sgd': run(dtype, lambda p: torch.optim.SGD(p, lr=0.1)),
        'sgd_momentum': run(dtype, lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
        'adagrad': run(dtype, lambda p: torch.optim.Adagrad(p, lr=0.5, lr_decay=0.01)),
    }

# clip_grad_norm_'s total norm over a sparse gradient with duplicate indices
e = nn.Embedding.from_pretrained(W0.clone(), freeze=False, sparse=True)
(e(torch.tensor([1, 4, 1])) * ups[0]).sum().backward()
clip = {'norm2': float(torch.nn.utils.clip_grad_norm_(e.parameters(), float('inf'))),
        'grad': coo(e.weight.grad)}

with open(os.path.join(ROOT, 'test', 'golden', 'torch', 'sparse.json'), 'w') as f:
    json.dump({'torch_version': torch.__version__, 'batches': batches,
               'upstreams': [flat(u) for u in ups], 'creation': creation,
               'to_sparse': to_sparse, 'mm': mm, 'reductions': reductions,
               'embedding': embedding, 'optimizers': optimizers, 'clip': clip}, f)
