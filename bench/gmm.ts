// GMM fit time against scikit-learn, side by side in one run, from the same initial labels (the
// fixed-init protocol of the reference cases: one-hot labels -> M step -> EM at tol 1e-3), on
// iris and on a synthetic n = 100,000, d = 8, K = 5 set, for the four covariance types; plus the
// dense-algebra choice (ml-matrix vs plain Float64Array loops) on the full-covariance kernel.
// --model bayesian times the variational fit (BayesianGaussianMixture, Dirichlet-process prior,
// defaults) against scikit-learn's the same way.
//
//   npm run bench -- gmm [--json] [--n 100000] [--repeats 3] [--python /usr/bin/python3] [--types full,diag]
//                        [--model gaussian|bayesian] [--sklearn-threads N] [--data DIR (default: the repository's data/)]
import './lib/user-errors.js';
import { CliError } from '../src/cli/errors.js';
import { count, optionalCount, choice, choices } from './lib/options.js';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GaussianMixture } from '../src/mixture/gaussian.js';
import { BayesianGaussianMixture } from '../src/mixture/bayesian.js';
import { readLabelsFile, readMatrixCsv } from '../src/mixture/csv.js';
import { COVARIANCE_TYPES, type CovarianceType } from '../src/mixture/gaussian-params.js';
import { kmeans } from '../src/mixture/kmeans.js';
import type { DenseMatrix } from '../src/mixture/linalg.js';
import { Rng } from '../src/util/rng.js';
import { linalgComparison, median } from './lib/gmm-linalg.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    n: { type: 'string', default: '100000' },
    repeats: { type: 'string', default: '3' },
    python: { type: 'string', default: '/usr/bin/python3' },
    types: { type: 'string', default: COVARIANCE_TYPES.join(',') },
    model: { type: 'string', default: 'gaussian' },
    'sklearn-threads': { type: 'string' },
    // Compiled to dist/bench/gmm.js: two levels up is the repository root.
    data: { type: 'string', default: fileURLToPath(new URL('../../data/', import.meta.url)) },
  },
});
const repeats = count('repeats', args.repeats!);
const types = choices('types', args.types!, COVARIANCE_TYPES);
const model = choice('model', args.model!, ['gaussian', 'bayesian'] as const);
const n = count('n', args.n!);
const sklearnThreads = optionalCount('sklearn-threads', args['sklearn-threads']);
const log = (s: string) => {
  if (!args.json) console.log(s);
};

interface Case {
  name: string;
  x: DenseMatrix;
  labels: Int32Array;
  k: number;
  /** Timed repetitions (small sets are repeated to get above the timer's resolution). */
  repeats: number;
}

interface Row {
  dataset: string;
  covariance: CovarianceType;
  n: number;
  d: number;
  k: number;
  /** Median wall-clock time of one fit. */
  tailorMs: number;
  sklearnMs: number | null;
  ratio: number | null;
  /** Median CPU time of one fit (user + system, all threads): steadier on a busy machine. */
  tailorCpuMs: number;
  sklearnCpuMs: number | null;
  cpuRatio: number | null;
  tailorIter: number;
  sklearnIter: number | null;
  tailorScore: number;
  sklearnScore: number | null;
}

const cases: Case[] = [];

