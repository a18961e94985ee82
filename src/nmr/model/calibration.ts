// The calibration of a model's scale head, stored with the model. The head learns the distance to
// the pseudo ground truth, which carries the noise of the levels fused into it, so its raw scale
// overstates the error against the truth; one factor fitted on held-out simulated samples
// (`tailor nmr calibrate`) corrects it. It lives in the checkpoint's sidecar (extra.calibration):
// the sidecar is one file rewritten atomically, so storing it never touches the weights or their
// checksum, and a retrained checkpoint (a new sidecar) drops a calibration that no longer fits.
import * as torch from '../../torch/index.js';
import { CheckpointError, InputError } from '../../util/errors.js';
import { CONFIDENCE_DEFINITIONS, type ConfidenceRule } from '../eval/confidence.js';

/** A scale calibration as stored in a checkpoint. */
export interface ScaleCalibration {
  /** Multiplies the head's scale: the central 90 % interval of a point is +- factor x b x ln 10. */
  factor: number;
  /** Fraction of the fitting points whose truth lies in the 90 % interval, with and without it. */
  coverage: number;
  rawCoverage: number;
  /** The simulated data set and how many of its first samples the factor was fitted on. */
  data: string;
  samples: number;
  /** How `nmr denoise --uncertainty` rates its peaks (chosen on the same samples). */
  confidence: ConfidenceRule;
  /** When it was fitted (ISO 8601). */
  fitted: string;
}

/** Calibration data that cannot give a factor: no truth, too few samples. */
export class NmrCalibrationDataError extends InputError {
  constructor(
    readonly data: string,
    problem: string,
    remedy: string,
  ) {
    super(`${data}: ${problem}; ${remedy}`);
  }
}

/** A calibration factor that is not a finite positive number. */
export class NmrCalibrationFactorError extends InputError {
  constructor(
    readonly factor: number,
    where: string,
  ) {
    super(
      `${where}: the scale factor ${factor} is not a finite positive number (the model's scale or output has NaN or infinite points on the calibration samples, or they have no error at all; check the model with 'tailor nmr yardstick' and calibrate on other samples)`,
    );
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The calibration stored in a checkpoint's extra data (null when none). */
export function storedCalibration(extra: unknown, where: string): ScaleCalibration | null {
  if (!isObject(extra) || extra.calibration === undefined) return null;
  const c = extra.calibration;
  const bad = (field: string, expected: string): never => {
    throw new CheckpointError(
      `${where}: extra.calibration${field}: expected ${expected} (the sidecar was edited; run 'tailor nmr calibrate' again)`,
    );
  };
  if (!isObject(c)) return bad('', 'an object');
  const positive = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v > 0;
  if (!positive(c.factor)) bad('.factor', 'a finite positive number');
  for (const k of ['coverage', 'rawCoverage'] as const)
    if (!(typeof c[k] === 'number' && c[k] >= 0 && c[k] <= 1)) bad(`.${k}`, 'a fraction');
  if (typeof c.data !== 'string') bad('.data', 'a path');
  if (!(Number.isSafeInteger(c.samples) && (c.samples as number) > 0)) bad('.samples', 'a sample count');
  const rule = c.confidence;
  if (
    !isObject(rule) ||
    !CONFIDENCE_DEFINITIONS.includes(rule.definition as ConfidenceRule['definition']) ||
    !positive(rule.cut)
  )
    bad('.confidence', `{ definition: ${CONFIDENCE_DEFINITIONS.join(' | ')}, cut: a positive number }`);
  if (typeof c.fitted !== 'string') bad('.fitted', 'a date');
  return c as unknown as ScaleCalibration;
}

/**
 * Stores a calibration in a checkpoint (any of its file names), replacing an earlier one; only
 * the sidecar is rewritten, atomically.
 * @throws NmrCalibrationFactorError when the factor is not a finite positive number.
 */
export function saveScaleCalibration(path: string, calibration: ScaleCalibration): void {
  if (!(Number.isFinite(calibration.factor) && calibration.factor > 0))
    throw new NmrCalibrationFactorError(calibration.factor, path);
  torch.updateCheckpointExtra(checkpointBase(path), (extra) => ({
    ...(isObject(extra) ? extra : {}),
    calibration,
  }));
}

/** The base path saveCheckpoint/loadCheckpoint take, from any of a checkpoint's file names. */
export function checkpointBase(path: string): string {
  for (const suffix of ['.optim.safetensors', '.safetensors', '.json'])
    if (path.endsWith(suffix)) return path.slice(0, -suffix.length);
  return path;
}
