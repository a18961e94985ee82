// The user's own multi-SNR measurements as training data: per sample, its K+1 experiments from
// the lowest to the highest SNR (Bruker, VnmrJ or Spinsolve folders, JCAMP-DX, NMRPipe or CSV; an experiment may be
// several files co-added). Given on the command line (`--experiments a,b+c,d`, one flag per
// sample) or as a JSON file validated by EXPERIMENTS_SCHEMA (published as
// configs/schema/nmr-experiments.schema.json).
import { readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { experimentSpectra, type ExperimentPath, type RealStackOptions } from '../realstack.js';
import { isPowerOfTwo } from '../fft.js';
import { NmrDataError } from '../io/errors.js';

const experiment = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
  error: 'expected a path, or a list of paths to co-add',
});

export const EXPERIMENTS_SCHEMA = z
  .strictObject({
    $schema: z.string().optional(),
    $comment: z.string().optional(),
    size: z
      .int()
      .min(64)
      .max(1 << 20)
      .refine(isPowerOfTwo, 'expected a power of two')
      .optional()
      .describe('spectrum points for FIDs (default: twice the FID length, rounded to a power of two)'),
    lb: z.number().min(0).max(100).optional().describe('exponential line broadening in Hz for FIDs'),
    phase: z.enum(['params', 'auto']).optional().describe('phase from the parameter files or automatic'),
    ppm: z
      .tuple([z.number(), z.number()])
      .optional()
      .describe('keep only this ppm window [low, high] (e.g. leave out the solvent region)'),
    axis: z.enum(['ppm', 'index']).optional().describe("'index' keeps points as they are"),
    row: z.int().min(0).optional().describe('row of pseudo-2D data (ser, arrayed fid) for paths without #R'),
    samples: z
      .array(
        z.strictObject({
          name: z.string().min(1).optional(),
          experiments: z
            .array(experiment)
            .min(2)
            .describe(
              'K+1 experiments of this sample, lowest SNR first; a list co-adds its files; PATH#R is row R of a pseudo-2D data set',
            ),
        }),
      )
      .min(1)
      .max(10000),
  })
  .describe('tailor nmr: per sample, its multi-SNR experiments (paths relative to this file)');

/**
 * The JSON file that lists, per sample, its experiments from low to high SNR, with paths
 * relative to the file (`tailor nmr ... --experiments file.json`).
 */
export type ExperimentsFile = z.infer<typeof EXPERIMENTS_SCHEMA>;

/** One sample of an experiments file: its name and its experiments, low to high SNR. */
export interface ExperimentSample {
  name: string;
  experiments: ExperimentPath[];
}

/** An experiments file as read: its samples and the options that bring each onto one stack. */
export interface ExperimentsSpec {
  samples: ExperimentSample[];
  options: RealStackOptions;
}

/** zod issues as `file: field.path: message` lines. */
export function formatIssues(file: string, error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const path = i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
      return `${file}: ${path ? path.replace(/^\./, '') : 'top level'}: ${i.message}`;
    })
    .join('\n');
}

function sampleName(experiments: ExperimentPath[], i: number): string {
  const last = experiments[experiments.length - 1]!;
  const p = typeof last === 'string' ? last : last[0]!;
  return `${basename(dirname(resolve(p)))}-${basename(p)}`.replace(/[^\w.-]+/g, '_') || `sample${i}`;
}

/** Reads and validates an experiments file; relative paths are resolved against its folder. */
export function readExperimentsFile(file: string): ExperimentsSpec {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new NmrDataError(`${file}: cannot read the experiments file (${(e as Error).message})`, { cause: e });
  }
  const parsed = EXPERIMENTS_SCHEMA.safeParse(raw);
  if (!parsed.success) throw new NmrDataError(formatIssues(file, parsed.error));
  const f = parsed.data;
  const base = dirname(resolve(file));
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(base, p));
  const samples = f.samples.map((s, i) => {
    const experiments = s.experiments.map((e) => (typeof e === 'string' ? abs(e) : e.map(abs)));
    return { name: s.name ?? sampleName(experiments, i), experiments };
  });
  checkLevels(samples, file);
  const options: RealStackOptions = {};
  if (f.size !== undefined) options.size = f.size;
  if (f.lb !== undefined) options.apodization = { kind: 'exponential', lbHz: f.lb };
  if (f.phase !== undefined) options.phase = f.phase;
  if (f.ppm !== undefined) options.ppmRange = f.ppm;
  if (f.axis !== undefined) options.axis = f.axis;
  if (f.row !== undefined) options.row = f.row;
  return { samples, options };
}

/** `a,b+c,d`: experiments separated by commas, co-added files joined by '+'. */
export function parseExperimentsArg(arg: string, i: number): ExperimentSample {
  const experiments = arg.split(',').map((e) => {
    const files = e
      .split('+')
      .map((p) => p.trim())
      .filter(Boolean);
    if (files.length === 0) throw new NmrDataError(`--experiments '${arg}': an empty experiment`);
    return files.length === 1 ? files[0]! : files;
  });
  if (experiments.length < 2)
    throw new NmrDataError(
      `--experiments '${arg}': a sample needs at least two experiments (lowest SNR first, separated by commas)`,
    );
  return { name: sampleName(experiments, i), experiments };
}

/**
 * Checks that every multi-SNR sample has the same number of experiments (levels).
 * @param where Names the source in the message (a file or flag).
 * @throws {@link NmrDataError} naming the first sample whose count differs.
 */
export function checkLevels(samples: ExperimentSample[], where: string): void {
  const K1 = samples[0]!.experiments.length;
  samples.forEach((s, i) => {
    if (s.experiments.length !== K1)
      throw new NmrDataError(
        `${where}: sample ${i} (${s.name}) has ${s.experiments.length} experiments, sample 0 has ${K1}; every sample needs the same K+1`,
      );
  });
}

/** Loads every sample's experiments onto one axis per sample (processing as in the options). */
export function loadExperimentSamples(spec: ExperimentsSpec): {
  name: string;
  spectra: Float64Array[];
  ppmFirst: number;
  ppmLast: number;
  refMHz: number;
  sources: string[];
  scans: (number | undefined)[];
}[] {
  return spec.samples.map((s) => ({ name: s.name, ...experimentSpectra(s.experiments, spec.options) }));
}

/** The JSON Schema of the experiments file (written to configs/schema/ by scripts/gen-schemas.mjs). */
export function experimentsJsonSchema(): unknown {
  return z.toJSONSchema(EXPERIMENTS_SCHEMA, { io: 'input' });
}

/** An experiments file for a spec (absolute paths), with processing fields overriding the spec's. */
export function experimentsFileOf(
  spec: ExperimentsSpec,
  override: Partial<ExperimentsFile> = {},
): ExperimentsFile {
  const o = spec.options;
  const file: ExperimentsFile = {
    samples: spec.samples.map((s) => ({
      name: s.name,
      experiments: s.experiments.map((e) => (typeof e === 'string' ? resolve(e) : e.map((p) => resolve(p)))),
    })),
  };
  if (o.size !== undefined) file.size = o.size;
  if (o.apodization?.kind === 'exponential') file.lb = o.apodization.lbHz;
  if (o.phase !== undefined) file.phase = o.phase;
  if (o.ppmRange !== undefined) file.ppm = o.ppmRange;
  if (o.axis !== undefined) file.axis = o.axis;
  if (o.row !== undefined) file.row = o.row;
  return EXPERIMENTS_SCHEMA.parse({ ...file, ...override });
}
