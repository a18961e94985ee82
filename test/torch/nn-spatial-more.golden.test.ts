// Grid sampling, fold and unfold, the adaptive, power-average and fractional pools (layers and
// functional forms), the upsampling layers and interpolate's modes against PyTorch 1.13
// (test/golden/torch/nn_spatial_more.json, from scripts/golden/nn_spatial_more.py): in float64,
// outputs and indices, and the gradients of the inputs, grids and affine maps; FractionalMaxPool's
// random windows from the same seed, or from given samples. Then the named errors of bad
// arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn } from '../../src/torch/index.js';
import type { Tensor } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Data {
  shape: number[];
  dtype: 'float64' | 'int64';
  data: number[];
}
interface Case {
  name: string;
  seed: number;
  inputs: Data[];
  outputs: Data[];
  upstream: (number[] | null)[];
  grads: (number[] | null)[];
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'nn_spatial_more.json'), 'utf8')) as {
  cases: Case[];
};
const F = nn.functional;
const TOL = 1e-10;

type Out = Tensor | [Tensor, Tensor];
/** A module applied once and disposed, so that the case leaves no tensors behind. */
function once<M extends nn.Module & { forward(x: Tensor): Out }>(m: M, x: Tensor): Out {
  try {
    return m.forward(x);
  } finally {
    m.dispose();
  }
}

/** The script's fixed _random_samples of the fractional pools. */
const SAMPLES_2D = [0.1, 0.9, 0.25, 0.5, 0.75, 0.0, 0.375, 0.625, 0.5, 0.125, 0.875, 0.3];
const SAMPLES_3D = [0.2, 0.6, 0.95, 0.0, 0.5, 0.25];
const samples = (values: number[], shape: number[]) => torch.tensor(values, { shape, dtype: 'float64' });

