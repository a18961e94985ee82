// `tailor nmr simulate | evaluate | process`: multi-SNR NMR data sets, classical baselines and
// the metrics table, and conversion of vendor files to processed CSV spectra.
import { CliError } from '../errors.js';
import { JSON_OPTION, defineCommand, defineSubcommands } from '../command.js';
import { choiceListArg, numberListArg, numberOr, requiredNumber } from '../args.js';
import {
  writeSemiSyntheticDataset,
  writeSyntheticDataset,
  FAMILIES,
  Dataset,
  BASELINES,
  evaluateDataset,
  type BaselineName,
  readNmr,
  toSpectrum,
  type ConvertOptions,
  writeCsvSpectrum,
  type Apodization,
  type Fid,
  isPowerOfTwo,
  type RescaleMethod,
  realStack,
  loadDenoiser,
  modelDenoiser,
  isStackModel,
} from '../../nmr/index.js';
import { formatStackReport, stackReport } from '../../report/nmr-stack.js';
import { formatReport } from '../../report/nmr-evaluate.js';

const HELP = `usage: tailor nmr <subcommand> [options]

Multi-SNR NMR denoising (frequency domain, real part). Spectra of one sample measured K+1 times
with SNR rising by a factor T per experiment.

subcommands:
  simulate   write a multi-SNR data set (synthetic with ground truth, or semi-synthetic from
             real high-SNR FIDs with noise added in the time domain)
  evaluate   run the classical baselines (and a trained model with --model CHECKPOINT) on a
             data set and print the metrics table (alias: baseline)
  train      train the residual 1D U-Net on your own multi-SNR measurements
             (tailor nmr train --experiments a,b,c [--experiments ...]) or on a simulated data set
             (tailor nmr train -c CONFIG [-r CHECKPOINT])
  denoise    denoise one new scan: tailor nmr denoise --model CHECKPOINT --input FILE_OR_DIR... --out DIR
  export     write a trained U-Net as an ONNX model: tailor nmr export --model CHECKPOINT --out FILE.onnx
  yardstick  score denoised single scans of held-out samples against the truth and a held-out
             high-SNR measurement: the raw level each matches and the measurement time saved
  calibrate  fit the scale head's factor for 90 % coverage (and the peak-confidence rule) on
             held-out simulated samples and store it in the checkpoint:
             tailor nmr calibrate --model CHECKPOINT --data DIR [--samples N]
  ablate     train and score ablations, each leaving out or changing one ingredient of the
             training: tailor nmr ablate -c CONFIG --data DIR
  process    read a Bruker, VnmrJ or Spinsolve folder / JCAMP-DX / NMRPipe / CSV file and write
             the processed real spectrum as CSV (ppm, intensity)
  stack      run the preprocessing (alignment, rescaling, masks, noise, T, pseudo truth) on
             real experiments of one sample and report what it found

simulate options:
  --samples N        number of samples                                      [required]
  --levels K1        experiments per sample, K+1 >= 2 (level 0 = lowest SNR)  (default 3)
  --ratio T          SNR factor between consecutive experiments, > 1          (default 2)
  --points L         spectrum points, a power of two                          (default 8192)
  --seed S           random seed                                              (default 0)
  --out DIR          output folder                                            [required]
  --snr-min A        lowest peak SNR of level 0 (tallest line / sigma_0)      (default 5)
  --snr-max B        highest peak SNR of level 0                              (default 50)
  --sf MHZ           spectrometer frequency of synthetic data                 (default 400)
  --sw-ppm W         spectral width of synthetic data                         (default 12)
  --from PATH        semi-synthetic: a clean FID (Bruker, VnmrJ or Spinsolve folder, JCAMP-DX FID,
                     NMRPipe FID); repeat for several (they must share one ppm axis)
  --lb HZ            semi-synthetic: exponential line broadening              (default 0.3)
  --max-shift P      largest global shift of levels k < K in points           (default 1.5 synthetic, 0 semi)
  --family F         synthetic spectra family: ${Object.keys(FAMILIES).join(', ')} (default default;
                     the others test robustness: Gaussian-like line shapes, broad lines, strong
                     baseline drift, phase jitter of 8 degrees, many impurities)

evaluate options:
  --data DIR         data set written by 'simulate'                          [required]
  --baselines LIST   all (default) or a comma list of ${BASELINES.join(', ')}
                     (the input itself, Savitzky-Golay, the exponential matched filter, wavelet
                     shrinkage, total variation, Cadzow rank reduction, the inverse-variance fusion
                     of all levels, the SNR-weighted pseudo ground truth)
  --max-samples N    use only the first N samples
  --validation F     fraction of samples that tunes Savitzky-Golay, TV and Cadzow (default 0.2;
                     not scored)
  --rescale M        huber (default: regression onto level K with Huber weights), inverse (the
                     same without the weights), seed (plain least squares) or none
  --local-align      also align locally in anchor-peak windows
  --model FILE       score a trained model too (a stack model is scored once per sample)
  --json             print the report as JSON ({"methods": {name: {energy_snr_db, peak_f1, ...}}})

process options:
  --input PATH       Bruker expno, VnmrJ .fid or Spinsolve folder, JCAMP-DX,
                     NMRPipe or CSV file                                      [required]
  --out FILE         output CSV                                               [required]
  --size N           spectrum points (power of two; default 2x the FID length rounded up)
  --lb HZ            exponential line broadening (default: the data's LB, else none)
  --gb HZ            Gaussian broadening instead (FWHM in Hz)
  --phase P          params (default: the phase stored with the data, TopSpin PHC0/PHC1 or VnmrJ
                     rp/lp, else automatic), auto (ACME, ignoring a stored phase), none, or P0,P1
                     in degrees (TopSpin's convention); the phase used and its source are printed
  --processed        read the vendor's processed spectrum instead of the fid (Bruker pdata/1/1r,
                     Spinsolve spectrum_processed.1d)
  --row R            for pseudo-2D data (a Bruker ser file, an arrayed VnmrJ fid): which row
                     (default 0; PATH#R in --input says the same)

stack options:
  --input PATH       an experiment (PATH#R: row R of a pseudo-2D set; a+b co-adds); repeat,
                     from the lowest to the highest SNR                       [>= 2 required]
  --size N           spectrum points for FIDs (power of two)
  --lb HZ            exponential line broadening for FIDs (default: the data's LB)
  --phase P          params (default: the stored phase, else automatic) or auto
  --ppm LO,HI        keep only this ppm window
  --same-index       keep the points as they are instead of resampling onto the first file's
                     ppm axis (when the files' referencing disagrees)
  --noise M          mad (default: MAD of the baseline points) or diff (for spectra without a clean
                     baseline)
  --rescale M        huber (default), inverse, seed or none (as for evaluate)
  --local-align      also align locally in anchor-peak windows
  --out FILE         write the pseudo ground truth as CSV
  --json             print the report as JSON

  -h, --help         this text`;

