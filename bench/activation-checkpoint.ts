// Activation checkpointing's trade, memory for compute, side by side with PyTorch: the training
// step of a deep MLP (--layers blocks of Linear(--width) + ReLU, batch --batch, float32, CPU) run
// plainly and with checkpointSequential in --segments segments, each mode in a process of its
// own; the peak resident memory of the process (getrusage's maxrss, after a warm-up step and
// --steps timed steps) and the seconds per step, against PyTorch 1.13's checkpoint_sequential in
// the same run (bench/activation_checkpoint_torch.py). Every process runs with glibc's
// MALLOC_MMAP_THRESHOLD_=65536, so that a freed tensor's memory goes back to the system at once
// and the peak measures the tensors alive at the worst moment, not what the allocator retains.
// The default shape is activation-heavy: 32 blocks of 256 at batch 8192 keep 256 MiB of ReLU
// outputs for backward against 8 MiB of weights.
//
//   npm run bench -- activation-checkpoint [--json] [--layers 32] [--width 256] [--batch 8192]
//     [--segments 4] [--steps 3] [--python /usr/bin/python3]
import './lib/user-errors.js';
import { CliError } from '../src/cli/errors.js';
import { count } from './lib/options.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    layers: { type: 'string', default: '32' },
    width: { type: 'string', default: '256' },
    batch: { type: 'string', default: '8192' },
    segments: { type: 'string', default: '4' },
    steps: { type: 'string', default: '3' },
    python: { type: 'string', default: '/usr/bin/python3' },
    child: { type: 'string' },
  },
});
const shape = {
  layers: count('layers', args.layers),
  width: count('width', args.width),
  batch: count('batch', args.batch),
  segments: count('segments', args.segments),
  steps: count('steps', args.steps),
};

interface Measure {
  /** Peak resident memory of the process, MiB. */
  peak_mib: number;
  /** Median seconds of a training step. */
  step_s: number;
}

/** One mode in this process (the --child side): the step, its peak memory and time. */
async function child(mode: 'plain' | 'checkpoint'): Promise<Measure> {
  const torch = await import('../src/torch/index.js');
  const { nn, utils } = torch;
  torch.setNumThreads(1);
  torch.manualSeed(0);
  const model = new nn.Sequential(
    ...Array.from({ length: shape.layers }, () => [
      new nn.Linear(shape.width, shape.width),
      new nn.ReLU(),
    ]).flat(),
  );
  const x = torch.keep(torch.randn([shape.batch, shape.width]).requiresGrad_());
  const step = () =>
    torch.tidy(() => {
      model.zeroGrad();
      const y =
        mode === 'plain'
          ? model.forward(x)
          : utils.checkpoint.checkpointSequential([...model.children()], shape.segments, x);
      y.square().mean().backward();
    });
  step();
  const times: number[] = [];
  for (let i = 0; i < shape.steps; i++) {
    const t0 = performance.now();
    step();
    times.push((performance.now() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  return { peak_mib: process.resourceUsage().maxRSS / 1024, step_s: times[Math.floor(times.length / 2)]! };
}

/** The environment of every measured process: freed memory returns to the system at once. */
const measuredEnv = { ...process.env, MALLOC_MMAP_THRESHOLD_: '65536' };

function runChild(mode: string): Measure {
  const r = spawnSync(
    process.execPath,
    [
      fileURLToPath(import.meta.url),
      '--child',
      mode,
      ...Object.entries(shape).flatMap(([k, v]) => [`--${k}`, String(v)]),
    ],
    { encoding: 'utf8', env: measuredEnv },
  );
  if (r.status !== 0)
    throw new CliError(`activation-checkpoint: the ${mode} run failed: ${(r.stderr ?? '').trim()}`);
  return JSON.parse(r.stdout) as Measure;
}

function runTorch(mode: string): Measure | { error: string } {
  const script = fileURLToPath(new URL('../../bench/activation_checkpoint_torch.py', import.meta.url));
  const r = spawnSync(args.python, [script, mode, ...Object.values(shape).map(String)], {
    encoding: 'utf8',
    env: measuredEnv,
  });
  if (r.status !== 0)
    return { error: (r.stderr || String(r.error)).trim().split('\n').slice(-2).join(' | ') };
  return JSON.parse(r.stdout) as Measure;
}

if (args.child) {
  if (args.child !== 'plain' && args.child !== 'checkpoint')
    throw new CliError(`activation-checkpoint: --child ${args.child}`);
  process.stdout.write(`${JSON.stringify(await child(args.child))}\n`);
} else {
  const result = {
    ...shape,
    // what a plain step keeps for backward: each block's ReLU output (the next Linear's input)
    saved_activations_mib: (shape.layers * shape.batch * shape.width * 4) / 2 ** 20,
    tailor: { plain: runChild('plain'), checkpoint: runChild('checkpoint') },
    torch: { plain: runTorch('plain'), checkpoint: runTorch('checkpoint') },
  };
  const saved = (m: { plain: Measure | { error: string }; checkpoint: Measure | { error: string } }) =>
    'peak_mib' in m.plain && 'peak_mib' in m.checkpoint
      ? {
          peak_saved_mib: m.plain.peak_mib - m.checkpoint.peak_mib,
          step_cost: m.checkpoint.step_s / m.plain.step_s,
        }
      : null;
  const out = { ...result, tailor_trade: saved(result.tailor), torch_trade: saved(result.torch) };
  if (args.json) process.stdout.write(`${JSON.stringify(out)}\n`);
  else console.log(JSON.stringify(out, null, 2));
}