async function main(): Promise<void> {
  const irisDir = join(args.data!, 'mixture/gmm/iris');
  const iris = readMatrixCsv(join(irisDir, 'data.csv'));
  cases.push({
    name: 'iris',
    x: iris,
    labels: readLabelsFile(join(irisDir, 'init_labels.csv'), iris.rows, 3),
    k: 3,
    repeats: 50,
  });
  const synthetic = syntheticSet(n, 8, 5, 20240501);
  cases.push({
    name: `synthetic n=${synthetic.rows} d=8 K=5`,
    x: synthetic,
    labels: kmeans(synthetic, 5, new Rng(0)).labels,
    k: 5,
    repeats,
  });

  const dir = mkdtempSync(join(tmpdir(), 'tailor-gmm-bench-'));
  const rows: Row[] = [];
  let sklearnNote: string;
  try {
    const sk = await startSklearn(dir);
    sklearnNote = sk.note;
    for (let ci = 0; ci < cases.length; ci++) {
      const c = cases[ci]!;
      for (const type of types) {
        // Alternate single fits of both so that a change of machine load hits both alike.
        const ours = new Timing();
        const theirs = new Timing();
        oursOnce(c, type); // warm up the JIT
        if (sk.ask) await sk.ask(ci, type);
        for (let r = 0; r < c.repeats; r++) {
          ours.add(oursOnce(c, type));
          if (sk.ask) theirs.add(await sk.ask(ci, type));
        }
        const o = ours.summary()!;
        const t = theirs.summary();
        rows.push({
          dataset: c.name,
          covariance: type,
          n: c.x.rows,
          d: c.x.cols,
          k: c.k,
          tailorMs: o.ms,
          sklearnMs: t?.ms ?? null,
          ratio: t ? o.ms / t.ms : null,
          tailorCpuMs: o.cpuMs,
          sklearnCpuMs: t?.cpuMs ?? null,
          cpuRatio: t ? o.cpuMs / t.cpuMs : null,
          tailorIter: o.nIter,
          sklearnIter: t?.nIter ?? null,
          tailorScore: o.score,
          sklearnScore: t?.score ?? null,
        });
      }
    }
    sk.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const kernel = linalgComparison(synthetic);
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '?',
    loadavg1: loadavg()[0],
    node: process.version,
  };

  if (args.json) {
    console.log(JSON.stringify({ machine, model, sklearn: sklearnNote, rows, linalg: kernel }, null, 2));
  } else {
    log(
      `machine: ${machine.cpus} CPUs (${machine.cpuModel}), load ${machine.loadavg1.toFixed(2)}, node ${machine.node}; ${sklearnNote}`,
    );
    log(
      `${model === 'bayesian' ? 'BayesianGaussianMixture (Dirichlet process)' : 'GaussianMixture'} fit time from the ` +
        'same initial labels (median of repeats; wall clock, then CPU time), tol 1e-3, max_iter 100:',
    );
    log(
      'dataset'.padEnd(30) +
        'cov'.padEnd(11) +
        'iter t/sk'.padStart(11) +
        'tailor ms'.padStart(12) +
        'sklearn ms'.padStart(12) +
        'ratio'.padStart(8) +
        'cpu t ms'.padStart(10) +
        'cpu sk ms'.padStart(11) +
        'ratio'.padStart(7) +
        '|d score|'.padStart(11),
    );
    for (const r of rows) {
      log(
        r.dataset.padEnd(30) +
          r.covariance.padEnd(11) +
          `${r.tailorIter}/${r.sklearnIter ?? '-'}`.padStart(11) +
          r.tailorMs.toFixed(2).padStart(12) +
          (r.sklearnMs === null ? '-' : r.sklearnMs.toFixed(2)).padStart(12) +
          (r.ratio === null ? '-' : r.ratio.toFixed(2)).padStart(8) +
          r.tailorCpuMs.toFixed(2).padStart(10) +
          (r.sklearnCpuMs === null ? '-' : r.sklearnCpuMs.toFixed(2)).padStart(11) +
          (r.cpuRatio === null ? '-' : r.cpuRatio.toFixed(2)).padStart(7) +
          (r.sklearnScore === null
            ? '-'
            : Math.abs(r.tailorScore - r.sklearnScore).toExponential(1)
          ).padStart(11),
      );
    }
    log(
      `\nfull-covariance log-density kernel (n=${synthetic.rows}, d=8, K=5), median ms: plain Float64Array loops ` +
        `${kernel.plainMs.toFixed(1)}, ml-matrix ${kernel.mlMatrixMs.toFixed(1)} (max |difference| ${kernel.maxDiff.toExponential(1)})`,
    );
  }
}

// ---- ours ----

interface FitTime {
  ms: number;
  cpuMs: number;
  nIter: number;
  score: number;
}

class Timing {
  private fits: FitTime[] = [];
  add(f: FitTime): void {
    this.fits.push(f);
  }
  /** Median time, with the iteration count and score of the last fit. */
  summary(): FitTime | undefined {
    const last = this.fits[this.fits.length - 1];
    return (
      last && {
        ms: median(this.fits.map((f) => f.ms)),
        cpuMs: median(this.fits.map((f) => f.cpuMs)),
        nIter: last.nIter,
        score: last.score,
      }
    );
  }
}

function oursOnce(c: Case, type: CovarianceType): FitTime {
  const options = { nComponents: c.k, covarianceType: type, initLabels: c.labels, onWarning: () => {} };
  const gm = model === 'bayesian' ? new BayesianGaussianMixture(options) : new GaussianMixture(options);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  gm.fit(c.x);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, nIter: gm.nIter, score: gm.score(c.x) };
}

// ---- scikit-learn ----

