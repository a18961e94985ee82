// Applying a trained U-Net: loading it from a checkpoint (the architecture is stored in the
// weights file's metadata, so a checkpoint is self-describing), denoising spectra in batches, and
// a Denoiser for the evaluation code (src/nmr/eval/evaluate.ts extraMethods).
import * as torch from '../../torch/index.js';
import { UNet1d, resolveUNetConfig, type UNetConfig } from './unet.js';
import type { Denoiser } from '../eval/evaluate.js';
import { CheckpointError, InputError } from '../../util/errors.js';
import type { TrainingDomain } from './domain.js';
import { checkSpectra, checksOf } from '../arguments.js';
import { ArgumentError } from '../../util/arguments.js';
import { checkpointBase, storedCalibration, type ScaleCalibration } from './calibration.js';

export { checkpointBase };

export const MODEL_FORMAT = 'tailor-nmr-unet';

export function modelMetadata(config: UNetConfig, domain?: TrainingDomain): Record<string, string> {
  return {
    format: MODEL_FORMAT,
    model: JSON.stringify(config),
    ...(domain ? { domain: JSON.stringify(domain) } : {}),
  };
}

/** Loads a model from a checkpoint written by `tailor nmr train` (last.json, best.json or their .safetensors). */
export function loadDenoiser(path: string): UNet1d {
  checksOf('loadDenoiser').string(path, 'path');
  return loadDenoiserInfo(path).model;
}

/**
 * The model, what it was trained on (null for checkpoints written before that was stored) and the
 * calibration of its scale head (null until `tailor nmr calibrate` stored one).
 */
export function loadDenoiserInfo(path: string): {
  model: UNet1d;
  domain: TrainingDomain | null;
  calibration: ScaleCalibration | null;
} {
  const ck = torch.loadCheckpoint(checkpointBase(path));
  try {
    if (ck.metadata.format !== MODEL_FORMAT || !ck.metadata.model)
      throw new CheckpointError(
        `${path}: not an NMR denoising model (metadata format '${ck.metadata.format ?? ''}'); give a checkpoint written by 'tailor nmr train'`,
      );
    let config: UNetConfig;
    try {
      config = resolveUNetConfig(JSON.parse(ck.metadata.model) as Partial<UNetConfig>, `${path}: model`);
    } catch (e) {
      throw new CheckpointError(
        `${path}: the stored model description is invalid (${(e as Error).message})`,
        {
          cause: e,
        },
      );
    }
    let domain: TrainingDomain | null = null;
    if (ck.metadata.domain) {
      try {
        domain = JSON.parse(ck.metadata.domain) as TrainingDomain;
      } catch {
        throw new CheckpointError(`${path}: the stored training domain is not valid JSON`);
      }
    }
    const calibration = storedCalibration(ck.extra, ck.sidecar ?? path);
    const model = new UNet1d(config);
    torch.restoreFrom(ck, 'the weights', () => model.loadStateDict(ck.weights));
    return { model: model.eval(), domain, calibration };
  } finally {
    torch.dispose([ck.weights, ck.optimizer?.state]);
  }
}

/** A JavaScript caller's model, spectra and batch size, checked before any work. */
function checkDenoiseArguments(fn: string, model: unknown, spectra: unknown, batch: unknown): void {
  const c = checksOf(fn);
  if (!(model instanceof UNet1d)) c.fail('model', 'a UNet1d (from loadDenoiser or new UNet1d)', model);
  checkSpectra(c, spectra, 'spectra');
  c.integer(batch, 'batch', { min: 1, max: 4096 });
}

/** Denoises spectra (any lengths) with the model; returns float64 copies. */
export function denoiseSpectra(model: UNet1d, spectra: ArrayLike<number>[], batch = 8): Float64Array[] {
  checkDenoiseArguments('denoiseSpectra', model, spectra, batch);
  return runSpectra(model, spectra, batch, false).spectra;
}

/** Asked for the scale of a model trained without the scale head. */
export class NmrUncertaintyError extends InputError {
  constructor(readonly model: string) {
    super(
      `${model}: this model was trained without the scale head, so it cannot say how sure it is of each point (train one with model.scaleHead true and loss.nll > 0, for example configs/nmr_seed_scale.json, or leave out the uncertainty request)`,
    );
  }
}

/**
 * Denoises spectra and returns, beside each, the per-point Laplace scale b of its error (in the
 * spectrum's units): the central 90 % interval of a point is +- b ln 10.
 * @throws NmrUncertaintyError when the model has no scale head (`name` names it).
 */
export function denoiseWithScale(
  model: UNet1d,
  spectra: ArrayLike<number>[],
  name = 'the model',
  batch = 8,
): { spectra: Float64Array[]; scales: Float64Array[] } {
  checkDenoiseArguments('denoiseWithScale', model, spectra, batch);
  if (!model.scale) throw new NmrUncertaintyError(name);
  const r = runSpectra(model, spectra, batch, true);
  return { spectra: r.spectra, scales: r.scales! };
}

