// `tailor gmm fit | predict | score | select | sample`: Gaussian mixtures by EM, CSV in, JSON out.
import { CliError } from '../errors.js';
import { JSON_OPTION, defineCommand, type OptionValues } from '../command.js';
import { choiceListArg, listArg, numberArg, rangeListArg } from '../args.js';
import { writeFileAtomic, writeJsonAtomic } from '../../util/fs.js';
import { Rng } from '../../util/rng.js';
import {
  BayesianGaussianMixture,
  type BayesianGaussianMixtureOptions,
  GaussianMixture,
  type GaussianMixtureOptions,
  COVARIANCE_TYPES,
  type CovarianceType,
  readLabelsFile,
  readMatrixCsv,
  type CsvMatrix,
  gaussianInitByName,
  warmStartFrom,
  GaussianModelError,
  gaussianModelToJson,
  readDataForModel,
  readGaussianModel,
  predictionsCsv,
  samplesCsv,
  scoreSummary,
  formatBicTable,
  selectByBic,
} from '../../mixture/index.js';

const HELP = `usage: tailor gmm <subcommand> [options]

Gaussian mixture models fitted by EM (as scikit-learn's GaussianMixture), or by variational
inference with priors (--prior, as scikit-learn's BayesianGaussianMixture). Data: CSV with a header
row, one sample per row, numeric cells (--columns picks some columns; default all).

subcommands:
  fit      fit K components; writes the model JSON (weights, means, covariances,
           precisionsCholesky, score, bic, aic, nIter, converged, trace)
  predict  component labels (and probabilities) of new data under a fitted model, as CSV
  score    mean log-likelihood, BIC and AIC of data under a fitted model, as JSON
  select   BIC table over K and covariance types
  sample   draw samples from a fitted model, as CSV

fit options:
  --data FILE         training data (CSV)                                 [required]
  --k K               number of components                                [required]
  --covariance T      full (default), tied, diag or spherical
  --init I            kmeans (default: k-means labels), kmeans++ (k-means++ seeds only),
                      random (random responsibilities), random-from-data (K random points),
                      labels:FILE (0-based labels, one per row), model:FILE (weights, means and
                      precisions of a saved model)
  --n-init N          number of starts, the best lower bound is kept (default 1)
  --tol T             stop when the mean log-likelihood changes by less (default 1e-3)
  --max-iter M        EM iterations per start (default 100)
  --reg-covar R       added to the covariance diagonal (default 1e-6)
  --seed S            seed of the initialisation (default 0)
  --columns A,B       use these columns only
  --out FILE          write the model JSON there (default: print it)

variational fit (fit only; K is then an upper bound: components the data do not need end with
weights near 0; the model has no BIC or AIC, its lower bound is the evidence lower bound):
  --prior P           dirichlet-process (stick-breaking) or dirichlet-distribution on the weights
  --weight-concentration G
                      the prior's concentration (default 1/K; smaller empties more components)
  --mean-precision B  precision of the prior on the means (default 1)
  --mean-prior A,B    prior mean, one value per column (default the data's means)
  --dof NU            Wishart degrees of freedom, > d - 1 (default d); the prior covariance is the
                      data's (library option covariancePrior to set it)

predict options:  --model FILE --data FILE [--proba] [--log-density] [--out FILE]
score options:    --model FILE --data FILE
select options:   --data FILE --k 1..9 (or 1,2,4) [--covariance all|full,tied,...] [--n-init N]
                  [--init I] [--tol T] [--max-iter M] [--reg-covar R] [--seed S] [--columns A,B] [--json]
sample options:   --model FILE --n N [--seed S] [--out FILE]
  -h, --help          this text`;

const OPTIONS = {
  data: { type: 'string' },
  k: { type: 'string' },
  covariance: { type: 'string' },
  init: { type: 'string', default: 'kmeans' },
  'n-init': { type: 'string', default: '1' },
  tol: { type: 'string', default: '1e-3' },
  'max-iter': { type: 'string', default: '100' },
  'reg-covar': { type: 'string', default: '1e-6' },
  seed: { type: 'string', default: '0' },
  columns: { type: 'string' },
  out: { type: 'string' },
  model: { type: 'string' },
  proba: { type: 'boolean', default: false },
  'log-density': { type: 'boolean', default: false },
  n: { type: 'string' },
  prior: { type: 'string' },
  'weight-concentration': { type: 'string' },
  'mean-precision': { type: 'string' },
  'mean-prior': { type: 'string' },
  dof: { type: 'string' },
  ...JSON_OPTION,
} as const;

