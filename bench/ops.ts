// npm run bench -- ops [--configs sade,prl,prl_released,resnext50] [--json] [--top N] [--per-parameter-sgd]
//   [--experts N] [--draws N] [--batch N]
// How many dispatcher operators one training step of the shipped Fashion-MNIST-LT configs runs
// in tailor, against the same step in plain PyTorch (bench/ops_torch.py, Debian's python3-torch),
// counted on the CPU (torch.profiler.countOps; PyTorch's autograd profiler on the other side).
// On a GPU each operator that computes launches at least one kernel, and at batch 128 these
// models are bound by launches even inside a CUDA graph (each kernel has a minimum run time), so
// the counts show where a step does more than PyTorch's without a GPU to time it on.
// tailor's side is exactly what graph mode captures: the trainer runs in graph mode with a
// stand-in for CUDA graphs, device-drawn batches and the multi-tensor SGD step (as on CUDA), and
// the second replay is counted; the operators run between two replays (drawing the next batch
// and writing it into the graph's inputs) are counted apart. PyTorch's side is the step its
// CUDA-graph ceiling captures (bench/epoch_gpu_torch.py: forward, loss, backward, SGD with
// foreach=True, the loss added to a total), after three warm-up steps. resnext50 is the SADE
// ImageNet-LT ResNeXt-50 step of the image benchmarks (bench/lib/images-step.ts against
// bench/images_train_torch.py --count-ops) in float32, bf16 and bf16 + channels-last, on a small
// batch (the counts do not depend on its size; CPU autocast, whose cast list is not CUDA's, on
// both sides). --per-parameter-sgd counts
// tailor's step with the per-parameter SGD step the CPU uses (GPU graph mode used it before the
// multi-tensor step). --experts N trains the Fashion-MNIST-LT configs with N experts instead of
// theirs (losses that take any number: ce, ldam_drw): with 1, the step is the chain of operators
// that graph mode's branch streams leave one after another (the stem, stage 1, one expert, the
// loss and the SGD step), against the whole step with 3. --draws N sets PRL's preference draws
// per step (the paper variant; 8 in its config): with 1, one draw's chain. --batch N trains the
// Fashion-MNIST-LT configs at batch N instead of theirs: the counts do not depend on it (16 and
// 128 give the same, but for an operator or so of PyTorch's), and a small batch counts in a
// fraction of the time.
import './lib/user-errors.js';
import { CliError } from '../src/cli/errors.js';
import { choices, count, number } from './lib/options.js';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as torch from '../src/torch/index.js';
import { parseConfig } from '../src/longtail/config/config.js';
import { buildSession, trainingSetup } from '../src/longtail/config/session.js';
import { sessionTrainOptions } from '../src/longtail/workflows/train.js';
import { trainSystem } from '../src/longtail/train/trainer.js';
import type { GraphBackend } from '../src/longtail/train/graph-step.js';
import { exportExperiment } from './lib/longtail-spec.js';
import { IMAGES_MODES, imagesStep } from './lib/images-step.js';

const { values } = parseArgs({
  options: {
    configs: { type: 'string', default: 'sade,prl,prl_released' },
    json: { type: 'boolean', default: false },
    top: { type: 'string', default: '15' },
    'per-parameter-sgd': { type: 'boolean', default: false },
    experts: { type: 'string' },
    draws: { type: 'string' },
    batch: { type: 'string' },
  },
});
const root = fileURLToPath(new URL('../../', import.meta.url));
const known = ['sade', 'prl', 'prl_released', 'ce', 'balpoe', 'ldam_drw', 'resnext50'];
const configs = choices('configs', values.configs, known);
const top = count('top', values.top);
const experts =
  values.experts === undefined ? null : number('experts', values.experts, { integer: true, min: 1, max: 8 });
const draws =
  values.draws === undefined ? null : number('draws', values.draws, { integer: true, min: 1, max: 64 });
const batch = values.batch === undefined ? null : count('batch', values.batch);
torch.setNumThreads(1);

type Counts = Map<string, number>;

