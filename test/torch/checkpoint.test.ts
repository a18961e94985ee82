import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import {
  saveSafetensors,
  loadSafetensors,
  encodeSafetensors,
  decodeSafetensors,
  readSafetensorsHeader,
  saveCheckpoint,
  loadCheckpoint,
  restoreTorchRng,
} from '../../src/torch/checkpoint.js';
import { SGD } from '../../src/torch/optim/sgd.js';
import { CustomLR } from '../../src/torch/optim/lr-scheduler.js';
import { Rng } from '../../src/util/rng.js';
import { assertClose, goldenDir } from '../helpers.js';

const pyFile = join(goldenDir, 'torch', 'python_written.safetensors');
const pyValues = JSON.parse(readFileSync(join(goldenDir, 'torch', 'python_written.json'), 'utf8')) as Record<
  string,
  { dtype: string; shape: number[]; values: number[] }
>;
const dtypeOf: Record<string, torch.DType> = {
  F32: 'float32',
  F64: 'float64',
  I64: 'int64',
  I32: 'int32',
  BOOL: 'bool',
};

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'tailor-ckpt-'));
}

/** The tensors the golden script wrote, rebuilt here from their values. */
function pythonTensors(): Record<string, torch.Tensor> {
  const out: Record<string, torch.Tensor> = {};
  for (const [name, v] of Object.entries(pyValues)) {
    out[name] = torch.tensor(Float64Array.from(v.values), { shape: v.shape, dtype: dtypeOf[v.dtype] });
  }
  return out;
}

test('reads a safetensors file written by a torch-free Python writer', () => {
  torch.tidy(() => {
    const { tensors, metadata } = loadSafetensors(pyFile);
    assert.deepEqual(metadata, { format: 'pt', epoch: '12' });
    assert.deepEqual(Object.keys(tensors).sort(), Object.keys(pyValues).sort());
    for (const [name, v] of Object.entries(pyValues)) {
      const t = tensors[name]!;
      assert.equal(t.dtype, dtypeOf[v.dtype], `${name} dtype`);
      assert.deepEqual(t.shape, v.shape, `${name} shape`);
      assertClose(t.toNumbers(), v.values, 0, 0, name);
    }
  });
});

test('writes byte-for-byte the file the reference layout gives (header order, padding, offsets)', () => {
  torch.tidy(() => {
    const bytes = encodeSafetensors(pythonTensors(), { format: 'pt', epoch: '12' });
    assert.deepEqual(Buffer.from(bytes), readFileSync(pyFile));
  });
});