type Values = OptionValues<typeof OPTIONS>;

export const run = defineCommand({
  help: HELP,
  options: OPTIONS,
  subcommand: true,
  helpOnParseError: true,
  run: ({ sub, values }) => {
    try {
      switch (sub) {
        case 'fit':
          return fit(values);
        case 'predict':
          return predict(values);
        case 'score':
          return score(values);
        case 'select':
          return select(values);
        case 'sample':
          return sample(values);
        default:
          throw new CliError(
            `unknown gmm subcommand '${sub}' (fit, predict, score, select, sample; see tailor gmm --help)`,
          );
      }
    } catch (error) {
      // The models' argument checks (more components than samples, ...) concern the data given.
      if (error instanceof RangeError) throw new CliError(error.message);
      throw error;
    }
  },
});

function fit(v: Values): number {
  const x = loadData(v);
  const k = numberArg('--k', required(v.k, '--k'), { integer: true, min: 1 })!;
  if (x.rows < k)
    throw new CliError(`${x.file} has ${x.rows} data rows, fewer than the ${k} components of --k`);
  const options = mixtureOptions(v, k, x);
  const bayesian = bayesianOptions(v, options);
  const gm = bayesian ? new BayesianGaussianMixture(bayesian) : new GaussianMixture(options);
  gm.fit(x);
  for (const w of gm.warnings) console.error(`tailor: warning: ${w}`);
  const json = gaussianModelToJson(gm, x, {
    columns: x.columns,
    options: {
      data: v.data,
      k,
      covariance: options.covarianceType,
      init: v.init,
      nInit: options.nInit,
      tol: options.tol,
      maxIter: options.maxIter,
      regCovar: options.regCovar,
      seed: options.seed,
      ...(bayesian ? { prior: v.prior } : {}),
    },
  });
  if (v.out) {
    writeJsonAtomic(v.out, json);
    const fitted =
      json.bic === null || json.aic === null
        ? `lower bound ${json.lowerBound.toFixed(3)}, ${effectiveComponents(json.weights)} of ${k} components ` +
          `with weight >= 1%`
        : `BIC ${json.bic.toFixed(3)}, AIC ${json.aic.toFixed(3)}`;
    console.log(
      `${gm.covarianceType} ${bayesian ? 'variational GMM' : 'GMM'}, K = ${k}, n = ${x.rows}, d = ${x.cols}: ` +
        `score ${json.score.toFixed(6)}, ${fitted}, ${json.nIter} iterations, ` +
        `${json.converged ? 'converged' : 'NOT converged'}; wrote ${v.out}`,
    );
  } else {
    console.log(JSON.stringify(json, null, 2));
  }
  return 0;
}

function predict(v: Values): number {
  const { model, x } = loadModelAndData(v);
  emit(predictionsCsv(model, x, { proba: v.proba, logDensity: v['log-density'] }), v.out);
  return 0;
}

function score(v: Values): number {
  const { model, x } = loadModelAndData(v);
  console.log(JSON.stringify(scoreSummary(model, x), null, 2));
  return 0;
}

function select(v: Values): number {
  if (v.prior !== undefined)
    throw new CliError(
      'select ranks models by BIC, which a variational fit does not have; fit one with gmm fit --prior and a generous --k',
    );
  const x = loadData(v);
  const ks = rangeListArg('--k', required(v.k, '--k'));
  const types = choiceListArg('--covariance', v.covariance ?? 'all', COVARIANCE_TYPES, true);
  if (v.init!.includes(':'))
    throw new CliError(
      `select: --init ${v.init} fixes one K; use kmeans, kmeans++, random or random-from-data`,
    );
  const base = mixtureOptions({ ...v, covariance: undefined }, 1, x);
  const result = selectByBic(x, {
    ks,
    covarianceTypes: types,
    nInit: base.nInit,
    seed: base.seed,
    tol: base.tol,
    maxIter: base.maxIter,
    regCovar: base.regCovar,
    initParams: base.initParams,
  });
  if (v.json)
    console.log(
      JSON.stringify({ n: x.rows, d: x.cols, rows: result.rows, best: result.best ?? null }, null, 2),
    );
  else console.log(formatBicTable(result));
  return result.best ? 0 : 1;
}

function sample(v: Values): number {
  const { model, columns } = readGaussianModel(required(v.model, '--model'));
  const n = numberArg('--n', required(v.n, '--n'), { integer: true, min: 1 })!;
  const seed = numberArg('--seed', v.seed, { integer: true })!;
  emit(samplesCsv(model, n, new Rng(seed), columns), v.out);
  return 0;
}

