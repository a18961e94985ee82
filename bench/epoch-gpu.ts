// npm run bench -- epoch-gpu [--device cuda] [--configs sade,prl] [--epochs 4] [--amp bf16] [--torch]
//   [--python python3] [--check] [--sides tailor_eager,tailor_graph,tailor_graph_one_stream]
//   [--torch-modes dataloader-4,dataloader-8,device,graph,graph-streams] [--json]
// Full Fashion-MNIST-LT IR100 training epochs (14,866 images, batch 128) of the shipped SADE and
// PRL configs on one GPU: tailor eager and tailor graph mode (the whole step replayed from a
// CUDA graph; with branch streams, each expert and PRL draw on a CUDA stream of its own, and on
// one stream), and with --torch the same model, loss and SGD in plain PyTorch
// (bench/epoch_gpu_torch.py): as the official train.py runs it (DataLoader, 4 and 8 workers,
// pinned memory), with the data on the device, and with the whole step in one CUDA graph (the
// ceiling of the official model on one stream; and with its experts and draws on streams, as
// tailor's). Each side trains `epochs` + 1 epochs; the figure is the median of epochs 2..epochs
// (the first pays the warm-up and the capture, the last tailor epoch its evaluation). --amp bf16
// trains both sides under bf16 autocast.
// --check adds graph mode's correctness checks on a 300-per-class subset: eager twice (the
// GPU's own run-to-run spread), graph against eager after 2 epochs (a learning-rate change
// between them: the configs warm the rate up), graph mode on one stream against graph mode with
// branch streams, and a graph-mode run resumed after epoch 1 against the uninterrupted one; then
// eager twice, graph and graph on one stream again with cuDNN's deterministic algorithms.
// Each figure and check is also said on stderr as it finishes (the JSON line comes at the end).
// With both graph sides timed, `branch_streams` gives the suite's BRANCH_STREAMS for this GPU
// (bench/lib/branch-streams-verdict.ts).
// --sides picks tailor's rows (all three by default; tailor_graph,tailor_graph_one_stream is the
// branch-stream comparison alone, without the slow eager epochs).
// Without Fashion-MNIST installed, synthetic images in its file format stand in (random pixels:
// the work per image is the same).
import './lib/user-errors.js';
import { choices, count, number } from './lib/options.js';
import { spawnSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import * as torch from '../src/torch/index.js';
import { loadConfig } from '../src/longtail/config/config.js';
import { buildSession, trainingSetup } from '../src/longtail/config/session.js';
import { sessionTrainOptions } from '../src/longtail/workflows/train.js';
import { trainSystem, type TrainOptions } from '../src/longtail/train/trainer.js';
import { resolveGraphMode } from '../src/longtail/train/graph.js';
import { branchStreamsVerdict } from './lib/branch-streams-verdict.js';
import { exportExperiment } from './lib/longtail-spec.js';

// The PyTorch side's ways of training (bench/epoch_gpu_torch.py); --torch-modes picks some.
const TORCH_MODES = ['dataloader-4', 'dataloader-8', 'device', 'graph', 'graph-streams'] as const;
const { values } = parseArgs({
  options: {
    device: { type: 'string', default: 'cuda' },
    configs: { type: 'string', default: 'sade,prl' },
    epochs: { type: 'string', default: '4' },
    torch: { type: 'boolean', default: false },
    python: { type: 'string', default: 'python3' },
    check: { type: 'boolean', default: false },
    amp: { type: 'string' },
    'max-per-class': { type: 'string', default: '6000' },
    sides: { type: 'string', default: 'tailor_eager,tailor_graph,tailor_graph_one_stream' },
    'torch-modes': { type: 'string', default: TORCH_MODES.join(',') },
    json: { type: 'boolean', default: false },
  },
});
const SIDES = [
  ['tailor_eager', false, {}],
  // graph mode as it runs by default: branch streams (each expert and PRL draw on its own)
  ['tailor_graph', true, {}],
  ['tailor_graph_one_stream', true, { branchStreams: false }],
] as const;
const wanted = choices(
  'sides',
  values.sides,
  SIDES.map(([key]) => key),
);
const sides = SIDES.filter(([key]) => wanted.includes(key));
const torchModes = choices('torch-modes', values['torch-modes'], TORCH_MODES);
const root = fileURLToPath(new URL('../../', import.meta.url));
// every shipped Fashion-MNIST-LT config: configs/fmnist_lt_ir100_NAME.json
const configNames = choices(
  'configs',
  values.configs,
  readdirSync(join(root, 'configs'))
    .map((f) => /^fmnist_lt_ir100_(\w+)\.json$/.exec(f)?.[1])
    .filter((name): name is string => name !== undefined),
);
const epochs = number('epochs', values.epochs, { integer: true, min: 2 });
const maxPerClass = count('max-per-class', values['max-per-class']);
const device = torch.checkDevice(values.device);
const amp = values.amp ? torch.checkAmp(values.amp, device) : null;
torch.setDefaultDevice(device);
const work = mkdtempSync(join(tmpdir(), 'tailor-epoch-gpu-'));
// progress on stderr in every mode (stdout carries the one JSON line): a call cut off at its time
// limit still has each figure and check that finished
const say = (line: string) => console.error(`epoch-gpu: ${line}`);
/** `value`, said on stderr as `name: value` when it is known. */
const noted = <T>(name: string, value: T): T => {
  say(`${name}: ${JSON.stringify(value)}`);
  return value;
};

/** Fashion-MNIST's directory, or synthetic images in its format (6,000 per class) when it is missing. */
function dataRoot(): { dir: string; synthetic: boolean } {
  for (const dir of ['/usr/share/datasets/fashion-mnist', join(root, '.gpu-data/fashion-mnist')])
    if (existsSync(join(dir, 'train-images-idx3-ubyte.gz'))) return { dir, synthetic: false };
  const dir = join(work, 'fashion-mnist');
  spawnSync('mkdir', ['-p', dir]);
  const write = (prefix: string, n: number) => {
    const images = Buffer.alloc(16 + n * 784);
    images.writeUInt32BE(0x803, 0);
    images.writeUInt32BE(n, 4);
    images.writeUInt32BE(28, 8);
    images.writeUInt32BE(28, 12);
    randomFillSync(images, 16);
    const labels = Buffer.alloc(8 + n);
    labels.writeUInt32BE(0x801, 0);
    labels.writeUInt32BE(n, 4);
    for (let i = 0; i < n; i++) labels[8 + i] = i % 10;
    writeFileSync(join(dir, `${prefix}-images-idx3-ubyte.gz`), gzipSync(images, { level: 1 }));
    writeFileSync(join(dir, `${prefix}-labels-idx1-ubyte.gz`), gzipSync(labels, { level: 1 }));
  };
  write('train', 60000);
  write('t10k', 10000);
  return { dir, synthetic: true };
}

const data = dataRoot();

function session(name: string, perClass: number) {
  const file = join(root, `configs/fmnist_lt_ir100_${name}.json`);
  const s = buildSession(loadConfig(file), file, { root: data.dir, trainMaxPerClass: perClass });
  torch.manualSeed(s.config.seed ?? 0);
  return s;
}

interface Trained {
  seconds: number[];
  mode: string;
  weights: Map<string, Float32Array>;
  losses: number[];
  /** Whether graph mode ran its independent parts on branch streams. */
  streams: boolean;
}

/** Trains a fresh session (seeded) for `n` epochs; resume: the checkpoint to continue from. */
async function train(
  name: string,
  perClass: number,
  n: number,
  graph: boolean,
  extra: Partial<TrainOptions> = {},
): Promise<Trained> {
  torch.manualSeed(0);
  const s = session(name, perClass);
  const setup = trainingSetup(s);
  const { optimizer } = setup;
  try {
    const result = await trainSystem({
      ...sessionTrainOptions(s, setup),
      epochs: n,
      evalPeriod: n,
      seed: 0,
      runDir: join(
        work,
        `run-${name}-${graph ? 'graph' : 'eager'}${extra.branchStreams === false ? '-one-stream' : ''}-${perClass}`,
      ),
      checkpointExtra: {},
      quiet: true,
      log: (l) => say(`  ${name}: ${l}`),
      graph: graph ? resolveGraphMode('on', device) : 'eager',
      amp,
      ...extra,
    });
    const weights = new Map<string, Float32Array>();
    for (const [m, module] of Object.entries(s.system.modules))
      for (const [k, t] of Object.entries(module.stateDict()))
        if (t.dtype === 'float32') weights.set(`${m}.${k}`, t.toFloat32Array());
    return {
      seconds: result.history.map((h) => h.seconds),
      mode: result.graph,
      weights,
      losses: result.history.map((h) => h.train_loss),
      streams: result.branchStreams,
    };
  } finally {
    for (const m of Object.values(s.system.modules)) m.dispose();
    optimizer.dispose();
  }
}

/** A check that threw, as its result: the first line of the reason. */
const failure = (e: unknown) => ({ error: (e as Error).message.split('\n')[0] });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** The median epoch of 2..epochs (the extra last one also evaluated), with images/s. */
function figure(t: Trained, images: number) {
  const m = median(t.seconds.slice(1, epochs));
  return {
    mode: t.mode,
    streams: t.streams,
    epoch_s: t.seconds.map((s) => +s.toFixed(3)),
    median_s: +m.toFixed(3),
    img_s: Math.round(images / m),
  };
}

function difference(a: Trained, b: Trained) {
  let weights = 0;
  for (const [k, va] of a.weights) {
    const vb = b.weights.get(k)!;
    for (let i = 0; i < va.length; i++) weights = Math.max(weights, Math.abs(va[i]! - vb[i]!));
  }
  const losses = a.losses.map((l, i) => Math.abs(l - b.losses[i]!));
  return { max_weight: weights, max_loss: Math.max(...losses) };
}

async function checks() {
  const eager = await train('sade', 300, 2, false);
  const again = await train('sade', 300, 2, false);
  const graph = await train('sade', 300, 2, true);
  const oneStream = await train('sade', 300, 2, true, { branchStreams: false });
  const first = await train('sade', 300, 1, true);
  const resumed = await train('sade', 300, 2, true, {
    resumeFrom: join(work, 'run-sade-graph-300', 'checkpoint-last.json'),
  });
  void first;
  return {
    graph_mode: noted('check graph_mode', graph.mode),
    eager_vs_eager: noted('check eager_vs_eager', difference(eager, again)),
    graph_vs_eager: noted('check graph_vs_eager', difference(graph, eager)),
    // the same kernels on the same data: within eager_vs_eager (the autotuner's choices)
    graph_one_stream_vs_graph: noted('check graph_one_stream_vs_graph', difference(oneStream, graph)),
    branch_streams: noted('check branch_streams', { graph: graph.streams, one_stream: oneStream.streams }),
    resumed_vs_uninterrupted: noted('check resumed_vs_uninterrupted', difference(resumed, graph)),
    losses: { eager: eager.losses, graph: graph.losses },
    deterministic: noted('check deterministic', await deterministicChecks().catch(failure)),
  };
}

/**
 * The same comparisons with cuDNN's deterministic algorithms and no autotuner, where eager
 * against eager shows what is left of the GPU's run-to-run spread: graph mode on branch streams
 * against one stream runs the same kernels in the same order on each stream, so a difference
 * beyond eager's own would mean a missing wait between streams; graph against eager differs by
 * the learning rate held in a float32 tensor (capturable SGD) where eager passes a double.
 */
async function deterministicChecks() {
  const before = torch.backends.cudnn.deterministic;
  torch.backends.cudnn.deterministic = true;
  try {
    const fixed = { cudnnBenchmark: false } as const;
    const eager = await train('sade', 300, 2, false, fixed);
    const again = await train('sade', 300, 2, false, fixed);
    const graph = await train('sade', 300, 2, true, fixed);
    const oneStream = await train('sade', 300, 2, true, { ...fixed, branchStreams: false });
    // PRL's draws share the hypernetwork: its gradients gather from every draw's stream
    const prl = await train('prl', 300, 2, true, fixed);
    const prlOneStream = await train('prl', 300, 2, true, { ...fixed, branchStreams: false });
    return {
      eager_vs_eager: difference(eager, again),
      graph_vs_eager: difference(graph, eager),
      graph_one_stream_vs_graph: difference(oneStream, graph),
      prl_graph_one_stream_vs_graph: difference(prlOneStream, prl),
    };
  } finally {
    torch.backends.cudnn.deterministic = before;
  }
}

function runTorch(name: string) {
  const dir = join(work, `torch-${name}`);
  spawnSync('mkdir', ['-p', dir]);
  const spec = exportExperiment(session(name, maxPerClass), dir, {
    device: device.name,
    epochs,
    modes: torchModes,
    amp: amp ?? 'none',
  });
  const py = spawnSync(values.python, [join(root, 'bench/epoch_gpu_torch.py'), spec], {
    encoding: 'utf8',
    timeout: 400_000,
  });
  if (py.status !== 0)
    return { error: (py.stderr || String(py.error)).trim().split('\n').slice(-3).join(' | ') };
  return JSON.parse(py.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

const out: Record<string, unknown> = {
  device: device.name,
  amp: amp ?? 'none',
  gpu: torch.cudaInfo().devices[0] ?? null,
  data: data.synthetic
    ? 'synthetic (Fashion-MNIST format)'
    : existsSync(join(data.dir, 'SUBSET.json'))
      ? "Fashion-MNIST cut down to the full suite's images (scripts/fmnist-subset.mjs; the check runs' other images are zero)"
      : 'Fashion-MNIST',
};
try {
  // a failing check is reported in its place; the epoch figures still run
  if (values.check) out.check = await checks().catch((e: unknown) => noted('check', failure(e)));
  for (const name of configNames) {
    const images = session(name, maxPerClass).data.train.labels.length;
    const entry: Record<string, unknown> = { images };
    for (const [key, graph, extra] of sides) {
      try {
        const t = await train(name, maxPerClass, epochs + 1, graph, extra);
        entry[key] = noted(`${name} ${key}`, figure(t, images));
      } catch (e) {
        entry[key] = noted(`${name} ${key}`, failure(e));
      }
    }
    if (values.torch) entry.torch = noted(`${name} torch`, runTorch(name));
    out[name] = entry;
  }
  // the suite's BRANCH_STREAMS for this GPU, from these figures
  if (wanted.includes('tailor_graph') && wanted.includes('tailor_graph_one_stream'))
    out.branch_streams = noted('branch_streams', branchStreamsVerdict(out));
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
