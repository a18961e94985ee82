// Writes synthetic or semi-synthetic multi-SNR data sets in the on-disk format of dataset.ts.
import { Rng } from '../../util/rng.js';
import { DatasetWriter, type DatasetManifest } from './dataset.js';
import { simulateSample, simulationAxis, type SimulationOptions } from './simulate.js';
import { prepareReference, semiSyntheticSample, type SemiSyntheticOptions } from './semisynthetic.js';
import type { Fid } from '../types.js';

/**
 * Simulates `samples` multi-SNR training samples (random peaks of the given families, noise
 * levels from low to high SNR) and writes them as a dataset directory that {@link Dataset} reads.
 * @param dir The directory to create (must not hold a dataset yet).
 * @param seed Seed of the simulation: the same seed gives the same dataset.
 * @returns The manifest written with the samples.
 */
export function writeSyntheticDataset(
  dir: string,
  samples: number,
  seed: number,
  options: SimulationOptions,
  onProgress?: (i: number) => void,
): DatasetManifest {
  const axis = simulationAxis(options);
  const writer = new DatasetWriter(dir, {
    levels: options.levels,
    points: options.points,
    ratio: options.ratio,
    axis: { ppmFirst: axis.ppmFirst, ppmLast: axis.ppmLast, sfMHz: axis.sfMHz },
    generator: { kind: 'synthetic', seed, options: { ...options } },
  });
  const rng = new Rng(seed);
  try {
    for (let i = 0; i < samples; i++) {
      // One generator per sample, so sample i does not depend on how many came before.
      const s = simulateSample(new Rng(rng.nextUint32()), options);
      writer.add({
        spectra: s.spectra,
        truth: s.truth,
        truthPeakMask: s.truthPeakMask,
        meta: { index: i, snr0: s.snr0, levels: s.levels, multiplets: s.multiplets, lines: s.lines },
      });
      onProgress?.(i + 1);
    }
  } catch (e) {
    writer.abort();
    throw e;
  }
  return writer.close();
}

/** Semi-synthetic set: samples cycle through the given clean FIDs (all must give the same axis). */
export function writeSemiSyntheticDataset(
  dir: string,
  samples: number,
  seed: number,
  fids: Fid[],
  options: SemiSyntheticOptions,
  onProgress?: (i: number) => void,
): DatasetManifest {
  if (fids.length === 0) throw new RangeError('semi-synthetic data need at least one clean FID');
  const refs = fids.map((f) => prepareReference(f, options));
  const first = refs[0]!;
  for (const r of refs) {
    if (Math.abs(r.ppmFirst - first.ppmFirst) > 1e-6 || Math.abs(r.ppmLast - first.ppmLast) > 1e-6) {
      throw new RangeError(
        `${r.fid.source}: its ppm axis differs from ${first.fid.source}; one data set needs one axis`,
      );
    }
  }
  const writer = new DatasetWriter(dir, {
    levels: options.levels,
    points: options.points,
    ratio: options.ratio,
    axis: { ppmFirst: first.ppmFirst, ppmLast: first.ppmLast, sfMHz: first.fid.refMHz },
    generator: { kind: 'semi-synthetic', seed, options: { ...options }, sources: fids.map((f) => f.source) },
  });
  const rng = new Rng(seed);
  try {
    for (let i = 0; i < samples; i++) {
      const ref = refs[i % refs.length]!;
      const s = semiSyntheticSample(new Rng(rng.nextUint32()), ref, options);
      writer.add({
        spectra: s.spectra,
        truth: s.truth,
        truthPeakMask: s.truthPeakMask,
        meta: {
          index: i,
          snr0: s.snr0,
          levels: s.levels,
          multiplets: s.multiplets,
          lines: s.lines,
          source: ref.fid.source,
        },
      });
      onProgress?.(i + 1);
    }
  } catch (e) {
    writer.abort();
    throw e;
  }
  return writer.close();
}
