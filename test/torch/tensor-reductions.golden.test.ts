// PyTorch's everyday reductions, shape functions, distances, constructors and random fills
// (torch.prod, torch.cov, torch.histogram, torch.movedim, torch.vsplit, torch.cdist, x.uniform_()...)
// against PyTorch 1.13 (test/golden/torch/tensor_reductions.json, from
// scripts/golden/tensor_reductions.py): each output's dtype and shape, integer and bool values
// exactly, float values and the gradients of the differentiable ones to 1e-12, and the random
// fills' draws after the same seed. Then the Tensor methods, the top-level forms of the core
// methods, the constructors, the named argument errors, and leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import {
  checkGoldenCase,
  readTensorGolden,
  type Data,
  type GoldenCase,
  type Inputs,
} from './tensor-golden.js';
import { ArgumentError } from '../../src/util/arguments.js';
import { TENSOR_MORE_METHODS } from '../../src/torch/tensor-methods-more.js';
import { assertClose } from '../helpers.js';

type T = torch.Tensor;
const golden = readTensorGolden<{
  inputs: Record<string, Data>;
  cases: GoldenCase[];
  random: { label: string; seed: number; output: Data }[];
}>('tensor_reductions.json');
const TOLERANCE = 1e-12;

function same(actual: T, expected: Data, what: string, tolerance = TOLERANCE): void {
  assert.equal(actual.dtype, expected.dtype, `${what}: dtype`);
  assert.deepEqual(actual.shape, expected.shape, `${what}: shape`);
  if (expected.dtype.startsWith('float'))
    assertClose(actual.toFloat64Array(), expected.data, tolerance, 0, what);
  else assert.deepEqual(actual.toNumbers(), expected.data, `${what}: values`);
}

/** Runs `fn` on fresh leaves of the golden inputs and checks its outputs and gradients. */
function checkCase(c: GoldenCase, fn: (inputs: Inputs) => T[]): void {
  checkGoldenCase(golden.inputs, c, fn, same);
}

const b = (i: Inputs): T => i.mask!.bool();

