// Bruker REVERSE (procs): TopSpin's ft flips the spectrum. A fid read with REVERSE= yes is processed
// to the flipped spectrum, and the 1r that ft wrote is read as stored, so both give the same ppm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readBruker, readBrukerFid, readBrukerProcessed } from '../../src/nmr/io/bruker.js';
import { processFid } from '../../src/nmr/process.js';
import { ppmAxis, type Spectrum } from '../../src/nmr/types.js';

const TD = 2048; // words: 1024 complex points
const SW_H = 5000;
const MHZ = 400.13;
const LINE_HZ = 1500;
const LINE_PPM = LINE_HZ / MHZ;
const SI = 2048;
const OFFSET = SW_H / 2 / MHZ;

function params(entries: Record<string, string | number>): string {
  return `##TITLE= Parameter file\n${Object.entries(entries)
    .map(([k, v]) => `##$${k}= ${v}`)
    .join('\n')}\n##END=\n`;
}

function int32(values: number[]): Buffer {
  const buf = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => buf.writeInt32LE(Math.round(v), 4 * i));
  return buf;
}

/**
 * An expno folder whose fid turns the other way from TopSpin's sense (a line LINE_HZ above the
 * carrier turns clockwise), as on a spectrometer whose spectra need REVERSE, and a 1r as TopSpin's
 * ft writes it with REVERSE= yes: the line at +LINE_PPM, highest ppm first.
 */
function folder(reverse: 'yes' | 'no'): string {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-bruker-reverse-'));
  const words: number[] = [];
  for (let j = 0; j < TD / 2; j++) {
    const t = j / SW_H;
    const a = 1e6 * Math.exp(-t * 20);
    words.push(a * Math.cos(2 * Math.PI * LINE_HZ * t), -a * Math.sin(2 * Math.PI * LINE_HZ * t));
  }
  writeFileSync(join(dir, 'fid'), int32(words));
  writeFileSync(
    join(dir, 'acqus'),
    params({ TD, SW_h: SW_H, SFO1: MHZ, BF1: MHZ, DTYPA: 0, BYTORDA: 0, DIGMOD: 0, NUC1: '<1H>', NS: 8 }),
  );
  const pdata = join(dir, 'pdata', '1');
  mkdirSync(pdata, { recursive: true });
  const step = SW_H / MHZ / SI;
  const center = (OFFSET - LINE_PPM) / step;
  const width = 20 / Math.PI / (SW_H / SI); // half width at half height, in points
  const real = Array.from({ length: SI }, (_, i) => 1e6 / (1 + ((i - center) / width) ** 2));
  writeFileSync(join(pdata, '1r'), int32(real));
  writeFileSync(
    join(pdata, 'procs'),
    params({
      SI,
      SF: MHZ,
      SW_p: SW_H,
      OFFSET,
      DTYPP: 0,
      BYTORDP: 0,
      NC_proc: 0,
      PHC0: 30,
      PHC1: 0,
      LB: 0,
      REVERSE: reverse,
    }),
  );
  return dir;
}

function peakPpm(s: Pick<Spectrum, 'real' | 'ppmFirst' | 'ppmLast'> & { imag?: Float64Array }): number {
  let best = 0;
  const mag = (i: number): number => Math.hypot(s.real[i]!, s.imag?.[i] ?? 0);
  for (let i = 1; i < s.real.length; i++) if (mag(i) > mag(best)) best = i;
  return ppmAxis(s)[best]!;
}

test('Bruker REVERSE= yes: the fid is processed to the flipped spectrum, as the stored 1r', () => {
  const tol = (2 * SW_H) / MHZ / SI;
  const dir = folder('yes');
  const processed = readBrukerProcessed(join(dir, 'pdata', '1'));
  assert.ok(Math.abs(peakPpm(processed) - LINE_PPM) < tol, `1r peak at ${peakPpm(processed)}`);
  const fid = readBrukerFid(dir);
  const fromFid = processFid(fid);
  assert.ok(Math.abs(peakPpm(fromFid) - LINE_PPM) < tol, `fid peak at ${peakPpm(fromFid)}`);
  // TopSpin's PHC0 belongs to its flipped spectrum: the reversed fid is phased automatically.
  assert.equal(fid.phase, undefined);
  assert.equal(fromFid.phaseFrom, 'auto');
  const viaFolder = readBruker(dir, 'processed');
  assert.equal(viaFolder.kind, 'spectrum');
  assert.deepEqual(viaFolder.kind === 'spectrum' && viaFolder.spectrum.real, processed.real);
});

test('Bruker REVERSE= no: the same fid lands on the mirror ppm and keeps its stored phase', () => {
  const tol = (2 * SW_H) / MHZ / SI;
  const fid = readBrukerFid(folder('no'));
  const s = processFid(fid);
  assert.ok(Math.abs(peakPpm(s) + LINE_PPM) < tol, `fid peak at ${peakPpm(s)}`);
  assert.deepEqual(fid.phase, { p0: 30, p1: 0 });
  assert.equal(fid.phaseSource, 'procs PHC0/PHC1');
  assert.equal(s.phaseFrom, 'file');
});
