// `tailor subgroup fit | lrt | select`: the latent-subgroup linear mixed model on long-format CSV
// data (one row per visit), JSON out.
import { CliError } from '../errors.js';
import { defineCommand, type OptionValues } from '../command.js';
import { UserError } from '../../util/errors.js';
import { listArg, numberArg, rangeListArg } from '../args.js';
import { writeFileAtomic, writeJsonAtomic } from '../../util/fs.js';
import {
  CollinearityError,
  MixtureArgumentError,
  type SubgroupData,
  dropMembership,
  readSubgroupCsv,
  type SubgroupFitOptions,
  fitSubgroup,
  membershipLrt,
  selectClasses,
  fitToJson,
  lrtToJson,
  posteriorCsv,
  selectionTable,
} from '../../mixture/index.js';

const COMMON = `data options:
  --data FILE          long-format CSV with a header row: one row per visit (required)
  --id COL             subject id column (default id)
  --time COL           time column; visits are sorted by it and AR(1) uses it (default time)
  --y COL              outcome column (default y)
  --fixed A,B          fixed-effect columns W (no intercept: the class means mu_k play that role)
  --membership U,V     membership covariates U (constant per subject; an intercept is added)

model and fitting options:
  --cor C              residual correlation: independent (default) or ar1 (phi^|t - s|)
  --starts N           EM starts: the quantile start plus N-1 random ones (default 20)
  --seed S             seed of the random starts (default 0)
  --tol T              stop when the total log-likelihood changes by less than T (default 1e-8)
  --max-iter M         EM iteration limit per start (default 10000)
  --acceleration A     squarem (default) or none (plain EM)
  --gamma-bound B      bound on |gamma| that keeps separated fits finite (default 25)
  --no-se              skip the standard errors (observed information)
  -h, --help           this text`;

const HELP = `usage: tailor subgroup <fit|lrt|select> [options]

The latent-subgroup linear mixed model: y_i = W_i alpha + 1 b_i + e_i, b_i ~ N(mu_k, sigmaB2) in
latent class k, e_i ~ N(0, sigmaEps2 R_i), P(class k | U_i) multinomial logit (class 1 reference).
Classes are reported ordered by mu ascending. BIC uses n = number of subjects.

  tailor subgroup fit --data long.csv --fixed A,B --membership U,V --k 3 [--out fit.json] [--posterior FILE]
      JSON with alpha, mu, sigmaB2, sigmaEps2, phi, gamma, standard errors, logLik, bic, nIter,
      converged, warnings (to stdout, or to --out with a summary on stdout). --posterior writes a CSV
      of id, class, prob1..probK.
  tailor subgroup lrt --drop V[,W] --k 3 ...same options
      likelihood-ratio test of the membership covariates V, W: prints LR, df and p
      (df = (K - 1) x dropped covariates); --out writes both fits as JSON.
  tailor subgroup select --k 1..4 ...same options
      fits each K and prints the BIC table; --out writes the table and fits as JSON.

${COMMON}`;

const OPTIONS = {
  data: { type: 'string' },
  id: { type: 'string', default: 'id' },
  time: { type: 'string', default: 'time' },
  y: { type: 'string', default: 'y' },
  fixed: { type: 'string', default: '' },
  membership: { type: 'string', default: '' },
  k: { type: 'string' },
  cor: { type: 'string', default: 'independent' },
  starts: { type: 'string', default: '20' },
  seed: { type: 'string', default: '0' },
  tol: { type: 'string', default: '1e-8' },
  'max-iter': { type: 'string', default: '10000' },
  acceleration: { type: 'string', default: 'squarem' },
  'gamma-bound': { type: 'string', default: '25' },
  'no-se': { type: 'boolean', default: false },
  out: { type: 'string' },
  posterior: { type: 'string' },
  drop: { type: 'string' },
} as const;

type Values = OptionValues<typeof OPTIONS>;

function fitOptions(values: Values): Omit<SubgroupFitOptions, 'K'> {
  const cor = values.cor;
  if (cor !== 'independent' && cor !== 'ar1')
    throw new CliError(`--cor must be independent or ar1, got '${cor}'`);
  const acceleration = values.acceleration;
  if (acceleration !== 'squarem' && acceleration !== 'none') {
    throw new CliError(`--acceleration must be squarem or none, got '${acceleration}'`);
  }
  return {
    correlation: cor,
    starts: numberArg('--starts', values.starts, { integer: true, min: 1 })!,
    seed: numberArg('--seed', values.seed, { integer: true })!,
    tol: numberArg('--tol', values.tol, { positive: true })!,
    maxIter: numberArg('--max-iter', values['max-iter'], { integer: true, min: 1 })!,
    acceleration,
    gammaBound: numberArg('--gamma-bound', values['gamma-bound'], { positive: true })!,
    standardErrors: !values['no-se'],
  };
}

