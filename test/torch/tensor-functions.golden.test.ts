// PyTorch's everyday tensor functions (torch.unique, torch.sort, torch.scatter_reduce, torch.kron,
// torch.tensor_split...) against PyTorch 1.13 (test/golden/torch/tensor_functions.json, from
// scripts/golden/tensor_functions.py): float64 and int64 cases, each output's dtype and shape,
// integer values and indices exactly, float values and the gradients of the differentiable ones
// to 1e-12. Then the Tensor methods, the named argument errors, and leaks.
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
import { TENSOR_FUNCTION_METHODS } from '../../src/torch/tensor-methods.js';
import { assertClose } from '../helpers.js';

type T = torch.Tensor;
const golden = readTensorGolden<{
  inputs: Record<string, Data>;
  cases: GoldenCase[];
}>('tensor_functions.json');
const TOLERANCE = 1e-12;

function same(actual: T, expected: Data, what: string): void {
  assert.equal(actual.dtype, expected.dtype, `${what}: dtype`);
  assert.deepEqual(actual.shape, expected.shape, `${what}: shape`);
  if (expected.dtype === 'float64') assertClose(actual.toFloat64Array(), expected.data, TOLERANCE, 0, what);
  else assert.deepEqual(actual.toNumbers(), expected.data, `${what}: values`);
}

/** Runs `fn` on fresh leaves of the golden inputs and checks its outputs and gradients. */
function checkCase(c: GoldenCase, fn: (inputs: Inputs) => T[]): void {
  checkGoldenCase(golden.inputs, c, fn, same);
}

const L = (values: number[]): T => torch.tensor(values, { dtype: 'int64' });
const f64 = (v: number): T => torch.scalarTensor(v, 'float64');
const m = (i: Inputs): T => i.mask!.bool();
const REDUCTIONS = ['sum', 'prod', 'mean', 'amax', 'amin'] as const;
const INTERPOLATIONS = ['lower', 'higher', 'midpoint', 'nearest'] as const;

