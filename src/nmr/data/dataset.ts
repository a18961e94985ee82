// On-disk format of a multi-SNR data set ("tailor-nmr-multisnr", version 1), written by
// `tailor nmr simulate` and read by evaluation and training:
//
//   DIR/manifest.json   format, version, samples N, levels K+1, points L, ratio T, axis
//                       {ppmFirst, ppmLast, sfMHz} shared by all samples, the generator and its
//                       options, and the file table below.
//   DIR/spectra.f32     float32 little-endian, shape [N, K+1, L], C order: sample, level, point.
//                       Level 0 has the lowest SNR, level K the highest; point 0 is the highest ppm.
//                       Spectra are as measured: shifted, jittered and normalized (not aligned).
//   DIR/truth.f32       float32 little-endian, shape [N, L]: the clean spectrum s of each sample in
//                       the frame of level K and in truth units (level k stores scale_k * (s_k + n_k)).
//   DIR/peak_mask.u8    uint8, shape [N, L]: 1 where the clean signal exceeds sigma_K (dilated 2 points).
//   DIR/samples.jsonl   one JSON object per line and sample: index, snr0 (tallest line / sigma_0),
//                       levels[k] = {shift (points), localShiftsHz {multiplet id: Hz}, phaseDeg,
//                       linewidthFactor, sigma (truth units), scale, normalization}, multiplets
//                       [{id, kind, ppm, index, couplingsHz, area, fwhmHz, from, to}], lines
//                       [{multiplet, ppm, index, area, fwhmHz}].
//
// To compare a spectrum of level k with the truth, divide it by levels[k].scale.
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic, writeJsonAtomic, ensureDir } from '../../util/fs.js';
import { NmrFormatError } from '../io/errors.js';
import type { LevelTruth, TrueLine, TrueMultiplet } from './simulate-types.js';

export const DATASET_FORMAT = 'tailor-nmr-multisnr';
export const DATASET_VERSION = 1;

/**
 * The manifest of a dataset directory: format and version, number of samples, levels, points per
 * spectrum, and how the samples were made.
 */
export interface DatasetManifest {
  format: typeof DATASET_FORMAT;
  version: number;
  samples: number;
  levels: number;
  points: number;
  ratio: number;
  axis: { ppmFirst: number; ppmLast: number; sfMHz: number };
  generator: {
    kind: 'synthetic' | 'semi-synthetic';
    seed: number;
    options: Record<string, unknown>;
    sources?: string[];
  };
  files: { spectra: string; truth: string; peakMask: string; samples: string };
  dtype: 'float32';
  byteOrder: 'little';
  layout: string;
}

/**
 * One sample's metadata: its index, its level-0 SNR, the noise and scale of each level, and the
 * true lines and multiplets.
 */
export interface SampleMeta {
  index: number;
  snr0: number;
  levels: LevelTruth[];
  multiplets: TrueMultiplet[];
  lines: TrueLine[];
  source?: string;
}

/**
 * One sample of a dataset: its noisy levels (low to high SNR), the clean truth, the peak mask of
 * the truth, and its metadata.
 */
export interface SampleRecord {
  spectra: Float64Array[];
  truth: Float64Array;
  truthPeakMask: Uint8Array;
  meta: SampleMeta;
}

/** Streams samples to DIR; call add() per sample, then close(). Files appear atomically at close. */
export class DatasetWriter {
  private fdSpectra: number;
  private fdTruth: number;
  private fdMask: number;
  private metas: string[] = [];
  private count = 0;
  private readonly tmp: string;

  constructor(
    readonly dir: string,
    private readonly manifest: Omit<
      DatasetManifest,
      'samples' | 'files' | 'format' | 'version' | 'dtype' | 'byteOrder' | 'layout'
    >,
  ) {
    ensureDir(dir);
    this.tmp = `.tmp-${process.pid}-${Date.now()}`;
    this.fdSpectra = openSync(join(dir, `spectra.f32${this.tmp}`), 'w');
    this.fdTruth = openSync(join(dir, `truth.f32${this.tmp}`), 'w');
    this.fdMask = openSync(join(dir, `peak_mask.u8${this.tmp}`), 'w');
  }

  add(record: SampleRecord): void {
    const { levels, points } = this.manifest;
    if (record.spectra.length !== levels)
      throw new RangeError(`sample ${this.count}: ${record.spectra.length} levels, expected ${levels}`);
    const block = new Float32Array(levels * points);
    record.spectra.forEach((x, k) => {
      if (x.length !== points)
        throw new RangeError(`sample ${this.count} level ${k}: ${x.length} points, expected ${points}`);
      block.set(x, k * points);
    });
    writeAll(this.fdSpectra, new Uint8Array(block.buffer));
    writeAll(this.fdTruth, new Uint8Array(Float32Array.from(record.truth).buffer));
    writeAll(this.fdMask, record.truthPeakMask);
    this.metas.push(JSON.stringify({ ...record.meta, index: this.count }));
    this.count++;
  }