const num = (value: string | undefined, name: string, fallback?: number): number =>
  fallback === undefined
    ? requiredNumber(`--${name}`, value, {}, HELP)
    : numberOr(`--${name}`, value, fallback);

const int = (value: string | undefined, name: string, fallback?: number, min = 0): number =>
  fallback === undefined
    ? requiredNumber(`--${name}`, value, { integer: true, min }, HELP)
    : numberOr(`--${name}`, value, fallback, { integer: true, min });

const simulate = defineCommand({
  help: HELP,
  options: {
    samples: { type: 'string' },
    levels: { type: 'string' },
    ratio: { type: 'string' },
    points: { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
    'snr-min': { type: 'string' },
    'snr-max': { type: 'string' },
    sf: { type: 'string' },
    'sw-ppm': { type: 'string' },
    from: { type: 'string', multiple: true },
    lb: { type: 'string' },
    'max-shift': { type: 'string' },
    family: { type: 'string', default: 'default' },
  },
  run: ({ values }) => {
    const family = FAMILIES[values.family!];
    if (!family)
      throw new CliError(
        `--family: unknown '${values.family}'; choose from ${Object.keys(FAMILIES).join(', ')}`,
      );
    const samples = int(values.samples, 'samples', undefined, 1);
    const levels = int(values.levels, 'levels', 3, 2);
    const ratio = num(values.ratio, 'ratio', 2);
    if (!(ratio > 1)) throw new CliError(`--ratio must be > 1, got ${ratio}`);
    const points = int(values.points, 'points', 8192, 64);
    if (!isPowerOfTwo(points)) throw new CliError(`--points must be a power of two, got ${points}`);
    const seed = int(values.seed, 'seed', 0);
    const out = values.out;
    if (!out) throw new CliError(`--out is required\n\n${HELP}`);
    const semi = values.from && values.from.length > 0;
    const snrRange: [number, number] = [
      num(values['snr-min'], 'snr-min', 5),
      num(values['snr-max'], 'snr-max', 50),
    ];
    if (!(snrRange[0] > 0 && snrRange[1] >= snrRange[0]))
      throw new CliError(`--snr-min/--snr-max: need 0 < min <= max, got ${snrRange.join(', ')}`);
    const t0 = Date.now();
    const progress = (i: number): void => {
      if (process.stderr.isTTY && (i % 10 === 0 || i === samples)) process.stderr.write(`\r${i}/${samples}`);
    };
    let manifest;
    if (semi) {
      const fids: Fid[] = values.from!.map((p) => {
        const d = readNmr(p);
        if (d.kind === 'fid') return d.fid;
        if (d.kind === 'fids') return d.fids[0]!;
        throw new CliError(`--from ${p}: a processed spectrum; semi-synthetic data need a FID (time domain)`);
      });
      const apodization: Apodization = { kind: 'exponential', lbHz: num(values.lb, 'lb', 0.3) };
      manifest = writeSemiSyntheticDataset(
        out,
        samples,
        seed,
        fids,
        {
          points,
          levels,
          ratio,
          snrRange,
          apodization,
          maxShiftPoints: num(values['max-shift'], 'max-shift', 0),
        },
        progress,
      );
    } else {
      manifest = writeSyntheticDataset(
        out,
        samples,
        seed,
        {
          points,
          levels,
          ratio,
          snrRange,
          ...family,
          sfMHz: num(values.sf, 'sf', 400),
          swPpm: num(values['sw-ppm'], 'sw-ppm', 12),
          maxShiftPoints: num(values['max-shift'], 'max-shift', 1.5),
        },
        progress,
      );
    }
    if (process.stderr.isTTY) process.stderr.write('\n');
    console.log(
      `wrote ${manifest.samples} ${manifest.generator.kind} samples x ${manifest.levels} levels x ${manifest.points} points (T = ${manifest.ratio}) to ${out} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
    return 0;
  },
});

const evaluate = defineCommand({
  help: HELP,
  options: {
    data: { type: 'string' },
    baselines: { type: 'string', default: 'all' },
    'max-samples': { type: 'string' },
    validation: { type: 'string' },
    rescale: { type: 'string', default: 'huber' },
    'local-align': { type: 'boolean', default: false },
    model: { type: 'string' },
    ...JSON_OPTION,
  },
  run: ({ values }) => {
    // libtorch loads with the model only, so the other subcommands work without it.
    const loaded = values.model
      ? (() => {
          const model = loadDenoiser(values.model!);
          return { extraMethods: { model: modelDenoiser(model) }, stack: isStackModel(model), model };
        })()
      : undefined;
    if (!values.data) throw new CliError(`--data is required\n\n${HELP}`);
    const methods: BaselineName[] = choiceListArg('--baselines', values.baselines!, BASELINES, true);
    const rescaleChoice = values.rescale!;
    if (!['huber', 'inverse', 'seed', 'none'].includes(rescaleChoice))
      throw new CliError(`--rescale: expected huber, inverse, seed or none, got '${rescaleChoice}'`);
    const ds = new Dataset(values.data);
    try {
      const options: Parameters<typeof evaluateDataset>[1] = {
        methods,
        preprocess: {
          rescale: rescaleChoice === 'none' ? false : (rescaleChoice as RescaleMethod),
          align: { local: values['local-align'] },
        },
        ...(loaded ? { extraMethods: loaded.extraMethods } : {}),
        ...(loaded?.stack ? { stackMethods: ['model'] } : {}),
      };
      if (loaded?.stack && loaded.model.config.inputLevels !== ds.manifest.levels)
        throw new CliError(
          `--model ${values.model}: the model takes stacks of ${loaded.model.config.inputLevels} levels, ${values.data} has ${ds.manifest.levels}`,
        );
      if (values['max-samples'] !== undefined)
        options.maxSamples = int(values['max-samples'], 'max-samples', undefined, 2);
      if (values.validation !== undefined) options.validationFraction = num(values.validation, 'validation');
      const report = evaluateDataset(ds, options);
      console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
    } finally {
      ds.close();
    }
    return 0;
  },
});

const processCommand = defineCommand({
  help: HELP,
  options: {
    input: { type: 'string' },
    out: { type: 'string' },
    size: { type: 'string' },
    lb: { type: 'string' },
    gb: { type: 'string' },
    phase: { type: 'string', default: 'params' },
    processed: { type: 'boolean', default: false },
    row: { type: 'string' },
  },
  run: ({ values }) => {
    if (!values.input || !values.out) throw new CliError(`--input and --out are required\n\n${HELP}`);
    const options: ConvertOptions = { prefer: values.processed ? 'processed' : 'raw' };
    if (values.row !== undefined) options.row = int(values.row, 'row', 0);
    if (values.phase === 'params' || values.phase === 'auto' || values.phase === 'none')
      options.phase = values.phase;
    else {
      const parts = numberListArg('--phase', values.phase, {}, 2)!;
      options.phase = { p0: parts[0]!, p1: parts[1]! };
    }
    if (values.size !== undefined) {
      const size = int(values.size, 'size', undefined, 2);
      if (!isPowerOfTwo(size)) throw new CliError(`--size must be a power of two, got ${size}`);
      options.size = size;
    }
    if (values.gb !== undefined) options.apodization = { kind: 'gaussian', gbHz: num(values.gb, 'gb') };
    else if (values.lb !== undefined)
      options.apodization = { kind: 'exponential', lbHz: num(values.lb, 'lb') };
    const { spectrum, note } = toSpectrum(values.input, options);
    if (note) console.error(note);
    writeCsvSpectrum(values.out, spectrum, `processed from ${values.input} by tailor nmr process`);
    console.log(
      `wrote ${spectrum.real.length} points, ${spectrum.ppmFirst.toFixed(4)} .. ${spectrum.ppmLast.toFixed(4)} ppm, to ${values.out}`,
    );
    return 0;
  },
});

const stackCommand = defineCommand({
  help: HELP,
  options: {
    input: { type: 'string', multiple: true },
    size: { type: 'string' },
    lb: { type: 'string' },
    phase: { type: 'string', default: 'params' },
    ppm: { type: 'string' },
    noise: { type: 'string', default: 'mad' },
    rescale: { type: 'string', default: 'huber' },
    'local-align': { type: 'boolean', default: false },
    'same-index': { type: 'boolean', default: false },
    out: { type: 'string' },
    ...JSON_OPTION,
  },
  run: ({ values }) => {
    const inputs = values.input ?? [];
    if (inputs.length < 2)
      throw new CliError(`give at least two --input experiments, lowest SNR first\n\n${HELP}`);
    if (values.phase !== 'params' && values.phase !== 'auto')
      throw new CliError(`--phase: expected params or auto, got '${values.phase}'`);
    if (values.noise !== 'mad' && values.noise !== 'diff')
      throw new CliError(`--noise: expected mad or diff, got '${values.noise}'`);
    if (!['huber', 'inverse', 'seed', 'none'].includes(values.rescale!))
      throw new CliError(`--rescale: expected huber, inverse, seed or none, got '${values.rescale}'`);
    const options: Parameters<typeof realStack>[1] = {
      phase: values.phase,
      axis: values['same-index'] ? 'index' : 'ppm',
      preprocess: {
        noise: values.noise,
        rescale: values.rescale === 'none' ? false : (values.rescale as RescaleMethod),
        align: { local: values['local-align'] },
      },
    };
    if (values.size !== undefined) {
      const size = int(values.size, 'size', undefined, 64);
      if (!isPowerOfTwo(size)) throw new CliError(`--size must be a power of two, got ${size}`);
      options.size = size;
    }
    if (values.lb !== undefined) options.apodization = { kind: 'exponential', lbHz: num(values.lb, 'lb') };
    if (values.ppm !== undefined) {
      const parts = numberListArg('--ppm', values.ppm, {}, 2)!;
      options.ppmRange = [parts[0]!, parts[1]!];
    }
    // '+' co-adds files into one experiment (repeated scans).
    const stack = realStack(
      inputs.map((i) => (i.includes('+') ? i.split('+') : i)),
      options,
    );
    const r = stack.result;
    const report = stackReport(stack);
    if (values.out) {
      writeCsvSpectrum(
        values.out,
        {
          real: r.pseudoTruth,
          ppmFirst: stack.ppmFirst,
          ppmLast: stack.ppmLast,
          refMHz: stack.refMHz,
          source: 'pseudo truth',
        },
        `pseudo ground truth of ${inputs.join(' ')}`,
      );
    }
    console.log(values.json ? JSON.stringify(report, null, 2) : formatStackReport(report));
    return 0;
  },
});

export const run = defineSubcommands({
  help: HELP,
  commands: {
    simulate,
    evaluate,
    baseline: evaluate,
    process: processCommand,
    stack: stackCommand,
    train: async (argv) => (await import('./nmr-train.js')).run(argv),
    denoise: async (argv) => (await import('./nmr-denoise.js')).run(argv),
    export: async (argv) => (await import('./nmr-export.js')).run(argv),
    ablate: async (argv) => (await import('./nmr-ablate.js')).run(argv),
    yardstick: async (argv) => (await import('./nmr-yardstick.js')).run(argv),
    calibrate: async (argv) => (await import('./nmr-calibrate.js')).run(argv),
  },
  unknown: (sub) => `unknown subcommand 'nmr ${sub}'\n\n${HELP}`,
});
