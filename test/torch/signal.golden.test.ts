// The window functions, torch.stft and torch.istft against PyTorch 1.13
// (test/golden/torch/stft.json, from scripts/golden/stft.py): periodic and symmetric windows; the
// stft of a chirp under several framings (complex results read as real/imaginary pairs); the istft
// round trip; the gradient of the magnitude's sum; then the argument errors and the memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { aten, type Tensor } from '../../src/torch/index.js';
import { ArgumentError } from '../../src/util/arguments.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Flat {
  shape: number[];
  data: number[];
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'stft.json'), 'utf8')) as {
  windows: Record<string, Flat>;
  signal: number[];
  stft: Record<string, Flat>;
  stft_batch: Flat;
  istft: Flat;
  istft_length: Flat;
  grad_abs_sum: number[];
};

const f64 = { dtype: 'float64' } as const;
const signal = (): Tensor => torch.tensor(golden.signal, { shape: [golden.signal.length], dtype: 'float64' });

/** Compares a (possibly complex) result with a golden entry: shape (complex as [..., 2]) and values. */
function expectGolden(t: Tensor, g: Flat, label: string): void {
  const real = t.dtype.startsWith('complex') ? aten.view_as_real(t) : t;
  assert.deepEqual(real.shape, g.shape, `${label}: shape`);
  assertClose(Array.from(real.contiguous().toFloat64Array()), g.data, 1e-10, 1e-10, label);
}

test('windows: hann, hamming, blackman, bartlett and kaiser, periodic and symmetric, are PyTorch 1.13 values', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    for (const periodic of [true, false]) {
      const tag = periodic ? 'periodic' : 'symmetric';
      const w = golden.windows;
      expectGolden(torch.hannWindow(8, { periodic, ...f64 }), w[`hann_${tag}`], `hann ${tag}`);
      expectGolden(torch.hammingWindow(8, { periodic, ...f64 }), w[`hamming_${tag}`], `hamming ${tag}`);
      expectGolden(
        torch.hammingWindow(8, { periodic, alpha: 0.5, beta: 0.4, ...f64 }),
        w[`hamming_ab_${tag}`],
        'ab',
      );
      expectGolden(torch.blackmanWindow(8, { periodic, ...f64 }), w[`blackman_${tag}`], `blackman ${tag}`);
      expectGolden(torch.bartlettWindow(7, { periodic, ...f64 }), w[`bartlett_${tag}`], `bartlett ${tag}`);
      expectGolden(torch.kaiserWindow(8, { periodic, beta: 8, ...f64 }), w[`kaiser_${tag}`], `kaiser ${tag}`);
      expectGolden(
        torch.kaiserWindow(8, { periodic, ...f64 }),
        w[`kaiser_default_${tag}`],
        `kaiser default ${tag}`,
      );
    }
    const w = torch.hannWindow(4);
    assert.equal(w.dtype, 'float32');
    assert.deepEqual(w.shape, [4]);
  });
  assert.equal(torch.liveTensors(), before);
});

test('stft of a chirp: defaults, constant padding, a short window, normalized two-sided, no centre, no window', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = signal();
    const hann16 = torch.hannWindow(16, f64);
    const g = golden.stft;
    expectGolden(torch.stft(x, 16, { hopLength: 4, window: hann16 }), g.default, 'default');
    expectGolden(
      torch.stft(x, 16, { hopLength: 4, window: hann16, padMode: 'constant' }),
      g.constant,
      'constant',
    );
    const hann10 = torch.hannWindow(10, f64);
    expectGolden(
      torch.stft(x, 16, { hopLength: 5, winLength: 10, window: hann10 }),
      g.short_window,
      'short window',
    );
    const hamming12 = torch.hammingWindow(12, f64);
    const twoSided = torch.stft(x, 12, { window: hamming12, normalized: true, onesided: false });
    expectGolden(twoSided, g.normalized_twosided, 'normalized two-sided');
    expectGolden(
      torch.stft(x, 16, { hopLength: 4, window: hann16, center: false }),
      g.no_center,
      'no centre',
    );
    expectGolden(torch.stft(x, 8), g.no_window, 'no window');
    const batch = torch.stack([x, x.mul(2)]);
    expectGolden(torch.stft(batch, 16, { hopLength: 4, window: hann16 }), golden.stft_batch, 'batch');
  });
  assert.equal(torch.liveTensors(), before);
});

test('istft inverts stft (with and without length); the gradient of |stft|.sum() is PyTorch 1.13', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = signal();
    const hann16 = torch.hannWindow(16, f64);
    const S = torch.stft(x, 16, { hopLength: 4, window: hann16 });
    expectGolden(torch.istft(S, 16, { hopLength: 4, window: hann16 }), golden.istft, 'istft');
    const back = torch.istft(S, 16, { hopLength: 4, window: hann16, length: 50 });
    expectGolden(back, golden.istft_length, 'istft length');
    assertClose(Array.from(back.toFloat64Array()), golden.signal, 1e-10, 1e-10, 'round trip');

    const xg = signal().requiresGrad_();
    torch.stft(xg, 16, { hopLength: 4, window: hann16 }).abs().sum().backward();
    assertClose(Array.from(xg.grad!.toFloat64Array()), golden.grad_abs_sum, 1e-9, 1e-9, 'grad');
  });
  assert.equal(torch.liveTensors(), before);
});

test('bad arguments are named errors with the remedy; nothing leaks', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = signal();
    const short = torch.tensor([1, 2, 3, 4, 5, 6]);
    const throwsNamed = (f: () => unknown, pattern: RegExp): void =>
      assert.throws(f, (e: unknown) => {
        assert.ok(e instanceof ArgumentError, String(e));
        assert.match(e.message, pattern);
        return true;
      });
    throwsNamed(
      () => torch.stft(short, 16, { center: false }),
      /torch\.stft: nFft must be at most the signal's 6 samples/,
    );
    throwsNamed(() => torch.stft(short, 16), /torch\.stft: nFft .*reflect padding.*padMode 'constant'/);
    throwsNamed(() => torch.stft(x, 16, { hopLength: 0 }), /torch\.stft: options\.hopLength must be .*>= 1/);
    throwsNamed(
      () => torch.stft(x, 16, { window: torch.hannWindow(10) }),
      /options\.window must be a 1-d tensor of winLength = 16/,
    );
    throwsNamed(() => torch.stft(x, 16, { winLength: 20 }), /options\.winLength .*<= 16/);
    throwsNamed(() => torch.stft(x, 16, { padMode: 'circular' as 'constant' }), /options\.padMode/);
    throwsNamed(
      () => torch.stft(x, 16, { returnComplex: false as true }),
      /deprecated in PyTorch.*torch\.viewAsReal/,
    );
    throwsNamed(() => torch.stft(x.reshape(1, 1, 50), 16), /torch\.stft: input must be a 1-d signal/);
    throwsNamed(() => torch.istft(x.reshape(5, 10), 8), /torch\.istft: input must be a complex spectrogram/);
    const S = torch.stft(x, 16);
    throwsNamed(() => torch.istft(S, 12), /torch\.istft: input must be 7 frequencies for nFft = 12/);
    throwsNamed(() => torch.hannWindow(-1), /torch\.hannWindow: windowLength/);
    throwsNamed(() => torch.kaiserWindow(4, { dtype: 'int32' }), /options\.dtype must be a floating dtype/);
  });
  assert.equal(torch.liveTensors(), before);
});
