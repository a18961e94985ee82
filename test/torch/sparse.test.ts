// Sparse COO tensors against PyTorch 1.13 (test/golden/torch/sparse.json, from
// scripts/golden/sparse.py): creation and coalesce of duplicates, toSparse/toDense round trips,
// torch.sparse's mm/addmm (values and gradients), sum and softmax, the sparse gradients of
// Embedding and EmbeddingBag, and several SparseAdam, SGD and Adagrad steps from the same weights;
// then the named errors, and no tensor left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, optim } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Coo {
  shape: number[];
  indices: number[];
  values: number[];
  nnz: number;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'sparse.json'), 'utf8'));
const f64 = (data: number[], shape?: number[]) =>
  torch.tensor(Float64Array.from(data), { shape: shape ?? [data.length] });
const int64 = (data: number[] | number[][]) => torch.tensor(data as number[], { dtype: 'int64' });

/** Compares a sparse tensor, coalesced, with a golden one (indices exactly, values to `tol`). */
function assertCoo(actual: torch.Tensor, expected: Coo, tol = 1e-12): void {
  torch.tidy(() => {
    const c = actual.coalesce();
    assert.deepEqual(c.shape, expected.shape);
    assert.equal(c.nnz, expected.nnz);
    assert.deepEqual(c.indices().toNumbers(), expected.indices);
    assertClose(c.values().toFloat64Array(), expected.values, tol);
  });
}

test('sparseCooTensor: duplicates kept until coalesce, which sums them; dense values and inferred size', () => {
  const g = golden.creation;
  const live = torch.liveTensors();
  torch.tidy(() => {
    const s = torch.sparseCooTensor(g.indices, f64(g.values), g.size);
    assert.equal(s.isSparse, true);
    assert.equal(s.layout, 'sparse_coo');
    assert.equal(s.nnz, g.nnz_before);
    assert.equal(s.isCoalesced(), false);
    assert.equal(s.sparseDim(), 2);
    assert.equal(s.denseDim(), 0);
    assert.deepEqual(s.toNumbers(), g.dense);
    assert.deepEqual(s.toDense().toNumbers(), g.dense);
    assertCoo(s, g.coalesced);
    assert.equal(s.coalesce().isCoalesced(), true);
    assert.match(String(s), /layout=sparse_coo/);
    assert.deepEqual(torch.sparseCooTensor(g.indices, g.values).shape, g.inferred_shape);
    const d = torch.ones([2]);
    assert.equal(d.isSparse, false);
    assert.equal(d.layout, 'strided');
    assert.equal(torch.sparseCooTensor([[0]], [5]).item(), 5);
    const leaf = torch.sparseCooTensor([[0]], [5], [2], { dtype: 'float64', requiresGrad: true });
    assert.equal(leaf.requiresGrad, true);
    assert.equal(leaf.dtype, 'float64');
  });
  assert.equal(torch.liveTensors(), live);
});

test('toSparse with a dense dimension and back', () => {
  const g = golden.to_sparse;
  torch.tidy(() => {
    const x = f64(g.dense, g.shape);
    const h = x.toSparse(1);
    assert.equal(h.sparseDim(), g.sparse_dim);
    assert.equal(h.denseDim(), g.dense_dim);
    assert.deepEqual(h.indices().toNumbers(), g.indices);
    assert.deepEqual(h.values().shape, g.values_shape);
    assertClose(h.values().toFloat64Array(), g.values, 0);
    assert.deepEqual(h.toDense().toNumbers(), g.dense);
    assert.deepEqual(x.toSparse().toDense().toNumbers(), g.dense);
  });
});

test('sparse.mm: values and the gradients of both (sparse for the sparse one); addmm', () => {
  const g = golden.mm;
  const live = torch.liveTensors();
  torch.tidy(() => {
    const a = f64(g.a, [4, 5]).toSparse().requiresGrad_();
    const b = f64(g.b, [5, 3]).requiresGrad_();
    const out = torch.sparse.mm(a, b);
    assertClose(out.toFloat64Array(), g.out, 1e-12);
    out
      .mul(f64(g.upstream, [4, 3]))
      .sum()
      .backward();
    assertCoo(a.grad!, g.grad_a);
    assertClose(b.grad!.toFloat64Array(), g.grad_b, 1e-12);
    const sum = torch.sparse.addmm(f64(g.c, [4, 3]), a.detach(), b.detach(), { beta: 0.5, alpha: 2 });
    assertClose(sum.toFloat64Array(), g.addmm, 1e-12);
  });
  assert.equal(torch.liveTensors(), live);
});

