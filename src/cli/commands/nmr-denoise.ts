// `tailor nmr denoise --model CHECKPOINT --input FILE_OR_DIR... --out DIR`: applies a trained
// U-Net to spectra (CSV, JCAMP-DX, NMRPipe, Bruker, VnmrJ or Spinsolve folders; FIDs are processed first with the
// file's own parameters) and writes each result as CSV and JCAMP-DX.
import { join } from 'node:path';
import { CliError, asUserError } from '../errors.js';
import { defineCommand } from '../command.js';
import { numberListArg } from '../args.js';
import { useDevice } from '../runtime.js';
import {
  loadDenoiserInfo,
  denoiseSpectra,
  denoiseStacks,
  isStackModel,
  checkDomain,
  NOISE_FAR,
  type TrainingDomain,
  preprocessStack,
  writeJcampSpectrum,
  writeCsvSpectrum,
  type Spectrum,
  type UNet1d,
  blendFidelity,
  NmrFidelityError,
  denoiseWithScale,
  NmrUncertaintyError,
  confidentPeaks,
  robustSigma,
  type ScaleCalibration,
} from '../../nmr/index.js';
import { ensureDir, writeFileAtomic } from '../../util/fs.js';
import { collectInputs, type InputSettings, type Item } from './nmr-denoise-inputs.js';
import { Progress } from '../../util/progress.js';

/** Spectra denoised and written per round (a multiple of the model's batch of 8). */
const CHUNK = 64;

const HELP = `usage: tailor nmr denoise --model CHECKPOINT --input FILE_OR_DIR... --out DIR

Denoises real 1D spectra with a model trained by 'tailor nmr train' and writes, per input,
DIR/<name>.denoised.csv (ppm, intensity) and DIR/<name>.denoised.jdx (JCAMP-DX, XYDATA in ppm).

inputs (repeat --input): a CSV, JCAMP-DX or NMRPipe file, a Bruker, VnmrJ or Spinsolve experiment
folder, a folder of such files, or a data set written by 'tailor nmr simulate' (each sample's level
0 is denoised; a stack model, trained with model.inputLevels = K+1, takes each sample's aligned and
rescaled K+1 levels and writes one spectrum in level-K units, so it needs such a data set). A
pseudo-2D series (an arrayed VnmrJ fid, a Bruker ser) gives one output per row, <name>-row<R>;
PATH#R denoises row R alone.
FIDs are Fourier transformed with their own parameters (line broadening, phase) first.

options:
      --model FILE      checkpoint (OUT/best.json or OUT/last.json)           [required]
      --input PATH      input (repeatable)                                     [required]
      --out DIR         output folder                                          [required]
      --processed       use the vendor's processed spectrum instead of the fid (Bruker
                        pdata/1/1r, Spinsolve spectrum_processed.1d)
      --device D        cpu (default), cuda or cuda:N
      --ppm LO,HI       keep only this ppm window (default: the training experiments' window)
      --force           denoise inputs far outside what the model was trained on
      --fidelity F      0..1 (default 0): write F x input + (1 - F) x denoised, trading
                        smoothing for weak peaks (BENCHMARKS.md, NMR, has the curve);
                        single-spectrum models only
      --uncertainty     also write DIR/<name>.scale.csv and .jdx, the per-point scale b of
                        the model's error (central 90 % interval: +- b ln 10), and
                        DIR/<name>.peaks.csv, the peaks above 3 sigma of the input with a
                        confidence, height / (b ln 10); below 1 they are marked low (the
                        interval reaches zero). Needs a model trained with the scale head.
                        After 'tailor nmr calibrate' the scale is multiplied by the stored
                        factor and peaks are rated by the stored rule (the output says which);
                        without it the head's raw scale is written, which overstates the error
      --quiet           no progress on stderr

FIDs are processed like the model's training experiments (size, line broadening, phase) when the
model records them. Each input's relative noise and ppm range are compared with the training
data's: outside them a warning is printed, far outside (noise ${NOISE_FAR}x beyond the training range,
or no line 5 sigma above the noise, or less than half of the ppm range covered) the input is
refused unless --force is given.
  -h, --help            this text`;