const cases: Record<string, (...inputs: Tensor[]) => Out> = {
  grid_bilinear_zeros: (x, g) => F.gridSample(x!, g!.mul(0.7)),
  grid_nearest_border_align: (x, g) =>
    F.gridSample(x!, g!.mul(0.7), { mode: 'nearest', paddingMode: 'border', alignCorners: true }),
  grid_bicubic_reflection: (x, g) =>
    F.gridSample(x!, g!.mul(0.7), { mode: 'bicubic', paddingMode: 'reflection', alignCorners: false }),
  grid_bilinear_reflection_align: (x, g) =>
    F.gridSample(x!, g!.mul(0.7), { paddingMode: 'reflection', alignCorners: true }),
  grid_bicubic_border_align: (x, g) =>
    F.gridSample(x!, g!.mul(0.7), { mode: 'bicubic', paddingMode: 'border', alignCorners: true }),
  grid3d_bilinear_zeros: (x, g) => F.gridSample(x!, g!.mul(0.7)),
  grid3d_nearest_reflection: (x, g) =>
    F.gridSample(x!, g!.mul(0.7), { mode: 'nearest', paddingMode: 'reflection' }),
  affine_grid_2d: (t) => F.affineGrid(t!, [2, 3, 4, 5]),
  affine_grid_2d_align: (t) => F.affineGrid(t!, [1, 1, 3, 4], { alignCorners: true }),
  affine_grid_3d: (t) => F.affineGrid(t!, [1, 2, 2, 3, 4], { alignCorners: false }),
  affine_then_sample: (t, x) => F.gridSample(x!, F.affineGrid(t!.mul(0.5), [1, 2, 4, 3])),
  unfold_plain: (x) => once(new nn.Unfold({ kernelSize: 2 }), x!),
  unfold_options: (x) =>
    once(new nn.Unfold({ kernelSize: [2, 3], dilation: [2, 1], padding: [1, 0], stride: [1, 2] }), x!),
  unfold_unbatched: (x) => F.unfold(x!, 3, { padding: 1, stride: 2 }),
  fold_plain: (x) => once(new nn.Fold({ outputSize: [4, 5], kernelSize: 2 }), x!),
  fold_options: (x) =>
    once(
      new nn.Fold({
        outputSize: [5, 6],
        kernelSize: [2, 3],
        dilation: [2, 1],
        padding: [1, 0],
        stride: [1, 2],
      }),
      x!,
    ),
  fold_unbatched: (x) => F.fold(x!, [3, 4], 3, { padding: 1, stride: [2, 1] }),
  adaptive_max1d: (x) => once(new nn.AdaptiveMaxPool1d(3, { returnIndices: true }), x!),
  adaptive_max2d: (x) => once(new nn.AdaptiveMaxPool2d([2, 3], { returnIndices: true }), x!),
  adaptive_max2d_none: (x) => once(new nn.AdaptiveMaxPool2d([null, 3]), x!),
  adaptive_max3d: (x) => once(new nn.AdaptiveMaxPool3d(2, { returnIndices: true }), x!),
  lppool1d: (x) => once(new nn.LPPool1d(2, 3, 2), x!),
  lppool1d_ceil: (x) => once(new nn.LPPool1d(3, 2, null, true), x!.abs().add(0.1)),
  lppool2d: (x) => once(new nn.LPPool2d(1.5, [2, 3], [1, 2]), x!.abs().add(0.1)),
  lppool2d_default_stride: (x) => once(new nn.LPPool2d(2, 2), x!),
  fractional2d_size: (x) =>
    once(new nn.FractionalMaxPool2d(2, { outputSize: [4, 5], returnIndices: true }), x!),
  fractional2d_ratio_unbatched: (x) =>
    once(new nn.FractionalMaxPool2d([3, 2], { outputRatio: [0.5, 0.6] }), x!),
  fractional3d_size: (x) =>
    once(new nn.FractionalMaxPool3d(2, { outputSize: [3, 3, 4], returnIndices: true }), x!),
  fractional3d_ratio: (x) => once(new nn.FractionalMaxPool3d(2, { outputRatio: 0.5 }), x!),
  upsampling_nearest2d: (x) => once(new nn.UpsamplingNearest2d({ scaleFactor: 2 }), x!),
  upsampling_nearest2d_size: (x) => once(new nn.UpsamplingNearest2d({ size: [5, 7] }), x!),
  upsampling_bilinear2d: (x) => once(new nn.UpsamplingBilinear2d({ scaleFactor: [2, 1.5] }), x!),
  upsampling_bilinear2d_size: (x) => once(new nn.UpsamplingBilinear2d({ size: [4, 6] }), x!),
  interp_nearest1d: (x) => F.interpolate(x!, { scaleFactor: 1.7 }),
  interp_nearest3d: (x) => F.interpolate(x!, { size: [3, 4, 6] }),
  interp_nearest_exact1d: (x) => F.interpolate(x!, { size: 8, mode: 'nearest-exact' }),
  interp_nearest_exact2d: (x) => F.interpolate(x!, { scaleFactor: [1.5, 0.6], mode: 'nearest-exact' }),
  interp_nearest_exact3d: (x) => once(new nn.Upsample({ size: [4, 3, 3], mode: 'nearest-exact' }), x!),
  interp_linear_align: (x) => F.interpolate(x!, { size: 9, mode: 'linear', alignCorners: true }),
  interp_linear_scale: (x) => F.interpolate(x!, { scaleFactor: 1.7, mode: 'linear' }),
  interp_linear_recompute: (x) =>
    F.interpolate(x!, { scaleFactor: 1.7, mode: 'linear', recomputeScaleFactor: true }),
  interp_bilinear_scale: (x) => F.interpolate(x!, { scaleFactor: [1.3, 2.2], mode: 'bilinear' }),
  interp_bicubic: (x) => F.interpolate(x!, { size: [7, 6], mode: 'bicubic' }),
  interp_bicubic_align: (x) => F.interpolate(x!, { scaleFactor: 1.5, mode: 'bicubic', alignCorners: true }),
  interp_trilinear: (x) => F.interpolate(x!, { size: [3, 5, 5], mode: 'trilinear' }),
  interp_trilinear_align_scale: (x) =>
    once(new nn.Upsample({ scaleFactor: [1.5, 2, 2.5], mode: 'trilinear', alignCorners: true }), x!),
  interp_area1d: (x) => F.interpolate(x!, { size: 3, mode: 'area' }),
  interp_area2d_scale: (x) => F.interpolate(x!, { scaleFactor: 0.6, mode: 'area' }),
  interp_area3d: (x) => F.interpolate(x!, { size: [2, 3, 4], mode: 'area' }),
  interp_bilinear_aa: (x) => F.interpolate(x!, { size: [3, 4], mode: 'bilinear', antialias: true }),
  interp_bicubic_aa_scale: (x) =>
    F.interpolate(x!, { scaleFactor: 0.45, mode: 'bicubic', antialias: true, alignCorners: true }),
  interp_bilinear_aa_up: (x) =>
    F.interpolate(x!, { scaleFactor: [1.5, 0.5], mode: 'bilinear', antialias: true }),
  f_adaptive_max1d: (x) => F.adaptiveMaxPool1d(x!, 4, { returnIndices: true }),
  f_adaptive_max2d_unbatched: (x) => F.adaptiveMaxPool2d(x!, [null, 2]),
  f_adaptive_max3d: (x) => F.adaptiveMaxPool3d(x!, [2, null, 3], { returnIndices: true }),
  f_lppool1d: (x) => F.lpPool1d(x!, 2, 3),
  f_lppool1d_ceil: (x) => F.lpPool1d(x!.abs().add(0.1), 1.5, 2, 1, true),
  f_lppool2d: (x) => F.lpPool2d(x!.abs().add(0.1), 3, [2, 2], [1, 2], true),
  f_fractional2d_size: (x) => F.fractionalMaxPool2d(x!, 2, { outputSize: 3, returnIndices: true }),
  f_fractional2d_samples: (x) =>
    F.fractionalMaxPool2d(x!, [2, 3], {
      outputRatio: 0.6,
      returnIndices: true,
      randomSamples: samples(SAMPLES_2D, [2, 3, 2]),
    }),
  f_fractional3d_ratio: (x) =>
    F.fractionalMaxPool3d(x!, [2, 1, 2], { outputRatio: [0.5, 0.7, 0.6], returnIndices: true }),
  f_fractional3d_samples_unbatched: (x) =>
    F.fractionalMaxPool3d(x!, 2, { outputSize: [2, 3, 3], randomSamples: samples(SAMPLES_3D, [1, 2, 3]) }),
  fractional2d_module_samples: (x) =>
    once(
      new nn.FractionalMaxPool2d(2, { outputSize: [4, 3], randomSamples: samples(SAMPLES_2D, [2, 3, 2]) }),
      x!,
    ),
};

