import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { saveCheckpoint, loadCheckpoint, restoreTorchRng } from '../../src/torch/checkpoint.js';
import { SGD } from '../../src/torch/optim/sgd.js';
import { Linear } from '../../src/torch/nn/layers.js';

const hasCuda = torch.cuda.isAvailable();

test('device names: cpu, cuda, cuda:N parse into one Device each; anything else names the forms', () => {
  const cpu = torch.parseDevice('cpu');
  assert.equal(cpu.type, 'cpu');
  assert.equal(cpu.index, null);
  assert.equal(cpu, torch.CPU, 'one object per device: devices compare with ===');
  assert.equal(torch.parseDevice(' cpu:0 '), torch.CPU);
  const gpu = torch.parseDevice('cuda:1');
  assert.deepEqual([gpu.type, gpu.index, gpu.name], ['cuda', 1, 'cuda:1']);
  assert.equal(torch.parseDevice(gpu), gpu, 'a Device is already parsed');
  assert.equal(`${gpu}`, 'cuda:1');
  assert.equal(JSON.stringify({ device: gpu }), '{"device":"cuda:1"}');
  assert.equal(torch.parseDevice('cuda').index, null, 'parsing does not ask whether the device exists');
  for (const bad of ['gpu', 'cuda:-1', 'cpu:1', ''])
    assert.throws(
      () => torch.parseDevice(bad),
      (e: unknown) =>
        e instanceof torch.DeviceUnavailableError &&
        e.message.includes(`invalid device '${bad}' (expected cpu, cuda or cuda:N)`),
    );
});

test(
  'asking for CUDA without it names the libtorch in use and how to select a CUDA one',
  { skip: hasCuda },
  () => {
    const check = (fn: () => unknown) =>
      assert.throws(fn, (e: unknown) => {
        assert.ok(e instanceof torch.DeviceUnavailableError);
        assert.match((e as Error).message, /libtorch .*version 1\.13|version \d/);
        // A CPU-only libtorch names how to select a CUDA one; a CUDA libtorch on a machine with
        // no visible GPU names the driver check instead.
        if (torch.cudaInfo().compiled)
          assert.match((e as Error).message, /no GPU is visible to .*; check the driver \(nvidia-smi\)/);
        else assert.match((e as Error).message, /TAILOR_LIBTORCH=python:\/path\/to\/python3/);
        return true;
      });
    check(() => torch.checkDevice('cuda'));
    check(() => torch.zeros([2], 'float32', 'cuda:0'));
    check(() => torch.setDefaultDevice('cuda'));
    check(() => torch.tensor([1, 2]).toDevice('cuda'));
    assert.equal(torch.getDefaultDevice(), torch.CPU);
    assert.throws(
      () => torch.tensor([1]).pinMemory(),
      /DeviceUnavailableError: pinned host memory needs CUDA/,
    );
    assert.equal(torch.cuda.emptyCache(), false);
    torch.cuda.synchronize(); // a no-op without CUDA
  },
);

test('tensors know their device; to(cpu) of a CPU tensor is the same data', () => {
  torch.tidy(() => {
    const a = torch.tensor([1, 2, 3], { device: 'cpu' });
    assert.equal(a.device, torch.CPU);
    assert.equal(a.to('float64').dtype, 'float64', 'to() of a dtype name converts the dtype');
    assert.equal(a.to(torch.CPU).device, torch.CPU);
    const b = a.to('cpu');
    assert.deepEqual([...b.toFloat32Array()], [1, 2, 3]);
    b.fill_(7);
    assert.deepEqual(
      [...a.toFloat32Array()],
      [7, 7, 7],
      'to() of a tensor already there aliases it, as PyTorch',
    );
    const c = a.toDevice('cpu', { copy: true, dtype: 'float64' });
    assert.equal(c.dtype, 'float64');
    assert.equal(torch.zeros([2], 'float32', torch.CPU).device, torch.CPU);
    assert.equal(torch.randn([2]).device, torch.getDefaultDevice());
  });
});

test('Module.to(cpu) keeps the parameter objects, so the optimizer still updates them', () => {
  torch.manualSeed(3);
  const m = new Linear(3, 2);
  const params = m.parameters();
  const opt = new SGD(params, { lr: 0.1, momentum: 0.9 });
  assert.equal(m.to('cpu'), m);
  assert.equal(m.device, torch.CPU);
  assert.equal(new torch.nn.Sequential().device, torch.CPU, 'a module without tensors reports the CPU');
  assert.deepEqual(m.parameters(), params);
  torch.tidy(() => {
    const before = params[0]!.toFloat32Array();
    m.forward(torch.ones([4, 3]))
      .sum()
      .backward();
    opt.step();
    assert.notDeepEqual([...params[0]!.toFloat32Array()], [...before]);
  });
  opt.dispose();
  m.dispose();
});

