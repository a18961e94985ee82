// `tailor nmr yardstick`: the single-scan yardstick (src/nmr/eval/yardstick.ts) for trained models
// and the single-input baselines on held-out samples: simulated data sets (against the truth and
// against the held-out level K) or the user's own measurements (against level K).
import { CliError, asUserError } from '../errors.js';
import { defineCommand } from '../command.js';
import { choiceListArg, numberArg, numberListArg } from '../args.js';
import {
  datasetYardSamples,
  experimentYardSamples,
  runYardstick,
  type YardMethod,
  type YardSample,
  SINGLE_BASELINES,
  parseExperimentsArg,
  readExperimentsFile,
  checkLevels,
  loadDenoiserInfo,
  denoiseSpectra,
  denoiseStacks,
  isStackModel,
  blendFidelity,
  NmrFidelityError,
  denoiseWithScale,
  type PreprocessResult,
  type UNet1d,
  type ScaleCalibration,
} from '../../nmr/index.js';
import { formatYardstick } from '../../report/nmr-yardstick.js';
import { writeFileAtomic, writeJsonAtomic } from '../../util/fs.js';
import { resolve } from 'node:path';

const HELP = `usage: tailor nmr yardstick (--data DIR | --samples FILE.json | --experiments LIST)... [--model [NAME=]FILE]...

Scores the denoised lowest-SNR scan x0 of held-out samples against (a) the true spectrum (simulated
data) and (b) the sample's highest-SNR measurement, level K, which no method sees; next to the raw
levels 0..K. Reports, per method, the level k whose raw spectrum it matches in energy SNR and in
peak F1, and the measurement time that saves (T^(2k)); each candidate's peak picking over a sweep
of thresholds (precision-recall area, F1 at a threshold tuned on the tuning samples, recall at 1
and 0.2 false peaks per spectrum); for a model with a scale head, how often the truth lies in its
central 90 % interval (raw, with a factor fitted on the tuning samples, and with the factor that
'tailor nmr calibrate' stored in the checkpoint) and how well its peak confidence tells true from
false peaks. Baselines see only x0 (Savitzky-Golay, TV
and Cadzow are tuned on the first --validation fraction of the samples, which is not scored);
fusion and stack models use every level and are scored against the truth only.

options:
      --data DIR          a data set written by 'tailor nmr simulate' (repeatable; same K+1)
      --samples FILE      an experiments JSON file (configs/schema/nmr-experiments.schema.json)
      --experiments LIST  one sample's experiments, lowest SNR first: a,b+c,d ('+' co-adds files)
      --model [NAME=]FILE a checkpoint from 'tailor nmr train' (repeatable)
      --fidelity LIST     also score each single-spectrum model blended with its input,
                          F x x0 + (1 - F) x denoised, for each F of the comma list (0..1),
                          as 'NAME f=F' (the curve of 'tailor nmr denoise --fidelity')
      --baselines LIST    comma list of ${SINGLE_BASELINES.join(', ')} (default all):
                          the scan itself, Savitzky-Golay, the exponential matched filter,
                          wavelet shrinkage with cycle spinning, total variation, Cadzow
      --no-fusion         leave out the fusion of all levels (inverse-variance weights)
      --validation F      fraction of samples that tunes the baselines (default 0.2; 0 = defaults)
      --max-samples N     use only the first N samples of each --data
      --ratio T           T of the time factor (default: the data set's, else the noise estimate)
      --json FILE         also write the report as JSON
      --out FILE          also write the tables (Markdown)
  -h, --help              this text`;