// The golden script's cases, by label (`i` holds its inputs by name).
const cases: Record<string, (i: Inputs) => T[]> = {
  prod: (i) => [torch.prod(i.M!), i.M!.prod(1), torch.prod(i.M!, 0, true)],
  'prod.int': (i) => [i.im!.prod(), torch.prod(i.im!, 1), torch.prod(i.im!, 1, false, { dtype: 'float64' })],
  argmin: (i) => [torch.argmin(i.M!), i.M!.argmin(1), torch.argmin(i.im!, 0, true)],
  amin: (i) => [torch.amin(i.M!), i.T!.amin([0, 2]), torch.amin(i.M!, 1, true)],
  aminmax: (i) => [...torch.aminmax(i.M!), ...i.im!.aminmax({ dim: 1, keepdim: true })],
  anyAll: (i) => [torch.any(b(i)), b(i).any(1), torch.all(b(i)), b(i).all(1, true), torch.all(i.im!, 0)],
  countNonzero: (i) => [
    torch.countNonzero(i.im!),
    i.im!.countNonzero(1),
    torch.countNonzero(i.T!.gt(0), [0, 2]),
  ],
  isclose: (i) => [
    torch.isclose(i.near!, i.near2!),
    i.near!.isclose(i.near2!, 1e-5, 1e-8, true),
    torch.isclose(i.near!, i.near2!, 0.1, 0),
  ],
  logdet: (i) => [torch.logdet(i.S!), i.Sb!.logdet()],
  cov: (i) => [
    torch.cov(i.M!),
    i.M!.cov({ correction: 0 }),
    torch.cov(i.M!, { fweights: i.fw!, aweights: i.aw! }),
    torch.cov(i.x!),
  ],
  corrcoef: (i) => [i.M!.corrcoef()],
  trapezoid: (i) => [
    torch.trapezoid(i.M!),
    torch.trapezoid(i.M!, null, { dx: 0.5, dim: 0 }),
    torch.trapezoid(i.M!, i.xs!),
  ],
  cumulativeTrapezoid: (i) => [
    torch.cumulativeTrapezoid(i.M!),
    torch.cumulativeTrapezoid(i.M!, null, { dx: 0.5, dim: 0 }),
    torch.cumulativeTrapezoid(i.M!, i.xs!),
  ],
  histogram: (i) => [
    ...torch.histogram(i.x!, 4),
    ...i.M!.histogram(3, { range: [-1, 1], weight: i.W!, density: true }),
    ...torch.histogram(i.x!, i.edges!),
  ],
  cdist: (i) => [
    torch.cdist(i.A!, i.B!),
    torch.cdist(i.A!, i.B!, 1),
    torch.cdist(i.A!, i.B!, 2, 'use_mm_for_euclid_dist'),
    torch.cdist(i.A!, i.B!, Infinity),
  ],
  pdist: (i) => [torch.pdist(i.A!), torch.pdist(i.A!, 1)],
  distances: (i) => [torch.cosineSimilarity(i.M!, i.M2!), torch.pairwiseDistance(i.A!, i.A2!)],
  movedim: (i) => [torch.movedim(i.T!, 0, -1), i.T!.movedim([0, 1], [2, 0]), torch.moveaxis(i.T!, 1, 0)],
  swapaxes: (i) => [torch.swapaxes(i.T!, 0, 2), i.T!.swapdims(1, 2)],
  unflatten: (i) => [torch.unflatten(i.T!, 2, [2, 2]), i.M!.unflatten(1, [-1, 2]), torch.flatten(i.T!, 1)],
  ravel: (i) => [torch.ravel(i.T!.transpose(0, 2))],
  stacks: (i) => [
    torch.vstack([i.M!, i.M2!]),
    torch.vstack([i.x!, i.y!]),
    torch.hstack([i.M!, i.M2!]),
    torch.hstack([i.x!, i.y!]),
    torch.dstack([i.M!, i.M2!]),
    torch.columnStack([i.x!, i.y!]),
    torch.rowStack([i.x!, i.y!]),
  ],
  'stacks.int': (i) => [torch.vstack([i.im!, i.im!]), torch.columnStack([i.i!, i.i!])],
  splits: (i) => [
    ...torch.vsplit(i.M!, [1]),
    ...i.M!.vsplit(3),
    ...torch.hsplit(i.M!, 2),
    ...i.x!.hsplit([2, 3]),
    ...torch.dsplit(i.T!, 2),
    ...i.T!.dsplit([1, 3]),
  ],
  atleast: (i) => [torch.atleast1d(i.x!.select(0, 0)), torch.atleast2d(i.x!), ...torch.atleast3d(i.M!, i.x!)],
  flips: (i) => [torch.fliplr(i.M!), i.M!.flipud(), torch.flipud(i.x!)],
  diagflat: (i) => [
    torch.diagflat(i.v!),
    i.M!.slice(0, 0, 2).slice(1, 0, 2).diagflat(1),
    torch.diagflat(i.v!, -2),
  ],
  blockDiag: (i) => [torch.blockDiag(i.M!, i.v!, i.x!.select(0, 0), i.S!)],
  take: (i) => [torch.take(i.M!, i.idx!), i.im!.take(i.idx!)],
  put: (i) => [torch.put(i.M!, i.idx!, i.src!.reshape(2, 2)), i.M!.put(i.idx!, i.src!.reshape(2, 2), true)],
  indexPut: (i) => [
    torch.indexPut(i.M!, [i.rows!, i.cols!], i.v!),
    i.M!.indexPut([i.rows!, i.cols!], i.v!, true),
    torch.indexPut(i.M!, [i.rows!], i.M2!.select(0, 0)),
  ],
  isin: (i) => [
    torch.isin(i.i!, i.test!),
    torch.isin(i.i!, i.test!, { invert: true }),
    torch.isin(i.i!, 3),
    torch.isin(5, i.test!),
  ],
  msort: (i) => [torch.msort(i.M!), i.im!.msort()],
};