export const run = defineCommand({
  help: HELP,
  options: {
    model: { type: 'string' },
    device: { type: 'string' },
    input: { type: 'string', multiple: true },
    out: { type: 'string' },
    processed: { type: 'boolean' },
    ppm: { type: 'string' },
    force: { type: 'boolean' },
    fidelity: { type: 'string' },
    uncertainty: { type: 'boolean' },
    quiet: { type: 'boolean' },
  },
  helpOnParseError: true,
  run: ({ values }) => {
    if (!values.model) throw new CliError(`--model is required\n\n${HELP}`);
    if (!values.input?.length) throw new CliError(`--input is required\n\n${HELP}`);
    if (!values.out) throw new CliError(`--out is required\n\n${HELP}`);
    const fidelity = values.fidelity === undefined ? 0 : Number(values.fidelity);
    if (values.fidelity !== undefined && (values.fidelity.trim() === '' || !(fidelity >= 0 && fidelity <= 1)))
      throw new NmrFidelityError(values.fidelity);
    useDevice(values.device);
    const { model, domain, calibration } = loadModel(values.model);
    if (values.uncertainty && !model.scale) {
      model.dispose();
      throw new NmrUncertaintyError(values.model);
    }
    if (values.uncertainty && fidelity > 0) {
      model.dispose();
      // The scale describes the model's output; a blend with the input has an error it does not describe.
      throw new CliError('--uncertainty describes the model output itself; leave out --fidelity with it');
    }
    if (values.fidelity !== undefined && isStackModel(model)) {
      model.dispose();
      // A stack model's output is in level-K units and has no single input to return to.
      throw new CliError(
        `--fidelity: ${values.model} denoises stacks of levels; --fidelity blends the output with its one input spectrum, so it needs a single-spectrum model`,
      );
    }
    const settings = inputSettings(domain, values.ppm, values.processed ? 'processed' : 'raw');
    const items = values.input.flatMap((p) => collectInputs(p, settings));
    if (domain && !isStackModel(model)) checkInputs(items, model, domain, values.force === true);
    checkStacks(model, items, values.model);
    ensureDir(values.out);
    // In chunks, each written before the next is denoised: progress with rate and ETA for a large
    // folder, and the outputs of one chunk held at a time.
    const progress = new Progress({
      label: 'denoise',
      total: items.length,
      unit: 'spectra',
      quiet: values.quiet === true,
    });
    const names = new Map<string, number>();
    const peaks = { low: 0, total: 0 };
    let seconds = 0;
    for (let at = 0; at < items.length; at += CHUNK) {
      const chunk = items.slice(at, at + CHUNK);
      const r = denoiseItems(model, chunk, values.model, values.uncertainty === true);
      seconds += r.seconds;
      const outputs =
        fidelity > 0
          ? r.outputs.map((y, i) => blendFidelity(chunk[i]!.spectrum.real, y, fidelity))
          : r.outputs;
      const written = writeOutputs(chunk, outputs, values.model, values.out, names);
      if (r.scales) {
        const counts = writeUncertainty(
          chunk,
          outputs,
          r.scales,
          written,
          values.model,
          values.out,
          calibration,
        );
        peaks.low += counts.low;
        peaks.total += counts.total;
      }
      progress.tick(chunk.length);
    }
    progress.finish();
    if (values.uncertainty) console.log(uncertaintySummary(calibration, peaks));
    model.dispose();
    console.log(
      `denoised ${items.length} spectra in ${seconds.toFixed(2)} s (${(items.length / Math.max(seconds, 1e-9)).toFixed(1)} spectra/s); wrote CSV and JCAMP-DX to ${values.out}`,
    );
    return 0;
  },
});