/** Operators that only make views or allocate: they launch no kernel on a GPU. */
const NO_KERNEL =
  /^aten::(empty|empty_like|empty_strided|as_strided|view|_unsafe_view|reshape|expand|expand_as|narrow|select|slice|squeeze|unsqueeze|t|transpose|permute|alias|detach|lift_fresh|_reshape_alias|resize_|flatten|unflatten|split|chunk|unbind|to|contiguous|numpy_T|view_as|result_type|is_nonzero|item|_local_scalar_dense|size|stride|set_|zeros|zeros_like)$/;

/**
 * Calls per operator, less those a _foreach_ operator's CPU fallback makes (one fused kernel on
 * CUDA) and those an operator makes to its own other overload (one computation).
 */
function calls(counts: Map<string, torch.profiler.OpCount>): Counts {
  return new Map([...counts].map(([k, v]) => [k, v.calls - v.inForeach - v.redispatched]));
}

/** The aten operators that compute (kernels on a GPU), summed. */
function kernelOps(c: Counts): number {
  let n = 0;
  for (const [k, v] of c) if (k.startsWith('aten::') && !NO_KERNEL.test(k)) n += v;
  return n;
}

async function tailorStep(
  name: string,
  dir: string,
): Promise<{ step: Counts; between: Counts; specFile: string }> {
  const file = join(root, 'configs', `fmnist_lt_ir100_${name}.json`);
  const c = parseConfig(readFileSync(file, 'utf8'), file);
  c.data_loader.args = { ...c.data_loader.args, on_device: true };
  if (batch !== null) c.data_loader.args = { ...c.data_loader.args, batch_size: batch };
  if (experts !== null) c.arch.args = { ...c.arch.args, num_experts: experts };
  if (draws !== null && c.prl) c.prl = { ...c.prl, draws_per_batch: draws };
  torch.manualSeed(0);
  const s = buildSession(c, file, { trainMaxPerClass: 1000, testPerClass: 2 });
  const setup = trainingSetup(s);
  const { optimizer } = setup;
  // the multi-tensor step, as on CUDA (or the CPU's per-parameter step, when asked)
  if (optimizer instanceof torch.optim.SGD) optimizer.foreach = !values['per-parameter-sgd'];
  let replays = 0;
  let step: Counts | null = null;
  let between: torch.profiler.OpCounter | null = null;
  let betweenCounts: Counts | null = null;
  const backend: GraphBackend = {
    onSideStream: (_device, fn) => fn(),
    capture: (_device, fn) => ({
      replay: () => {
        replays++;
        if (replays === 3 && between) betweenCounts = calls(between.stop());
        if (replays === 2) {
          step = calls(torch.profiler.countOps(fn).counts);
          between = torch.profiler.startCountingOps();
        } else fn();
      },
      dispose: () => {},
    }),
  };
  try {
    await trainSystem({
      ...sessionTrainOptions(s, setup),
      epochs: 1,
      seed: 0,
      runDir: join(dir, `run-${name}`),
      checkpointExtra: {},
      quiet: true,
      log: () => {},
      maxBatches: 8,
      graph: 'graph',
      graphBackend: backend,
    });
  } finally {
    for (const m of Object.values(s.system.modules)) m.dispose();
    optimizer.dispose();
  }
  if (!step || !betweenCounts) throw new Error(`${name}: graph mode did not replay three steps`);
  // a folder per config: every spec and its data stay until PyTorch's side has read them all
  const specDir = join(dir, `torch-${name}`);
  mkdirSync(specDir);
  const specFile = exportExperiment(s, specDir, {});
  return { step, between: betweenCounts, specFile };
}

/** PyTorch's counts of each spec's step, in one Python process (importing torch takes seconds). */
function torchSteps(specFiles: string[]): Counts[] {
  if (specFiles.length === 0) return [];
  const env = { ...process.env };
  delete env.LD_PRELOAD;
  const py = spawnSync('/usr/bin/python3', [join(root, 'bench/ops_torch.py'), ...specFiles], {
    encoding: 'utf8',
    env,
  });
  if (py.status !== 0) throw new CliError(`PyTorch reference failed: ${py.stderr}`);
  const lines = py.stdout.trim().split('\n').slice(-specFiles.length);
  if (lines.length !== specFiles.length)
    throw new CliError(`PyTorch reference printed ${lines.length} results for ${specFiles.length} steps`);
  return lines.map((l) => new Map(Object.entries(JSON.parse(l) as Record<string, number>)));
}