// The random fills and draws, by label: each runs after torch.manualSeed(seed).
const F = (...shape: number[]): T => torch.empty(shape, 'float64');
const draws: Record<string, () => T> = {
  uniform_: () => F(7).uniform_(-2, 3),
  normal_: () => F(2, 3).normal_(1.5, 0.5),
  bernoulli_: () => F(8).bernoulli_(0.3),
  'bernoulli_.tensor': () => F(5).bernoulli_(torch.tensor([0, 0.2, 0.5, 0.9, 1], { dtype: 'float64' })),
  exponential_: () => F(6).exponential_(2),
  geometric_: () => F(6).geometric_(0.25),
  cauchy_: () => F(6).cauchy_(1, 0.5),
  logNormal_: () => F(6).logNormal_(0.5, 0.25),
  random_: () => torch.empty([6], 'int64').random_(-5, 5),
  'random_.to': () => torch.empty([6], 'int64').random_(100),
  'random_.float': () => F(4).random_(3, 9),
  'uniform_.float32': () => torch.empty([5], 'float32').uniform_(),
  randLike: () => torch.randLike(F(2, 3)),
  randnLike: () => torch.randnLike(F(4)),
  randintLike: () => torch.randintLike(F(5), 10),
  'randintLike.low': () => torch.randintLike(torch.empty([5], 'int64'), -3, 4),
};

