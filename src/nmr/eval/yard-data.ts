// Samples for the yardstick: from simulated data sets (with truth) and from the user's own
// multi-SNR measurements (experiments files or --experiments lists; scored against level K only).
import { Dataset } from '../data/dataset.js';
import { loadExperimentSamples, type ExperimentsSpec } from '../data/experiments.js';
import { integrationRegions } from './evaluate.js';
import type { YardSample } from './yardstick.js';

/**
 * The yardstick samples of a dataset directory, with its ratio between noise levels.
 * @param maxSamples Reads at most this many samples (default all).
 */
export function datasetYardSamples(
  dir: string,
  maxSamples?: number,
): { samples: YardSample[]; ratio: number } {
  const ds = new Dataset(dir);
  try {
    const m = ds.manifest;
    const hzPerPoint = (Math.abs(m.axis.ppmFirst - m.axis.ppmLast) * m.axis.sfMHz) / (m.points - 1);
    const n = Math.min(ds.size, maxSamples ?? ds.size);
    const samples = Array.from({ length: n }, (_, i) => {
      const r = ds.sample(i);
      return {
        name: `${dir}#${i}`,
        spectra: r.spectra,
        truth: r.truth,
        truthPeakMask: r.truthPeakMask,
        regions: integrationRegions(r),
        trueSigmas: r.meta.levels.map((l) => l.sigma),
        scaleK: r.meta.levels[m.levels - 1]!.scale,
        hzPerPoint,
      };
    });
    return { samples, ratio: m.ratio };
  } finally {
    ds.close();
  }
}

/**
 * The yardstick samples of an experiments file (real multi-SNR measurements, see {@link ExperimentsFile}).
 */
export function experimentYardSamples(spec: ExperimentsSpec): YardSample[] {
  return loadExperimentSamples(spec).map((s) => ({
    name: s.name,
    spectra: s.spectra,
    truth: null,
    truthPeakMask: null,
    regions: null,
    trueSigmas: null,
    scaleK: 1,
    hzPerPoint: (Math.abs(s.ppmFirst - s.ppmLast) * s.refMHz) / Math.max(1, s.spectra[0]!.length - 1),
  }));
}