test('sparse.sum, softmax and logSoftmax over the stored entries', () => {
  const g = golden.creation;
  const r = golden.reductions;
  torch.tidy(() => {
    const s = torch.sparseCooTensor(g.indices, f64(g.values), g.size);
    assertClose([torch.sparse.sum(s).item()], [r.sum_all], 1e-12);
    assertClose(torch.sparse.sum(s, 1).toDense().toFloat64Array(), r.sum_dim1, 1e-12);
    assertClose(torch.sparse.softmax(s.coalesce(), 1).toDense().toFloat64Array(), r.softmax_dense, 1e-12);
    assertCoo(torch.sparse.logSoftmax(s.coalesce(), 1), r.log_softmax);
  });
});

test('Embedding and EmbeddingBag with sparse: true give PyTorch sparse gradients', () => {
  const g = golden.embedding;
  const live = torch.liveTensors();
  const weight = f64(g.weight, [6, 3]);
  const emb = nn.Embedding.fromPretrained(weight, { freeze: false, sparse: true });
  const bag = nn.EmbeddingBag.fromPretrained(weight, { freeze: false, sparse: true, mode: 'sum' });
  assert.equal(String(emb.extraRepr()), '6, 3, sparse=True');
  torch.tidy(() => {
    emb
      .forward(int64(g.input))
      .mul(f64(g.upstream, [2, 3, 3]))
      .sum()
      .backward();
    const grad = emb.weight.grad!;
    assert.equal(grad.isSparse, true);
    assert.equal(grad.nnz, g.grad_uncoalesced_nnz);
    assertCoo(grad, g.grad);
    bag
      .forward(int64(g.bag_input), int64(g.bag_offsets))
      .mul(f64(g.bag_upstream, [2, 3]))
      .sum()
      .backward();
    assertCoo(bag.weight.grad!, g.bag_grad);
    const functional = weight.clone().requiresGrad_();
    nn.functional.embedding(int64(g.input), functional, { sparse: true }).sum().backward();
    assert.equal(functional.grad!.isSparse, true);
  });
  emb.dispose();
  bag.dispose();
  weight.dispose();
  assert.equal(torch.liveTensors(), live);
});

test('SparseAdam, SGD (with momentum) and Adagrad on sparse gradients, as PyTorch, in float64 and float32', () => {
  const makers: Record<string, (p: torch.Tensor[]) => optim.Optimizer<{ lr: number }>> = {
    sparse_adam: (p) => new optim.SparseAdam(p, { lr: 0.1 }),
    sparse_adam_betas: (p) => new optim.SparseAdam(p, { lr: 0.05, betas: [0.8, 0.99], eps: 1e-6 }),
    sgd: (p) => new optim.SGD(p, { lr: 0.1 }),
    sgd_momentum: (p) => new optim.SGD(p, { lr: 0.1, momentum: 0.9 }),
    adagrad: (p) => new optim.Adagrad(p, { lr: 0.5, lrDecay: 0.01 }),
  };
  const live = torch.liveTensors();
  for (const [dtype, tol] of [
    ['float64', 1e-12],
    ['float32', 1e-6],
  ] as const) {
    for (const [name, make] of Object.entries(makers)) {
      const weight = torch.tidy(() => f64(golden.embedding.weight, [6, 3]).to(dtype));
      const emb = nn.Embedding.fromPretrained(weight, { freeze: false, sparse: true });
      const opt = make(emb.parameters());
      (golden.batches as number[][]).forEach((batch, k) => {
        opt.zeroGrad();
        torch.tidy(() =>
          emb
            .forward(int64(batch))
            .mul(f64(golden.upstreams[k], [batch.length, 3]).to(dtype))
            .sum()
            .backward(),
        );
        opt.step();
      });
      assertClose(emb.weight.toFloat64Array(), golden.optimizers[dtype][name], tol, 0, `${name} ${dtype}`);
      opt.dispose();
      emb.dispose();
      weight.dispose();
    }
  }
  assert.equal(torch.liveTensors(), live);
});

test('clipGradNorm_ measures and scales a sparse gradient; zeroGrad(false) zeroes it', () => {
  const live = torch.liveTensors();
  const weight = f64(golden.embedding.weight, [6, 3]);
  const emb = nn.Embedding.fromPretrained(weight, { freeze: false, sparse: true });
  torch.tidy(() =>
    emb
      .forward(int64([1, 4, 1]))
      .mul(f64(golden.upstreams[0], [3, 3]))
      .sum()
      .backward(),
  );
  const norm = nn.utils.clipGradNorm_(emb.parameters(), 0.5);
  assertClose([norm.item()], [golden.clip.norm2], 1e-12);
  torch.tidy(() => {
    const scaled = golden.clip.grad.values.map((v: number) => (v * 0.5) / (golden.clip.norm2 + 1e-6));
    assertCoo(emb.weight.grad!, { ...golden.clip.grad, values: scaled });
  });
  const opt = new optim.SparseAdam(emb.parameters());
  opt.zeroGrad(false);
  torch.tidy(() => assert.equal(emb.weight.grad!.toDense().abs().sum().item(), 0));
  opt.dispose();
  norm.dispose();
  emb.dispose();
  weight.dispose();
  assert.equal(torch.liveTensors(), live);
});

