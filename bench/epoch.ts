// npm run bench -- epoch [--json] [--max-batches N] [--repeats R] [--threads T] [--configs sade,prl]
//                        [--python /usr/bin/python3]
// One training epoch of the shipped Fashion-MNIST-LT IR100 configs (SADE, PRL) through tailor's
// trainer, and the same model, loss, data and augmentation in plain PyTorch
// (bench/epoch_torch.py, Debian's python3-torch, or the PyTorch of --python) side by side. Runs
// alternate tailor and PyTorch R times so a load change on a shared machine hits both; the ratio
// is per pair (torch_s / tailor_s, > 1 = tailor faster), reported as the median with its min and
// max.
// --max-batches N stops each epoch (and the evaluation) after N batches; the default is the
// full epoch plus the evaluation the trainer runs after it (the validation split).
import './lib/user-errors.js';
import { choices, count, optionalCount } from './lib/options.js';
import { CliError } from '../src/cli/errors.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../src/torch/index.js';
import { sessionFromConfigFile, trainingSetup, type Session } from '../src/longtail/config/session.js';
import { sessionTrainOptions } from '../src/longtail/workflows/train.js';
import { trainSystem } from '../src/longtail/train/trainer.js';
import { PhaseClock, PHASES, type PhaseTimes } from '../src/longtail/train/phases.js';
import { exportExperiment } from './lib/longtail-spec.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    'max-batches': { type: 'string' },
    repeats: { type: 'string', default: '1' },
    threads: { type: 'string', default: '2' },
    configs: { type: 'string', default: 'sade,prl' },
    python: { type: 'string', default: '/usr/bin/python3' },
  },
});
const maxBatches = optionalCount('max-batches', values['max-batches']);
const repeats = count('repeats', values.repeats);
const threads = count('threads', values.threads);
const root = fileURLToPath(new URL('../../', import.meta.url));
const script = join(root, 'bench/epoch_torch.py');
const configs = choices('configs', values.configs, ['sade', 'prl'] as const);
// A --python that cannot start is named before tailor's side trains (what it prints is checked
// after its own run).
const probe = spawnSync(values.python, ['-c', ''], { encoding: 'utf8' });
if (probe.error) throw cannotRun(probe.error);
torch.setNumThreads(threads);

interface Run {
  /** The PyTorch side's torch.__version__. */
  torch?: string;
  seconds: number;
  cpu_s: number;
  phases: { wall: PhaseTimes; cpu: PhaseTimes };
}

function session(name: string): Session {
  const s = sessionFromConfigFile(join(root, `configs/fmnist_lt_ir100_${name}.json`));
  torch.manualSeed(s.config.seed ?? 0);
  return s;
}

async function runTailor(name: string, dir: string): Promise<Run> {
  const s = session(name);
  const phases = new PhaseClock();
  const cpu0 = process.cpuUsage();
  const setup = trainingSetup(s);
  const { optimizer } = setup;
  const result = await trainSystem({
    ...sessionTrainOptions(s, setup),
    epochs: 1,
    seed: s.config.seed ?? 0,
    runDir: join(dir, `run-${name}`),
    checkpointExtra: {},
    quiet: true,
    log: () => {},
    phases,
    ...(maxBatches ? { maxBatches } : {}),
  });
  for (const m of Object.values(s.system.modules)) m.dispose();
  optimizer.dispose();
  const cpu = process.cpuUsage(cpu0);
  return {
    seconds: result.history[0]!.seconds,
    cpu_s: (cpu.user + cpu.system) / 1e6,
    phases: { wall: phases.wall, cpu: phases.cpu },
  };
}

/** The named error of a --python that does not start. */
function cannotRun(error: Error): CliError {
  return new CliError(
    `cannot run --python '${values.python}' (${error.message}); give a Python with torch`,
    1,
  );
}