function readData(values: Values): SubgroupData {
  if (!values.data) throw new CliError(`--data FILE is required\n\n${HELP}`);
  return readSubgroupCsv(values.data, {
    id: values.id,
    time: values.time,
    y: values.y,
    fixed: listArg('--fixed', values.fixed) ?? [],
    membership: listArg('--membership', values.membership) ?? [],
  });
}

function singleK(values: Values): number {
  if (!values.k) throw new CliError('--k (the number of classes) is required');
  const ks = rangeListArg('--k', values.k);
  if (ks.length !== 1)
    throw new CliError(`--k must be one number here, got '${values.k}' (use 'subgroup select' for several)`);
  return ks[0]!;
}

function printWarnings(warnings: string[]): void {
  for (const w of warnings) console.error(`warning: ${w}`);
}

async function runFit(values: Values): Promise<number> {
  const K = singleK(values);
  const data = readData(values);
  const fit = fitSubgroup(data, { ...fitOptions(values), K });
  const json = fitToJson(fit, data, { data: values.data });
  if (values.posterior) writeFileAtomic(values.posterior, posteriorCsv(fit, data));
  if (values.out) {
    writeJsonAtomic(values.out, json);
    console.log(
      `K=${K} logLik=${fit.logLik.toFixed(5)} BIC=${fit.bic.toFixed(3)} (n=${data.nSubjects} subjects) ` +
        `nIter=${fit.nIter} converged=${fit.converged} mu=[${Array.from(fit.params.mu, (m) => m.toFixed(4)).join(', ')}] ` +
        `class sizes ${fit.classSizes.join('/')} -> ${values.out}`,
    );
  } else {
    console.log(JSON.stringify(json, null, 2));
  }
  printWarnings(fit.warnings);
  return 0;
}

async function runLrt(values: Values): Promise<number> {
  const K = singleK(values);
  const drop = listArg('--drop', values.drop) ?? [];
  if (drop.length === 0) throw new CliError('--drop V[,W] (the membership covariates to test) is required');
  const data = readData(values);
  const result = membershipLrt(data, drop, { ...fitOptions(values), K });
  console.log(`LR ${result.lr}`);
  console.log(`df ${result.df}`);
  console.log(`p ${result.pValue}`);
  console.log(
    `logLik full ${result.full.logLik} (membership: ${['(intercept)', ...data.membershipNames].join(', ')})`,
  );
  const reducedData = dropMembership(data, drop);
  console.log(
    `logLik reduced ${result.reduced.logLik} (membership: ${['(intercept)', ...reducedData.membershipNames].join(', ')})`,
  );
  if (values.out) writeJsonAtomic(values.out, lrtToJson(result, data, reducedData));
  printWarnings([
    ...result.warnings,
    ...result.full.warnings.map((w) => `full fit: ${w}`),
    ...result.reduced.warnings.map((w) => `reduced fit: ${w}`),
  ]);
  return 0;
}

async function runSelect(values: Values): Promise<number> {
  if (!values.k) throw new CliError('--k is required (for example --k 1..4)');
  const ks = rangeListArg('--k', values.k);
  const data = readData(values);
  const selection = selectClasses(data, ks, fitOptions(values));
  console.log(selectionTable(selection));
  if (values.out) {
    writeJsonAtomic(values.out, {
      bicN: data.nSubjects,
      bestK: selection.bestK,
      table: selection.rows,
      fits: selection.fits.map((f) => fitToJson(f, data)),
    });
  }
  printWarnings(selection.rows.flatMap((r) => r.warnings.map((w) => `K=${r.K}: ${w}`)));
  return 0;
}

export const run = defineCommand({
  help: HELP,
  options: OPTIONS,
  subcommand: true,
  helpOnParseError: true,
  run: async ({ sub, values }) => {
    if (values.drop !== undefined && sub !== 'lrt') throw new CliError('--drop belongs to subgroup lrt');
    if (values.posterior !== undefined && sub !== 'fit')
      throw new CliError('--posterior belongs to subgroup fit');
    try {
      if (sub === 'fit') return await runFit(values);
      if (sub === 'lrt') return await runLrt(values);
      if (sub === 'select') return await runSelect(values);
    } catch (error) {
      // A UserError names its file. Model errors (too few subjects for K, collinear columns, ...)
      // (MixtureArgumentError, CollinearityError) do not: they concern the data file.
      if (
        error instanceof UserError &&
        !(error instanceof CollinearityError) &&
        !(error instanceof MixtureArgumentError)
      )
        throw error;
      if (error instanceof Error && !(error instanceof TypeError) && !(error instanceof ReferenceError)) {
        throw new CliError(values.data ? `${values.data}: ${error.message}` : error.message);
      }
      throw error;
    }
    throw new CliError(`unknown subgroup command '${sub}': use fit, lrt or select\n\n${HELP}`);
  },
});
