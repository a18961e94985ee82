// `tailor nmr calibrate --model CHECKPOINT --data DIR [--samples N]`: fits the factor on a scale
// head's scale that makes its central 90 % interval cover 90 % of the truth, and the peak
// confidence rule, on the first samples of a simulated data set, and stores both in the
// checkpoint (its sidecar, rewritten atomically) for `nmr denoise --uncertainty` and the
// yardstick. A command of its own rather than a yardstick flag: the yardstick scores many methods
// and models and writes nothing back; this runs one model on the tuning samples only.
import { CliError, asUserError } from '../errors.js';
import { defineCommand } from '../command.js';
import { numberArg } from '../args.js';
import { useDevice } from '../runtime.js';
import {
  Dataset,
  calibrateScale,
  datasetYardSamples,
  loadDenoiserInfo,
  saveScaleCalibration,
  NmrUncertaintyError,
  MIN_CALIBRATION_SAMPLES,
  type CalibrationResult,
} from '../../nmr/index.js';
import { writeJsonAtomic } from '../../util/fs.js';

const HELP = `usage: tailor nmr calibrate --model CHECKPOINT --data DIR [--samples N]

Calibrates the scale head of a model trained with model.scaleHead: the head learns the distance
to the pseudo ground truth, which carries the noise of the fused levels, so its raw scale
overstates the error. On the first N samples of a data set written by 'tailor nmr simulate'
(preprocessed and denoised as the yardstick does), it fits the factor on the scale whose central
90 % interval, +- factor x b x ln 10, holds 90 % of the points' truth, and the peak-confidence
rule that best ranks the model's true peaks above its false ones there ('interval': height /
(factor x b x ln 10), low below 1; 'snr': height / (3 sigma of the input), low below a cut
chosen there). Both are stored in CHECKPOINT (its JSON sidecar, rewritten atomically; the weights
are not touched); 'tailor nmr denoise --uncertainty' applies them and 'tailor nmr yardstick'
reports the coverage with them. Use samples that are never scored: the default N is the share
the yardstick tunes on (the first 20 %), so the yardstick's scored samples stay unseen.

options:
      --model FILE      checkpoint with a scale head (OUT/best.json)              [required]
      --data DIR        simulated data set with truth (for example the test set)  [required]
      --samples N       fit on the first N samples (default: 20 % of the set, at least ${MIN_CALIBRATION_SAMPLES})
      --device D        cpu (default), cuda or cuda:N
      --json FILE       also write the result as JSON
  -h, --help            this text`;

export const run = defineCommand({
  help: HELP,
  options: {
    model: { type: 'string' },
    data: { type: 'string' },
    samples: { type: 'string' },
    device: { type: 'string' },
    json: { type: 'string' },
  },
  helpOnParseError: true,
  run: ({ values }) => {
    if (!values.model) throw new CliError(`--model is required\n\n${HELP}`);
    if (!values.data) throw new CliError(`--data is required\n\n${HELP}`);
    const requested = numberArg('--samples', values.samples, { integer: true, min: 1 });
    useDevice(values.device);
    let samples;
    try {
      const ds = new Dataset(values.data);
      const size = ds.size;
      ds.close();
      // The yardstick's tuning share (validation fraction 0.2, at least one sample).
      const n = requested ?? Math.max(MIN_CALIBRATION_SAMPLES, Math.round(0.2 * size));
      samples = datasetYardSamples(values.data, n).samples;
    } catch (e) {
      throw asUserError(e);
    }
    let info;
    try {
      info = loadDenoiserInfo(values.model);
    } catch (e) {
      throw asUserError(e);
    }
    const { model } = info;
    try {
      if (!model.scale) throw new NmrUncertaintyError(values.model);
      const result = calibrateScale(model, samples, values.data, values.model);
      saveScaleCalibration(values.model, result.calibration);
      console.log(formatCalibration(result, values.model));
      if (values.json) writeJsonAtomic(values.json, result);
      return 0;
    } finally {
      model.dispose();
    }
  },
});

function formatCalibration(r: CalibrationResult, modelFile: string): string {
  const c = r.calibration;
  const f = (v: number, d = 3) => (Number.isFinite(v) ? v.toFixed(d) : '-');
  return [
    `fitted on the first ${c.samples} samples of ${c.data} (${r.points} points): factor ${c.factor.toPrecision(4)}; coverage of the central 90 % interval ${f(c.rawCoverage)} raw, ${f(c.coverage)} with the factor`,
    '',
    `peak confidence on these samples (peaks of the denoised spectra above 3 sigma of the input):`,
    '',
    '| definition | cut | peaks | false | ROC AUC | PR AUC | false flagged low | true flagged low |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...r.scores.map(
      (s) =>
        `| ${s.definition}${s.definition === c.confidence.definition ? ' (chosen)' : ''} | ${f(s.cut)} | ${s.peaks} | ${s.falsePeaks} | ${f(s.rocAuc)} | ${f(s.prAuc)} | ${f(s.falseFlagged)} | ${f(s.realFlagged)} |`,
    ),
    '',
    `stored in ${modelFile}: 'tailor nmr denoise --uncertainty' now writes the calibrated scale and rates peaks by '${c.confidence.definition}' (low below ${f(c.confidence.cut)})`,
  ].join('\n');
}