test('reductions, shape functions and distances match PyTorch 1.13: dtypes, values and gradients to 1e-12', () => {
  assert.deepEqual(
    golden.cases.map((c) => c.label).sort(),
    Object.keys(cases).sort(),
    'every golden case is run, and only those',
  );
  const before = torch.liveTensors();
  for (const c of golden.cases) checkCase(c, cases[c.label]!);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test("random fills and *Like draws after manualSeed are PyTorch's after manual_seed", () => {
  assert.deepEqual(golden.random.map((r) => r.label).sort(), Object.keys(draws).sort());
  const before = torch.liveTensors();
  for (const r of golden.random)
    torch.tidy(() => {
      torch.manualSeed(r.seed);
      // float32 draws are compared in float32's precision.
      same(draws[r.label]!(), r.output, r.label, r.output.dtype === 'float32' ? 1e-7 : TOLERANCE);
    });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('every attached method is its function on the tensor, not enumerable; fills return the tensor', () => {
  const proto = torch.Tensor.prototype as unknown as Record<string, unknown>;
  for (const name of TENSOR_MORE_METHODS) {
    assert.equal(typeof proto[name], 'function', `Tensor.${name}`);
    assert.equal(Object.getOwnPropertyDescriptor(proto, name)!.enumerable, false, `Tensor.${name}`);
  }
  torch.tidy(() => {
    const x = torch.zeros([3], 'float64');
    assert.equal(x.uniform_(), x);
    assert.equal(x.indexPut_([torch.tensor([1], { dtype: 'int64' })], torch.scalarTensor(5, 'float64')), x);
    assert.deepEqual(
      x
        .put_(torch.tensor([0], { dtype: 'int64' }), torch.ones([1], 'float64'), true)
        .slice(0, 0, 2)
        .toNumbers()[1],
      5,
    );
    assert.equal(Object.keys(x).includes('prod'), false);
  });
});

test('the top-level forms of the core methods give what the methods give', () => {
  torch.tidy(() => {
    const M = torch.arange(0, 12, 1, 'float64').reshape(3, 4).sub(5).mul(0.5);
    const eq = (a: T, e: T, what: string): void => assert.ok(torch.equal(a, e), what);
    eq(torch.sum(M, 1), M.sum(1), 'sum');
    eq(torch.mean(M), M.mean(), 'mean');
    eq(torch.max(M), M.max(), 'max');
    eq(torch.max(M, 0)[1], M.max(0)[1], 'max.dim');
    eq(torch.min(M, 1, true)[0], M.min(1, true)[0], 'min.dim');
    eq(torch.max(M, M.flip(0)), M.maximum(M.flip(0)), 'max.other');
    eq(torch.min(M, M.flip(1)), M.minimum(M.flip(1)), 'min.other');
    eq(torch.amax(M, 0), M.amax(0), 'amax');
    eq(torch.argmax(M, 1), M.argmax(1), 'argmax');
    eq(torch.logsumexp(M, 1), M.logsumexp(1), 'logsumexp');
    eq(torch.var(M, 1, 0), M.var(1, 0), 'var');
    eq(torch.std(M, null, 1, true), M.std(null, 1, true), 'std');
    eq(torch.norm(M, 1), M.norm(1), 'norm');
    eq(torch.softmax(M, 1), M.softmax(1), 'softmax');
    eq(torch.logSoftmax(M, 0), M.logSoftmax(0), 'logSoftmax');
    eq(torch.clone(M), M, 'clone');
    eq(torch.detach(M), M, 'detach');
    eq(torch.transpose(M, 0, 1), M.t(), 'transpose');
    eq(torch.t(M), M.transpose(0, 1), 't');
    eq(torch.permute(M, [1, 0]), M.t(), 'permute');
    eq(torch.reshape(M, [2, -1]), M.reshape(2, 6), 'reshape');
    eq(torch.squeeze(torch.unsqueeze(M, 1)), M, 'squeeze/unsqueeze');
    eq(torch.narrow(M, 1, 1, 2), M.narrow(1, 1, 2), 'narrow');
    eq(torch.select(M, 0, 2), M.select(0, 2), 'select');
    eq(
      torch.indexSelect(M, 1, torch.tensor([3, 0], { dtype: 'int64' })),
      M.indexSelect(1, torch.tensor([3, 0], { dtype: 'int64' })),
      'indexSelect',
    );
    assert.equal(torch.unbind(M, 1).length, 4);
    assert.equal(torch.allclose(M, M.add(1e-9)), true);
    assert.equal(M.allclose(M.add(1e-3)), false);
    assert.equal(torch.equal(M, M.clone()), true);
    assert.equal(M.equal(M.reshape(4, 3)), false);
  });
});

test("constructors take the source tensor's dtype and device unless told", () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.ones([2], 'int32');
    const z = x.newZeros([2, 3]);
    assert.equal(z.dtype, 'int32');
    assert.deepEqual(z.shape, [2, 3]);
    assert.deepEqual(x.newOnes([2], { dtype: 'float64' }).toNumbers(), [1, 1]);
    const f = x.newFull([3], 7);
    assert.equal(f.dtype, 'int32');
    assert.deepEqual(f.toNumbers(), [7, 7, 7]);
    assert.deepEqual(x.newEmpty([4, 0]).shape, [4, 0]);
    const t = x.newTensor([
      [1, 2],
      [3, 4],
    ]);
    assert.equal(t.dtype, 'int32');
    assert.deepEqual(t.shape, [2, 2]);
    assert.equal(x.newTensor([1.5], { dtype: 'float64' }).item(), 1.5);
    assert.equal(x.newZeros([1]).device.name, 'cpu');
    const e = torch.emptyLike(torch.zeros([2, 5], 'float64'));
    assert.equal(e.dtype, 'float64');
    assert.deepEqual(e.shape, [2, 5]);
    const l = torch.fullLike(x, 3, { dtype: 'float32' });
    assert.equal(l.dtype, 'float32');
    assert.deepEqual(l.toNumbers(), [3, 3]);
    assert.equal(torch.randLike(x, { dtype: 'float64' }).dtype, 'float64');
    assert.equal(x.viewAs(torch.zeros([2, 1])).ndim, 2);
    assert.deepEqual(torch.arange(0, 6, 1, 'float64').reshapeAs(torch.zeros([3, 2])).shape, [3, 2]);
    assert.equal(x.typeAs(torch.zeros([1], 'float64')).dtype, 'float64');
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('bad arguments name the function and the argument', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.tensor([1, 2, 3], { dtype: 'float64' });
    const M = torch.ones([2, 3], 'float64');
    const I = torch.tensor([0, 1], { dtype: 'int64' });
    const throwsNamed = (fn: () => unknown, pattern: RegExp): void =>
      assert.throws(fn, (e: unknown) => e instanceof ArgumentError && pattern.test((e as Error).message));
    throwsNamed(() => torch.prod(x, 1), /^prod: dim must be an integer >= -1 and <= 0, got 1/);
    throwsNamed(() => torch.amin(M, [0, 5]), /^amin: dim\[1\] must be an integer/);
    throwsNamed(() => torch.any([1] as unknown as T), /^any: input must be a Tensor/);
    throwsNamed(() => torch.isclose(x, x, -1), /^isclose: rtol must be a finite number >= 0/);
    throwsNamed(() => torch.logdet(M), /^logdet: input must be a square matrix/);
    throwsNamed(() => torch.cov(torch.ones([2, 2, 2])), /^cov: input must be a 1-d or 2-d tensor/);
    throwsNamed(() => torch.cov(M, { correction: -1 }), /^cov: options.correction must be an integer >= 0/);
    throwsNamed(
      () => torch.trapezoid(x, x, { dx: 2 }),
      /^trapezoid: options.dx must be absent when x is given/,
    );
    throwsNamed(() => torch.histogram(I, 3), /^histogram: input must be a float32 or float64 tensor/);
    throwsNamed(
      () => torch.histogram(x, 3, { range: [2, 1] }),
      /^histogram: options.range must be a \[min, max\]/,
    );
    throwsNamed(
      () => torch.cdist(M, torch.ones([2, 4], 'float64')),
      /^cdist: x2 must be a tensor with as many features/,
    );
    throwsNamed(
      () => torch.cdist(M, M, 2, 'fast' as 'use_mm_for_euclid_dist'),
      /^cdist: computeMode must be one of/,
    );
    throwsNamed(() => torch.pdist(x), /^pdist: input must be a matrix/);
    throwsNamed(
      () => torch.movedim(M, [0, 1], [1]),
      /^movedim: destination must be as many dimensions as source/,
    );
    throwsNamed(() => torch.vsplit(x, 2), /^vsplit: input must be a tensor of at least 2 dimension/);
    throwsNamed(
      () => torch.hsplit(M, 2),
      /^hsplit: indicesOrSections must be a number of sections that divides/,
    );
    throwsNamed(() => torch.fliplr(x), /^fliplr: input must be a tensor of at least 2 dimension/);
    throwsNamed(() => torch.take(M, x), /^take: index must be an integer tensor/);
    throwsNamed(() => torch.put(M, I, x), /^put: source must be as many elements as index/);
    throwsNamed(() => M.indexPut_([I, I, I], x), /^indexPut_: indices must be at most 2 index tensors/);
    throwsNamed(
      () => torch.isin(x, 'a' as unknown as number),
      /^isin: testElements must be a Tensor or a number/,
    );
    throwsNamed(() => torch.atleast2d(), /^atleast2d: tensors must be at least one Tensor/);
    throwsNamed(() => x.newZeros([-1]), /^newZeros: size\[0\] must be an integer >= 0/);
    throwsNamed(() => torch.randnLike(I), /^randnLike: options.dtype must be a floating-point dtype/);
    throwsNamed(() => torch.randintLike(x, 5, 5), /^randintLike: high must be an integer >= 6/);
    throwsNamed(() => I.clone().uniform_(), /^uniform_: input must be a floating-point tensor/);
    throwsNamed(() => x.clone().uniform_(2, 1), /^uniform_: to must be a finite number >= 2/);
    throwsNamed(() => x.clone().bernoulli_(1.5), /^bernoulli_: p must be a finite number >= 0 and <= 1/);
    throwsNamed(() => x.clone().geometric_(0), /^geometric_: p must be a finite number > 0 and <= 1/);
    throwsNamed(() => x.clone().exponential_(0), /^exponential_: lambd must be a finite number > 0/);
    throwsNamed(() => I.clone().random_(3, 3), /^random_: to must be an integer >= 4/);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
