import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { assertClose } from '../helpers.js';
import {
  UNet1d,
  formatParameterSummary,
  parameterSummary,
  resolveUNetConfig,
} from '../../src/nmr/model/unet.js';
import { ResBlock1d, SqueezeExcite1d, groupNorm } from '../../src/nmr/model/blocks.js';
import { denoiseSpectra, loadDenoiser, modelMetadata } from '../../src/nmr/model/denoise.js';
import { formatJcampSpectrum } from '../../src/nmr/io/jcamp-writer.js';
import { parseJcamp } from '../../src/nmr/io/jcamp.js';

const TINY = {
  channels: [4, 8, 8],
  dilations: [1, 2, 4],
  groups: 2,
  se: 'bottleneck' as const,
  seReduction: 2,
};

/** A tiny model with a random (not the initial zero) head, so that it is not the identity. */
function tinyModel(): UNet1d {
  const model = new UNet1d(TINY);
  torch.noGrad(() => torch.nn.init.normal_(model.head.weight, 0, 0.5));
  return model;
}

test('default U-Net: 4 levels 64-128-256-256, dilations 1/2/4/8, k = 9, about 2.75 M parameters (plan: 1-3 M)', () => {
  torch.manualSeed(0);
  const model = new UNet1d();
  const { rows, total } = parameterSummary(model);
  assert.equal(total, model.numParameters());
  // Pinned by hand: stem 1*64*9+64 = 640; encoder.0 conv 64*64*9+64 + GN 128 = 37 056; ...
  assert.equal(rows.find((r) => r.name === 'stem')!.parameters, 640);
  assert.equal(rows.find((r) => r.name === 'encoder.0')!.parameters, 64 * 64 * 9 + 64 + 128);
  assert.equal(rows.find((r) => r.name === 'down.0')!.parameters, 64 * 128 * 2 + 128);
  assert.equal(rows.find((r) => r.name === 'up.2')!.parameters, 256 * 256 * 2 + 256);
  assert.equal(total, 2_750_869);
  assert.ok(total >= 1e6 && total <= 3e6);
  assert.equal(model.encoder.at(3).conv.dilation, 8);
  assert.equal(model.encoder.at(3).conv.padding, 32); // 'same' for k = 9, d = 8
  assert.ok(model.encoder.at(3).se, 'SE at the bottleneck');
  assert.ok(model.decoder.at(0).se, 'SE at the shallowest decoder level');
  assert.match(formatParameterSummary(model), /total\s+2,750,869/);
  const noSe = new UNet1d({ se: 'none' });
  assert.ok(noSe.numParameters() < total);
  assert.equal(model.encoder.at(0).norm.numGroups, 8);
  const layer = new UNet1d({ ...TINY, norm: 'layer' });
  assert.equal(layer.encoder.at(1).norm.numGroups, 1);
  layer.dispose();
  model.dispose();
  noSe.dispose();
});

test('U-Net shapes: [N, L] and [N, 1, L], lengths that are not multiples of 2^(levels-1)', () => {
  torch.manualSeed(1);
  const model = new UNet1d(TINY);
  const live = torch.liveTensors();
  torch.tidy(() => {
    for (const L of [64, 37, 9]) {
      assert.deepEqual(model.forward(torch.randn([3, L])).shape, [3, L]);
      assert.deepEqual(model.forward(torch.randn([2, 1, L])).shape, [2, 1, L]);
    }
    assert.throws(() => model.forward(torch.randn([2, 3, 16])), /expected \[N, L\] or \[N, 1, L\]/);
    // The head starts at zero: the untrained network returns its input.
    const x = torch.randn([2, 21]);
    assertClose(model.forward(x).toFloat32Array(), x.toFloat32Array(), 1e-6, 0, 'identity at initialization');
  });
  assert.equal(torch.liveTensors(), live, 'forward leaves no tensors behind');
  model.dispose();
});

test('U-Net with inputNorm max is scale-equivariant: f(c x) = c f(x) for c > 0', () => {
  torch.manualSeed(2);
  const model = tinyModel();
  torch.tidy(() => {
    const x = torch.randn([2, 32]);
    const y = model.forward(x).toFloat32Array();
    const y7 = model.forward(x.mul(7.5)).toFloat32Array();
    assert.ok(
      y.some((v, i) => Math.abs(v - x.toFloat32Array()[i]!) > 1e-2),
      'not the identity',
    );
    assertClose(
      y7,
      Array.from(y, (v) => v * 7.5),
      1e-4,
      1e-4,
      'f(7.5 x)',
    );
  });
  model.dispose();
});

test('ConvTranspose1d k = 2, stride 2: out[o, 2i + j] = sum_c w[c, o, j] x[c, i] + b[o] (hand computation)', () => {
  const up = new torch.nn.ConvTranspose1d(2, 1, 2, { stride: 2 });
  torch.noGrad(() => {
    up.weight.copy_(torch.tensor([[[1, 2]], [[3, 4]]]));
    up.bias!.copy_(torch.tensor([0.5]));
  });
  torch.tidy(() => {
    const x = torch.tensor([
      [
        [1, 10],
        [100, 1000],
      ],
    ]); // [1, 2 channels, 2]
    const y = up.forward(x).toNumbers();
    // i = 0: 1*1 + 100*3 = 301, 1*2 + 100*4 = 402 ; i = 1: 10 + 3000 = 3010, 20 + 4000 = 4020
    assert.deepEqual(y, [301.5, 402.5, 3010.5, 4020.5]);
  });
  up.dispose();
});

