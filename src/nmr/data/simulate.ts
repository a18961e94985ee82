// Synthetic multi-SNR samples with ground truth, synthesized in the time domain. Per sample: 4..20
// first-order multiplets (J 1..17 Hz), Voigt lines of FWHM 0.5..2 Hz (never narrower than 2
// points), some broad peaks, weak impurities (0.5..5 % of a typical multiplet), a reference singlet
// at 0 ppm and a smooth baseline drift.
// Per experiment k: a sub-point global shift, local shifts of some multiplets, line-width and
// phase jitter, amplitude jitter, complex Gaussian noise with spectral sigma_k = sigma_0 / T^k
// (= sigma_K T^(K-k)), and a random normalization. The highest-SNR experiment K defines the frame
// of the ground truth: it has no shift and no jitter, only noise and its normalization.
import { Rng } from '../../util/rng.js';
import { fourierTransform } from '../process.js';
import type { Fid } from '../types.js';
import {
  simulationAxis,
  type Axis,
  type LevelTruth,
  type SimulatedSample,
  type SimulationOptions,
  type TrueLine,
  type TrueMultiplet,
} from './simulate-types.js';

export {
  FAMILIES,
  simulationAxis,
  type Axis,
  type LevelTruth,
  type SimulatedSample,
  type SimulationOptions,
  type TrueLine,
  type TrueMultiplet,
} from './simulate-types.js';

interface Component {
  multiplet: number;
  /** Line frequencies relative to the carrier (Hz) and FID amplitudes. */
  freqs: number[];
  amps: number[];
  lorentzHz: number;
  gaussHz: number;
}

function binomialPattern(couplings: { j: number; spins: number }[]): {
  offsets: number[];
  weights: number[];
} {
  let offsets = [0];
  let weights = [1];
  for (const { j, spins } of couplings) {
    for (let s = 0; s < spins; s++) {
      const o: number[] = [];
      const w: number[] = [];
      offsets.forEach((off, i) => {
        o.push(off - j / 2, off + j / 2);
        w.push(weights[i]! / 2, weights[i]! / 2);
      });
      offsets = o;
      weights = w;
    }
  }
  return { offsets, weights };
}

/** Draws the sample's signals (the same molecule in every experiment). */
function drawComponents(
  rng: Rng,
  axis: Axis,
  n: number,
  options: SimulationOptions,
): { comps: Component[]; multiplets: TrueMultiplet[] } {
  const hzPerPoint = axis.swHz / n;
  const minFwhm = 2 * hzPerPoint;
  const [mLo, mHi] = options.multiplets ?? [4, 20];
  const count = mLo + rng.int(mHi - mLo + 1);
  const comps: Component[] = [];
  const multiplets: TrueMultiplet[] = [];
  const ppmLo = axis.ppmLast + 0.5;
  const ppmHi = axis.ppmFirst - 0.5;
  const add = (
    kind: TrueMultiplet['kind'],
    ppm: number,
    area: number,
    couplings: { j: number; spins: number }[],
    fwhmHz: number,
    gaussFrac: number,
  ): void => {
    const id = multiplets.length;
    const { offsets, weights } = binomialPattern(couplings);
    const f0 = (ppm - axis.carrierPpm) * axis.sfMHz;
    comps.push({
      multiplet: id,
      freqs: offsets.map((o) => f0 + o),
      amps: weights.map((w) => (w * area * 2) / n),
      lorentzHz: fwhmHz * (1 - gaussFrac),
      gaussHz: fwhmHz * gaussFrac,
    });
    const span = (offsets.length > 1 ? Math.max(...offsets) - Math.min(...offsets) : 0) / hzPerPoint;
    const index = ((axis.ppmFirst - ppm) * axis.sfMHz) / hzPerPoint;
    const half = span / 2 + 4 * (fwhmHz / hzPerPoint);
    multiplets.push({
      id,
      kind,
      ppm,
      index,
      couplingsHz: couplings,
      area,
      fwhmHz,
      from: Math.max(0, Math.floor(index - half)),
      to: Math.min(n - 1, Math.ceil(index + half)),
    });
  };
  const areas: number[] = [];
  for (let m = 0; m < count; m++) {
    const groups = rng.int(3);
    const couplings = Array.from({ length: groups }, () => ({
      j: 1 + 16 * rng.uniform(),
      spins: 1 + rng.int(3),
    }));
    const area = (1 + rng.int(3)) * (0.5 + rng.uniform());
    areas.push(area);
    const [wLo, wHi] = options.fwhmHz ?? [0.5, 2];
    const fwhm = Math.max(minFwhm, wLo + (wHi - wLo) * rng.uniform());
    const [gLo, gHi] = options.gaussFraction ?? [0, 0.3];
    add(
      'multiplet',
      ppmLo + (ppmHi - ppmLo) * rng.uniform(),
      area,
      couplings,
      fwhm,
      gLo + (gHi - gLo) * rng.uniform(),
    );
  }
  const typical = areas.reduce((a, b) => a + b, 0) / areas.length;
  const [bLo, bHi] = options.broadPeaks ?? [0, 2];
  const broad = bLo + rng.int(bHi - bLo + 1);
  const [bwLo, bwHi] = options.broadFwhmHz ?? [15, 50];
  for (let b = 0; b < broad; b++)
    add(
      'broad',
      ppmLo + (ppmHi - ppmLo) * rng.uniform(),
      typical * (0.5 + rng.uniform()),
      [],
      bwLo + (bwHi - bwLo) * rng.uniform(),
      0,
    );
  const [iLo, iHi] = options.impurities ?? [1, 4];
  const impurities = iLo + rng.int(iHi - iLo + 1);
  const [lLo, lHi] = options.impurityLevel ?? [0.005, 0.05];
  for (let i = 0; i < impurities; i++) {
    add(
      'impurity',
      ppmLo + (ppmHi - ppmLo) * rng.uniform(),
      typical * (lLo + (lHi - lLo) * rng.uniform()),
      [],
      Math.max(minFwhm, 0.5 + 1.5 * rng.uniform()),
      0,
    );
  }
  if (axis.ppmLast < -0.2)
    add('reference', 0, typical * (0.3 + 0.7 * rng.uniform()), [], Math.max(minFwhm, 0.6), 0);
  return { comps, multiplets };
}

