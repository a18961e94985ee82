// Embedding and EmbeddingBag against PyTorch 1.13 (test/golden/torch/nn_embedding_adaptive.json,
// from scripts/golden/nn_embedding_adaptive.py): same-seed initialisation, then in float64 the
// outputs, the gradients of the inputs and the weight, and the weight after maxNorm's
// renormalisation; the padding row, fromPretrained and the reprs; then the named errors of bad
// arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Data {
  shape: number[];
  dtype: 'float64' | 'int64';
  data: number[];
}
interface ModuleCase {
  name: string;
  seed: number;
  params_init: Record<string, Data>;
  args: (Data | null)[];
  grad: boolean[];
  output: Data;
  upstream: number[];
  arg_grads: (number[] | null)[];
  param_grads: Record<string, number[] | null>;
  params_after: Record<string, Data>;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'nn_embedding_adaptive.json'), 'utf8')) as {
  embedding: ModuleCase[];
  embedding_bag: ModuleCase[];
};
const F = nn.functional;
const TOL = 1e-10;

const make = (d: Data) => torch.tensor(Float64Array.from(d.data), { shape: d.shape, dtype: d.dtype });
/** The same values in float32, as PyTorch's layers draw them before `double()`. */
const pretrained = (d: Data) => torch.tensor(Float32Array.from(d.data), { shape: d.shape });

type Lookup = nn.Embedding | nn.EmbeddingBag;
const embeddingMakers: Record<string, (c: ModuleCase) => nn.Embedding> = {
  plain: () => new nn.Embedding(7, 3),
  padding_idx: () => new nn.Embedding(7, 3, { paddingIdx: 2 }),
  padding_idx_negative: () => new nn.Embedding(7, 3, { paddingIdx: -1 }),
  max_norm: () => new nn.Embedding(7, 3, { maxNorm: 1 }),
  max_norm_l1: () => new nn.Embedding(7, 4, { maxNorm: 1.5, normType: 1 }),
  max_norm_inf: () => new nn.Embedding(7, 4, { maxNorm: 0.8, normType: Infinity }),
  scale_grad_by_freq: () => new nn.Embedding(7, 3, { scaleGradByFreq: true }),
  all_options: () => new nn.Embedding(7, 3, { paddingIdx: 4, maxNorm: 1.2, scaleGradByFreq: true }),
  one_index_1d: () => new nn.Embedding(5, 2),
  from_pretrained: (c) =>
    nn.Embedding.fromPretrained(pretrained(c.params_init.weight!), { freeze: false, paddingIdx: 1 }),
};
const bagMakers: Record<string, (c: ModuleCase) => nn.EmbeddingBag> = {
  sum_offsets: () => new nn.EmbeddingBag(10, 3, { mode: 'sum' }),
  mean_offsets: () => new nn.EmbeddingBag(10, 3),
  max_offsets: () => new nn.EmbeddingBag(10, 3, { mode: 'max' }),
  mean_2d: () => new nn.EmbeddingBag(10, 3),
  max_2d: () => new nn.EmbeddingBag(10, 2, { mode: 'max' }),
  sum_per_sample_weights: () => new nn.EmbeddingBag(10, 3, { mode: 'sum' }),
  sum_per_sample_weights_2d: () => new nn.EmbeddingBag(10, 3, { mode: 'sum' }),
  mean_padding_idx: () => new nn.EmbeddingBag(10, 3, { paddingIdx: 2 }),
  sum_padding_idx_2d: () => new nn.EmbeddingBag(10, 3, { mode: 'sum', paddingIdx: 4 }),
  mean_include_last_offset: () => new nn.EmbeddingBag(10, 3, { includeLastOffset: true }),
  sum_max_norm_scale_grad: () =>
    new nn.EmbeddingBag(10, 3, { mode: 'sum', maxNorm: 1, scaleGradByFreq: true }),
  max_from_pretrained: (c) =>
    nn.EmbeddingBag.fromPretrained(pretrained(c.params_init.weight!), { freeze: false, mode: 'max' }),
};

test('every golden case has a maker', () => {
  assert.deepEqual(golden.embedding.map((c) => c.name).sort(), Object.keys(embeddingMakers).sort());
  assert.deepEqual(golden.embedding_bag.map((c) => c.name).sort(), Object.keys(bagMakers).sort());
});