test('ResBlock1d: identity shortcut when channels agree, 1x1 otherwise; SE scales channels by its sigmoid gate', () => {
  torch.manualSeed(3);
  const same = new ResBlock1d(4, 4, { kernel: 9, dilation: 2, groups: 2 });
  const wider = new ResBlock1d(4, 8, { kernel: 9, dilation: 1, groups: 2 });
  assert.equal(same.shortcut, null);
  assert.ok(wider.shortcut);
  assert.equal(groupNorm(12, 8).numGroups, 6);
  torch.tidy(() => {
    const x = torch.randn([2, 4, 20]);
    // With the convolution's weights and bias at zero, GN gives 0 and GELU(0) = 0: output = x.
    torch.noGrad(() => {
      same.conv.weight.zero_();
      same.conv.bias!.zero_();
    });
    assertClose(same.forward(x).toFloat32Array(), x.toFloat32Array(), 1e-6, 0, 'residual identity');
    assert.deepEqual(wider.forward(x).shape, [2, 8, 20]);
    // SE by hand: gate_c = sigmoid(W2 relu(W1 mean_t(x) + b1) + b2)_c scales channel c of x.
    const se = new SqueezeExcite1d(4, 2);
    const xs = torch.randn([1, 4, 5]);
    const v = xs.toNumbers();
    const [w1, b1, w2, b2] = [se.fc1.weight, se.fc1.bias!, se.fc2.weight, se.fc2.bias!].map((t) =>
      t.toNumbers(),
    );
    const hidden = b1!.length;
    const mean = [0, 1, 2, 3].map((c) => v.slice(c * 5, c * 5 + 5).reduce((a, b) => a + b, 0) / 5);
    const h = Array.from({ length: hidden }, (_, j) =>
      Math.max(0, b1![j]! + mean.reduce((a, m, c) => a + w1![j * 4 + c]! * m, 0)),
    );
    const gate = [0, 1, 2, 3].map(
      (c) => 1 / (1 + Math.exp(-(b2![c]! + h.reduce((a, hj, j) => a + w2![c * hidden + j]! * hj, 0)))),
    );
    const expected = v.map((x, i) => x * gate[Math.floor(i / 5)]!);
    assertClose(se.forward(xs).toFloat32Array(), expected, 1e-5, 1e-5, 'SE output');
    se.dispose();
  });
  same.dispose();
  wider.dispose();
});

test('model config validation names the field', () => {
  assert.throws(() => resolveUNetConfig({ kernel: 8 }), /model\.kernel: expected an odd/);
  assert.throws(
    () => resolveUNetConfig({ channels: [8, 8], dilations: [1] }),
    /model\.dilations: 1 values for 2 levels/,
  );
  assert.throws(() => resolveUNetConfig({ se: 'cbam' as never }), /model\.se/);
  assert.equal(resolveUNetConfig({}).channels.join('-'), '64-128-256-256');
});

test('checkpoint round trip: loadDenoiser rebuilds the architecture from metadata and gives the same output', () => {
  torch.manualSeed(4);
  const model = tinyModel();
  const dir = mkdtempSync(join(tmpdir(), 'nmr-model-'));
  torch.saveCheckpoint(join(dir, 'm'), {
    weights: model.stateDict(),
    metadata: modelMetadata(model.config),
    torchRng: false,
  });
  const x = Array.from({ length: 3 }, (_, i) =>
    Float64Array.from({ length: 40 }, (_, j) => Math.sin(i + j / 3)),
  );
  const before = denoiseSpectra(model, x);
  const loaded = loadDenoiser(join(dir, 'm.json'));
  const after = denoiseSpectra(loaded, [x[0]!, x[1]!, x[2]!.subarray(0, 17)]);
  assertClose(after[0]!, before[0]!, 0, 0, 'sample 0');
  assertClose(after[1]!, before[1]!, 0, 0, 'sample 1');
  assert.equal(after[2]!.length, 17);
  torch.saveCheckpoint(join(dir, 'other'), { weights: model.stateDict(), torchRng: false });
  assert.throws(() => loadDenoiser(join(dir, 'other.json')), /not an NMR denoising model/);
  model.dispose();
  loaded.dispose();
});

test('JCAMP-DX writer: the reader gets the spectrum back (axis, 9 significant digits)', () => {
  const real = Float64Array.from({ length: 23 }, (_, i) => Math.exp(-((i - 11) ** 2) / 4) * 1e5 - 3 * i);
  const text = formatJcampSpectrum(
    { real, ppmFirst: 10, ppmLast: -1, refMHz: 400.13, nucleus: '1H', source: 'x' },
    'test',
  );
  const back = parseJcamp(text, 'test.jdx');
  assert.equal(back.kind, 'spectrum');
  if (back.kind !== 'spectrum') return;
  assertClose(back.spectrum.real, real, 1e-3, 0, 'intensities');
  assert.equal(back.spectrum.ppmFirst, 10);
  assert.equal(back.spectrum.ppmLast, -1);
  assert.equal(back.spectrum.refMHz, 400.13);
  assert.throws(
    () =>
      formatJcampSpectrum(
        { real: Float64Array.of(1, NaN), ppmFirst: 1, ppmLast: 0, refMHz: 1, source: '' },
        'bad',
      ),
    /non-finite/,
  );
});