const PYTHON = String.raw`
import json, sys, time
import numpy as np
import sklearn
from sklearn.mixture import BayesianGaussianMixture, GaussianMixture

spec = json.load(open(sys.argv[1]))

class FixedInit(BayesianGaussianMixture if spec['model'] == 'bayesian' else GaussianMixture):
    # The reference protocol: one-hot responsibilities from given labels, then one M step.
    def _initialize_parameters(self, X, random_state):
        resp = np.zeros((X.shape[0], self.n_components))
        resp[np.arange(X.shape[0]), self._labels] = 1
        self._initialize(X, resp)

data = []
for case in spec['cases']:
    X = np.loadtxt(case['data'], delimiter=',', skiprows=1, ndmin=2)
    labels = np.loadtxt(case['labels'], dtype=int, skiprows=1)
    data.append((X, labels, case['k']))
print(json.dumps({'version': sklearn.__version__}), flush=True)
# One request per line: "<case index> <covariance type>"; one timed fit per request.
for line in sys.stdin:
    index, cov = line.split()
    X, labels, k = data[int(index)]
    gm = FixedInit(n_components=k, covariance_type=cov)
    gm._labels = labels
    c0 = time.process_time()
    t0 = time.perf_counter()
    gm.fit(X)
    ms = (time.perf_counter() - t0) * 1000
    cpu_ms = (time.process_time() - c0) * 1000
    print(json.dumps({'ms': ms, 'cpuMs': cpu_ms, 'nIter': int(gm.n_iter_), 'score': float(gm.score(X))}), flush=True)
`;

interface SklearnWorker {
  note: string;
  ask?: (caseIndex: number, type: CovarianceType) => Promise<FitTime>;
  close: () => void;
}

/** Starts a Python process that holds the data and times one scikit-learn fit per request. */
async function startSklearn(workDir: string): Promise<SklearnWorker> {
  const specCases = cases.map((c, i) => {
    const data = join(workDir, `data${i}.csv`);
    const labels = join(workDir, `labels${i}.csv`);
    const lines = [Array.from({ length: c.x.cols }, (_, j) => `x${j}`).join(',')];
    for (let r = 0; r < c.x.rows; r++)
      lines.push(Array.from(c.x.data.subarray(r * c.x.cols, (r + 1) * c.x.cols)).join(','));
    writeFileSync(data, lines.join('\n') + '\n');
    writeFileSync(labels, 'label\n' + Array.from(c.labels).join('\n') + '\n');
    return { name: c.name, data, labels, k: c.k };
  });
  const specFile = join(workDir, 'spec.json');
  writeFileSync(specFile, JSON.stringify({ model, cases: specCases }));
  const script = join(workDir, 'bench.py');
  writeFileSync(script, PYTHON);
  // --sklearn-threads N pins OpenBLAS / OpenMP (tailor's EM runs on one thread).
  const threads = sklearnThreads === undefined ? undefined : String(sklearnThreads);
  const env = threads
    ? { ...process.env, OPENBLAS_NUM_THREADS: threads, OMP_NUM_THREADS: threads, MKL_NUM_THREADS: threads }
    : process.env;
  const child = spawn(args.python!, ['-u', script, specFile], { stdio: ['pipe', 'pipe', 'pipe'], env });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const failed = new Promise<undefined>((resolve) => {
    child.on('error', (e) => {
      stderr += e.message;
      resolve(undefined);
    });
    child.on('exit', () => resolve(undefined));
  });
  const next = async (): Promise<string | undefined> => {
    const r = await Promise.race([lines.next(), failed]);
    return r && !r.done ? r.value : undefined;
  };
  const hello = await next();
  if (hello === undefined) {
    return {
      note: `scikit-learn not run (${args.python}: ${stderr.trim().split('\n').pop() ?? 'failed'})`,
      close: () => {},
    };
  }
  const version = (JSON.parse(hello) as { version: string }).version;
  return {
    note: `scikit-learn ${version} via ${args.python}, BLAS threads ${threads ?? 'default'}`,
    ask: async (caseIndex, type) => {
      child.stdin.write(`${caseIndex} ${type}\n`);
      const line = await next();
      if (line === undefined) throw new CliError(`scikit-learn worker stopped: ${stderr.trim()}`);
      return JSON.parse(line) as FitTime;
    },
    close: () => child.stdin.end(),
  };
}

// ---- data ----

/** K overlapping Gaussians: random means (spread 1.5), random full covariances, unequal weights. */
function syntheticSet(n: number, d: number, k: number, seed: number): DenseMatrix {
  const rng = new Rng(seed);
  const weights = rng.dirichlet(4, k);
  const data = new Float64Array(n * d);
  const mixers = Array.from({ length: k }, () =>
    Float64Array.from({ length: d * d }, () => rng.normal() * 0.6),
  );
  const means = Array.from({ length: k }, () => Float64Array.from({ length: d }, () => rng.normal() * 1.5));
  const z = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    let u = rng.uniform();
    let c = 0;
    while (c < k - 1 && u >= weights[c]!) u -= weights[c++]!;
    for (let j = 0; j < d; j++) z[j] = rng.normal();
    for (let j = 0; j < d; j++) {
      let v = means[c]![j]!;
      for (let l = 0; l < d; l++) v += z[l]! * mixers[c]![l * d + j]!;
      data[i * d + j] = v;
    }
  }
  return { rows: n, cols: d, data };
}

await main();