/** Same-seed initialisation (float32, as drawn), then the case in float64. */
function checkModuleCase(c: ModuleCase, build: (c: ModuleCase) => Lookup): void {
  const before = torch.liveTensors();
  torch.tidy(() => {
    torch.manualSeed(c.seed);
    const layer = build(c);
    const state = layer.stateDict();
    assert.deepEqual(Object.keys(state), Object.keys(c.params_init), `${c.name} parameter names`);
    for (const [name, p] of Object.entries(c.params_init)) {
      assert.deepEqual(state[name]!.shape, p.shape, `${c.name} shape of ${name}`);
      assertClose(state[name]!.toFloat64Array(), p.data, 0, 0, `${c.name} init ${name}`);
    }
    layer.double();
    const args = c.args.map((d, i) => (d === null ? null : c.grad[i] ? make(d).requiresGrad_() : make(d)));
    const y = (layer.forward as (...a: (torch.Tensor | null)[]) => torch.Tensor)(...args);
    assert.deepEqual(y.shape, c.output.shape, `${c.name} output shape`);
    assertClose(y.toFloat64Array(), c.output.data, TOL, 0, `${c.name} output`);
    y.mul(torch.tensor(Float64Array.from(c.upstream), { shape: y.shape }))
      .sum()
      .backward();
    c.arg_grads.forEach((g, i) => {
      if (g) assertClose(args[i]!.grad!.toFloat64Array(), g, TOL, 0, `${c.name} grad of argument ${i}`);
    });
    const named = Object.fromEntries(layer.namedParameters());
    for (const [name, g] of Object.entries(c.param_grads))
      assertClose(named[name]!.grad!.toFloat64Array(), g!, TOL, 0, `${c.name} grad ${name}`);
    // maxNorm renormalises the rows looked up, in the weight itself
    for (const [name, p] of Object.entries(c.params_after))
      assertClose(state[name]!.toFloat64Array(), p.data, TOL, 0, `${c.name} ${name} after the forward`);
    layer.dispose();
  });
  assert.equal(torch.liveTensors(), before, `${c.name}: no tensor leaks`);
}

for (const c of golden.embedding)
  test(`Embedding golden: ${c.name}`, () => checkModuleCase(c, embeddingMakers[c.name]!));
for (const c of golden.embedding_bag)
  test(`EmbeddingBag golden: ${c.name}`, () => checkModuleCase(c, bagMakers[c.name]!));