function loadModel(file: string): ReturnType<typeof loadDenoiserInfo> {
  try {
    return loadDenoiserInfo(file);
  } catch (e) {
    throw asUserError(e);
  }
}

/** FIDs are processed like the model's training experiments; --ppm overrides their window. */
function inputSettings(
  domain: TrainingDomain | null,
  ppm: string | undefined,
  prefer: 'raw' | 'processed',
): InputSettings {
  const processing = domain?.processing ?? {};
  let ppmWindow = processing.ppm;
  if (ppm !== undefined) {
    const parts = numberListArg('--ppm', ppm, {}, 2)!;
    ppmWindow = [parts[0]!, parts[1]!];
  }
  return { processing, ppmWindow, prefer };
}

/** Warns about inputs outside the training data; refuses those far outside unless forced. */
function checkInputs(items: Item[], model: UNet1d, domain: TrainingDomain, force: boolean): void {
  for (const it of items) {
    const check = checkDomain(domain, it.spectrum);
    if (check.verdict === 'inside') continue;
    const what = `${it.spectrum.source}: ${check.messages.join('; ')}`;
    if (check.verdict === 'far' && !force) {
      model.dispose();
      throw new CliError(
        `${what}. The model (trained on ${domain.samples} samples) would be guessing here; give an input like its training data (--ppm to crop), retrain with such data, or pass --force`,
      );
    }
    console.error(`tailor: warning: ${what}${check.verdict === 'far' ? ' (--force given)' : ''}`);
  }
}

/** A stack model needs every input to be a sample of its levels: checked before anything is written. */
function checkStacks(model: UNet1d, items: Item[], modelFile: string): void {
  if (!isStackModel(model)) return;
  const G = model.config.inputLevels;
  const bad = items.find((it) => it.stack?.length !== G);
  if (!bad) return;
  model.dispose();
  throw new CliError(
    `--model ${modelFile} denoises stacks of ${G} levels; ${bad.spectrum.source} is ${bad.stack ? `a sample of ${bad.stack.length} levels` : 'a single spectrum'} (give a data set written by 'tailor nmr simulate' with --levels ${G})`,
  );
}

/** The denoised spectra, and the seconds the model took. */
function denoiseItems(
  model: UNet1d,
  items: Item[],
  modelFile: string,
  withScale: boolean,
): { outputs: Float64Array[]; scales: Float64Array[] | null; seconds: number } {
  let outputs: Float64Array[];
  let scales: Float64Array[] | null = null;
  let t0: number;
  if (isStackModel(model)) {
    // The model was trained on preprocessed stacks (alignment to level K, rescaling).
    const stacks = items.map((it) => preprocessStack(it.stack!).spectra);
    t0 = Date.now();
    outputs = denoiseStacks(model, stacks);
  } else {
    t0 = Date.now();
    const inputs = items.map((it) => it.spectrum.real);
    if (withScale) ({ spectra: outputs, scales } = denoiseWithScale(model, inputs, modelFile));
    else outputs = denoiseSpectra(model, inputs);
  }
  return { outputs, scales, seconds: (Date.now() - t0) / 1000 };
}

/** Writes OUT/<name>.denoised.csv and .jdx per input; returns the names used. */
function writeOutputs(
  items: Item[],
  outputs: Float64Array[],
  modelFile: string,
  out: string,
  used: Map<string, number>,
): string[] {
  const names: string[] = [];
  items.forEach((it, i) => {
    // Two inputs with the same name (from different folders) get distinct outputs.
    const count = used.get(it.name) ?? 0;
    used.set(it.name, count + 1);
    const name = count ? `${it.name}-${count + 1}` : it.name;
    names.push(name);
    const denoised: Spectrum = { ...it.spectrum, real: outputs[i]! };
    delete denoised.imag;
    const note = `denoised by tailor nmr denoise (model ${modelFile}) from ${it.spectrum.source}`;
    writeCsvSpectrum(join(out, `${name}.denoised.csv`), denoised, note);
    writeJcampSpectrum(join(out, `${name}.denoised.jdx`), denoised, `${name} (denoised)`);
  });
  return names;
}