  close(): DatasetManifest {
    for (const fd of [this.fdSpectra, this.fdTruth, this.fdMask]) {
      fsyncSync(fd);
      closeSync(fd);
    }
    for (const name of ['spectra.f32', 'truth.f32', 'peak_mask.u8'])
      renameSync(join(this.dir, name + this.tmp), join(this.dir, name));
    writeFileAtomic(join(this.dir, 'samples.jsonl'), this.metas.join('\n') + '\n');
    const manifest: DatasetManifest = {
      format: DATASET_FORMAT,
      version: DATASET_VERSION,
      ...this.manifest,
      samples: this.count,
      files: {
        spectra: 'spectra.f32',
        truth: 'truth.f32',
        peakMask: 'peak_mask.u8',
        samples: 'samples.jsonl',
      },
      dtype: 'float32',
      byteOrder: 'little',
      layout:
        'spectra [samples, levels, points]; truth and peakMask [samples, points]; level 0 = lowest SNR; point 0 = highest ppm',
    };
    writeJsonAtomic(join(this.dir, 'manifest.json'), manifest);
    return manifest;
  }

  abort(): void {
    for (const fd of [this.fdSpectra, this.fdTruth, this.fdMask]) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    for (const name of ['spectra.f32', 'truth.f32', 'peak_mask.u8'])
      rmSync(join(this.dir, name + this.tmp), { force: true });
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

/** Random access to a data set on disk (the spectra file is read per sample, not loaded whole). */
export class Dataset {
  readonly manifest: DatasetManifest;
  readonly meta: SampleMeta[];
  // Files are read per sample (large sets need not fit in memory).
  private fdSpectra: number;
  private fdTruth: number;
  private fdMask: number;

  constructor(readonly dir: string) {
    const mpath = join(dir, 'manifest.json');
    if (!existsSync(mpath))
      throw new NmrFormatError(mpath, 'file', 'not found', "create a data set with 'tailor nmr simulate'");
    let m: DatasetManifest;
    try {
      m = JSON.parse(readFileSync(mpath, 'utf8')) as DatasetManifest;
    } catch (e) {
      throw new NmrFormatError(mpath, 'JSON', (e as Error).message);
    }
    if (m.format !== DATASET_FORMAT)
      throw new NmrFormatError(mpath, 'format', `expected '${DATASET_FORMAT}', found '${String(m.format)}'`);
    if (m.version !== DATASET_VERSION)
      throw new NmrFormatError(
        mpath,
        'version',
        `version ${m.version} is not supported (expected ${DATASET_VERSION})`,
      );
    for (const f of ['samples', 'levels', 'points'] as const) {
      if (!Number.isInteger(m[f]) || m[f] <= 0)
        throw new NmrFormatError(mpath, f, `expected a positive integer, found ${String(m[f])}`);
    }
    this.manifest = m;
    const spath = join(dir, m.files.spectra);
    const requireSize = (path: string, bytes: number): void => {
      if (!existsSync(path))
        throw new NmrFormatError(path, 'file', 'not found', 'the data set is incomplete');
      const size = statSync(path).size;
      if (size !== bytes)
        throw new NmrFormatError(
          path,
          'size',
          `${size} bytes, expected ${bytes} for the shape in manifest.json`,
        );
    };
    requireSize(spath, m.samples * m.levels * m.points * 4);
    requireSize(join(dir, m.files.truth), m.samples * m.points * 4);
    requireSize(join(dir, m.files.peakMask), m.samples * m.points);
    this.fdSpectra = openSync(spath, 'r');
    this.fdTruth = openSync(join(dir, m.files.truth), 'r');
    this.fdMask = openSync(join(dir, m.files.peakMask), 'r');
    const lines = readFileSync(join(dir, m.files.samples), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    if (lines.length !== m.samples)
      throw new NmrFormatError(
        join(dir, m.files.samples),
        'lines',
        `${lines.length} records, expected ${m.samples}`,
      );
    this.meta = lines.map((l, i) => {
      try {
        return JSON.parse(l) as SampleMeta;
      } catch (e) {
        throw new NmrFormatError(join(dir, m.files.samples), `line ${i + 1}`, (e as Error).message);
      }
    });
  }

  get size(): number {
    return this.manifest.samples;
  }

  /** Reads sample `i` (0-based): its levels, clean truth and metadata. */
  sample(i: number): SampleRecord {
    const { levels, points, samples } = this.manifest;
    if (!(i >= 0 && i < samples)) throw new RangeError(`sample ${i} out of range 0..${samples - 1}`);
    const bytes = Buffer.alloc(levels * points * 4);
    const got = readSync(this.fdSpectra, bytes, 0, bytes.length, i * bytes.length);
    if (got !== bytes.length)
      throw new NmrFormatError(
        join(this.dir, this.manifest.files.spectra),
        'size',
        `sample ${i} is truncated`,
      );
    const f = new Float32Array(bytes.buffer, bytes.byteOffset, levels * points);
    const spectra = Array.from({ length: levels }, (_, k) =>
      Float64Array.from(f.subarray(k * points, (k + 1) * points)),
    );
    const truthBytes = Buffer.alloc(points * 4);
    readSync(this.fdTruth, truthBytes, 0, truthBytes.length, i * truthBytes.length);
    const t = new Float32Array(truthBytes.buffer, truthBytes.byteOffset, points);
    const mask = new Uint8Array(points);
    readSync(this.fdMask, mask, 0, points, i * points);
    return { spectra, truth: Float64Array.from(t), truthPeakMask: mask, meta: this.meta[i]! };
  }

  /** Closes the dataset's file; the dataset cannot be read afterwards. */
  close(): void {
    closeSync(this.fdSpectra);
    closeSync(this.fdTruth);
    closeSync(this.fdMask);
  }
}