export const run = defineCommand({
  help: HELP,
  options: {
    data: { type: 'string', multiple: true },
    samples: { type: 'string' },
    experiments: { type: 'string', multiple: true },
    model: { type: 'string', multiple: true },
    baselines: { type: 'string' },
    'no-fusion': { type: 'boolean' },
    validation: { type: 'string' },
    'max-samples': { type: 'string' },
    ratio: { type: 'string' },
    json: { type: 'string' },
    out: { type: 'string' },
    fidelity: { type: 'string' },
  },
  helpOnParseError: true,
  run: ({ values }) => {
    const maxSamples = numberArg('--max-samples', values['max-samples'], { integer: true, min: 1 });
    const validation = numberArg('--validation', values.validation, { min: 0, below: 1 });
    let ratio = numberArg('--ratio', values.ratio, { positive: true });
    const fidelities = numberListArg('--fidelity', values.fidelity, {}) ?? [];
    const badF = fidelities.find((v) => !(v >= 0 && v <= 1));
    if (badF !== undefined) throw new NmrFidelityError(badF);
    const baselines =
      values.baselines === undefined
        ? [...SINGLE_BASELINES]
        : choiceListArg('--baselines', values.baselines, SINGLE_BASELINES);
    const samples: YardSample[] = [];
    try {
      for (const dir of values.data ?? []) {
        const d = datasetYardSamples(dir, maxSamples);
        samples.push(...d.samples);
        ratio ??= d.ratio;
      }
      if (values.samples) samples.push(...experimentYardSamples(readExperimentsFile(values.samples)));
      if (values.experiments?.length) {
        const list = values.experiments.map((a, i) => parseExperimentsArg(a, i));
        checkLevels(list, '--experiments');
        samples.push(...experimentYardSamples({ samples: list, options: {} }));
      }
    } catch (e) {
      // The experiments readers report some problems as plain Errors.
      throw asUserError(e);
    }
    if (samples.length === 0)
      throw new CliError(`give held-out samples (--data, --samples or --experiments)\n\n${HELP}`);
    const K1 = samples[0]!.spectra.length;
    const bad = samples.find((s) => s.spectra.length !== K1);
    if (bad) throw new CliError(`${bad.name}: ${bad.spectra.length} levels, ${samples[0]!.name} has ${K1}`);
    const methods: YardMethod[] = [];
    const calibrations: { path: string; calibration: ScaleCalibration }[] = [];
    const disposers: (() => void)[] = [];
    if (values.model?.length) {
      for (const spec of values.model) {
        const eq = spec.indexOf('=');
        const name = eq > 0 ? spec.slice(0, eq) : 'model';
        const path = eq > 0 ? spec.slice(eq + 1) : spec;
        let model: UNet1d;
        let calibration: ScaleCalibration | null;
        try {
          ({ model, calibration } = loadDenoiserInfo(path));
        } catch (e) {
          throw asUserError(e);
        }
        disposers.push(() => model.dispose());
        if (isStackModel(model)) {
          if (model.config.inputLevels !== K1)
            throw new CliError(
              `--model ${path}: takes ${model.config.inputLevels} levels, the samples have ${K1}`,
            );
          methods.push({ name, stack: true, run: (pre) => denoiseStacks(model, [pre.spectra])[0]! });
        } else methods.push(...singleMethods(name, model, fidelities, calibration));
        if (model.scale && calibration) calibrations.push({ path, calibration });
      }
    }
    try {
      const report = runYardstick(samples, {
        baselines,
        fusion: !values['no-fusion'],
        methods,
        ...(validation !== undefined ? { validationFraction: validation } : {}),
        ...(ratio !== undefined ? { ratio } : {}),
        onProgress: (done, total) => {
          if (process.stderr.isTTY) process.stderr.write(`\r${done}/${total}`);
        },
      });
      if (process.stderr.isTTY) process.stderr.write('\n');
      warnSeen(calibrations, values.data ?? [], report.validationSamples);
      const text = formatYardstick(report);
      console.log(text);
      if (values.out) writeFileAtomic(values.out, text);
      if (values.json) writeJsonAtomic(values.json, report);
      return 0;
    } finally {
      for (const d of disposers) d();
    }
  },
});

/**
 * A single-spectrum model, and its blends with x0 at each fidelity (one model run per sample);
 * a model with a scale head also gives the scale whose coverage the yardstick checks.
 */
function singleMethods(
  name: string,
  model: UNet1d,
  fidelities: number[],
  calibration: ScaleCalibration | null,
): YardMethod[] {
  const cache = new WeakMap<PreprocessResult, { y: Float64Array; scale: Float64Array | null }>();
  const outputs = (pre: PreprocessResult) => {
    let r = cache.get(pre);
    if (!r) {
      const x = [pre.spectra[0]!];
      if (model.scale) {
        const out = denoiseWithScale(model, x, name);
        r = { y: out.spectra[0]!, scale: out.scales[0]! };
      } else r = { y: denoiseSpectra(model, x)[0]!, scale: null };
      cache.set(pre, r);
    }
    return r;
  };
  return [
    {
      name,
      stack: false,
      run: (pre) => outputs(pre).y,
      ...(model.scale ? { scale: (pre: PreprocessResult) => outputs(pre).scale! } : {}),
      ...(model.scale && calibration ? { calibration } : {}),
    },
    ...fidelities.map((f) => ({
      name: `${name} f=${f}`,
      stack: false,
      run: (pre: PreprocessResult) => blendFidelity(pre.spectra[0]!, outputs(pre).y, f),
    })),
  ];
}

/**
 * Warns when a model's stored calibration was fitted on samples this run scores (the same data
 * set, more samples than it tunes on): its coverage would then be measured on its own fit.
 */
function warnSeen(
  calibrations: { path: string; calibration: ScaleCalibration }[],
  data: string[],
  tuning: number,
): void {
  const first = data[0];
  for (const { path, calibration } of calibrations) {
    if (first === undefined || resolve(first) !== resolve(calibration.data) || calibration.samples <= tuning)
      continue;
    console.error(
      `tailor: warning: ${path}: its scale factor was fitted on the first ${calibration.samples} samples of ${calibration.data}, of which the yardstick scores ${calibration.samples - tuning}; calibrate on the tuning share only (tailor nmr calibrate without --samples) for an honest coverage`,
    );
  }
}
