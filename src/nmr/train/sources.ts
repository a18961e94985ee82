// Where training samples come from: data sets written by `tailor nmr simulate` (synthetic or
// semi-synthetic, with their ground truth) and the user's own measurements (an experiments JSON
// file, see src/nmr/data/experiments.ts; no ground truth). Every source becomes a list of
// StackRecords: the K+1 spectra of one sample as measured (not yet aligned), lowest SNR first.
import { existsSync, statSync } from 'node:fs';
import { Dataset } from '../data/dataset.js';
import { loadExperimentSamples, readExperimentsFile, type ExperimentsSpec } from '../data/experiments.js';
import type { ProcessingDomain } from '../model/domain.js';
import { NmrDataError } from '../io/errors.js';

export interface StackRecord {
  name: string;
  spectra: Float64Array[];
  /** Clean spectrum in truth units (simulated data only). */
  truth: Float64Array | null;
  truthPeakMask: Uint8Array | null;
  /** Normalization of level K (truth units -> level-K units); 1 without truth. */
  scaleK: number;
  /** The data set's nominal T, when known. */
  ratio: number | null;
  ppmFirst: number;
  ppmLast: number;
  refMHz: number;
  /** Each level's scans, where the experiments' files record them (real experiments only). */
  scans?: (number | undefined)[];
}

/** Sample i of a simulated data set, named DIR#i. */
export function datasetRecord(ds: Dataset, i: number): StackRecord {
  const m = ds.manifest;
  const r = ds.sample(i);
  return {
    name: `${ds.dir}#${i}`,
    spectra: r.spectra,
    truth: r.truth.length ? r.truth : null,
    truthPeakMask: r.truthPeakMask.length ? r.truthPeakMask : null,
    scaleK: r.meta.levels[m.levels - 1]?.scale ?? 1,
    ratio: m.ratio,
    ppmFirst: m.axis.ppmFirst,
    ppmLast: m.axis.ppmLast,
    refMHz: m.axis.sfMHz,
  };
}

/** Every sample of a simulated data set (or the first maxSamples). */
export function datasetRecords(dir: string, maxSamples?: number): StackRecord[] {
  const ds = new Dataset(dir);
  try {
    const n = Math.min(ds.size, maxSamples ?? ds.size);
    return Array.from({ length: n }, (_, i) => datasetRecord(ds, i));
  } finally {
    ds.close();
  }
}

export function experimentRecords(spec: ExperimentsSpec): StackRecord[] {
  return loadExperimentSamples(spec).map((s) => ({
    name: s.name,
    spectra: s.spectra,
    truth: null,
    truthPeakMask: null,
    scaleK: 1,
    ratio: null,
    ppmFirst: s.ppmFirst,
    ppmLast: s.ppmLast,
    refMHz: s.refMHz,
    scans: s.scans,
  }));
}

/**
 * Samples whose files record every level's scans, and the scans do not rise from level 0 to K:
 * almost always experiments given in the wrong order (they go from the lowest to the highest SNR).
 */
export function scanOrderWarnings(records: StackRecord[]): string[] {
  const bad = records.filter((r) => {
    const s = r.scans;
    return s !== undefined && s.every((n) => n !== undefined) && s.some((n, k) => k > 0 && n! <= s[k - 1]!);
  });
  const lines = bad
    .slice(0, 3)
    .map(
      (r) =>
        `warning: ${r.name}: the levels' scans are ${r.scans!.join(', ')}, not rising from level 0 to K (experiments go from the lowest to the highest SNR)`,
    );
  if (bad.length > 3) lines.push(`warning: ${bad.length - 3} more samples whose scans do not rise`);
  return lines;
}

/** A source path: a data set folder (manifest.json) or an experiments JSON file. */
export function sourceRecords(path: string, maxSamples?: number): StackRecord[] {
  if (!existsSync(path))
    throw new NmrDataError(`${path}: does not exist (a data set folder or an experiments .json)`);
  const records = statSync(path).isDirectory()
    ? datasetRecords(path, maxSamples)
    : experimentRecords(readExperimentsFile(path));
  return maxSamples ? records.slice(0, maxSamples) : records;
}

/** Records of several sources; all samples must have the same number of levels. */
export function loadRecords(paths: string[], maxSamples?: number): StackRecord[] {
  const all: StackRecord[] = [];
  for (const p of paths) {
    if (maxSamples !== undefined && all.length >= maxSamples) break;
    all.push(...sourceRecords(p, maxSamples === undefined ? undefined : maxSamples - all.length));
  }
  if (all.length === 0) throw new NmrDataError(`${paths.join(', ')}: no samples`);
  const K1 = all[0]!.spectra.length;
  const bad = all.find((r) => r.spectra.length !== K1);
  if (bad)
    throw new NmrDataError(
      `${bad.name}: ${bad.spectra.length} levels, but ${all[0]!.name} has ${K1}; every training sample needs the same K+1`,
    );
  return all;
}

/** Processing of the first experiments file among the sources (what a new scan must get too). */
export function processingOf(paths: string[]): ProcessingDomain | undefined {
  for (const p of paths) {
    if (!existsSync(p) || statSync(p).isDirectory()) continue;
    const o = readExperimentsFile(p).options;
    return {
      ...(o.size !== undefined ? { size: o.size } : {}),
      ...(o.apodization?.kind === 'exponential' ? { lbHz: o.apodization.lbHz } : {}),
      ...(o.phase !== undefined ? { phase: o.phase } : {}),
      ...(o.ppmRange !== undefined ? { ppm: o.ppmRange } : {}),
    };
  }
  return undefined;
}
