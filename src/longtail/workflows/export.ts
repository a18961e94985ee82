// A trained run as an ONNX model file: the image normalization, the system with its combination
// of experts baked in (systems/onnx.ts), logits and probabilities as named outputs, a dynamic
// batch axis, and metadata a deployment needs (class names, normalization, training prior,
// tailor version, config hash). The combination is the run's own, or what a `tailor predict`
// summary chose (SADE's aggregation weights, prior matching's weights or PRL preference), with
// its estimated class prior as a logit bias on request.
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { onnx } from '../../torch/index.js';
import { InputError } from '../../util/errors.js';
import { readBoundedFile, writeFileAtomic } from '../../util/fs.js';
import { NORMALIZATION } from '../data/pipelines.js';
import { classPrior } from '../losses/priors.js';
import { Preference, PreferenceError } from '../types/preference.js';
import { systemToOnnx, type OnnxCombination, type System } from '../systems/index.js';
import { scoreBasis } from '../adapt/baselines.js';
import type { LoadedRun } from './load.js';

/** A test-time file (a `tailor predict` summary) that cannot say what to bake in. */
export class TestTimeFileError extends InputError {}

/** What to export of a run. */
export interface OnnxExportOptions {
  /** tailor's version, written into the model. */
  version: string;
  /** PRL runs: the preference whose generated experts are baked in (default: uniform). */
  preference?: Preference | readonly number[];
  /**
   * A `tailor predict` summary (`FILE.summary.json`): its chosen expert weights or preference are
   * baked in instead of the run's own combination.
   */
  testTime?: string;
  /** Adds log(estimated prior / source prior) of the test-time file to the logits. */
  priorBias?: boolean;
}

/** The exported model and what it holds. */
export interface OnnxExport {
  bytes: Uint8Array;
  /** The ONNX metadata_props, before encoding (values that are not strings become JSON). */
  metadata: Record<string, unknown>;
  /** The system exported (PRL: at the preference baked in). */
  system: System;
  combination: OnnxCombination;
  /** [channels, height, width] of the input images. */
  inputShape: [number, number, number];
}

/** What a test-time file chose: expert weights, a PRL preference, an estimated class prior. */
export interface TestTimeChoice {
  weights?: number[];
  preference?: number[];
  prior?: number[];
}

/** Reads a `tailor predict` summary's choice: expert weights, preference, estimated prior. */
export function readTestTimeChoice(file: string): TestTimeChoice {
  let parsed: unknown;
  try {
    parsed = JSON.parse(
      readBoundedFile(
        file,
        64 * 1024 * 1024,
        'a test-time summary',
        (m) => new TestTimeFileError(m),
      ).toString('utf8'),
    );
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new TestTimeFileError(`${file}: not a JSON file (${(error as Error).message})`);
  }
  const summary = parsed as { kind?: unknown; chosen?: unknown; estimated_prior?: unknown };
  if (
    summary === null ||
    typeof summary !== 'object' ||
    typeof summary.chosen !== 'object' ||
    !summary.chosen
  )
    throw new TestTimeFileError(
      `${file}: no 'chosen' section; give the FILE.summary.json that 'tailor predict --adapt ...' wrote`,
    );
  const chosen = summary.chosen as Record<string, unknown>;
  const numbers = (v: unknown, field: string): number[] | undefined => {
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'number' && Number.isFinite(x)))
      throw new TestTimeFileError(`${file}: ${field} must be a list of finite numbers`);
    return v as number[];
  };
  const weights = numbers(chosen.weights, 'chosen.weights');
  const preference = numbers(chosen.preference, 'chosen.preference');
  const prior = numbers(chosen.prior, 'chosen.prior') ?? numbers(summary.estimated_prior, 'estimated_prior');
  return {
    ...(weights ? { weights } : {}),
    ...(preference ? { preference } : {}),
    ...(prior ? { prior } : {}),
  };
}

/** The run's system and combination as the options ask (errors name the flag's problem). */
function chooseCombination(
  loaded: LoadedRun,
  options: OnnxExportOptions,
): { system: System; combination: OnnxCombination; choice: TestTimeChoice | null } {
  let system = loaded.session.system;
  const choice = options.testTime ? readTestTimeChoice(options.testTime) : null;
  if (choice?.preference && options.preference)
    throw new TestTimeFileError(`${options.testTime} chose a preference already; leave out the preference`);
  const preference = options.preference ?? choice?.preference;
  if (preference) {
    if (system.kind !== 'prl')
      throw new PreferenceError('applies to PRL runs only (this run has no hypernetwork to evaluate)');
    system = system.at(Preference.of(preference, system.experts));
  }
  const combination: OnnxCombination = {};
  if (choice?.weights) {
    if (choice.weights.length !== system.experts)
      throw new TestTimeFileError(
        `${options.testTime}: ${choice.weights.length} expert weights for a run of ${system.experts} experts`,
      );
    combination.weights = choice.weights;
  }
  if (options.priorBias) {
    if (!choice?.prior)
      throw new TestTimeFileError(
        `${options.testTime ?? 'the prior bias'}: no estimated prior to add; give the summary of a 'tailor predict' run`,
      );
    combination.bias = priorBias(system, loaded.session.data.trainCounts, choice.prior, combination.weights);
  }
  return { system, combination, choice };
}

