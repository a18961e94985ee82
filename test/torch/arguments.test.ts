// tensor() and the layers from a JavaScript caller: wrong types and sizes are an ArgumentError
// naming the function and the argument, instead of an engine message about aten::empty.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { ArgumentError } from '../../src/util/arguments.js';

function named(call: () => unknown, pattern: RegExp): void {
  assert.throws(call, (error: unknown) => {
    assert.ok(error instanceof ArgumentError, `${String(error)}`);
    assert.match((error as Error).message, pattern);
    return true;
  });
}
const loose = (v: unknown) => v as never;

test('tensor() and layers name the bad argument', () => {
  named(
    () => torch.tensor(loose('abc')),
    /^tensor: data must be a number, a \(nested\) array of numbers or a typed array, got 'abc'/,
  );
  named(
    () => torch.tensor(loose([1, 'x'])),
    /tensor: data \(flattened\)\[1\] must be a number or a boolean, got 'x'/,
  );
  named(() => torch.tensor([[1, 2], [3]]), /ragged nested array/);
  named(
    () => torch.tensor(new Float32Array(6), { shape: [4, 2] }),
    /options\.shape \[4,2\] holds 8 elements but the data has 6/,
  );
  named(() => torch.tensor(loose(new Uint16Array(2))), /data must be a Float32Array, .* got a Uint16Array/);
  named(() => new torch.nn.Linear(2.5, 3), /^Linear: inFeatures must be an integer >= 1/);
  named(() => new torch.nn.Linear(2, loose('3')), /^Linear: outFeatures must be an integer >= 1.*got '3'/);
  named(() => new torch.nn.Conv2d(1, 4, 0), /^Conv2d: kernelSize must be an integer >= 1/);
  named(
    () => new torch.nn.Conv1d(1, 4, 3, { stride: 0 }),
    /^Conv1d: options\.stride must be an integer >= 0|^Conv1d: options\.stride must be an integer >= 1/,
  );
  named(
    () => new torch.nn.Conv2d(3, 4, 3, { groups: 2 }),
    /Conv2d: in \(3\) and out \(4\) channels must be divisible by groups \(2\)/,
  );
  named(() => new torch.nn.BatchNorm2d(loose(null)), /^BatchNorm2d: numFeatures must be an integer >= 1/);
  named(() => new torch.nn.GroupNorm(3, 8), /GroupNorm: 8 channels do not split into 3 groups/);
  named(() => new torch.nn.Dropout(1.5), /^Dropout: p must be a finite number >= 0 and <= 1, got 1\.5/);
  named(() => new torch.nn.LayerNorm(loose(8)), /^LayerNorm: normalizedShape must be an array/);
  named(
    () => new torch.nn.Linear(2, 3, loose({ bias: 'no' })),
    /Linear: options\.bias must be true or false/,
  );
  // Valid calls still build.
  const layer = new torch.nn.Linear(2, 3);
  assert.deepEqual(layer.weight.shape, [3, 2]);
  layer.dispose();
  const t = torch.tensor([
    [1, 2],
    [3, 4],
  ]);
  assert.deepEqual(t.shape, [2, 2]);
  t.dispose();
});

test('activation layers name a bad argument; their functional forms compute the same', () => {
  named(
    () => new torch.nn.LeakyReLU(loose('0.1')),
    /^LeakyReLU: negativeSlope must be a finite number, got '0.1'/,
  );
  named(() => new torch.nn.Softplus(0), /^Softplus: beta must be a finite number > 0, got 0/);
  named(() => new torch.nn.ELU(NaN), /^ELU: alpha must be a finite number, got NaN/);
  named(() => new torch.nn.Softmax(1.5), /^Softmax: dim must be an integer >= -64 and <= 63, got 1.5/);
  const F = torch.nn.functional;
  torch.tidy(() => {
    const x = torch.randn([4, 5]).mul(4);
    const same = (a: torch.Tensor, b: torch.Tensor, what: string) =>
      assert.deepEqual(Array.from(a.toFloat32Array()), Array.from(b.toFloat32Array()), what);
    same(F.leakyRelu(x, 0.2), new torch.nn.LeakyReLU(0.2).forward(x), 'leakyRelu');
    same(F.silu(x), new torch.nn.SiLU().forward(x), 'silu');
    same(F.elu(x, 0.5), new torch.nn.ELU(0.5).forward(x), 'elu');
    same(F.softplus(x, 2, 3), new torch.nn.Softplus(2, 3).forward(x), 'softplus');
    same(F.softmax(x, 0), new torch.nn.Softmax(0).forward(x), 'softmax');
    same(F.logSoftmax(x), new torch.nn.LogSoftmax().forward(x), 'logSoftmax');
  });
});

test('Upsample names a bad option', () => {
  named(() => new torch.nn.Upsample({}), /^Upsample: options must be one of size and scaleFactor/);
  named(
    () => new torch.nn.Upsample({ size: [4], scaleFactor: [2] }),
    /^Upsample: options must be one of size and scaleFactor/,
  );
  named(
    () => new torch.nn.Upsample({ scaleFactor: [0] }),
    /^Upsample: options.scaleFactor\[0\] must be a finite number > 0, got 0/,
  );
  named(
    () => new torch.nn.Upsample({ size: [2.5] }),
    /^Upsample: options.size\[0\] must be an integer >= 1, got 2.5/,
  );
  named(
    () => new torch.nn.Upsample({ scaleFactor: [2], mode: loose('cubic') }),
    /^Upsample: options.mode must be one of 'nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear', 'area', got 'cubic'/,
  );
});
