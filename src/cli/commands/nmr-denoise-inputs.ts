// The inputs of `tailor nmr denoise`: files, experiment folders (Bruker, VnmrJ, Spinsolve),
// folders of them, pseudo-2D series (every row, or the row PATH#R names) and data sets written by
// `nmr simulate`, each read and processed like the model's training experiments and cropped to its
// ppm window.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { CliError } from '../errors.js';
import {
  type ProcessingDomain,
  readNmr,
  isExperimentDir,
  processFid,
  splitRow,
  NmrFormatError,
  Dataset,
  type Spectrum,
  type Fid,
} from '../../nmr/index.js';

/** One spectrum to denoise, and the name its outputs take. */
export interface Item {
  name: string;
  spectrum: Spectrum;
  /** All levels of a multi-SNR data set sample (level 0 first), for stack models. */
  stack?: Float64Array[];
}

/** How inputs are read: the training experiments' processing, the ppm window, raw or processed Bruker data. */
export interface InputSettings {
  processing: ProcessingDomain;
  ppmWindow: [number, number] | undefined;
  prefer: 'raw' | 'processed';
}

const KNOWN = new Set(['.csv', '.tsv', '.txt', '.jdx', '.dx', '.jcamp', '.fid', '.ft1', '.ft']);

function crop(s: Spectrum, ppmWindow: [number, number] | undefined): Spectrum {
  if (!ppmWindow) return s;
  const n = s.real.length;
  const step = (s.ppmFirst - s.ppmLast) / (n - 1);
  const [a, b] = ppmWindow;
  const lo = Math.max(0, Math.ceil((s.ppmFirst - Math.max(a, b)) / step));
  const hi = Math.min(n - 1, Math.floor((s.ppmFirst - Math.min(a, b)) / step));
  if (hi - lo < 64) return s;
  return {
    ...s,
    real: s.real.slice(lo, hi + 1),
    ppmFirst: s.ppmFirst - lo * step,
    ppmLast: s.ppmFirst - hi * step,
    ...(s.imag ? { imag: s.imag.slice(lo, hi + 1) } : {}),
  };
}

/**
 * The spectra of one file or experiment folder, named after `name`: one, or for a pseudo-2D series
 * every row (NAME-rowR), or the one row that PATH#R names.
 */
function readItems(path: string, name: string, settings: InputSettings): Item[] {
  const { file, row } = splitRow(path);
  const data = readNmr(file, { prefer: settings.prefer });
  if (data.kind === 'spectrum') return [{ name, spectrum: crop(data.spectrum, settings.ppmWindow) }];
  const { processing } = settings;
  const options: Parameters<typeof processFid>[1] = {};
  if (processing.size !== undefined) options.size = processing.size;
  if (processing.lbHz !== undefined) options.apodization = { kind: 'exponential', lbHz: processing.lbHz };
  if (processing.phase !== undefined) options.phase = processing.phase;
  const spectrum = (fid: Fid) => crop(processFid(fid, options), settings.ppmWindow);
  if (data.kind === 'fid') {
    if (row !== undefined && row > 0)
      throw new NmrFormatError(
        file,
        'row',
        `row ${row} asked for, but this is one FID`,
        'drop the #row suffix',
      );
    return [{ name, spectrum: spectrum(data.fid) }];
  }
  if (row === undefined)
    return data.fids.map((fid, r) => ({ name: `${name}-row${r}`, spectrum: spectrum(fid) }));
  const fid = data.fids[row];
  if (!fid)
    throw new NmrFormatError(file, 'row', `no row ${row}: the series has rows 0..${data.fids.length - 1}`);
  return [{ name: `${name}-row${row}`, spectrum: spectrum(fid) }];
}

/** VnmrJ saves an experiment as NAME.fid/. */
function isVarianDirName(p: string): boolean {
  return /\.fid$/i.test(basename(p));
}

/** An experiment folder's name for its output files: a VnmrJ NAME.fid/ gives NAME. */
function folderName(p: string): string {
  return isVarianDirName(p) ? basename(p).slice(0, -4) || basename(p) : basename(p);
}

/** The spectra of one --input: a file, an experiment folder or a row of one, a folder of them, or a simulated data set. */
export function collectInputs(path: string, settings: InputSettings): Item[] {
  const { file, row } = splitRow(path);
  if (!existsSync(file)) throw new CliError(`--input ${path}: does not exist`);
  const stem = (p: string) => basename(p, extname(p)) || basename(p);
  if (row !== undefined)
    return readItems(path, statSync(file).isDirectory() ? folderName(file) : stem(file), settings);
  if (statSync(path).isDirectory()) {
    if (existsSync(join(path, 'manifest.json'))) {
      const ds = new Dataset(path);
      const { ppmFirst, ppmLast, sfMHz } = ds.manifest.axis;
      const items = Array.from({ length: ds.size }, (_, i) => ({
        name: `${basename(path)}-sample${String(i).padStart(4, '0')}`,
        stack: ds.sample(i).spectra,
        spectrum: {
          real: ds.sample(i).spectra[0]!,
          ppmFirst,
          ppmLast,
          refMHz: sfMHz,
          source: `${path}#${i}`,
        },
      }));
      ds.close();
      return items;
    }
    if (isExperimentDir(path)) return readItems(path, folderName(path), settings);
    const entries = readdirSync(path)
      .sort()
      .map((e) => join(path, e))
      .filter((p) => (statSync(p).isDirectory() ? isExperimentDir(p) : KNOWN.has(extname(p).toLowerCase())));
    if (entries.length === 0)
      throw new CliError(
        `--input ${path}: no spectra found (expected CSV/JCAMP-DX/NMRPipe files, or Bruker, VnmrJ or Spinsolve experiment folders)`,
      );
    // Bruker experiment folders are numbers: keep the sample folder's name in front.
    return entries.flatMap((p) =>
      readItems(
        p,
        !statSync(p).isDirectory()
          ? stem(p)
          : isVarianDirName(p)
            ? folderName(p)
            : `${basename(path)}-${basename(p)}`,
        settings,
      ),
    );
  }
  return readItems(path, stem(path), settings);
}