test('round trip of every dtype, 0-d and empty tensors, half precision rounding', () => {
  const dir = tempDir();
  try {
    torch.tidy(() => {
      const path = join(dir, 'all.safetensors');
      const tensors = {
        f32: torch.tensor([
          [1.5, -2.25],
          [3, 4e-7],
        ]),
        f64: torch.tensor([Math.PI, -0], { dtype: 'float64' }),
        i64: torch.tensor(new BigInt64Array([-(2n ** 62n), 5n])),
        i32: torch.tensor(new Int32Array([-7, 2147483647])),
        i16: torch.tensor(new Int16Array([-300, 12])),
        i8: torch.tensor(new Int8Array([-128, 127])),
        u8: torch.tensor(new Uint8Array([0, 255])),
        b: torch.tensor([true, false, true]),
        f16: torch.tensor([1, -0.5, 65504, 1e-7, 3.14159]).to('float16'),
        bf16: torch.tensor([1, -0.5, 3e38, 1e-30, 3.14159]).to('bfloat16'),
        scalar: torch.full([], 42, 'float32'),
        empty: torch.zeros([0, 4]),
      };
      saveSafetensors(path, tensors, { note: 'round trip' });
      const { tensors: back, metadata } = loadSafetensors(path);
      assert.deepEqual(metadata, { note: 'round trip' });
      for (const [name, t] of Object.entries(tensors)) {
        const b = back[name]!;
        assert.equal(b.dtype, t.dtype, `${name} dtype`);
        assert.deepEqual(b.shape, t.shape, `${name} shape`);
        assert.deepEqual(b.toArray(), t.toArray(), `${name} values`);
      }
      // The half-precision bit encoders must agree with libtorch's own rounding.
      assert.deepEqual(back.f16!.toNumbers(), [1, -0.5, 65504, 1.1920928955078125e-7, 3.140625]);
      const header = readSafetensorsHeader(path);
      assert.deepEqual(header.entries.f16, {
        dtype: 'F16',
        shape: [5],
        data_offsets: header.entries.f16!.data_offsets,
      });
      assert.equal(header.entries.bf16!.dtype, 'BF16');
      // Non-contiguous tensors are written in row-major order of their logical layout.
      const tview = torch
        .tensor([
          [1, 2, 3],
          [4, 5, 6],
        ])
        .t();
      const { tensors: tv } = decodeSafetensors(encodeSafetensors({ tview }));
      assert.deepEqual(tv.tview!.toNumbers(), [1, 4, 2, 5, 3, 6]);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('truncated or corrupt files give errors naming the file and the problem; nothing leaks', () => {
  const dir = tempDir();
  const before = torch.liveTensors();
  try {
    const good = readFileSync(pyFile);
    const cases: [string, Uint8Array, RegExp][] = [
      [
        'short.safetensors',
        good.subarray(0, 5),
        /short\.safetensors: .*shorter than the 8-byte header length/,
      ],
      [
        'cut-header.safetensors',
        good.subarray(0, 60),
        /cut-header\.safetensors: .*only 52 follow \(truncated\?\)/,
      ],
      [
        'cut-data.safetensors',
        good.subarray(0, good.length - 3),
        /cut-data\.safetensors: .*(ends at byte|truncated)/,
      ],
      [
        'trailing.safetensors',
        Buffer.concat([good, Buffer.from([1, 2])]),
        /trailing\.safetensors: .*2 bytes after the last tensor/,
      ],
    ];
    const huge = Buffer.from(good);
    huge.writeBigUInt64LE(2n ** 40n, 0);
    cases.push(['huge.safetensors', huge, /huge\.safetensors: .*implausible/]);
    const badJson = Buffer.from(good.toString('latin1').replace('"dtype":"I64"', '"dtype";"I64"'), 'latin1');
    cases.push(['badjson.safetensors', badJson, /badjson\.safetensors: .*not valid JSON/]);
    const text = good.toString('latin1').replace('"data_offsets":[32,56]', '"data_offsets":[32,55]');
    cases.push([
      'offsets.safetensors',
      Buffer.from(text, 'latin1'),
      /offsets\.safetensors: .*do not match dtype F64/,
    ]);
    for (const [name, bytes, pattern] of cases) {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      assert.throws(() => loadSafetensors(path), pattern, name);
    }
    assert.throws(
      () => loadSafetensors(join(dir, 'missing.safetensors')),
      /cannot read safetensors file .*missing\.safetensors/,
    );
    assert.throws(
      () => torch.tidy(() => encodeSafetensors({ x: torch.zeros([1]) }, { n: 1 as unknown as string })),
      /metadata 'n'/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(torch.liveTensors(), before);
});

test('checkpoint: weights + optimizer + scheduler + RNG states resume a run exactly', () => {
  const dir = tempDir();
  const before = torch.liveTensors();
  try {
    torch.manualSeed(11);
    const data = torch.randn([32, 5]);
    const target = torch.randn([32, 2]);
    const makeModel = () => ({ w: torch.randn([5, 2]).requiresGrad_(), b: torch.zeros([2]).requiresGrad_() });
    const train = (
      m: { w: torch.Tensor; b: torch.Tensor },
      opt: SGD,
      sched: CustomLR,
      rng: Rng,
      epochs: number,
    ) => {
      for (let e = 0; e < epochs; e++) {
        torch.tidy(() => {
          // Draw from both generators so the test sees whether their states were restored.
          const noise = torch.randn([32, 5]).mul(0.01 * (1 + rng.uniform()));
          opt.zeroGrad();
          data.add(noise).matmul(m.w).add(m.b).sub(target).square().mean().backward();
          opt.step();
        });
        sched.step();
      }
    };
    const setup = (m: { w: torch.Tensor; b: torch.Tensor }) => {
      const opt = new SGD([{ params: [m.w] }, { params: [m.b], weightDecay: 0 }], {
        lr: 0.1,
        momentum: 0.9,
        nesterov: true,
        weightDecay: 5e-4,
      });
      return { opt, sched: new CustomLR(opt, { step1: 4, step2: 6, warmupEpoch: 2 }) };
    };

    torch.manualSeed(5);
    const a = makeModel();
    const runA = setup(a);
    const rngA = new Rng(9);
    train(a, runA.opt, runA.sched, rngA, 8);

    torch.manualSeed(5);
    const b = makeModel();
    const runB = setup(b);
    const rngB = new Rng(9);
    train(b, runB.opt, runB.sched, rngB, 4);
    const files = saveCheckpoint(join(dir, 'run', 'epoch4'), {
      weights: { weight: b.w, bias: b.b },
      metadata: { arch: 'linear' },
      optimizer: runB.opt.stateDict(),
      scheduler: runB.sched.stateDict(),
      epoch: 4,
      rng: { augment: rngB.state() },
      extra: { note: 'halfway' },
    });
    assert.ok(files.optimizer?.endsWith('epoch4.optim.safetensors'));
    // Scramble everything the checkpoint should restore.
    torch.manualSeed(999);
    runB.opt.dispose();

    const c = makeModel();
    const runC = setup(c);
    const loaded = loadCheckpoint(join(dir, 'run', 'epoch4.safetensors'));
    assert.equal(loaded.epoch, 4);
    assert.deepEqual(loaded.metadata, { arch: 'linear' });
    assert.deepEqual(loaded.extra, { note: 'halfway' });
    torch.noGrad(() => {
      c.w.copy_(loaded.weights.weight!);
      c.b.copy_(loaded.weights.bias!);
    });
    runC.opt.loadStateDict(loaded.optimizer!);
    runC.sched.loadStateDict(loaded.scheduler!);
    restoreTorchRng(loaded);
    const rngC = new Rng(loaded.rng!.augment);
    torch.dispose([loaded.weights, loaded.optimizer!.state]);
    // Epoch 4 of CustomLR(step1 4, step2 6, warmup 2) is base x 0.1, restored without stepping.
    assertClose(
      runC.opt.paramGroups.map((g) => g.lr),
      [0.01, 0.01],
      1e-15,
      0,
      'restored lr',
    );
    train(c, runC.opt, runC.sched, rngC, 4);

    assertClose(c.w.toFloat32Array(), a.w.toFloat32Array(), 0, 0, 'resumed weights');
    assertClose(c.b.toFloat32Array(), a.b.toFloat32Array(), 0, 0, 'resumed bias');
    assert.deepEqual(
      runC.opt.paramGroups.map((g) => g.lr),
      runA.opt.paramGroups.map((g) => g.lr),
    );
    runA.opt.dispose();
    runC.opt.dispose();
    torch.dispose([a, b, c, data, target]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(torch.liveTensors(), before);
});

test('checkpoint: a weights file that does not match its sidecar is reported, naming both files', () => {
  const dir = tempDir();
  try {
    torch.tidy(() => {
      const base = join(dir, 'ck');
      saveCheckpoint(base, { weights: { x: torch.ones([3]) }, epoch: 1, torchRng: false });
      appendFileSync(`${base}.safetensors`, Buffer.from([0]));
      assert.throws(() => loadCheckpoint(base), /ck\.safetensors is 77 bytes but .*ck\.json recorded 76/);
      assert.throws(() => loadCheckpoint(join(dir, 'nope')), /cannot read checkpoint sidecar .*nope\.json/);
      writeFileSync(`${base}.json`, '{"format":"other"}');
      assert.throws(() => loadCheckpoint(base), /not a tailor checkpoint sidecar/);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
