// How many true peaks can any single scan reveal? An oracle detector is told everything but
// whether one peak is present: the rest of the clean spectrum, and the peak's lines (the
// simulator's lines within the yardstick's matching tolerance: positions, areas, widths, as
// Lorentzians). It correlates the scan, minus the known rest, with the peak's shape (the matched
// filter, optimal for a known signal in Gaussian noise) and compares with a threshold that lets
// a given number of filtered-noise maxima per spectrum through. Its recall bounds that of any
// method that decides peak by peak from one scan at that false-peak rate (pooling the lines of a
// multiplet is included only where they fall within the tolerance). The yardstick's peak F1 of
// the denoised scan is then set against what that scan can give at best.
//   npm run bench -- nmr-detection-limit --data runs/nmr/y-test [--false-peaks 0.4] [--json]
import './lib/user-errors.js';
import { number } from './lib/options.js';
import { parseArgs } from 'node:util';
import { Dataset } from '../src/nmr/data/dataset.js';
import { preprocessStack } from '../src/nmr/pipeline/preprocess.js';
import { fwhmAt, pickPeaks } from '../src/nmr/eval/peaks.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string' },
    'false-peaks': { type: 'string', default: '0.4' },
    validation: { type: 'string', default: '0.2' },
    json: { type: 'boolean', default: false },
  },
});
if (!values.data) {
  console.error(
    'usage: npm run bench -- nmr-detection-limit --data SIMULATED_SET [--false-peaks F] [--json]',
  );
  process.exit(2);
}
const falsePeaks = number('false-peaks', values['false-peaks'], { min: 0 });
const validation = number('validation', values.validation, { min: 0, below: 1 });
const ds = new Dataset(values.data);
const K = ds.manifest.levels - 1;
// the samples the yardstick scores (the first 20 % tune its baselines)
const first = Math.round(validation * ds.size);

interface Candidate {
  level: number;
  snr: number;
  /** The filtered scan at the line, in units of the filtered noise's sigma. */
  z: number;
}
const candidates: Candidate[] = [];
/** Per level, the local maxima of the filtered noise, in sigma units, of every line's filter. */
const noiseMaxima: number[][] = Array.from({ length: K + 1 }, () => []);
let series = 0;
const { axis, points } = ds.manifest;
const hzPerPoint = (Math.abs(axis.ppmFirst - axis.ppmLast) * axis.sfMHz) / (points - 1);

for (let i = first; i < ds.size; i++) {
  const record = ds.sample(i);
  const pre = preprocessStack(record.spectra);
  const toTruth = 1 / record.meta.levels[K]!.scale;
  const s = record.truth;
  const n = s.length;
  const sigma0 = record.meta.levels[0]!.sigma;
  // the yardstick's true peaks: maxima of the truth above 3 sigma of level 0
  const peaks = pickPeaks(s, 3 * sigma0);
  const lines = record.meta.lines;
  for (let k = 0; k <= K; k++) {
    const x = pre.spectra[k]!.map((v) => v * toTruth);
    const noise = x.map((v, j) => v - s[j]!);
    for (const p of peaks) {
      const w = fwhmAt(s, p.index);
      const tolerance = Math.max(1 / hzPerPoint, Number.isFinite(w) ? w / 2 : 0);
      const own = lines.filter((l) => Math.abs(l.index - p.index) <= tolerance);
      if (own.length === 0) continue;
      // the peak's own lines as Lorentzians (area = sum over points), over +-8 widths
      const widest = Math.max(...own.map((l) => l.fwhmHz / hzPerPoint));
      const c = Math.round(p.index);
      const h = Math.ceil(8 * widest) + 2;
      if (c - h < 0 || c + h >= n) continue;
      const u = Array.from({ length: 2 * h + 1 }, (_, d) => {
        let v = 0;
        for (const l of own) {
          const half = l.fwhmHz / hzPerPoint / 2;
          v += (l.area * half) / Math.PI / ((c - h + d - l.index) ** 2 + half * half);
        }
        return v;
      });
      const norm = Math.hypot(...u);
      const filter = (y: ArrayLike<number>, at: number): number => {
        let acc = 0;
        for (let d = -h; d <= h; d++) acc += y[at + d]! * u[d + h]!;
        return acc / norm;
      };
      const filtered = new Float64Array(n - 2 * h);
      for (let j = h; j < n - h; j++) filtered[j - h] = filter(noise, j);
      let m2 = 0;
      for (const v of filtered) m2 += v * v;
      const sd = Math.sqrt(m2 / filtered.length);
      for (let j = 1; j + 1 < filtered.length; j++)
        if (filtered[j]! > filtered[j - 1]! && filtered[j]! >= filtered[j + 1]!)
          noiseMaxima[k]!.push(filtered[j]! / sd);
      if (k === 0) series++;
      // the scan minus the known rest of the spectrum: noise plus the peak's lines
      const z = (filter(noise, c) + norm) / sd;
      candidates.push({ level: k, snr: p.height / sigma0, z });
    }
  }
}
ds.close();

// The threshold that leaves `falsePeaks` maxima of filtered noise per spectrum and line filter.
const rows = Array.from({ length: K + 1 }, (_, k) => {
  const maxima = noiseMaxima[k]!.sort((a, b) => b - a);
  const allowed = Math.floor(falsePeaks * series);
  const threshold = maxima[Math.min(allowed, maxima.length - 1)]!;
  const mine = candidates.filter((c) => c.level === k);
  const weak = mine.filter((c) => c.snr >= 3 && c.snr < 5);
  const found = mine.filter((c) => c.z > threshold).length;
  const recall = found / mine.length;
  const spectra = ds.size - first;
  const precision = found / (found + falsePeaks * spectra);
  return {
    level: k,
    threshold_sigma: threshold,
    recall,
    recall_snr_3_5: weak.filter((c) => c.z > threshold).length / weak.length,
    f1: (2 * precision * recall) / (precision + recall),
    true_peaks: mine.length,
  };
});
if (values.json)
  console.log(JSON.stringify({ data: values.data, false_peaks_per_spectrum: falsePeaks, rows }));
else {
  console.log(`oracle line-by-line detector, ${falsePeaks} false peaks per spectrum, ${values.data}`);
  console.log('| input | threshold (filtered sigma) | recall | recall SNR 3-5 | peak F1 bound |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows)
    console.log(
      `| raw level ${r.level} | ${r.threshold_sigma.toFixed(2)} | ${r.recall.toFixed(3)} | ${r.recall_snr_3_5.toFixed(3)} | ${r.f1.toFixed(3)} |`,
    );
}