/** One step of each image-benchmark mode, after a warm-up step: tailor's counts and PyTorch's. */
function resnextSteps(): { mode: string; tailor: Counts; torch: Counts }[] {
  const shape = { batch: 2, size: 32, classes: 10 };
  const env = { ...process.env };
  delete env.LD_PRELOAD;
  const args = ['--count-ops', '--device', 'cpu', '--batch', '2', '--size', '32', '--classes', '10'];
  const py = spawnSync('/usr/bin/python3', [join(root, 'bench/images_train_torch.py'), ...args], {
    encoding: 'utf8',
    env,
  });
  if (py.status !== 0) throw new CliError(`PyTorch reference failed: ${py.stderr}`);
  const reference = JSON.parse(py.stdout.trim().split('\n').pop()!) as Record<string, Record<string, number>>;
  return IMAGES_MODES.map((mode) => {
    torch.manualSeed(0);
    const s = imagesStep({
      mode,
      device: torch.parseDevice('cpu'),
      ...shape,
      foreach: !values['per-parameter-sgd'],
    });
    try {
      s.step();
      const tailor = calls(torch.profiler.countOps(() => s.step()).counts);
      return { mode, tailor, torch: new Map(Object.entries(reference[mode]!)) };
    } finally {
      s.dispose();
    }
  });
}

function differences(t: Counts, p: Counts | null) {
  const names = [...new Set([...t.keys(), ...(p?.keys() ?? [])])].filter(
    (k) => k.startsWith('aten::') && !NO_KERNEL.test(k),
  );
  return names
    .map((k) => ({ op: k, tailor: t.get(k) ?? 0, torch: p?.get(k) ?? 0 }))
    .filter((d) => !p || d.tailor !== d.torch)
    .sort((a, b) => Math.abs(b.tailor - b.torch) - Math.abs(a.tailor - a.torch))
    .slice(0, top);
}

function print(
  label: string,
  entry: { tailor_kernel_ops: number; torch_kernel_ops: number | null },
  extra: string,
  diffs: ReturnType<typeof differences>,
  paired: boolean,
) {
  if (values.json) return;
  console.log(
    `${label}: ${entry.tailor_kernel_ops} computing operators (PyTorch ${entry.torch_kernel_ops ?? 'n/a'})${extra}`,
  );
  for (const d of diffs)
    console.log(
      `  ${d.op.padEnd(40)} ${String(d.tailor).padStart(6)} ${paired ? String(d.torch).padStart(6) : ''}`,
    );
}

const dir = mkdtempSync(join(tmpdir(), 'tailor-bench-ops-'));
const out: Record<string, unknown> = {};
try {
  // tailor's steps first, then PyTorch's in one process
  const steps = new Map<string, Awaited<ReturnType<typeof tailorStep>>>();
  for (const name of configs) if (name !== 'resnext50') steps.set(name, await tailorStep(name, dir));
  // released PRL has no PyTorch twin in bench/longtail_torch.py: tailor's counts alone
  const paired = [...steps.keys()].filter((name) => name === 'sade' || name === 'prl');
  const torchCounts = new Map<string, Counts>(
    torchSteps(paired.map((name) => steps.get(name)!.specFile)).map((c, k) => [paired[k]!, c]),
  );
  for (const name of configs) {
    if (name === 'resnext50') {
      for (const r of resnextSteps()) {
        const entry = {
          tailor_kernel_ops: kernelOps(r.tailor),
          torch_kernel_ops: kernelOps(r.torch),
          differences: differences(r.tailor, r.torch),
        };
        out[`resnext50-${r.mode}`] = entry;
        print(`resnext50 ${r.mode}: a step`, entry, '', entry.differences, true);
      }
      continue;
    }
    const t = steps.get(name)!;
    const p = torchCounts.get(name) ?? null;
    const entry = {
      tailor_kernel_ops: kernelOps(t.step),
      torch_kernel_ops: p ? kernelOps(p) : null,
      tailor_between_kernel_ops: kernelOps(t.between),
      differences: differences(t.step, p),
    };
    out[name] = entry;
    print(
      `${name}: captured step`,
      entry,
      `; between replays ${entry.tailor_between_kernel_ops}`,
      entry.differences,
      p !== null,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (values.json) console.log(JSON.stringify(out));
