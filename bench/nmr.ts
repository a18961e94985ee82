// Throughput of the non-neural NMR code on one core, for spectra of --points (default 32768): FID
// processing (apodization, zero filling, FFT, group delay, phase from parameters), the multi-SNR
// preprocessing of a 3-level stack, each classical baseline, and the metrics.
//   npm run bench -- nmr [--points 32768] [--samples 8] [--json]
import './lib/user-errors.js';
import { count as countOption } from './lib/options.js';
import { parseArgs } from 'node:util';
import { cpus, loadavg } from 'node:os';
import { Rng } from '../src/util/rng.js';
import { simulateSample } from '../src/nmr/data/simulate.js';
import { processFid } from '../src/nmr/process.js';
import { preprocessStack } from '../src/nmr/pipeline/preprocess.js';
import { savitzkyGolay } from '../src/nmr/pipeline/savgol.js';
import { matchedFilter } from '../src/nmr/eval/baselines.js';
import { waveletDenoise } from '../src/nmr/eval/wavelet.js';
import { inverseVarianceFusion } from '../src/nmr/pipeline/fusion.js';
import { computeMetrics } from '../src/nmr/eval/metrics.js';
import { erode } from '../src/nmr/pipeline/masks.js';

const { values } = parseArgs({
  options: {
    points: { type: 'string', default: '32768' },
    samples: { type: 'string', default: '8' },
    json: { type: 'boolean', default: false },
  },
});
const points = countOption('points', values.points);
const count = countOption('samples', values.samples);
const rng = new Rng(1);
const t0 = performance.now();
const samples = Array.from({ length: count }, () => simulateSample(rng, { points, levels: 3, ratio: 2 }));
const simulateMs = (performance.now() - t0) / count;

function time(
  name: string,
  perItem: number,
  fn: () => void,
): { name: string; ms: number; perSecond: number } {
  fn(); // warm-up
  const start = performance.now();
  let reps = 0;
  while (performance.now() - start < 1500 || reps < 2) {
    fn();
    reps++;
  }
  const ms = (performance.now() - start) / (reps * perItem);
  return { name, ms, perSecond: 1000 / ms };
}

const fid = {
  re: Float64Array.from({ length: points / 2 }, () => rng.normal()),
  im: Float64Array.from({ length: points / 2 }, () => rng.normal()),
  swHz: 6000,
  refMHz: 400,
  carrierPpm: 4.7,
  groupDelay: 67.98,
  phase: { p0: 30, p1: -10 },
  source: 'bench',
};
const pre = samples.map((s) => preprocessStack(s.spectra));
const x = pre.map((p) => p.spectra[0]!);
const results = [
  time('process FID (TD/2 -> SI, params phase)', 1, () => processFid(fid, { size: points })),
  time('preprocess stack of 3 (per spectrum)', 3 * count, () =>
    samples.forEach((s) => preprocessStack(s.spectra)),
  ),
  time('savgol w11 p2', count, () => x.forEach((v) => savitzkyGolay(v, 11, 2))),
  time('matched filter', count, () => x.forEach((v) => matchedFilter(v))),
  time('wavelet db4, 16 shifts', count, () => x.forEach((v) => waveletDenoise(v))),
  time('fusion (per stack)', count, () => pre.forEach((p) => inverseVarianceFusion(p.spectra, p.sigmas))),
  time('metrics', count, () =>
    samples.forEach((s, i) =>
      computeMetrics(x[i]!, {
        truth: s.truth,
        sigmaIn: s.levels[0]!.sigma,
        hzPerPoint: 0.15,
        peakMask: s.truthPeakMask,
        baselineMask: erode(
          s.truthPeakMask.map((v) => 1 - v),
          2,
        ),
        multiplets: s.multiplets,
      }),
    ),
  ),
];
if (values.json) {
  console.log(
    JSON.stringify(
      { points, cpu: cpus()[0]?.model, load: loadavg()[0], simulateMsPerSample: simulateMs, results },
      null,
      2,
    ),
  );
} else {
  console.log(
    `${points}-point spectra, one core (${cpus()[0]?.model}, load ${loadavg()[0]!.toFixed(1)}); simulate ${simulateMs.toFixed(0)} ms per 3-level sample`,
  );
  for (const r of results)
    console.log(
      `${r.name.padEnd(42)} ${r.ms.toFixed(2).padStart(9)} ms ${r.perSecond.toFixed(1).padStart(9)} /s`,
    );
}