/** Sums the components into a FID of n points (Lorentzian lines by recurrence, Gaussian envelope per component). */
function synthesizeFid(
  comps: Component[],
  axis: Axis,
  n: number,
  level: {
    shiftHz: number;
    localHz: Record<number, number>;
    phaseDeg: number;
    widthFactor: number;
    ampJitter: (m: number) => number;
  },
): Fid {
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  const dt = 1 / axis.swHz;
  const ph = (level.phaseDeg * Math.PI) / 180;
  const tmpRe = new Float64Array(n);
  const tmpIm = new Float64Array(n);
  for (const c of comps) {
    tmpRe.fill(0);
    tmpIm.fill(0);
    const lor = c.lorentzHz * level.widthFactor;
    const decay = Math.exp(-Math.PI * lor * dt);
    const gain = level.ampJitter(c.multiplet);
    for (let l = 0; l < c.freqs.length; l++) {
      const f = c.freqs[l]! + level.shiftHz + (level.localHz[c.multiplet] ?? 0);
      const stepR = decay * Math.cos(2 * Math.PI * f * dt);
      const stepI = decay * Math.sin(2 * Math.PI * f * dt);
      let zr = c.amps[l]! * gain * Math.cos(ph);
      let zi = c.amps[l]! * gain * Math.sin(ph);
      for (let j = 0; j < n; j++) {
        tmpRe[j]! += zr;
        tmpIm[j]! += zi;
        const r = zr * stepR - zi * stepI;
        zi = zr * stepI + zi * stepR;
        zr = r;
      }
    }
    const g = c.gaussHz * level.widthFactor;
    for (let j = 0; j < n; j++) {
      const env = g > 0 ? Math.exp(-((Math.PI * g * j * dt) ** 2) / (4 * Math.LN2)) : 1;
      re[j]! += tmpRe[j]! * env;
      im[j]! += tmpIm[j]! * env;
    }
  }
  return {
    re,
    im,
    swHz: axis.swHz,
    refMHz: axis.sfMHz,
    carrierPpm: axis.carrierPpm,
    groupDelay: 0,
    source: 'simulation',
  };
}

/** Smooth baseline: a few very broad Gaussian humps plus a tilt, shared by all experiments. */
function baselineDrift(rng: Rng, n: number, height: number): Float64Array {
  const out = new Float64Array(n);
  const tilt = (rng.uniform() - 0.5) * 0.02 * height;
  const humps = 1 + rng.int(3);
  const centres = Array.from({ length: humps }, () => rng.uniform() * n);
  const widths = Array.from({ length: humps }, () => (0.05 + 0.2 * rng.uniform()) * n);
  const amps = Array.from({ length: humps }, () => (rng.uniform() - 0.3) * 0.01 * height);
  for (let i = 0; i < n; i++) {
    let v = tilt * (i / n - 0.5);
    for (let h = 0; h < humps; h++) v += amps[h]! * Math.exp(-0.5 * ((i - centres[h]!) / widths[h]!) ** 2);
    out[i] = v;
  }
  return out;
}

