// tailor predict -r RUN --input PATH [--adapt METHOD] --out FILE: a trained model on the user's
// own unlabeled images, adapted to their (unknown) class distribution with test-time-train's code.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import {
  PREDICT_ADAPTATIONS,
  adaptInput,
  adaptUnlabeled,
  readPredictInput,
  testTimeOptions,
  type PredictAdaptation,
  type ValidationFit,
} from '../../longtail/index.js';
import { Progress } from '../../util/progress.js';
import { writeFileAtomic, writeJsonAtomic } from '../../util/fs.js';
import { CliError } from '../errors.js';
import { defineCommand } from '../command.js';
import { numberOr } from '../args.js';

/** Counts and sizes: integers from 1. */
const WHOLE = { integer: true, min: 1 };
import { CHECKPOINT_OPTIONS, loadRunForEvaluation } from './longtail-common.js';
import { CONFIDENCE_BINS, FORMATS, formatRows, predictionTable, type Format } from './predict-output.js';

const HELP = `usage: tailor predict -r RUN --input PATH --out FILE [--adapt METHOD] [--preference r]
                      [--top-k K] [--batch N] [--epochs N] [--strict] [--skip-bad]
                      [--list-root DIR] [--pool-memory MB] [--device D] [--threads N]
                      [--root DIR] [--quiet]

Classifies unlabeled images with a trained run, adapted to their class distribution (unknown, and
estimated from the images themselves) by the same code as test-time-train. PATH is a folder of
PNG/JPEG images (searched recursively), an image list (.txt, "path label" lines; the labels are
ignored), an idx file (*-ubyte[.gz]) or a CIFAR batch file.
Adaptation methods (--adapt):
  none         the model as trained (the default)
  em           EM (MLLS) estimate of the input's class prior on the uncalibrated scores
  em-bcts      EM after bias-corrected temperature scaling fitted on the validation split
  bbse         black-box shift estimation with the validation split's confusion matrix
  prior        prior matching: the experts' weights (or PRL preference) fitted to the input's prior
  aggregation  SADE's expert aggregation learned on two augmented views of the input
  preference   PRL's preference search through the hypernetwork (PRL runs only)
em, em-bcts and bbse need a run with a validation split.
The output's format follows FILE's extension: .csv, .json or .jsonl; per image its path (or index
for idx/CIFAR input) and the top-K classes (names where the run knows them) with probabilities,
calibrated with the run's stored temperature (BCTS for em-bcts) where it has one, else a plain
softmax. FILE.summary.json gets the input's estimated class prior beside the training prior, what
the adaptation chose, the counts per predicted class, the calibration and the time taken.

options:
  -r, --resume RUN       a run directory (its checkpoint-last) or a checkpoint .json  [required]
      --train-config FILE  with -r a SADE/RIDE/BalPoE .pth: the training config of its model
      --input PATH       the images                                                   [required]
      --out FILE         the predictions: .csv, .json or .jsonl                       [required]
      --adapt METHOD     ${PREDICT_ADAPTATIONS.join(', ')} (default none)
      --preference r     PRL runs: the preference to predict at (a,b,c), without a search
      --top-k K          classes per image (default 5, at most the number of classes)
      --batch N          batch size of the aggregation / preference search steps (default 128)
      --epochs N         epochs of the aggregation / preference search (default 5)
      --strict           refuse images of another size or channel count instead of converting them
      --skip-bad         skip unreadable images (counted in the summary) instead of failing
      --list-root DIR    the root of an image list's paths (default: the list's folder)
      --pool-memory MB   decoded images up to this size are held in memory (default 1024);
                         a larger input is streamed: decoded again, a batch at a time, on
                         every pass (the aggregation / preference searches make several)
      --threads N        libtorch threads
      --device D         cpu, cuda or cuda:N
      --root DIR         data directory of the run (overrides its data_loader.args.data_dir)
      --quiet            no progress on stderr
  -h, --help             this text`;