function runSpectra(
  model: UNet1d,
  spectra: ArrayLike<number>[],
  batch: number,
  withScale: boolean,
): { spectra: Float64Array[]; scales: Float64Array[] | null } {
  const out: Float64Array[] = [];
  const scales: Float64Array[] = [];
  model.eval();
  // Spectra of one length go through together; others one at a time.
  let i = 0;
  while (i < spectra.length) {
    const L = spectra[i]!.length;
    let j = i;
    while (j < spectra.length && j - i < batch && spectra[j]!.length === L) j++;
    const data = new Float32Array((j - i) * L);
    for (let k = i; k < j; k++) data.set(Float32Array.from(spectra[k]!), (k - i) * L);
    const [result, logScale] = torch.noGrad(() =>
      torch.tidy(() => {
        const x = torch.tensor(data, { shape: [j - i, L] });
        if (!withScale) return [model.forward(x).toFloat32Array(), null] as const;
        const r = model.forwardWithScale(x);
        return [r.mean.toFloat32Array(), r.logScale.toFloat32Array()] as const;
      }),
    );
    for (let k = i; k < j; k++) {
      out.push(Float64Array.from(result.subarray((k - i) * L, (k - i + 1) * L)));
      if (logScale) scales.push(Float64Array.from(logScale.subarray((k - i) * L, (k - i + 1) * L), Math.exp));
    }
    i = j;
  }
  return { spectra: out, scales: withScale ? scales : null };
}

/**
 * Denoises aligned, rescaled stacks ([K+1][L] each, level 0 first, one length per stack) with a
 * stack model (inputLevels = K + 1); returns one float64 spectrum per stack.
 */
export function denoiseStacks(model: UNet1d, stacks: ArrayLike<number>[][], batch = 8): Float64Array[] {
  const c = checksOf('denoiseStacks');
  if (!(model instanceof UNet1d)) c.fail('model', 'a UNet1d (from loadDenoiser or new UNet1d)', model);
  c.array(stacks, 'stacks', { minLength: 1 }).forEach((s, k) => checkSpectra(c, s, `stacks[${k}]`));
  c.integer(batch, 'batch', { min: 1, max: 4096 });
  const G = model.config.inputLevels;
  const out: Float64Array[] = [];
  model.eval();
  let i = 0;
  while (i < stacks.length) {
    const L = stacks[i]![0]!.length;
    let j = i;
    while (j < stacks.length && j - i < batch && stacks[j]![0]!.length === L) j++;
    const data = new Float32Array((j - i) * G * L);
    for (let k = i; k < j; k++) {
      const stack = stacks[k]!;
      if (stack.length !== G || stack.some((x) => x.length !== L))
        throw new ArgumentError(
          `denoiseStacks: the model takes ${G} levels of one length; stack ${k} has ${stack.length} levels of lengths ${stack.map((x) => x.length).join(', ')}`,
        );
      stack.forEach((x, g) => data.set(Float32Array.from(x), ((k - i) * G + g) * L));
    }
    const result = torch.noGrad(() =>
      torch.tidy(() => model.forward(torch.tensor(data, { shape: [j - i, G, L] })).toFloat32Array()),
    );
    for (let k = i; k < j; k++) out.push(Float64Array.from(result.subarray((k - i) * L, (k - i + 1) * L)));
    i = j;
  }
  return out;
}

/** Whether the model denoises a whole multi-SNR stack (scored once per sample) or one spectrum. */
export function isStackModel(model: UNet1d): boolean {
  return model.config.inputLevels > 1;
}

/**
 * The model as an evaluation method: a single-spectrum model is applied to each (aligned,
 * rescaled) input level; a stack model to the whole preprocessed stack (pass its name in
 * EvaluateOptions.stackMethods so that it is scored once, as level 0).
 */
export function modelDenoiser(model: UNet1d): Denoiser {
  if (isStackModel(model)) return (_input, pre) => denoiseStacks(model, [pre.spectra])[0]!;
  return (input) => denoiseSpectra(model, [input])[0]!;
}

/** A fidelity outside [0, 1] (see {@link blendFidelity}). */
export class NmrFidelityError extends InputError {
  constructor(readonly fidelity: number | string) {
    super(
      `fidelity ${fidelity} is outside [0, 1] (0 keeps the model's output, 1 the input; give a value in between, for example 0.2, to keep more of the weak peaks)`,
    );
  }
}

/**
 * Trades smoothing for faithfulness to the measurement: f x input + (1 - f) x denoised, point by
 * point. The residual input - denoised holds the noise the model removed and any weak line it
 * removed with it; a linear blend returns the fraction f of both, so the output's noise is about
 * f times the input's (plus the model's own error) and a weak line keeps at least the fraction f
 * of its height. The ends are exact: f = 0 is the model's output, f = 1 the input.
 * @throws NmrFidelityError when f is not a number in [0, 1].
 */
export function blendFidelity(
  input: ArrayLike<number>,
  denoised: ArrayLike<number>,
  f: number,
): Float64Array {
  if (!(f >= 0 && f <= 1)) throw new NmrFidelityError(f);
  if (input.length !== denoised.length)
    throw new RangeError(`blendFidelity: input of ${input.length} points, output of ${denoised.length}`);
  return Float64Array.from(denoised, (d, i) => f * input[i]! + (1 - f) * d);
}