test('the padding row: zero in a new table, gradient 0, never updated by an optimizer', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const emb = new nn.Embedding(4, 3, { paddingIdx: -2 });
    assert.equal(emb.paddingIdx, 2);
    assert.deepEqual(Array.from(emb.weight.select(0, 2).toFloat64Array()), [0, 0, 0]);
    const optimizer = new torch.optim.SGD(emb.parameters(), { lr: 0.5 });
    emb
      .forward(torch.tensor([[2, 1, 2]], { dtype: 'int64' }))
      .sum()
      .backward();
    assert.deepEqual(Array.from(emb.weight.grad!.select(0, 2).toFloat64Array()), [0, 0, 0]);
    assert.deepEqual(Array.from(emb.weight.grad!.select(0, 1).toFloat64Array()), [1, 1, 1]);
    optimizer.step();
    assert.deepEqual(Array.from(emb.weight.select(0, 2).toFloat64Array()), [0, 0, 0]);
    emb.dispose();
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('fromPretrained: a copy the layer owns, frozen by default, no random draw; the reprs', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const weight = torch.tensor(
      [
        [1, 2.5],
        [3, 4],
        [5, 6],
      ],
      { dtype: 'float64' },
    );
    torch.manualSeed(3);
    const frozen = nn.Embedding.fromPretrained(weight, { paddingIdx: 0 });
    const next = torch.rand([1]).item();
    torch.manualSeed(3);
    assert.equal(torch.rand([1]).item(), next, 'fromPretrained draws no random number');
    assert.equal(frozen.weight.requiresGrad, false);
    assert.equal(frozen.weight.dtype, 'float64');
    assert.notEqual(frozen.weight, weight);
    assert.deepEqual(
      Array.from(frozen.forward(torch.tensor([0, 2], { dtype: 'int64' })).toFloat64Array()),
      [1, 2.5, 5, 6],
    );
    assert.equal(frozen.toString(), 'Embedding(3, 2, padding_idx=0)');
    frozen.dispose();
    assert.deepEqual(
      Array.from(weight.toFloat64Array()),
      [1, 2.5, 3, 4, 5, 6],
      'the caller keeps its tensor',
    );
    const bag = nn.EmbeddingBag.fromPretrained(weight, { mode: 'sum', maxNorm: 2, normType: 1 });
    assert.equal(bag.weight.requiresGrad, false);
    assert.equal(bag.toString(), 'EmbeddingBag(3, 2, max_norm=2.0, norm_type=1.0, mode=sum)');
    bag.dispose();
    const e = new nn.Embedding(5, 2, { maxNorm: 1, normType: Infinity, scaleGradByFreq: true });
    assert.equal(e.toString(), 'Embedding(5, 2, max_norm=1.0, norm_type=inf, scale_grad_by_freq=True)');
    e.dispose();
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('Embedding and EmbeddingBag: bad arguments are named errors with the remedy', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    assert.throws(
      () => new nn.Embedding(5, 2, { paddingIdx: 5 }),
      /Embedding: options\.paddingIdx must be an integer >= -5 and <= 4, got 5/,
    );
    assert.throws(
      () => new nn.Embedding(5, 2, { maxNorm: 0 }),
      /Embedding: options\.maxNorm must be a finite number > 0/,
    );
    assert.throws(
      () => new nn.Embedding(5, 2, { normType: -1 }),
      /Embedding: options\.normType must be a finite number > 0/,
    );
    assert.throws(() => new nn.Embedding(0, 2), /Embedding: numEmbeddings must be an integer >= 1/);
    assert.throws(
      () => nn.Embedding.fromPretrained(torch.zeros([3])),
      /Embedding\.fromPretrained: embeddings must be 2-d \[numEmbeddings, embeddingDim\], got \[3\]/,
    );
    assert.throws(
      () => nn.Embedding.fromPretrained(torch.zeros([3, 2]), { paddingIdx: 3 }),
      /Embedding: options\.paddingIdx must be an integer >= -3 and <= 2, got 3/,
    );
    const emb = new nn.Embedding(5, 2);
    assert.throws(
      () => emb.forward(torch.tensor([1.0, 2.0])),
      /embedding: input must hold int64 \(or int32\) indices, got float32: convert it with \.long\(\)/,
    );
    assert.throws(
      () => emb.forward(torch.tensor([1, 5], { dtype: 'int64' })),
      /embedding: an index of input is outside \[0, 5\), the weight's rows: give smaller indices or a larger table/,
    );
    emb.dispose();
    const renormed = new nn.Embedding(5, 2, { maxNorm: 1 });
    assert.throws(
      () => renormed.forward(torch.tensor([7], { dtype: 'int64' })),
      /embedding: an index of input is outside \[0, 5\), the weight's rows: give smaller indices or a larger table/,
    );
    renormed.dispose();
    assert.throws(
      () => new nn.EmbeddingBag(5, 2, { mode: 'max', scaleGradByFreq: true }),
      /EmbeddingBag: mode 'max' cannot scale the gradient by frequency: leave options\.scaleGradByFreq false/,
    );
    assert.throws(
      () => new nn.EmbeddingBag(5, 2, { mode: 'median' as never }),
      /EmbeddingBag: options\.mode must be one of 'sum', 'mean', 'max', got 'median'/,
    );
    const bag = new nn.EmbeddingBag(5, 2);
    const flat = torch.tensor([1, 2, 3], { dtype: 'int64' });
    assert.throws(
      () => bag.forward(flat),
      /embeddingBag: a 1-d input needs options\.offsets, where each bag starts/,
    );
    assert.throws(
      () => bag.forward(torch.tensor([[1, 2]], { dtype: 'int64' }), torch.tensor([0], { dtype: 'int64' })),
      /embeddingBag: a 2-d input is a batch of bags of one length: give no options\.offsets/,
    );
    assert.throws(
      () => bag.forward(flat, torch.tensor([0], { dtype: 'int32' })),
      /embeddingBag: options\.offsets \(int32\) must have the input's dtype \(int64\)/,
    );
    assert.throws(
      () => bag.forward(flat, torch.tensor([0], { dtype: 'int64' }), torch.ones([3])),
      /embeddingBag: options\.perSampleWeights needs mode 'sum', got 'mean'/,
    );
    assert.throws(
      () =>
        F.embeddingBag(flat, bag.weight, {
          offsets: torch.tensor([0], { dtype: 'int64' }),
          mode: 'sum',
          perSampleWeights: torch.ones([2]),
        }),
      /embeddingBag: options\.perSampleWeights \[2\] must have the input's shape \[3\]/,
    );
    assert.throws(
      () => bag.forward(torch.tensor([[1, 7]], { dtype: 'int64' })),
      /embeddingBag: an index of input is outside \[0, 5\), the weight's rows: give smaller indices or a larger table/,
    );
    assert.throws(
      () => bag.forward(torch.zeros([1, 2, 2], 'int64')),
      /embeddingBag: input must be 1-d \(with options\.offsets\) or 2-d \[bags, length\], got \[1, 2, 2\]/,
    );
    bag.dispose();
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
