// NMR processing and file reading: a free induction decay built in memory is processed into a
// spectrum (apodization, Fourier transform, automatic phasing), written as JCAMP-DX, read back
// and its strongest peak located. Needs no libtorch: runs with TAILOR_NO_ENGINE=1.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processFid, readNmr, writeJcampSpectrum, type Fid } from 'tailor/nmr';

// Two decaying resonances at 1.2 and 3.7 ppm on a 400 MHz spectrometer (carrier 4.7 ppm).
const n = 4096;
const swHz = 8000;
const refMHz = 400;
const carrierPpm = 4.7;
const re = new Float64Array(n);
const im = new Float64Array(n);
for (const [ppm, amplitude] of [
  [1.2, 1],
  [3.7, 0.5],
]) {
  const hz = (ppm! - carrierPpm) * refMHz;
  for (let t = 0; t < n; t++) {
    const s = t / swHz;
    const decay = amplitude! * Math.exp(-s * 8);
    re[t]! += decay * Math.cos(2 * Math.PI * hz * s);
    im[t]! += decay * Math.sin(2 * Math.PI * hz * s);
  }
}
const fid: Fid = { re, im, swHz, refMHz, carrierPpm, groupDelay: 0, source: 'in memory' };

const spectrum = processFid(fid, { apodization: { kind: 'exponential', lbHz: 1 }, phase: 'auto' });
const dir = mkdtempSync(join(tmpdir(), 'tailor-nmr-'));
try {
  const file = join(dir, 'two-peaks.jdx');
  writeJcampSpectrum(file, spectrum, 'two peaks');
  const data = readNmr(file);
  if (data.kind !== 'spectrum') throw new Error(`expected a spectrum, read ${data.kind}`);
  const s = data.spectrum;
  let top = 0;
  for (let i = 1; i < s.real.length; i++) if (s.real[i]! > s.real[top]!) top = i;
  const ppm = s.ppmFirst + ((s.ppmLast - s.ppmFirst) * top) / (s.real.length - 1);
  console.log(
    `read ${s.real.length} points from ${file.split('/').pop()}, ${s.ppmFirst.toFixed(2)} to ${s.ppmLast.toFixed(2)} ppm`,
  );
  console.log(`strongest peak at ${ppm.toFixed(2)} ppm`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
