// Start-up cost of the `tailor` command, as whole processes: `node -e 1` (the floor), commands
// that never load libtorch (--help, version, gmm --help), the libtorch load itself
// (version --engine), and a whole-process Gaussian-mixture fit on n = 100,000, d = 8, K = 5 against
// the same fit by scikit-learn as its users run it (a Python script: import, np.loadtxt, fit), from
// the same initial labels so that both run the same EM iterations.
//
//   npm run bench -- startup [--json] [--repeats 7] [--n 100000] [--python /usr/bin/python3]
import './lib/user-errors.js';
import { CliError } from '../src/cli/errors.js';
import { count } from './lib/options.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { kmeans } from '../src/mixture/index.js';
import { Rng } from '../src/util/rng.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    repeats: { type: 'string', default: '7' },
    n: { type: 'string', default: '100000' },
    python: { type: 'string', default: '/usr/bin/python3' },
  },
});
const repeats = count('repeats', args.repeats);
const fitRows = count('n', args.n);
const root = new URL('../../', import.meta.url).pathname;
const tailor = join(root, 'bin/tailor');

interface Row {
  what: string;
  /** Median wall-clock seconds of the whole process over the repeats. */
  seconds: number;
  /** Minus the `node -e 1` floor. */
  overFloor: number | null;
}

/** Median wall time of a command run `repeats` times (after one untimed warm-up run). */
function timeCommand(command: string, argv: string[]): number {
  const run = () => {
    const t0 = performance.now();
    const r = spawnSync(command, argv, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    const seconds = (performance.now() - t0) / 1000;
    if (r.status !== 0)
      throw new CliError(
        `${command} ${argv.join(' ')} failed: ${r.error ? `cannot run it (${r.error.message})` : (r.stderr ?? '').trim()}`,
      );
    return seconds;
  };
  run();
  const times = Array.from({ length: repeats }, run).sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** A reproducible 100,000 x 8 set of K = 5 Gaussian clusters, and k-means labels to start from. */
function writeGmmCase(dir: string, n: number): { data: string; labels: string } {
  const rng = new Rng(20240501);
  const d = 8;
  const k = 5;
  const centres = Array.from({ length: k * d }, () => rng.normal() * 4);
  const x = new Float64Array(n * d);
  for (let i = 0; i < n; i++) {
    const c = i % k;
    for (let j = 0; j < d; j++) x[i * d + j] = centres[c * d + j]! + rng.normal() * (1 + c * 0.2);
  }
  const labels = kmeans({ rows: n, cols: d, data: x }, k, new Rng(0)).labels;
  const lines = [Array.from({ length: d }, (_, j) => `x${j}`).join(',')];
  for (let i = 0; i < n; i++) lines.push(Array.from(x.subarray(i * d, (i + 1) * d)).join(','));
  const data = join(dir, 'data.csv');
  const labelFile = join(dir, 'labels.csv');
  writeFileSync(data, lines.join('\n') + '\n');
  writeFileSync(labelFile, 'label\n' + Array.from(labels).join('\n') + '\n');
  return { data, labels: labelFile };
}

// The scikit-learn user's script: one-hot responsibilities from the labels, one M step, then EM
// (tol 1e-3, full covariances), as `tailor gmm fit --init labels:FILE` does.
const SKLEARN = String.raw`
import sys
import numpy as np
from sklearn.mixture import GaussianMixture

class FixedInit(GaussianMixture):
    def _initialize_parameters(self, X, random_state):
        resp = np.zeros((X.shape[0], self.n_components))
        resp[np.arange(X.shape[0]), self._labels] = 1
        self._initialize(X, resp)

X = np.loadtxt(sys.argv[1], delimiter=',', skiprows=1, ndmin=2)
labels = np.loadtxt(sys.argv[2], dtype=int, skiprows=1)
gm = FixedInit(n_components=5, covariance_type='full', tol=1e-3)
gm._labels = labels
gm.fit(X)
print(gm.n_iter_, gm.score(X))
`;

function main(): void {
  const rows: Row[] = [];
  const floor = timeCommand(process.execPath, ['-e', '1']);
  rows.push({ what: 'node -e 1', seconds: floor, overFloor: null });
  const commands: [string, string[]][] = [
    ['tailor --help', ['--help']],
    ['tailor gmm --help', ['gmm', '--help']],
    ['tailor version', ['version']],
    ['tailor nmr --help', ['nmr', '--help']],
    ['tailor version --engine (loads libtorch)', ['version', '--engine']],
  ];
  for (const [what, argv] of commands) {
    const seconds = timeCommand(tailor, argv);
    rows.push({ what, seconds, overFloor: seconds - floor });
  }

  const dir = mkdtempSync(join(tmpdir(), 'tailor-startup-'));
  let gmm: { tailor: number; sklearn: number | null; ratio: number | null; note: string };
  try {
    const n = fitRows;
    const { data, labels } = writeGmmCase(dir, n);
    const model = join(dir, 'model.json');
    const tailorFit = timeCommand(tailor, [
      'gmm',
      'fit',
      '--data',
      data,
      '--k',
      '5',
      '--init',
      `labels:${labels}`,
      '--out',
      model,
    ]);
    rows.push({ what: `tailor gmm fit, n=${n} d=8 K=5, whole process`, seconds: tailorFit, overFloor: null });
    const script = join(dir, 'fit.py');
    writeFileSync(script, SKLEARN);
    let sklearn: number | null = null;
    let note = `scikit-learn via ${args.python}`;
    try {
      sklearn = timeCommand(args.python!, [script, data, labels]);
      rows.push({ what: 'scikit-learn script, same fit, whole process', seconds: sklearn, overFloor: null });
    } catch (error) {
      note = `scikit-learn not run: ${(error as Error).message.split('\n').pop()}`;
    }
    gmm = { tailor: tailorFit, sklearn, ratio: sklearn ? tailorFit / sklearn : null, note };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '?',
    loadavg1: loadavg()[0]!,
    node: process.version,
  };
  if (args.json) {
    console.log(JSON.stringify({ machine, repeats, rows, gmm }, null, 2));
    return;
  }
  console.log(
    `machine: ${machine.cpus} CPUs (${machine.cpuModel}), load ${machine.loadavg1.toFixed(2)}, node ${machine.node}; median of ${repeats} runs`,
  );
  for (const r of rows)
    console.log(
      `${r.what.padEnd(52)} ${r.seconds.toFixed(3).padStart(7)} s${r.overFloor === null ? '' : `  (+${r.overFloor.toFixed(3)} s over node -e 1)`}`,
    );
  console.log(
    `GMM fit as whole processes: tailor / scikit-learn = ${gmm.ratio === null ? '-' : gmm.ratio.toFixed(2)} (${gmm.note})`,
  );
}

main();
