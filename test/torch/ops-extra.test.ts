// The operators added with torch.linalg and torch.fft (searching, uniques, cumulative and
// NaN-ignoring reductions, products, differences, indexing, grids), called through torch.aten,
// against PyTorch 1.13 (the `ops` cases of test/golden/torch/linalg_fft.json, from
// scripts/golden/linalg_fft.py): values, indices and counts exactly, floats and gradients to 1e-9.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { aten } from '../../src/torch/index.js';
import { checkCase, golden, type Inputs } from './linalg-fft-golden.js';

type T = torch.Tensor;
const long = (values: number[]): T => torch.tensor(values, { dtype: 'int64' });

// The golden script's `ops` cases, by label (`i` holds its inputs by name).
const ops: Record<string, (i: Inputs) => T[]> = {
  searchsorted: (i) => [
    aten.searchsorted_Tensor(i.seq!, i.vals!),
    aten.searchsorted_Tensor(i.seq!, i.vals!, false, true),
  ],
  bucketize: (i) => [
    aten.bucketize_Tensor(i.vals!, i.seq!),
    aten.bucketize_Tensor(i.vals!, i.seq!, false, true),
  ],
  unique: (i) => aten._unique2(i.cat!, true, true, true),
  uniqueConsecutive: (i) => aten.unique_consecutive(i.cat!, true, true),
  cummax: (i) => aten.cummax(i.K!, 1),
  cummin: (i) => aten.cummin(i.K!, 0),
  logcumsumexp: (i) => [aten.logcumsumexp(i.K!, 1)],
  nanmean: (i) => [aten.nanmean(i.nan!), aten.nanmean(i.nan!, 1)],
  nansum: (i) => [aten.nansum(i.nan!), aten.nansum(i.nan!, 0)],
  stdMean: (i) => aten.std_mean_correction(i.T!, [1], 1),
  varMean: (i) => aten.var_mean_correction(i.T!, null, 0),
  lerp: (i) => [aten.lerp_Scalar(i.K!, i.L!.t(), 0.25), aten.lerp_Tensor(i.K!, i.L!.t(), i.a3!)],
  hypot: (i) => [aten.hypot(i.K!, i.a3!)],
  kron: (i) => [aten.kron(i.K!, i.L!)],
  tensordot: (i) => [aten.tensordot(i.T!, i.U!, [1, 2], [1, 0])],
  diff: (i) => [aten.diff(i.K!), aten.diff(i.T!, 2, 2, i.T!.narrow(2, 0, 1))],
  takeAlongDim: (i) => [aten.take_along_dim(i.K!, aten.argsort(i.K!, 1), 1)],
  indexCopy: (i) => [aten.index_copy(i.L!, 0, long([2, 0]), i.Bt!.narrow(1, 0, 2))],
  indexFill: (i) => [aten.index_fill_int_Scalar(i.L!, 0, long([1]), -2.5)],
  'meshgrid.ij': (i) => aten.meshgrid_indexing([i.p!, i.q!], 'ij'),
  'meshgrid.xy': (i) => aten.meshgrid_indexing([i.p!, i.q!], 'xy'),
  cartesianProd: (i) => [aten.cartesian_prod([i.p!, i.q!])],
  combinations: (i) => [aten.combinations(i.q!), aten.combinations(i.q!, 2, true)],
  trilTriuIndices: () => [aten.tril_indices(3, 4, 1), aten.triu_indices(4, 3, -1)],
};

test('the added operators match PyTorch 1.13: values, indices, counts and gradients', () => {
  assert.deepEqual(
    golden.ops.map((c) => c.label).sort(),
    Object.keys(ops).sort(),
    'every golden case is run',
  );
  const before = torch.liveTensors();
  for (const c of golden.ops) checkCase(c, ops[c.label]!);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('index outputs are int64 and unique returns PyTorch three results', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const seq = torch.tensor([1, 3, 5, 7], { dtype: 'float64' });
    const found = aten.searchsorted_Tensor(seq, torch.tensor([0, 3, 8], { dtype: 'float64' }));
    assert.equal(found.dtype, 'int64');
    assert.deepEqual(found.toNumbers(), [0, 1, 4]);
    assert.equal(aten.bucketize_Tensor(seq, seq, true).dtype, 'int32', 'out_int32');
    const [values, inverse, counts] = aten._unique2(long([5, 5, 2]), true, true, true);
    assert.deepEqual(
      [values.toNumbers(), inverse.toNumbers(), counts.toNumbers()],
      [
        [2, 5],
        [1, 1, 0],
        [1, 2],
      ],
    );
    assert.deepEqual(aten.cummax(long([1, 3, 2]), 0)[1].toNumbers(), [0, 1, 1]);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