/**
 * Writes OUT/<name>.scale.csv and .jdx (the per-point scale) and OUT/<name>.peaks.csv (the peaks
 * above 3 sigma of the input, each with its confidence); returns how many peaks there are, and how
 * many of them are low-confidence.
 */
function writeUncertainty(
  items: Item[],
  outputs: Float64Array[],
  scales: Float64Array[],
  names: string[],
  modelFile: string,
  out: string,
  calibration: ScaleCalibration | null,
): { low: number; total: number } {
  let low = 0;
  let total = 0;
  const factor = calibration?.factor ?? 1;
  const { rule, state, definition } = scaleTerms(calibration);
  items.forEach((it, i) => {
    const name = names[i]!;
    const s: Spectrum = { ...it.spectrum, real: scales[i]!.map((b) => b * factor) };
    delete s.imag;
    const note = `Laplace scale b of the error of the denoised spectrum (central 90 % interval: +- b ln 10; ${state}), tailor nmr denoise (model ${modelFile}) from ${it.spectrum.source}`;
    writeCsvSpectrum(join(out, `${name}.scale.csv`), s, note);
    writeJcampSpectrum(join(out, `${name}.scale.jdx`), s, `${name} (scale of the denoised spectrum)`);
    const x = it.spectrum.real;
    // The input's noise from first differences: robust to the lines, needs no baseline mask.
    const sigma = robustSigma(x, new Uint8Array(x.length).fill(1), 'diff');
    const peaks = confidentPeaks(outputs[i]!, s.real, 3 * sigma, 1, rule, sigma);
    const n = x.length;
    const ppm = (index: number) =>
      it.spectrum.ppmFirst + ((it.spectrum.ppmLast - it.spectrum.ppmFirst) * index) / (n - 1);
    const rows = peaks.map(
      (p) =>
        `${ppm(p.index).toFixed(6)},${p.height.toPrecision(7)},${p.scale.toPrecision(7)},${p.confidence.toFixed(3)},${p.low ? 'low' : ''}`,
    );
    low += peaks.filter((p) => p.low).length;
    total += peaks.length;
    writeFileAtomic(
      join(out, `${name}.peaks.csv`),
      `# peaks of ${name}.denoised above 3 sigma of the input (sigma ${sigma.toPrecision(5)}); confidence = ${definition}, low below ${rule.cut.toFixed(3)}; scale ${state}\n` +
        `ppm,height,scale,confidence,flag\n${rows.join('\n')}${rows.length ? '\n' : ''}`,
    );
  });
  return { low, total };
}

/** The confidence rule, whether the scale is calibrated, and what confidence means, in words. */
function scaleTerms(calibration: ScaleCalibration | null) {
  const rule = calibration?.confidence ?? { definition: 'interval' as const, cut: 1 };
  const state = calibration
    ? `calibrated: factor ${calibration.factor.toPrecision(4)} fitted on ${calibration.samples} samples of ${calibration.data}`
    : "uncalibrated: the head's raw scale, which overstates the error; run 'tailor nmr calibrate'";
  const definition =
    rule.definition === 'interval' ? 'height / (scale x ln 10)' : 'height / (3 sigma of the input)';
  return { rule, state, definition };
}

/** The line that says how many peaks the inputs have and how many are low-confidence. */
function uncertaintySummary(
  calibration: ScaleCalibration | null,
  peaks: { low: number; total: number },
): string {
  const { rule, state, definition } = scaleTerms(calibration);
  return `scale ${state}; peaks above 3 sigma of the inputs: ${peaks.total}, of which ${peaks.low} low-confidence (${definition} below ${rule.cut.toFixed(3)}; marked 'low' in <name>.peaks.csv)`;
}