test('every golden case has a maker', () => {
  assert.deepEqual(golden.cases.map((c) => c.name).sort(), Object.keys(cases).sort());
});

const make = (d: Data) =>
  torch.tensor(Float64Array.from(d.data), {
    shape: d.shape,
    dtype: d.dtype === 'int64' ? 'int64' : 'float64',
  });

for (const c of golden.cases) {
  test(`nn spatial golden (float64): ${c.name}`, () => {
    const before = torch.liveTensors();
    torch.tidy(() => {
      const inputs = c.inputs.map((d) => make(d).requiresGrad_());
      // the seed right before the call, as the golden script: FractionalMaxPool draws its samples then
      torch.manualSeed(c.seed);
      const out = cases[c.name]!(...inputs);
      const outs = Array.isArray(out) ? out : [out];
      assert.equal(outs.length, c.outputs.length, `${c.name} number of outputs`);
      const terms: Tensor[] = [];
      outs.forEach((o, i) => {
        const want = c.outputs[i]!;
        assert.deepEqual(o.shape, want.shape, `${c.name} output ${i} shape`);
        assert.equal(o.dtype, want.dtype, `${c.name} output ${i} dtype`);
        if (want.dtype === 'int64') assert.deepEqual(o.toNumbers(), want.data, `${c.name} indices`);
        else assertClose(o.toFloat64Array(), want.data, TOL, 0, `${c.name} output ${i}`);
        const w = c.upstream[i];
        if (w) terms.push(o.mul(make({ shape: o.shape, dtype: 'float64', data: w })).sum());
      });
      terms.reduce((a, b) => a.add(b)).backward();
      c.grads.forEach((g, i) => {
        if (g) assertClose(inputs[i]!.grad!.toFloat64Array(), g, TOL, 0, `${c.name} grad of input ${i}`);
      });
    });
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}