// The golden script's cases, by label (`i` holds its inputs by name).
const cases: Record<string, (i: Inputs) => T[]> = {
  unique: (i) => [torch.unique(i.dup!)],
  'unique.int.inverse.counts': (i) => torch.unique(i.i!, { returnInverse: true, returnCounts: true }),
  'unique.dim.counts': (i) => torch.unique(i.rows!, { dim: 0, returnCounts: true }),
  uniqueConsecutive: (i) => [torch.uniqueConsecutive(i.seq!)],
  'uniqueConsecutive.int': (i) => torch.uniqueConsecutive(i.i!, { returnInverse: true, returnCounts: true }),
  searchsorted: (i) => [torch.searchsorted(i.seq!, i.vals!)],
  'searchsorted.right': (i) => [torch.searchsorted(i.seq!, i.vals!, { side: 'right' })],
  'searchsorted.sorter': (i) => [torch.searchsorted(i.x!, i.y!, { sorter: torch.argsort(i.x!) })],
  'searchsorted.int.scalar': (i) => [
    torch.searchsorted(i.sorted!, i.iu!),
    torch.searchsorted(i.seq!, { float: 2 }, { right: true }),
  ],
  bucketize: (i) => [torch.bucketize(i.vals!, i.seq!), torch.bucketize(i.vals!, i.seq!, { right: true })],
  'bucketize.int': (i) => [torch.bucketize(i.iu!, i.sorted!, { outInt32: true })],
  sort: (i) => torch.sort(i.M!, 1),
  'sort.stable.descending': (i) => torch.sort(i.dup!, 0, true, { stable: true }),
  'sort.int': (i) => i.i!.sort(-1, false, { stable: true }),
  argsort: (i) => [torch.argsort(i.M!, 0, true)],
  'argsort.int.stable': (i) => [i.i!.argsort(-1, false, { stable: true })],
  topk: (i) => torch.topk(i.M!, 2, 1),
  'topk.smallest': (i) => i.x!.topk(3, -1, false),
  'topk.int': (i) => torch.topk(i.iu!, 2),
  kthvalue: (i) => torch.kthvalue(i.M!, 2, 1, true),
  'kthvalue.int': (i) => i.iu!.kthvalue(3),
  median: (i) => [torch.median(i.x!)],
  'median.dim': (i) => i.M!.median(1),
  'median.int': (i) => [i.iu!.median()],
  nanmedian: (i) => [torch.nanmedian(i.nan!), ...torch.nanmedian(i.nan!, 1)],
  mode: (i) => torch.mode(i.dup!),
  'mode.int': (i) => i.im!.mode(1),
  quantile: (i) => [torch.quantile(i.x!, 0.3)],
  'quantile.tensor.dim': (i) => [
    i.M!.quantile(torch.tensor([0.25, 0.5, 0.9], { dtype: 'float64' }), 1, true),
  ],
  'quantile.interpolations': (i) =>
    INTERPOLATIONS.map((interpolation) => torch.quantile(i.M!, 0.4, 0, false, { interpolation })),
  histc: (i) => [torch.histc(i.x!, 5), i.M!.histc(4, -1, 1)],
  bincount: (i) => [torch.bincount(i.i!), i.i!.bincount(null, 8)],
  'bincount.weights': (i) => [torch.bincount(i.i!.narrow(0, 0, 6), i.x!)],
  cumsum: (i) => [torch.cumsum(i.M!, 1)],
  'cumsum.int': (i) => [torch.cumsum(i.i!, 0), torch.cumsum(i.i!, 0, { dtype: 'float64' })],
  cumprod: (i) => [torch.cumprod(i.M!, 0)],
  'cumprod.int': (i) => [i.iu!.cumprod(0)],
  cummax: (i) => torch.cummax(i.M!, 1),
  cummin: (i) => i.x!.cummin(0),
  'cummax.int': (i) => [...torch.cummax(i.i!, 0), ...torch.cummin(i.iu!, 0)],
  logcumsumexp: (i) => [i.M!.logcumsumexp(0)],
  nanmean: (i) => [torch.nanmean(i.nan!), i.nan!.nanmean(1, true)],
  nansum: (i) => [torch.nansum(i.nan!), i.nan!.nansum(0)],
  'nansum.int': (i) => [torch.nansum(i.im!, 1)],
  stdMean: (i) => [...torch.stdMean(i.M!, 1), ...torch.stdMean(i.M!, null, { correction: 0 })],
  varMean: (i) => torch.varMean(i.T!, [0, 2], { unbiased: false, keepdim: true }),
  gather: (i) => [torch.gather(i.M!, 0, i.idx!)],
  'gather.int': (i) => [torch.gather(i.im!, 1, i.idx!.narrow(1, 0, 2))],
  scatter: (i) => [torch.scatter(i.M!, 0, i.idx!, i.K!), i.M!.scatter(1, i.idx!, 2.5)],
  scatterAdd: (i) => [torch.scatterAdd(i.M!, 0, i.idxDup!, i.K!)],
  'scatterAdd.int': (i) => [i.I34!.scatterAdd(0, i.idxDup!, i.I24!)],
  scatterReduce: (i) => REDUCTIONS.map((r) => torch.scatterReduce(i.M!, 0, i.idxDup!, i.K!, r)),
  'scatterReduce.excludeSelf': (i) =>
    (['mean', 'amax'] as const).map((r) => i.M!.scatterReduce(0, i.idxDup!, i.K!, r, { includeSelf: false })),
  'scatterReduce.int': (i) => [torch.scatterReduce(i.I34!, 0, i.idxDup!, i.I24!, 'amax')],
  indexAdd: (i) => [torch.indexAdd(i.M!, 0, L([2, 0]), i.K!, { alpha: 2 })],
  'indexAdd.int': (i) => [i.I34!.indexAdd(1, L([3, 0]), i.I32!)],
  indexCopy: (i) => [torch.indexCopy(i.M!, 1, L([3, 0]), i.P!)],
  indexFill: (i) => [torch.indexFill(i.M!, 1, L([1, 3]), -1.5), i.M!.indexFill(0, L([2]), f64(4))],
  'indexFill.int': (i) => [torch.indexFill(i.I34!, 0, L([0]), 7)],
  maskedFill: (i) => [torch.maskedFill(i.M!, m(i), 0.5), torch.maskedFill(i.M!, m(i), f64(-2))],
  'maskedFill.int': (i) => [torch.maskedFill(i.I34!, m(i), -7)],
  maskedSelect: (i) => [torch.maskedSelect(i.M!, m(i)), i.I34!.maskedSelect(m(i))],
  maskedScatter: (i) => [torch.maskedScatter(i.M!, m(i), i.M2!)],
  'maskedScatter.int': (i) => [i.I34!.maskedScatter(m(i), i.I24!)],
  nonzero: (i) => [torch.nonzero(i.I34!), ...i.I34!.nonzero({ asTuple: true })],
  takeAlongDim: (i) => [torch.takeAlongDim(i.M!, i.idxT!, 1), i.M!.takeAlongDim(L([0, 5, 11]))],
  'takeAlongDim.int': (i) => [torch.takeAlongDim(i.I34!, i.idxT!, 1)],
  'where.scalar': (i) => [torch.where(m(i), i.M!, 0), torch.where(m(i), 1.5, i.M!)],
  'where.int': (i) => [torch.where(m(i), 2, -1), torch.where(m(i), i.I34!, 9)],
  'clamp.tensors': (i) => [torch.clamp(i.M!, i.lo!, i.hi!), i.M!.clamp(null, i.hi!)],
  'clamp.mixed': (i) => [torch.clamp(i.M!, i.lo!, 0.2), i.M!.clamp(-0.3, i.hi!)],
  'clamp.int': (i) => [torch.clamp(i.im!, 2, 5), i.im!.clamp(i.im!.select(0, 0), L([3]).reshape())],
  lerp: (i) => [torch.lerp(i.x!, i.y!, 0.3), i.x!.lerp(i.y!, i.w!)],
  hypot: (i) => [torch.hypot(i.M!, i.M2!)],
  atan2: (i) => [i.M!.atan2(i.M2!)],
  kron: (i) => [torch.kron(i.p!, i.q!), i.K!.kron(i.P!)],
  'kron.int': (i) => [torch.kron(i.im!, i.rows!)],
  tensordot: (i) => [
    torch.tensordot(i.T!, i.N!, 1),
    torch.tensordot(i.T!, i.R!, [
      [1, 0],
      [0, 1],
    ]),
  ],
  'tensordot.int': (i) => [torch.tensordot(i.I34!, i.I34!, 2)],
  diff: (i) => [torch.diff(i.x!), i.M!.diff(2, 1, i.Q!, i.P!)],
  'diff.int': (i) => [torch.diff(i.i!), torch.diff(i.im!, 1, 0)],
  meshgrid: (i) => [
    ...torch.meshgrid([i.p!, i.q!], { indexing: 'ij' }),
    ...torch.meshgrid([i.p!, i.q!], { indexing: 'xy' }),
  ],
  'meshgrid.int': (i) => torch.meshgrid([i.sorted!, i.counts!], { indexing: 'xy' }),
  cartesianProd: (i) => [torch.cartesianProd(i.p!, i.q!)],
  'cartesianProd.int': (i) => [torch.cartesianProd(i.sorted!, i.counts!)],
  combinations: (i) => [torch.combinations(i.q!), torch.combinations(i.p!, 2, true)],
  'combinations.int': (i) => [torch.combinations(i.iu!, 3)],
  trilTriuIndices: () => [torch.trilIndices(4, 5, 1), torch.triuIndices(3, 4, -1)],
  trilTriu: (i) => [torch.tril(i.M!, -1), i.T!.triu(1)],
  'trilTriu.int': (i) => [i.I34!.tril(), torch.triu(i.I34!, 2)],
  roll: (i) => [torch.roll(i.M!, 1), i.M!.roll([1, -2], [0, 1])],
  'roll.int': (i) => [torch.roll(i.im!, -1, 1)],
  flip: (i) => [torch.flip(i.T!, [0, 2])],
  rot90: (i) => [torch.rot90(i.M!), i.T!.rot90(-1, [1, 2]), torch.rot90(i.M!, 2)],
  'rot90.int': (i) => [i.im!.rot90(3)],
  diag: (i) => [torch.diag(i.p!, 1), i.M!.diag(-1), torch.diagonal(i.T!, 1, 1, 2), i.M!.diagEmbed(1)],
  'diag.int': (i) => [torch.diag(i.counts!), i.I34!.diagonal(-1)],
  trace: (i) => [torch.trace(i.M!)],
  'trace.int': (i) => [i.im!.trace()],
  outer: (i) => [torch.outer(i.p!, i.q!)],
  'outer.int': (i) => [i.counts!.outer(i.sorted!)],
  cross: (i) => [torch.cross(i.a3!, i.b3!, 1), i.a3!.cross(i.b3!)],
  einsum: (i) => [torch.einsum('ij,jk->ik', i.M!, i.N!), torch.einsum('bij->ji', i.T!)],
  'einsum.int': (i) => [torch.einsum('i,i->', i.iu!, i.iu!)],
  broadcastTensors: (i) => torch.broadcastTensors(i.p!.reshape(3, 1), i.q!),
  chunkSplit: (i) => [...torch.chunk(i.x!, 4), ...torch.split(i.M!, [1, 3], 1), ...torch.split(i.x!, 4)],
  tensorSplit: (i) => [
    ...torch.tensorSplit(i.x!, 4),
    ...i.M!.tensorSplit([1, 3], 1),
    ...torch.tensorSplit(i.x!, L([2, 5])),
  ],
  'tensorSplit.int': (i) => torch.tensorSplit(i.i!, 3),
  tile: (i) => [torch.tile(i.p!, [2, 2]), i.M!.tile([2])],
  'tile.int': (i) => [torch.tile(i.im!, [1, 2, 1])],
  repeatInterleave: (i) => [
    torch.repeatInterleave(i.M!, 2, 0),
    i.p!.repeatInterleave(i.counts!),
    torch.repeatInterleave(i.M!, 2),
  ],
  'repeatInterleave.int': (i) => [torch.repeatInterleave(i.counts!), i.im!.repeatInterleave(L([1, 3]), 0)],
};