function runTorch(specFile: string): Run {
  const env = { ...process.env };
  delete env.LD_PRELOAD; // the reference runs as users run it: stock Python, glibc malloc
  const py = spawnSync(values.python, [script, specFile], { encoding: 'utf8', env });
  // a failed reference run: exit code 1 (bench/lib/user-errors.ts prints the line)
  if (py.error) throw cannotRun(py.error);
  if (py.status !== 0)
    throw new CliError(`the PyTorch side (--python '${values.python}') failed: ${py.stderr.trim()}`, 1);
  try {
    return JSON.parse(py.stdout.trim().split('\n').pop()!) as Run;
  } catch {
    throw new CliError(
      `the PyTorch side (--python '${values.python}') printed no result; give a Python with torch`,
      1,
    );
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const ratioOf = (t: number, p: number) => (t > 0 ? p / t : null);

const dir = mkdtempSync(join(tmpdir(), 'tailor-bench-epoch-'));
interface PhaseEntry {
  tailor_s: number;
  torch_s: number;
  ratio: number | null;
  tailor_cpu_s: number;
  torch_cpu_s: number;
  cpu_ratio: number | null;
}
interface Entry {
  tailor_s: number;
  torch_s: number;
  ratio: number;
  ratio_min: number;
  ratio_max: number;
  tailor_cpu_s: number;
  torch_cpu_s: number;
  cpu_ratio: number;
  cpu_ratio_min: number;
  cpu_ratio_max: number;
  breakdown: Record<keyof PhaseTimes, PhaseEntry>;
}
const out: Record<string, Entry> = {};
const torchRuns: Run[] = [];
try {
  for (const name of configs) {
    const specFile = exportExperiment(session(name), dir, { threads, max_batches: maxBatches ?? 0 });
    const tailor: Run[] = [];
    const ref: Run[] = [];
    for (let r = 0; r < repeats; r++) {
      // Alternate which side runs first so a load trend does not favour one of them.
      if (r % 2 === 0) {
        tailor.push(await runTailor(name, dir));
        ref.push(runTorch(specFile));
      } else {
        ref.push(runTorch(specFile));
        tailor.push(await runTailor(name, dir));
      }
    }
    torchRuns.push(...ref);
    const ratios = tailor.map((t, i) => ref[i]!.seconds / t.seconds);
    const cpuRatios = tailor.map((t, i) => ref[i]!.cpu_s / t.cpu_s);
    const mid = (runs: Run[], clock: 'wall' | 'cpu', k: keyof PhaseTimes) =>
      median(runs.map((x) => x.phases[clock][k]));
    const phase = (k: keyof PhaseTimes) => {
      const [t, p, tc, pc] = [
        mid(tailor, 'wall', k),
        mid(ref, 'wall', k),
        mid(tailor, 'cpu', k),
        mid(ref, 'cpu', k),
      ];
      return {
        tailor_s: t,
        torch_s: p,
        ratio: ratioOf(t, p),
        tailor_cpu_s: tc,
        torch_cpu_s: pc,
        cpu_ratio: ratioOf(tc, pc),
      };
    };
    const entry: Entry = {
      tailor_s: median(tailor.map((t) => t.seconds)),
      torch_s: median(ref.map((t) => t.seconds)),
      ratio: median(ratios),
      ratio_min: Math.min(...ratios),
      ratio_max: Math.max(...ratios),
      tailor_cpu_s: median(tailor.map((t) => t.cpu_s)),
      torch_cpu_s: median(ref.map((t) => t.cpu_s)),
      cpu_ratio: median(cpuRatios),
      cpu_ratio_min: Math.min(...cpuRatios),
      cpu_ratio_max: Math.max(...cpuRatios),
      breakdown: Object.fromEntries(PHASES.map((k) => [k, phase(k)])) as Entry['breakdown'],
    };
    out[name] = entry;
    if (!values.json) {
      const f = (x: number) => x.toFixed(3);
      console.log(
        `${name}: wall tailor ${entry.tailor_s.toFixed(2)} s torch ${entry.torch_s.toFixed(2)} s ratio ${f(entry.ratio)} [${f(entry.ratio_min)}, ${f(entry.ratio_max)}]; ` +
          `CPU tailor ${entry.tailor_cpu_s.toFixed(2)} s torch ${entry.torch_cpu_s.toFixed(2)} s ratio ${f(entry.cpu_ratio)} [${f(entry.cpu_ratio_min)}, ${f(entry.cpu_ratio_max)}] (${repeats} pair(s))`,
      );
      for (const k of PHASES) {
        const b = entry.breakdown[k];
        const r = (x: number | null) => (x === null ? '-' : f(x));
        console.log(
          `  ${k.padEnd(9)} wall ${b.tailor_s.toFixed(2)} / ${b.torch_s.toFixed(2)} s (${r(b.ratio)})  CPU ${b.tailor_cpu_s.toFixed(2)} / ${b.torch_cpu_s.toFixed(2)} s (${r(b.cpu_ratio)})`,
        );
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
// The headline numbers: both configs together (sums of the medians), ratio = torch / tailor.
const entries = configs.map((c) => out[c]!);
const sum = (f: (e: Entry) => number) => entries.reduce((acc, e) => acc + f(e), 0);
const tailorTotal = sum((e) => e.tailor_s);
const torchVersion = torchRuns.find((r) => r.torch)?.torch ?? null;
const torchTotal = sum((e) => e.torch_s);
const result = {
  tailor_s: tailorTotal,
  torch_s: torchTotal,
  ratio: torchTotal / tailorTotal,
  cpu_ratio: sum((e) => e.torch_cpu_s) / sum((e) => e.tailor_cpu_s),
  breakdown: Object.fromEntries(
    PHASES.map((k) => {
      const t = sum((e) => e.breakdown[k].tailor_s);
      const p = sum((e) => e.breakdown[k].torch_s);
      const tc = sum((e) => e.breakdown[k].tailor_cpu_s);
      const pc = sum((e) => e.breakdown[k].torch_cpu_s);
      return [k, { tailor_s: t, torch_s: p, ratio: ratioOf(t, p), cpu_ratio: ratioOf(tc, pc) }];
    }),
  ),
  configs: out,
  libtorch: torch.engineInfo().torchVersion,
  torch: torchVersion,
  threads,
  max_batches: maxBatches ?? null,
  repeats,
};
if (values.json) console.log(JSON.stringify(result));