// ---- helpers ----

function mixtureOptions(v: Values, k: number, x: CsvMatrix): GaussianMixtureOptions {
  const covarianceType = (v.covariance ?? 'full') as CovarianceType;
  if (v.covariance !== undefined && v.covariance !== 'all' && !COVARIANCE_TYPES.includes(covarianceType)) {
    throw new CliError(`--covariance must be one of ${COVARIANCE_TYPES.join(', ')}, got '${v.covariance}'`);
  }
  const options: GaussianMixtureOptions = {
    nComponents: k,
    covarianceType: v.covariance === 'all' ? 'full' : covarianceType,
    nInit: numberArg('--n-init', v['n-init'], { integer: true, min: 1 })!,
    tol: numberArg('--tol', v.tol, { min: 0 })!,
    maxIter: numberArg('--max-iter', v['max-iter'], { integer: true, min: 0 })!,
    regCovar: numberArg('--reg-covar', v['reg-covar'], { min: 0 })!,
    seed: numberArg('--seed', v.seed, { integer: true })!,
    onWarning: () => {},
  };
  const init = v.init!;
  const named = gaussianInitByName(init);
  if (named) {
    options.initParams = named;
  } else if (init.startsWith('labels:')) {
    options.initLabels = readLabelsFile(init.slice('labels:'.length), x.rows, k);
  } else if (init.startsWith('model:')) {
    const { model } = readGaussianModel(init.slice('model:'.length));
    try {
      Object.assign(
        options,
        warmStartFrom(model, { nComponents: k, nFeatures: x.cols, covarianceType: options.covarianceType! }),
      );
    } catch (error) {
      if (error instanceof GaussianModelError) throw new CliError(`--init ${init}: ${error.message}`);
      throw error;
    }
  } else {
    throw new CliError(
      `--init must be kmeans, kmeans++, random, random-from-data, labels:FILE or model:FILE; got '${init}'`,
    );
  }
  return options;
}

const PRIORS = {
  'dirichlet-process': 'dirichlet_process',
  'dirichlet-distribution': 'dirichlet_distribution',
} as const;

/** The variational fit's options when --prior is given (its other options need it). */
function bayesianOptions(
  v: Values,
  options: GaussianMixtureOptions,
): BayesianGaussianMixtureOptions | undefined {
  const priorFlags = ['weight-concentration', 'mean-precision', 'mean-prior', 'dof'] as const;
  if (v.prior === undefined) {
    const stray = priorFlags.find((f) => v[f] !== undefined);
    if (stray)
      throw new CliError(`--${stray} sets a prior of the variational fit: add --prior dirichlet-process`);
    return undefined;
  }
  const type = PRIORS[v.prior as keyof typeof PRIORS];
  if (!type)
    throw new CliError(`--prior must be dirichlet-process or dirichlet-distribution, got '${v.prior}'`);
  if (options.weightsInit || options.meansInit || options.precisionsInit)
    throw new CliError(
      `--init ${v.init} starts from a saved model's parameters; the variational fit starts from responsibilities ` +
        `(kmeans, kmeans++, random, random-from-data or labels:FILE)`,
    );
  const positive = (flag: (typeof priorFlags)[number]) => numberArg(`--${flag}`, v[flag], { positive: true });
  const meanPrior = listArg('--mean-prior', v['mean-prior'])?.map((s) => numberArg('--mean-prior', s)!);
  return {
    ...options,
    weightConcentrationPriorType: type,
    weightConcentrationPrior: positive('weight-concentration'),
    meanPrecisionPrior: positive('mean-precision'),
    degreesOfFreedomPrior: positive('dof'),
    meanPrior,
  };
}

/** Components holding at least 1% of the weight. */
function effectiveComponents(weights: readonly number[]): number {
  return weights.filter((w) => w >= 0.01).length;
}

function loadData(v: Values): CsvMatrix {
  const columns = listArg('--columns', v.columns);
  return readMatrixCsv(required(v.data, '--data'), columns);
}

function loadModelAndData(v: Values): { model: GaussianMixture; x: CsvMatrix } {
  const { model, columns } = readGaussianModel(required(v.model, '--model'));
  const picked = listArg('--columns', v.columns);
  const { x, note } = readDataForModel(required(v.data, '--data'), model, columns, picked);
  if (note) console.error(`tailor: note: ${note}`);
  return { model, x };
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new CliError(`${flag} is required (see tailor gmm --help)`);
  return value;
}

function emit(text: string, out: string | undefined): void {
  if (out) writeFileAtomic(out, text);
  else process.stdout.write(text);
}