/**
 * log q - log(source prior) per class, as `tailor predict` shifts the scores: for a run whose
 * experts carry known log-prior offsets (logit-adjusted losses) the weighted offsets are removed
 * first, so the shift applies to balanced scores as there.
 */
function priorBias(
  system: System,
  trainCounts: number[],
  q: number[],
  weights?: readonly number[],
): number[] {
  const classes = trainCounts.length;
  if (q.length !== classes)
    throw new TestTimeFileError(`an estimated prior of ${q.length} classes for ${classes}`);
  const basis = scoreBasis(system, trainCounts);
  const r = system.kind === 'prl' ? system.preference.weights : null;
  const w = weights ?? r ?? new Array<number>(system.experts).fill(1 / system.experts);
  return q.map((v, c) => {
    const offset = basis.offsets ? basis.offsets.reduce((s, o, e) => s + w[e]! * o[c]!, 0) : 0;
    return Math.log(Math.max(v, 1e-12)) - Math.log(Math.max(basis.sourcePrior[c]!, 1e-12)) - offset;
  });
}

/** JSON with sorted keys, so that the same config always hashes the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/**
 * The run as an ONNX model (opset 17): input `image` [batch, C, H, W] in [0, 1] (normalized
 * inside the graph with the run's mean and std), outputs `logits` and `probabilities` (softmax)
 * [batch, classes]. Errors: PreferenceError, TestTimeFileError, OnnxExportError.
 */
export function runToOnnx(loaded: LoadedRun, options: OnnxExportOptions): OnnxExport {
  const { session } = loaded;
  const { system, combination, choice } = chooseCombination(loaded, options);
  const d = session.data;
  const [c, h, w] = d.test.shape;
  const norm = NORMALIZATION[d.pipeline];
  const classes = d.trainCounts.length;
  const g = new onnx.OnnxGraph();
  const image = g.input('image', ['batch', c, h, w]);
  const column = (values: number[], name: string) =>
    g.constant(name, { data: Float32Array.from(values), dims: [1, c, 1, 1] });
  const normalized = g.node('Div', [
    g.node('Sub', [image, column(norm.mean, 'normalization.mean')]),
    column(norm.std, 'normalization.std'),
  ]);
  const logits = systemToOnnx(system, g, normalized, combination);
  g.output('logits', logits, ['batch', classes]);
  g.output('probabilities', g.node('Softmax', [logits], { axis: { int: 1 } }), ['batch', classes]);
  const classNames = 'list' in d.train ? d.train.list.classNames : d.train.classNames;
  const metadata: Record<string, unknown> = {
    tailor_version: options.version,
    config_name: session.config.name,
    config_hash: `sha256:${createHash('sha256').update(canonical(session.config)).digest('hex')}`,
    dataset: d.dataset,
    loss: session.config.loss.type,
    system: system.kind,
    experts: system.experts,
    input: `image: float32 [batch, ${c}, ${h}, ${w}], pixel values in [0, 1]; the graph normalizes`,
    normalization: {
      mean: norm.mean,
      std: norm.std,
      applied: 'in the graph: (image - mean) / std per channel',
    },
    class_names: classNames ?? Array.from({ length: classes }, (_, k) => String(k)),
    training_prior: classPrior(d.trainCounts),
    combination: {
      weights: combination.weights ?? (system.kind === 'prl' ? system.preference.weights : 'mean'),
      ...(system.kind === 'prl' ? { preference: system.preference.weights } : {}),
      ...(combination.bias ? { logit_bias: combination.bias, estimated_prior: choice?.prior } : {}),
      ...(options.testTime ? { test_time_file: basename(options.testTime) } : {}),
    },
    // The run's name, not its path: the file is meant to leave the machine it was made on.
    run: basename(loaded.runDir),
    ...(loaded.epoch !== undefined ? { epoch: loaded.epoch } : {}),
  };
  const bytes = g.encode({
    producerVersion: options.version,
    graphName: session.config.name,
    docString: `tailor ${system.kind} model of ${session.config.name}: image -> logits, probabilities`,
    metadata,
  });
  return { bytes, metadata, system, combination, inputShape: [c, h, w] };
}

/** {@link runToOnnx}, written to `out` atomically (nothing is left partly written). */
export function exportRunOnnx(loaded: LoadedRun, out: string, options: OnnxExportOptions): OnnxExport {
  const exported = runToOnnx(loaded, options);
  writeFileAtomic(out, exported.bytes);
  return exported;
}
