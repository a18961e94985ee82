// npm run bench -- ops [--configs sade,prl,prl_released] [--json] [--top N] [--per-parameter-sgd]
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
// foreach=True, the loss added to a total), after three warm-up steps. --per-parameter-sgd counts
// tailor's step with the per-parameter SGD step the CPU uses (GPU graph mode used it before the
// multi-tensor step).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
import { exportExperiment } from './longtail-spec.js';

const { values } = parseArgs({
  options: {
    configs: { type: 'string', default: 'sade,prl,prl_released' },
    json: { type: 'boolean', default: false },
    top: { type: 'string', default: '15' },
    'per-parameter-sgd': { type: 'boolean', default: false },
  },
});
const root = fileURLToPath(new URL('../../', import.meta.url));
const known = ['sade', 'prl', 'prl_released', 'ce', 'balpoe', 'ldam_drw'];
const configs = values.configs.split(',');
for (const c of configs) {
  if (!known.includes(c)) {
    console.error(`tailor: --configs takes ${known.join(', ')}; got '${c}'`);
    process.exit(2);
  }
}
const top = Number(values.top);
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
  const specFile = exportExperiment(s, dir, {});
  return { step, between: betweenCounts, specFile };
}

function torchStep(specFile: string): Counts {
  const env = { ...process.env };
  delete env.LD_PRELOAD;
  const py = spawnSync('/usr/bin/python3', [join(root, 'bench/ops_torch.py'), specFile], {
    encoding: 'utf8',
    env,
  });
  if (py.status !== 0) throw new Error(`PyTorch reference failed: ${py.stderr}`);
  return new Map(Object.entries(JSON.parse(py.stdout.trim().split('\n').pop()!) as Record<string, number>));
}

const dir = mkdtempSync(join(tmpdir(), 'tailor-bench-ops-'));
const out: Record<string, unknown> = {};
try {
  for (const name of configs) {
    const t = await tailorStep(name, dir);
    // released PRL has no PyTorch twin in bench/longtail_torch.py: tailor's counts alone
    const p = name === 'sade' || name === 'prl' ? torchStep(t.specFile) : null;
    const names = [...new Set([...t.step.keys(), ...(p?.keys() ?? [])])].filter(
      (k) => k.startsWith('aten::') && !NO_KERNEL.test(k),
    );
    const diffs = names
      .map((k) => ({ op: k, tailor: t.step.get(k) ?? 0, torch: p?.get(k) ?? 0 }))
      .filter((d) => !p || d.tailor !== d.torch)
      .sort((a, b) => Math.abs(b.tailor - b.torch) - Math.abs(a.tailor - a.torch));
    const entry = {
      tailor_kernel_ops: kernelOps(t.step),
      torch_kernel_ops: p ? kernelOps(p) : null,
      tailor_between_kernel_ops: kernelOps(t.between),
      differences: diffs.slice(0, top),
    };
    out[name] = entry;
    if (!values.json) {
      console.log(
        `${name}: captured step ${entry.tailor_kernel_ops} computing operators (PyTorch ${entry.torch_kernel_ops ?? 'n/a'}); ` +
          `between replays ${entry.tailor_between_kernel_ops}`,
      );
      for (const d of entry.differences)
        console.log(
          `  ${d.op.padEnd(40)} ${String(d.tailor).padStart(6)} ${p ? String(d.torch).padStart(6) : ''}`,
        );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (values.json) console.log(JSON.stringify(out));
