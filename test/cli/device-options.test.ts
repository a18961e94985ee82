import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';
import { useDevice, resolveThreads, resolveAmp } from '../../src/cli/runtime.js';
import { CliError } from '../../src/cli/errors.js';
import * as torch from '../../src/torch/index.js';

const tailor = join(repoRoot, 'bin', 'tailor');
const hasCuda = torch.cuda.isAvailable();

test('the device comes from --device, else the config device, else n_gpu (0 is the CPU)', () => {
  assert.equal(useDevice(undefined), torch.CPU);
  assert.equal(useDevice('cpu', { device: 'cuda' }), torch.CPU, 'the flag wins');
  assert.equal(useDevice(undefined, { n_gpu: 0 }), torch.CPU);
  assert.equal(torch.getDefaultDevice(), torch.CPU, 'and it is the default device of tensor creation');
  assert.throws(
    () => useDevice('gpu'),
    (e: unknown) =>
      e instanceof CliError &&
      /^--device: invalid device 'gpu' \(expected cpu, cuda or cuda:N\)$/.test(e.message),
  );
  assert.throws(
    () => useDevice(undefined, { device: 'tpu' }),
    (e: unknown) => e instanceof CliError && /^config device: invalid device 'tpu'/.test(e.message),
  );
  assert.throws(() => useDevice(undefined, { n_gpu: -1 }), /n_gpu must be a non-negative integer/);
  if (!hasCuda) {
    // a GPU the config asks for says so, and how to run on the CPU instead
    assert.throws(
      () => useDevice(undefined, { n_gpu: 1 }),
      (e: unknown) =>
        e instanceof torch.DeviceUnavailableError &&
        /'cuda' was requested, .*\(the config's "n_gpu": 1 asks for it; --device cpu runs on the CPU\)$/.test(
          e.message,
        ),
    );
    assert.throws(
      () => useDevice(undefined, { device: 'cuda:0' }),
      (e: unknown) =>
        e instanceof torch.DeviceUnavailableError &&
        /\(the config's "device": "cuda:0" asks for it; --device cpu runs on the CPU\)$/.test(e.message),
    );
    // one given with --device is the user's own choice: no such note
    assert.throws(
      () => useDevice('cuda', { n_gpu: 1 }),
      (e: unknown) => e instanceof torch.DeviceUnavailableError && !/asks for it/.test(e.message),
    );
    assert.equal(torch.getDefaultDevice(), torch.CPU, 'a device that is not here is not made the default');
  }
});

test("under a job, cuda means this rank's GPU (cuda:LOCAL_RANK), as dist-check and train use it", () => {
  const saved = { ...process.env };
  try {
    Object.assign(process.env, { WORLD_SIZE: '2', RANK: '1', LOCAL_RANK: '1' });
    if (hasCuda && torch.cuda.deviceCount() > 1) assert.equal(useDevice('cuda').name, 'cuda:1');
    else
      assert.throws(
        () => useDevice('cuda'),
        (e: unknown) => e instanceof torch.DeviceUnavailableError && /'cuda:1'/.test(e.message),
      );
    assert.equal(useDevice('cpu'), torch.CPU);
  } finally {
    for (const k of ['WORLD_SIZE', 'RANK', 'LOCAL_RANK']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    torch.setDefaultDevice('cpu');
  }
});

test('threads: --threads, else TAILOR_THREADS (set by launch), else the fallback', () => {
  const saved = process.env.TAILOR_THREADS;
  try {
    delete process.env.TAILOR_THREADS;
    assert.equal(resolveThreads(undefined, 2), 2);
    process.env.TAILOR_THREADS = '1';
    assert.equal(resolveThreads(undefined, 2), 1);
    assert.equal(resolveThreads('3', 2), 3);
    assert.throws(() => resolveThreads('0', 2), /--threads needs a positive integer/);
  } finally {
    if (saved === undefined) delete process.env.TAILOR_THREADS;
    else process.env.TAILOR_THREADS = saved;
  }
});

test('--amp: off by default, bf16 on the CPU, fp16 refused there', () => {
  assert.equal(resolveAmp(undefined, torch.CPU), null);
  assert.equal(resolveAmp('bf16', torch.CPU), 'bf16');
  assert.throws(() => resolveAmp('fp16', torch.CPU), torch.AmpUnsupportedError);
});

test('nmr train / nmr denoise: --device and the config device, with named errors', { skip: hasCuda }, () => {
  const cuda = spawnSync(
    tailor,
    ['nmr', 'train', '-c', 'configs/nmr_tiny.json', '--params', '--device', 'cuda'],
    {
      encoding: 'utf8',
      cwd: repoRoot,
    },
  );
  assert.equal(cuda.status, 2);
  assert.match(
    cuda.stderr,
    torch.cudaInfo().compiled
      ? /^tailor: DeviceUnavailableError: 'cuda' was requested, but no GPU is visible to .*; check the driver/
      : /^tailor: DeviceUnavailableError: 'cuda' was requested, but .* is a CPU-only build; select a CUDA libtorch/,
  );
  const cpu = spawnSync(
    tailor,
    ['nmr', 'train', '-c', 'configs/nmr_tiny.json', '--params', '--device', 'cpu'],
    {
      encoding: 'utf8',
      cwd: repoRoot,
    },
  );
  assert.equal(cpu.status, 0, cpu.stderr);
  const dir = mkdtempSync(join(tmpdir(), 'tailor-nmrdev-'));
  try {
    const cfg = JSON.parse(readFileSync(join(repoRoot, 'configs/nmr_tiny.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...cfg, device: 'tpu' }));
    const bad = spawnSync(tailor, ['nmr', 'train', '-c', join(dir, 'bad.json'), '--params'], {
      encoding: 'utf8',
      cwd: repoRoot,
    });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /config\.device: expected "cpu", "cuda" or "cuda:N", got "tpu"/);
    const den = spawnSync(
      tailor,
      ['nmr', 'denoise', '--model', 'm', '--input', 'i', '--out', dir, '--device', 'cuda:1'],
      {
        encoding: 'utf8',
        cwd: repoRoot,
      },
    );
    assert.equal(den.status, 2);
    assert.match(den.stderr, /DeviceUnavailableError: 'cuda:1' was requested/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'test / test-all / test-time-train / tune-test-time / benchmark / train: --device cuda without CUDA is the named error',
  { skip: hasCuda },
  () => {
    for (const args of [
      ['test', '-r', '/nonexistent', '--device', 'cuda'],
      ['test-all', '-r', '/nonexistent', '--device', 'cuda'],
      ['test-time-train', '-c', 'x', '-r', 'y', '--device', 'cuda:0'],
      ['tune-test-time', '-c', 'x', '-r', 'y', '--grid', 'epochs=1', '--device', 'cuda'],
      ['benchmark', '-c', 'configs/suites/tiny.json', '--device', 'cuda'],
      ['train', '-c', 'configs/fmnist_lt_ir100_sade.json', '--device', 'cuda', '--epochs', '1'],
    ]) {
      const r = spawnSync(tailor, args, { encoding: 'utf8', cwd: repoRoot });
      assert.equal(r.status, 2, `${args[0]}: ${r.stderr}`);
      assert.match(r.stderr, /^tailor: DeviceUnavailableError: 'cuda(:0)?' was requested/, args[0]);
    }
    const amp = spawnSync(tailor, ['train', '-c', 'configs/fmnist_lt_ir100_sade.json', '--amp', 'fp16'], {
      encoding: 'utf8',
      cwd: repoRoot,
    });
    assert.equal(amp.status, 2);
    assert.match(amp.stderr, /^tailor: AmpUnsupportedError: fp16 autocast is not supported on the CPU/);
  },
);