test('named errors: bad COO arguments, dense-only members, optimizers that refuse a layout', () => {
  const live = torch.liveTensors();
  const throwsNamed = (fn: () => unknown, pattern: RegExp) =>
    assert.throws(
      () => torch.tidy(fn as () => void),
      (e: Error) => e.name === 'ArgumentError' && pattern.test(e.message),
    );
  throwsNamed(
    () => torch.sparseCooTensor([[0, 5]], [1, 2], [3]),
    /sparseCooTensor: size\[0\] is 3 but indices\[0\] holds 5/,
  );
  throwsNamed(
    () => torch.sparseCooTensor([[0, -1]], [1, 2]),
    /sparseCooTensor: indices\[0\]\[1\] is negative/,
  );
  throwsNamed(
    () => torch.sparseCooTensor(torch.tensor([[0, 1]]), [1, 2]),
    /indices must be int64.*\.long\(\)/,
  );
  throwsNamed(() => torch.sparseCooTensor([0, 1], [1, 2]), /indices must be 2-d \[sparseDim, nnz\]/);
  throwsNamed(() => torch.sparseCooTensor([[0, 1]], [1, 2, 3]), /values must have one row per column/);
  throwsNamed(() => torch.sparseCooTensor([[0, 1]], [1, 2], [3, 2]), /size must have 1 entries/);
  throwsNamed(() => torch.sparseCooTensor([[0]], [5]).strides, /Tensor\.strides: .*toDense\(\)/);
  throwsNamed(() => torch.sparseCooTensor([[0]], [5]).view(1), /Tensor\.view: .*toDense\(\)/);
  throwsNamed(() => torch.sparseCooTensor([[0]], [5]).reshape(1), /Tensor\.reshape: .*toDense\(\)/);
  throwsNamed(() => torch.ones([2]).indices(), /Tensor\.indices: needs a sparse COO tensor.*toSparse\(\)/);
  throwsNamed(() => torch.ones([2]).nnz, /Tensor\.nnz: needs a sparse COO tensor/);
  throwsNamed(
    () => torch.sparse.mm(torch.ones([2, 2]), torch.ones([2, 2])),
    /sparse\.mm: mat1 must be a sparse COO tensor/,
  );
  throwsNamed(() => torch.ones([2]).toSparse().toSparse(), /Tensor\.toSparse: the tensor is sparse already/);
  throwsNamed(
    () => new nn.EmbeddingBag(5, 3, { mode: 'max', sparse: true }),
    /EmbeddingBag: mode 'max' does not support sparse gradients/,
  );
  const emb = new nn.Embedding(5, 3, { sparse: true });
  const dense = new nn.Embedding(5, 3);
  const step = (e: nn.Embedding, opt: optim.Optimizer<{ lr: number }>) => {
    torch.tidy(() =>
      e
        .forward(int64([1, 2]))
        .sum()
        .backward(),
    );
    try {
      opt.step();
    } finally {
      opt.dispose();
    }
  };
  throwsNamed(
    () => step(emb, new optim.Adam(emb.parameters())),
    /Adam\.step: parameter 0 has a sparse gradient.*SparseAdam/,
  );
  throwsNamed(
    () => step(emb, new optim.RMSprop(emb.parameters())),
    /RMSprop\.step: parameter 0 has a sparse gradient/,
  );
  throwsNamed(
    () => step(dense, new optim.SparseAdam(dense.parameters())),
    /SparseAdam\.step: .*dense gradient.*Adam/,
  );
  throwsNamed(
    () => step(emb, new optim.SGD(emb.parameters(), { lr: 0.1, weightDecay: 0.1 })),
    /SGD\.step: weightDecay does not work with sparse gradients/,
  );
  throwsNamed(
    () => step(emb, new optim.Adagrad(emb.parameters(), { weightDecay: 0.1 })),
    /Adagrad\.step: weightDecay does not work with sparse gradients/,
  );
  throwsNamed(
    () => new optim.SparseAdam([torch.ones([2]).toSparse()]),
    /SparseAdam: the parameters at indices \[0\] are sparse/,
  );
  emb.dispose();
  dense.dispose();
  assert.equal(torch.liveTensors(), live);
});