test('checkpoints load with a map location; optimizer state lands on the parameters device', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-device-'));
  try {
    torch.manualSeed(5);
    const m = new Linear(3, 2);
    const opt = new SGD(m.parameters(), { lr: 0.1, momentum: 0.9 });
    torch.tidy(() => {
      m.forward(torch.ones([2, 3]))
        .sum()
        .backward();
      opt.step();
    });
    saveCheckpoint(join(dir, 'ck'), { weights: m.stateDict(), optimizer: opt.stateDict(), epoch: 1 });
    const loaded = loadCheckpoint(join(dir, 'ck'), { mapLocation: 'cpu' });
    for (const t of Object.values(loaded.weights)) assert.equal(t.device, torch.CPU);
    const m2 = new Linear(3, 2).to('cpu');
    m2.loadStateDict(loaded.weights);
    const opt2 = new SGD(m2.parameters(), { lr: 0.1, momentum: 0.9 });
    opt2.loadStateDict(loaded.optimizer!);
    const state = opt2.stateDict().state;
    for (const s of Object.values(state)) assert.equal((s.momentumBuffer as torch.Tensor).device, torch.CPU);
    torch.dispose([loaded.weights]);
    for (const s of Object.values(loaded.optimizer!.state))
      for (const v of Object.values(s)) if (v instanceof torch.Tensor) v.dispose();
    if (!hasCuda) {
      assert.throws(
        () => loadCheckpoint(join(dir, 'ck'), { mapLocation: 'cuda' }),
        torch.DeviceUnavailableError,
      );
    }
    m.dispose();
    m2.dispose();
    opt.dispose();
    opt2.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('manualSeed seeds every generator; the checkpointed RNG state resumes the same stream', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-rng-'));
  try {
    torch.manualSeed(11);
    const a = torch.tidy(() => torch.rand([3]).toFloat32Array());
    torch.manualSeed(11);
    assert.deepEqual(
      torch.tidy(() => torch.rand([3]).toFloat32Array()),
      a,
    );
    saveCheckpoint(join(dir, 'r'), { weights: {} });
    const next = torch.tidy(() => torch.rand([3]).toFloat32Array());
    const loaded = loadCheckpoint(join(dir, 'r'));
    restoreTorchRng(loaded);
    assert.deepEqual(
      torch.tidy(() => torch.rand([3]).toFloat32Array()),
      next,
    );
    assert.equal(loaded.cudaRngStates === undefined, !hasCuda);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('autocast bf16 on the CPU runs matmul in bfloat16 and restores the previous state', () => {
  torch.tidy(() => {
    const a = torch.randn([4, 4]);
    const inside = torch.autocast('bf16', 'cpu', () => [a.matmul(a).dtype, a.add(a).dtype]);
    assert.deepEqual(inside, ['bfloat16', 'float32'], 'matmul is on the lower-precision list, add is not');
    assert.equal(a.matmul(a).dtype, 'float32');
    assert.throws(
      () =>
        torch.autocast('bf16', 'cpu', () => {
          throw new Error('inside');
        }),
      /inside/,
    );
    assert.equal(a.matmul(a).dtype, 'float32', 'an exception inside leaves autocast off');
  });
});

test('--amp is refused with a named error where unsupported', () => {
  assert.throws(
    () => torch.checkAmp('fp16', 'cpu'),
    /AmpUnsupportedError: fp16 autocast is not supported on the CPU/,
  );
  assert.throws(() => torch.checkAmp('fp8', 'cpu'), /AmpUnsupportedError: unknown mode 'fp8'/);
  assert.equal(torch.checkAmp('bf16', 'cpu'), 'bf16');
});

test('GradScaler: skips the step on inf gradients and halves the scale; unscales and grows otherwise', () => {
  const p = torch.keep(torch.tensor([1, 2]).requiresGrad_(true));
  const opt = new SGD([p], { lr: 1 });
  const scaler = new torch.GradScaler({ initScale: 8, growthInterval: 2 });
  torch.tidy(() => {
    scaler.scaleLoss(p.sum()).backward(); // grads 8, 8 (scaled)
    assert.equal(scaler.step(opt), true);
    assert.deepEqual([...p.toFloat32Array()], [0, 1], 'the update used the unscaled gradient 1');
    opt.zeroGrad();
    p.grad = torch.tensor([Infinity, 1]);
    assert.equal(scaler.step(opt), false);
    assert.equal(scaler.lastStepSkipped, true);
    assert.deepEqual([...p.toFloat32Array()], [0, 1], 'no update on a non-finite gradient');
    assert.equal(scaler.scale, 4);
    opt.zeroGrad();
    for (let i = 0; i < 2; i++) {
      scaler.scaleLoss(p.sum()).backward();
      scaler.step(opt);
      opt.zeroGrad();
    }
    assert.equal(scaler.scale, 8, 'grows after growthInterval clean steps');
  });
  const state = scaler.stateDict();
  const other = new torch.GradScaler();
  other.loadStateDict(state);
  assert.equal(other.scale, 8);
  p.dispose();
});