export const run = defineCommand({
  help: HELP,
  options: {
    ...CHECKPOINT_OPTIONS,
    input: { type: 'string' },
    out: { type: 'string' },
    adapt: { type: 'string', default: 'none' },
    preference: { type: 'string' },
    'top-k': { type: 'string' },
    batch: { type: 'string' },
    epochs: { type: 'string' },
    strict: { type: 'boolean', default: false },
    'skip-bad': { type: 'boolean', default: false },
    'list-root': { type: 'string' },
    'pool-memory': { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
  run: async ({ values }) => {
    const started = performance.now();
    if (!(values.resume ?? values.checkpoint) || !values.input || !values.out)
      throw new CliError(`give -r RUN, --input PATH and --out FILE\n\n${HELP}`);
    const adapt = values.adapt as PredictAdaptation;
    if (!PREDICT_ADAPTATIONS.includes(adapt))
      throw new CliError(`--adapt ${values.adapt}: not one of ${PREDICT_ADAPTATIONS.join(', ')}`);
    const format = extname(values.out).toLowerCase() as Format;
    if (!FORMATS.includes(format))
      throw new CliError(`--out ${values.out}: the extension must be ${FORMATS.join(', ')}`);
    if (values.preference !== undefined && adapt !== 'none')
      throw new CliError(`--preference fixes the preference; it cannot be combined with --adapt ${adapt}`);
    const batch = numberOr('--batch', values.batch, 128, WHOLE);
    const epochs = numberOr('--epochs', values.epochs, 5, WHOLE);
    const poolMegabytes = numberOr('--pool-memory', values['pool-memory'], 1024, { integer: true, min: 0 });
    const log = (s: string) => {
      if (!values.quiet) console.error(s);
    };

    const { loaded, system } = loadRunForEvaluation(values, HELP);
    const session = loaded.session;
    const d = session.data;
    const classes = d.trainCounts.length;
    const topK = Math.min(numberOr('--top-k', values['top-k'], 5, WHOLE), classes);
    const classNames = 'list' in d.train ? d.train.list.classNames : d.train.classNames;
    const test = d.test;
    const shape: [number, number, number] = [...test.shape];

    const input = await readPredictInput(values.input, {
      shape,
      classes,
      ...('list' in test ? { decode: test.decode } : {}),
      strict: values.strict,
      skipBad: values['skip-bad'],
      ...(values['list-root'] ? { listRoot: values['list-root'] } : {}),
      poolBytes: poolMegabytes * 1024 * 1024,
      progress: readProgress(values.quiet),
    });
    if (input.converted > 0)
      log(
        `warning: ${input.converted} image(s) converted to the model's ${shape[2]}x${shape[1]} with ${shape[0]} channel(s) (--strict refuses them)`,
      );
    if (input.skipped.length > 0) log(`warning: ${input.skipped.length} unreadable image(s) skipped`);
    const pooled = input.images.labels.length;
    log(
      `${pooled} image(s) from ${values.input}${input.streamed ? ' (streamed: over --pool-memory)' : ''}; adaptation: ${adapt}`,
    );

    const stored = storedCalibration(loaded.runDir);
    const options = {
      ...testTimeOptions({}, system.kind === 'prl', 'tailor predict defaults'),
      epochs,
      batchSize: batch,
      quiet: values.quiet,
    };
    const pool = { ...adaptInput(session), test: input.images };
    const result = await adaptUnlabeled(pool, adapt, options, stored, log);

    const name = (c: number) => classNames?.[c] ?? c;
    const table = predictionTable(result.probabilities, classes, input.paths, topK, name, input.failed);
    writeFileAtomic(values.out, formatRows(table.rows, format, topK));
    const summary = {
      kind: 'predictions',
      run: loaded.runDir,
      checkpoint: loaded.checkpoint,
      input: values.input,
      // Where the rows' paths are relative to (the report's thumbnails), wherever it is opened from.
      input_root: resolve(
        input.kind === 'list' ? (values['list-root'] ?? dirname(values.input)) : values.input,
      ),
      input_kind: input.kind,
      streamed: input.streamed,
      output: values.out,
      n: table.rows.length,
      mode: adapt,
      ...(values.preference !== undefined && system.kind === 'prl'
        ? { preference: [...system.preference.weights] }
        : {}),
      chosen: result.chosen,
      calibration: result.calibration,
      top_k: topK,
      classes,
      ...(classNames ? { class_names: classNames } : {}),
      training_prior: result.trainingPrior,
      estimated_prior: result.estimatedPrior,
      predicted_counts: Object.fromEntries(table.counts.map((v, c) => [String(name(c)), v])),
      confidence_histogram: { bins: CONFIDENCE_BINS, counts: table.confidence },
      examples: table.examples,
      converted: input.converted,
      skipped: input.skipped.length,
      ...(input.skipped.length > 0 ? { skipped_files: input.skipped } : {}),
      seconds: (performance.now() - started) / 1000,
    };
    writeJsonAtomic(`${values.out}.summary.json`, summary);
    log(
      `wrote ${values.out} and ${values.out}.summary.json (${summary.seconds.toFixed(1)} s; calibration: ${result.calibration.source})`,
    );
    return 0;
  },
});

/** Progress of reading the input (done of total images) on stderr. */
function readProgress(quiet: boolean): (done: number, total: number) => void {
  let progress: Progress | undefined;
  let read = 0;
  return (done, total) => {
    progress ??= new Progress({ label: 'read', total, unit: 'img', quiet });
    progress.tick(done - read);
    read = done;
    if (done === total) progress.finish();
  };
}

/** The calibration training stored in the run's results.json, if any. */
function storedCalibration(runDir: string): { fit: ValidationFit | null; source: string } {
  const file = join(runDir, 'results.json');
  if (!existsSync(file)) return { fit: null, source: 'none' };
  try {
    const fit = (JSON.parse(readFileSync(file, 'utf8')) as { calibration?: ValidationFit }).calibration;
    return fit ? { fit, source: `${file} (calibration)` } : { fit: null, source: 'none' };
  } catch {
    return { fit: null, source: 'none' };
  }
}
