// The polyphase form of dilated convolutions, the stack-input U-Net and its FLOP count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { aten } from '../../src/torch/index.js';
import { assertClose } from '../helpers.js';
import { polyphaseConv1d, ResBlock1d } from '../../src/nmr/model/blocks.js';
import { UNet1d, resolveUNetConfig, unetFlops, DEFAULT_UNET } from '../../src/nmr/model/unet.js';
import { denoiseStacks, isStackModel, modelDenoiser } from '../../src/nmr/model/denoise.js';
import type { PreprocessResult } from '../../src/nmr/pipeline/preprocess.js';

test('polyphaseConv1d equals the direct dilated convolution (lengths divisible and not by d, k = 1..9)', () => {
  torch.manualSeed(1);
  for (const [d, k, length] of [
    [1, 9, 64],
    [2, 9, 64],
    [4, 9, 64],
    [8, 9, 64],
    [4, 3, 37],
    [8, 9, 13],
    [3, 5, 50],
    [2, 1, 9],
  ] as const) {
    torch.tidy(() => {
      const x = torch.randn([2, 5, length]);
      const w = torch.randn([6, 5, k]);
      const b = torch.randn([6]);
      const direct = aten.conv1d(x, w, b, [1], [(d * (k - 1)) / 2], [d], 1);
      const poly = polyphaseConv1d(x, w, b, d);
      assert.deepEqual(poly.shape, direct.shape);
      assertClose(poly.toFloat32Array(), direct.toFloat32Array(), 1e-5, 1e-5, `d ${d} k ${k} L ${length}`);
      const noBias = polyphaseConv1d(x, w, null, d);
      const directNoBias = aten.conv1d(x, w, null, [1], [(d * (k - 1)) / 2], [d], 1);
      assertClose(noBias.toFloat32Array(), directNoBias.toFloat32Array(), 1e-5, 1e-5, `no bias d ${d}`);
    });
  }
  torch.tidy(() =>
    assert.throws(() => polyphaseConv1d(torch.randn([1, 2, 8]), torch.randn([2, 2, 4]), null, 2), /odd/),
  );
});

test('polyphaseConv1d gradients equal those of the direct convolution', () => {
  torch.manualSeed(2);
  const x = torch.randn([2, 3, 30]).requiresGrad_();
  const w = torch.randn([4, 3, 9]).requiresGrad_();
  const grads = (f: () => torch.Tensor): Float32Array[] => {
    x.grad?.zero_();
    w.grad?.zero_();
    torch.tidy(() => f().square().sum().backward());
    return [x.grad!.toFloat32Array(), w.grad!.toFloat32Array()];
  };
  const [gxDirect, gwDirect] = grads(() => aten.conv1d(x, w, null, [1], [16], [4], 1));
  const [gxPoly, gwPoly] = grads(() => polyphaseConv1d(x, w, null, 4));
  assertClose(gxPoly!, gxDirect!, 1e-4, 1e-5, 'dL/dx');
  assertClose(gwPoly!, gwDirect!, 1e-3, 1e-5, 'dL/dw');
  torch.dispose([x, w]);
});

test('ResBlock1d and UNet1d give the same output with conv polyphase and direct', () => {
  torch.manualSeed(3);
  const block = new ResBlock1d(4, 4, { kernel: 9, dilation: 4, groups: 2 });
  assert.equal(block.convMode, 'direct');
  const poly = new ResBlock1d(4, 4, { kernel: 9, dilation: 4, groups: 2, conv: 'polyphase' });
  poly.loadStateDict(block.stateDict());
  const x = torch.randn([2, 4, 45]);
  torch.noGrad(() =>
    torch.tidy(() =>
      assertClose(poly.forward(x).toFloat32Array(), block.forward(x).toFloat32Array(), 1e-5, 1e-5, 'block'),
    ),
  );
  const cfg = { channels: [4, 8, 8], dilations: [1, 2, 4], groups: 2 };
  const a = new UNet1d(cfg);
  torch.noGrad(() => torch.nn.init.normal_(a.head.weight, 0, 0.5));
  const b = new UNet1d({ ...cfg, conv: 'polyphase' });
  b.loadStateDict(a.stateDict());
  const s = torch.randn([3, 50]);
  torch.noGrad(() =>
    torch.tidy(() =>
      assertClose(b.forward(s).toFloat32Array(), a.forward(s).toFloat32Array(), 1e-5, 1e-5, 'U-Net'),
    ),
  );
  torch.dispose([x, s]);
  for (const m of [block, poly, a, b]) m.dispose();
});

test('stack U-Net: [N, K+1, L] -> [N, 1, L]; untrained it is the inverse-variance mix of the levels (T = 2)', () => {
  torch.manualSeed(4);
  const model = new UNet1d({ channels: [4, 8], dilations: [1, 2], groups: 2, inputLevels: 3 });
  assert.ok(isStackModel(model));
  assert.equal(model.stem.weight.shape[1], 3);
  const x = torch.randn([2, 3, 21]);
  torch.noGrad(() =>
    torch.tidy(() => {
      const y = model.forward(x);
      assert.deepEqual(y.shape, [2, 1, 21]);
      // Zero head: output = (1 x0 + 4 x1 + 16 x2) / 21.
      const expected = x
        .select(1, 0)
        .add(x.select(1, 1).mul(4))
        .add(x.select(1, 2).mul(16))
        .div(21)
        .unsqueeze(1);
      assertClose(y.toFloat32Array(), expected.toFloat32Array(), 1e-6, 1e-5, 'fusion start');
    }),
  );
  torch.tidy(() => assert.throws(() => model.forward(torch.randn([2, 21])), /stacks of 3 levels/));
  torch.tidy(() => assert.throws(() => model.forward(torch.randn([2, 2, 21])), /stacks of 3 levels/));
  // denoiseStacks and the evaluation wrapper agree with forward.
  const stacks = [0, 1].map((n) =>
    [0, 1, 2].map((k) => Float64Array.from(x.select(0, n).select(0, k).toFloat32Array())),
  );
  const out = denoiseStacks(model, stacks);
  const direct = torch.noGrad(() => torch.tidy(() => model.forward(x).toFloat32Array()));
  assertClose(out[1]!, direct.subarray(21), 1e-6, 0, 'denoiseStacks');
  const viaEval = modelDenoiser(model)(
    stacks[0]![0]!,
    { spectra: stacks[0]! } as unknown as PreprocessResult,
    0,
  );
  assertClose(viaEval, out[0]!, 0, 0, 'modelDenoiser');
  assert.throws(() => denoiseStacks(model, [stacks[0]!.slice(0, 2)]), /takes 3 levels/);
  assert.throws(() => resolveUNetConfig({ inputLevels: 0 }), /model\.inputLevels/);
  torch.dispose([x]);
  model.dispose();
});

test('unetFlops: hand count of a 2-level net, and the default net is about 48 GFLOP per 32k spectrum', () => {
  const cfg = resolveUNetConfig({ channels: [2, 4], dilations: [1, 2], kernel: 3, inputLevels: 1 });
  // L = 8: stem 8*1*2*3 = 48; enc0 8*2*2*3 = 96; enc1 4*4*4*3 = 192; down 4*2*4*2 = 64;
  // dec0 96; up 8*4*2 = 64; fuse 8*2*2*2 = 64; head 8*2 = 16 -> 640 MACs.
  assert.equal(unetFlops(cfg, 8), 2 * 640);
  const gflop = unetFlops(DEFAULT_UNET, 32768) / 1e9;
  assert.ok(gflop > 45 && gflop < 50, `${gflop}`);
});
