// NMRPipe 1D reader: a 512-word float32 header followed by float32 data. Time-domain complex
// data store the real block, then the imaginary block. The header's FDFLTORDER word (2.345)
// tells the byte order.
import { NmrFormatError, readNmrFile } from './errors.js';
import type { Fid, NmrData, Spectrum } from '../types.js';

const HEADER_WORDS = 512;
const FDFLTORDER = 2;
const FDDIMCOUNT = 9;
const FDSIZE = 99;
const FDF2SW = 100;
const FDF2ORIG = 101;
const FDQUADFLAG = 106;
const FDF2OBS = 119;
const FDF2CAR = 66;
const FDF2FTFLAG = 220;
const FDF2CENTER = 79;

export function parsePipe(bytes: Uint8Array, file: string): NmrData {
  if (bytes.length < HEADER_WORDS * 4)
    throw new NmrFormatError(
      file,
      'header',
      `file is ${bytes.length} bytes, shorter than the 2048-byte header`,
    );
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let little = true;
  if (Math.abs(view.getFloat32(FDFLTORDER * 4, true) - 2.345) > 1e-3) {
    if (Math.abs(view.getFloat32(FDFLTORDER * 4, false) - 2.345) > 1e-3) {
      throw new NmrFormatError(
        file,
        'FDFLTORDER',
        'header word 2 is not 2.345 in either byte order',
        'not an NMRPipe file',
      );
    }
    little = false;
  }
  const h = (w: number): number => view.getFloat32(w * 4, little);
  const dims = h(FDDIMCOUNT);
  if (dims !== 1)
    throw new NmrFormatError(
      file,
      'FDDIMCOUNT',
      `${dims}-dimensional data`,
      'only 1D NMRPipe files are supported',
    );
  const size = h(FDSIZE);
  const complex = h(FDQUADFLAG) === 0;
  const words = (bytes.length - HEADER_WORDS * 4) / 4;
  const needed = size * (complex ? 2 : 1);
  if (!Number.isInteger(size) || size <= 0 || words < needed) {
    throw new NmrFormatError(
      file,
      'FDSIZE',
      `header says ${size} ${complex ? 'complex' : 'real'} points, file holds ${words} words`,
    );
  }
  const read = (start: number): Float64Array => {
    const out = new Float64Array(size);
    for (let i = 0; i < size; i++) out[i] = view.getFloat32((HEADER_WORDS + start + i) * 4, little);
    return out;
  };
  const re = read(0);
  const im = complex ? read(size) : new Float64Array(size);
  for (const [part, values] of [
    ['real', re],
    ['imaginary', im],
  ] as const) {
    const bad = values.findIndex((v) => !Number.isFinite(v));
    if (bad >= 0)
      throw new NmrFormatError(
        file,
        'data',
        `${part} point ${bad} is ${values[bad]}, not a finite number`,
        'the file is corrupt',
      );
  }
  const swHz = h(FDF2SW);
  const obs = h(FDF2OBS);
  if (!(swHz > 0)) throw new NmrFormatError(file, 'FDF2SW', `spectral width ${swHz} is not positive`);
  if (!(obs > 0)) throw new NmrFormatError(file, 'FDF2OBS', `observe frequency ${obs} is not positive`);
  const frequencyDomain = h(FDF2FTFLAG) !== 0;
  if (!frequencyDomain) {
    // ORIG is the frequency (Hz) of the last point of the transformed spectrum of `size` points.
    const orig = h(FDF2ORIG);
    const carrierPpm = (orig + swHz / 2 - swHz / size) / obs;
    const fid: Fid = {
      re,
      im,
      swHz,
      refMHz: obs,
      carrierPpm: Number.isFinite(carrierPpm) ? carrierPpm : h(FDF2CAR),
      groupDelay: 0,
      source: file,
    };
    return { kind: 'fid', fid };
  }
  const orig = h(FDF2ORIG);
  const center = h(FDF2CENTER);
  void center;
  const ppmLast = orig / obs;
  const ppmFirst = (orig + swHz - swHz / size) / obs;
  const spectrum: Spectrum = { real: re, ppmFirst, ppmLast, refMHz: obs, source: file };
  if (complex) spectrum.imag = im;
  return { kind: 'spectrum', spectrum };
}

export function readPipe(path: string): NmrData {
  return parsePipe(readNmrFile(path), path);
}