export function realSpectrum(fid: Fid): Float64Array {
  return fourierTransform(fid).re;
}

export function simulateSample(rng: Rng, options: SimulationOptions): SimulatedSample {
  const n = options.points;
  const K1 = options.levels;
  if (K1 < 2) throw new RangeError('simulateSample needs at least 2 levels');
  const axis = simulationAxis(options);
  const { comps, multiplets } = drawComponents(rng, axis, n, options);
  const hzPerPoint = axis.swHz / n;
  const clean = realSpectrum(
    synthesizeFid(comps, axis, n, {
      shiftHz: 0,
      localHz: {},
      phaseDeg: 0,
      widthFactor: 1,
      ampJitter: () => 1,
    }),
  );
  let height = 0;
  for (const v of clean) height = Math.max(height, v);
  const drift = baselineDrift(rng, n, height * (options.driftScale ?? 1));
  const truth = clean.map((v, i) => v + drift[i]!);
  const [sLo, sHi] = options.snrRange ?? [5, 50];
  const snr0 = Math.exp(Math.log(sLo) + (Math.log(sHi) - Math.log(sLo)) * rng.uniform());
  const sigma0 = height / snr0;
  const levels: LevelTruth[] = [];
  const spectra: Float64Array[] = [];
  for (let k = 0; k < K1; k++) {
    const isRef = k === K1 - 1;
    const shift = isRef ? 0 : (2 * rng.uniform() - 1) * (options.maxShiftPoints ?? 1.5);
    const localShiftsHz: Record<number, number> = {};
    if (!isRef) {
      for (const m of multiplets) {
        if (m.kind === 'multiplet' && rng.uniform() < (options.localShiftFraction ?? 0.2))
          localShiftsHz[m.id] = (2 * rng.uniform() - 1) * (options.maxLocalShiftHz ?? 0.5);
      }
    }
    const phaseDeg = isRef ? 0 : rng.normal() * (options.phaseJitterDeg ?? 1.5);
    const linewidthFactor = isRef ? 1 : 1 + (2 * rng.uniform() - 1) * (options.linewidthJitter ?? 0.05);
    const jitter = multiplets.map(() => (isRef ? 1 : 1 + rng.normal() * (options.amplitudeJitter ?? 0.02)));
    // A positive shift in points moves the spectrum to higher indices, i.e. lower frequency.
    const fid = synthesizeFid(comps, axis, n, {
      shiftHz: -shift * hzPerPoint,
      localHz: localShiftsHz,
      phaseDeg,
      widthFactor: linewidthFactor,
      ampJitter: (m) => jitter[m]!,
    });
    const sigma = sigma0 / Math.pow(options.ratio, k);
    // Spectral noise sigma per real point = time-domain sigma * sqrt(n) (unnormalized FFT).
    const sigmaTime = sigma / Math.sqrt(n);
    for (let j = 0; j < n; j++) {
      fid.re[j]! += sigmaTime * rng.normal();
      fid.im[j]! += sigmaTime * rng.normal();
    }
    const x = realSpectrum(fid);
    for (let i = 0; i < n; i++) x[i]! += drift[i]!;
    const kind = (['max', 'area', 'random'] as const)[rng.int(3)]!;
    let scale: number;
    if (kind === 'max') scale = 1 / x.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
    else if (kind === 'area') scale = 1 / x.reduce((a, v) => a + Math.abs(v), 0);
    else scale = Math.exp(Math.log(0.1) + Math.log(100) * rng.uniform());
    for (let i = 0; i < n; i++) x[i]! *= scale;
    spectra.push(x);
    levels.push({ shift, localShiftsHz, phaseDeg, linewidthFactor, sigma, scale, normalization: kind });
  }
  const sigmaK = levels[K1 - 1]!.sigma;
  const raw = Uint8Array.from(clean, (v) => (v > sigmaK ? 1 : 0));
  const truthPeakMask = new Uint8Array(n);
  for (let i = 0; i < n; i++)
    if (raw[i]) for (let d = -2; d <= 2; d++) if (i + d >= 0 && i + d < n) truthPeakMask[i + d] = 1;
  const lines: TrueLine[] = [];
  for (const c of comps) {
    const m = multiplets[c.multiplet]!;
    c.freqs.forEach((f, l) => {
      const ppm = f / axis.sfMHz + axis.carrierPpm;
      lines.push({
        multiplet: m.id,
        ppm,
        index: ((axis.ppmFirst - ppm) * axis.sfMHz) / hzPerPoint,
        area: (c.amps[l]! * n) / 2,
        fwhmHz: m.fwhmHz,
      });
    });
  }
  return { spectra, truth, truthPeakMask, levels, multiplets, lines, snr0 };
}