test('tensor functions match PyTorch 1.13: dtypes, values, indices and gradients to 1e-12', () => {
  assert.deepEqual(
    golden.cases.map((c) => c.label).sort(),
    Object.keys(cases).sort(),
    'every golden case is run, and only those',
  );
  const before = torch.liveTensors();
  for (const c of golden.cases) checkCase(c, cases[c.label]!);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('every attached Tensor method is the torch function on the tensor, and not enumerable', () => {
  const proto = torch.Tensor.prototype as unknown as Record<string, unknown>;
  for (const name of TENSOR_FUNCTION_METHODS) {
    assert.equal(typeof proto[name], 'function', `Tensor.${name}`);
    assert.equal(typeof (torch as unknown as Record<string, unknown>)[name], 'function', `torch.${name}`);
    assert.equal(Object.getOwnPropertyDescriptor(proto, name)!.enumerable, false, `Tensor.${name}`);
  }
  torch.tidy(() => {
    const x = torch.tensor([3, 1, 2, 3], { dtype: 'float64' });
    assert.deepEqual(x.unique().toNumbers(), [1, 2, 3]);
    assert.equal(Object.keys(x).includes('unique'), false);
  });
});

test('bad arguments name the function and the argument', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.tensor([1, 2, 3], { dtype: 'float64' });
    const M = torch.ones([2, 3], 'float64');
    const throwsNamed = (fn: () => unknown, pattern: RegExp): void =>
      assert.throws(fn, (e: unknown) => e instanceof ArgumentError && pattern.test((e as Error).message));
    throwsNamed(() => torch.sort(x, 1), /^sort: dim must be an integer >= -1 and <= 0, got 1/);
    throwsNamed(() => torch.unique([1, 2] as unknown as T), /^unique: input must be a Tensor/);
    throwsNamed(() => torch.topk(x, 4), /^topk: k must be an integer >= 0 and <= 3/);
    throwsNamed(() => torch.kthvalue(x, 0), /^kthvalue: k must be an integer >= 1/);
    throwsNamed(() => torch.quantile(x, 1.5), /^quantile: q must be a finite number >= 0 and <= 1/);
    throwsNamed(
      () => torch.quantile(x, 0.5, null, false, { interpolation: 'cubic' as 'linear' }),
      /^quantile: interpolation must be/,
    );
    throwsNamed(() => torch.searchsorted(x, x, { side: 'middle' as 'left' }), /^searchsorted: side must be/);
    throwsNamed(() => torch.bucketize(x, M), /^bucketize: boundaries must be a 1-D tensor/);
    throwsNamed(() => torch.histc(x, 5, 2, 1), /^histc: max must be >= min/);
    throwsNamed(
      () => torch.stdMean(x, null, { correction: 1, unbiased: true }),
      /^stdMean: options must be either/,
    );
    throwsNamed(() => torch.gather(M, 0, M), /^gather: index must be an integer tensor/);
    throwsNamed(
      () => torch.scatterReduce(M, 0, L([0]), M, 'max' as 'amax'),
      /^scatterReduce: reduce must be/,
    );
    throwsNamed(() => torch.clamp(x), /^clamp: min must be a bound/);
    throwsNamed(
      () => torch.lerp(x, x, 'half' as unknown as number),
      /^lerp: weight must be a Tensor or a number/,
    );
    throwsNamed(
      () => torch.tensordot(M, M, [[0], [0, 1]]),
      /^tensordot: dims must be two lists of the same length/,
    );
    throwsNamed(() => torch.meshgrid([x], { indexing: 'yx' as 'xy' }), /^meshgrid: indexing must be/);
    throwsNamed(() => torch.combinations(M), /^combinations: input must be a 1-D tensor/);
    throwsNamed(() => torch.tril(x), /^tril: input must be a matrix/);
    throwsNamed(() => torch.trace(x), /^trace: input must be a matrix/);
    throwsNamed(() => torch.roll(M, [1, 2], [0]), /^roll: dims must be as many dimensions as shifts/);
    throwsNamed(() => torch.split(M, [1, 1], 1), /^split: splitSizeOrSections must be sizes that add up/);
    throwsNamed(() => torch.chunk(M, 0), /^chunk: chunks must be an integer >= 1/);
    throwsNamed(() => torch.einsum('i->', 3 as unknown as T), /^einsum: operands\[0\] must be a Tensor/);
    throwsNamed(() => torch.where(true as unknown as T, x, 0), /^where: condition must be a bool Tensor/);
    throwsNamed(() => x.repeatInterleave(-1), /^repeatInterleave: repeats must be an integer >= 0/);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
