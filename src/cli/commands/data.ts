// `tailor data summary`: the per-class training counts of a long-tailed set, its shot groups and
// the sizes of the test-agnostic test sets, for Fashion-MNIST, CIFAR-10/100 or an image list.
import { readFileSync } from 'node:fs';
import { CliError } from '../errors.js';
import { JSON_OPTION, defineCommand, defineSubcommands } from '../command.js';
import { numberArg, requiredNumber } from '../args.js';
import { synthImagesCommand } from './data-synth.js';
import {
  BUILTIN_DATASETS,
  INATURALIST_TEST_DISTRIBUTIONS,
  PUBLISHED_SPLITS,
  TEST_DISTRIBUTIONS,
  classCounts,
  findDistributionList,
  loadBuiltin,
  longTailCounts,
  longTailSubset,
  parseImageList,
  readImageList,
  shotGroups,
  testDistributionCounts,
  type BuiltinDataset,
  type ImbalanceProfile,
  type SubsetSampler,
} from '../../longtail/index.js';

const HELP = `usage: tailor data summary [options]
       tailor data synth-images --out DIR [options]   (see tailor data synth-images --help)

Prints the per-class training counts of a long-tailed training set, its shot groups
(many > 100, medium 20..100, few < 20 training images) and the sizes of the test-agnostic
test sets (forward50 .. uniform .. backward50), built from the balanced test set.

options:
  --dataset NAME     fmnist (default), cifar10, cifar100 or list
  --imbalance R      imbalance ratio n_max/n_min (default 100; for list: the list is used as given
                     unless --imbalance is set)
  --profile P        exp (default) or step
  --root DIR         data directory: Fashion-MNIST idx files (default /usr/share/datasets/fashion-mnist),
                     CIFAR python or binary batches, or the image root of a list. Without --root,
                     cifar10/cifar100 counts come from the published split sizes.
  --seed N           subsampling seed (default 0, as the reference code)
  --sampler S        numpy (default: the reference code's exact subsets) or tailor
  --train-list FILE  list: training list of 'relative/path label' lines
  --test-list FILE   list: balanced test list (the test sets are built from it)
  --lists DIR        list: directory with ready-made *_forward50.txt ... *_backward50.txt lists,
                     used as they are
  --distributions D  all (default, the eleven) or inat (forward/backward 2 and 3, uniform)
  --classes N        list: number of classes (default: largest label + 1)
  --skip-missing     list: warn about and skip missing images instead of failing
  --json             print JSON: {"train_counts": [...], "groups": {...}, "test_sets": {...}, ...}
  -h, --help         this text`;

interface Summary {
  dataset: string;
  classes: number;
  imbalance: number | null;
  profile: ImbalanceProfile | 'as-given';
  seed: number;
  sampler: SubsetSampler;
  source: string;
  class_order: number[];
  train_total: number;
  train_counts: number[];
  groups: { many: number; medium: number; few: number };
  test_sets: Record<string, number>;
}

const summaryCommand = defineCommand({
  help: HELP,
  options: {
    dataset: { type: 'string', default: 'fmnist' },
    imbalance: { type: 'string' },
    profile: { type: 'string', default: 'exp' },
    root: { type: 'string' },
    seed: { type: 'string', default: '0' },
    sampler: { type: 'string', default: 'numpy' },
    'train-list': { type: 'string' },
    'test-list': { type: 'string' },
    lists: { type: 'string' },
    distributions: { type: 'string', default: 'all' },
    classes: { type: 'string' },
    'skip-missing': { type: 'boolean', default: false },
    ...JSON_OPTION,
  },
  helpOnParseError: true,
  run: ({ values }) => {
    const profile = values.profile as ImbalanceProfile;
    if (profile !== 'exp' && profile !== 'step')
      throw new CliError(`--profile must be exp or step, got '${values.profile}'`);
    const sampler = values.sampler as SubsetSampler;
    if (sampler !== 'numpy' && sampler !== 'tailor')
      throw new CliError(`--sampler must be numpy or tailor, got '${values.sampler}'`);
    const seed = requiredNumber('--seed', values.seed, { integer: true, min: 0 });
    const imbalance = numberArg('--imbalance', values.imbalance, { min: 0 });
    if (imbalance !== undefined && imbalance < 1)
      throw new CliError(`--imbalance must be >= 1 (n_max / n_min), got ${imbalance}`);
    if (values.distributions !== 'all' && values.distributions !== 'inat') {
      throw new CliError(`--distributions must be all or inat, got '${values.distributions}'`);
    }
    const names: readonly string[] =
      values.distributions === 'inat' ? INATURALIST_TEST_DISTRIBUTIONS : TEST_DISTRIBUTIONS;
    const dataset = values.dataset!;

    let summary: Summary;
    try {
      if (dataset === 'list') {
        summary = listSummary(values, imbalance, profile, seed, sampler, names);
      } else if ((BUILTIN_DATASETS as readonly string[]).includes(dataset)) {
        summary = builtinSummary(
          dataset as BuiltinDataset,
          values.root,
          imbalance ?? 100,
          profile,
          seed,
          sampler,
          names,
        );
      } else {
        throw new CliError(`--dataset must be one of fmnist, cifar10, cifar100, list; got '${dataset}'`);
      }
    } catch (error) {
      if (error instanceof RangeError) throw new CliError(error.message);
      throw error;
    }
    console.log(values.json ? JSON.stringify(summary) : formatSummary(summary));
    return 0;
  },
});

export const run = defineSubcommands({
  help: HELP,
  commands: { summary: summaryCommand, 'synth-images': synthImagesCommand },
  unknown: (sub) =>
    `unknown data subcommand '${sub}' (use: tailor data summary --help or tailor data synth-images --help)`,
});

function groupSizes(trainCounts: number[]): Summary['groups'] {
  const g = shotGroups(trainCounts);
  return { many: g.many.length, medium: g.medium.length, few: g.few.length };
}

function builtinSummary(
  dataset: BuiltinDataset,
  root: string | undefined,
  imbalance: number,
  profile: ImbalanceProfile,
  seed: number,
  sampler: SubsetSampler,
  names: readonly string[],
): Summary {
  const published = PUBLISHED_SPLITS[dataset];
  const classes = published.classes;
  let trainCounts: number[];
  let testPerClass: number;
  let source: string;
  let classOrder = Array.from({ length: classes }, (_, i) => i);
  if (root === undefined && dataset !== 'fmnist') {
    // no files: the published splits are balanced, so the counts follow from the formula alone
    trainCounts = longTailCounts(classes, published.trainPerClass, imbalance, profile);
    testPerClass = published.testPerClass;
    source = `published ${dataset} split sizes (no --root given)`;
  } else {
    const train = loadBuiltin(dataset, 'train', root);
    const test = loadBuiltin(dataset, 'test', root);
    const subset = longTailSubset(train.labels, train.classes, { imbalance, profile, seed, sampler });
    trainCounts = subset.counts;
    classOrder = subset.classOrder;
    testPerClass = Math.min(...classCounts(test.labels, test.classes));
    source = train.source ?? root ?? '';
  }
  const testSets: Record<string, number> = {};
  for (const name of names) testSets[name] = sum(testDistributionCounts(name, testPerClass, trainCounts));
  return {
    dataset,
    classes,
    imbalance,
    profile,
    seed,
    sampler,
    source,
    class_order: classOrder,
    train_total: sum(trainCounts),
    train_counts: trainCounts,
    groups: groupSizes(trainCounts),
    test_sets: testSets,
  };
}

function listSummary(
  values: Record<string, string | boolean | undefined>,
  imbalance: number | undefined,
  profile: ImbalanceProfile,
  seed: number,
  sampler: SubsetSampler,
  names: readonly string[],
): Summary {
  const trainList = values['train-list'] as string | undefined;
  const root = values.root as string | undefined;
  if (!trainList)
    throw new CliError('--dataset list needs --train-list FILE (and --root DIR, the image root)');
  if (!root)
    throw new CliError('--dataset list needs --root DIR, the directory the list paths are relative to');
  const classesOpt = numberArg('--classes', values.classes as string | undefined, { integer: true, min: 0 });
  const missing = values['skip-missing'] ? 'skip' : 'error';
  const train = readImageList(root, trainList, { classes: classesOpt, missing });
  const classes = train.classes;
  const labels = Int32Array.from(train.entries, (e) => e.label);
  let trainCounts = classCounts(labels, classes);
  if (imbalance !== undefined)
    trainCounts = longTailSubset(labels, classes, { imbalance, profile, seed, sampler }).counts;
  const testSets: Record<string, number> = {};
  const listsDir = values.lists as string | undefined;
  if (listsDir) {
    // ready-made lists (ImageNet-LT, Places-LT, iNaturalist): used exactly as given
    for (const name of names) {
      const file = findDistributionList(listsDir, name);
      testSets[name] = parseImageList(readFileSync(file, 'utf8'), file, classes).entries.length;
    }
  } else {
    const testList = values['test-list'] as string | undefined;
    if (!testList)
      throw new CliError('--dataset list needs --test-list FILE or --lists DIR for the test sets');
    const test = readImageList(root, testList, { classes, missing });
    const perClass = Math.min(
      ...classCounts(
        Int32Array.from(test.entries, (e) => e.label),
        classes,
      ),
    );
    for (const name of names) testSets[name] = sum(testDistributionCounts(name, perClass, trainCounts));
  }
  return {
    dataset: 'list',
    classes,
    imbalance: imbalance ?? null,
    profile: imbalance === undefined ? 'as-given' : profile,
    seed,
    sampler,
    source: trainList,
    class_order: Array.from({ length: classes }, (_, i) => i),
    train_total: sum(trainCounts),
    train_counts: trainCounts,
    groups: groupSizes(trainCounts),
    test_sets: testSets,
  };
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function formatSummary(s: Summary): string {
  const lines: string[] = [];
  const how =
    s.imbalance === null
      ? 'training list as given'
      : `profile ${s.profile}, imbalance ${s.imbalance}, seed ${s.seed} (${s.sampler} sampler)`;
  lines.push(`${s.dataset}: ${s.classes} classes, ${how}`);
  lines.push(`source: ${s.source}`);
  lines.push(
    `training images: ${s.train_total} (largest class ${Math.max(...s.train_counts)}, smallest ${Math.min(...s.train_counts)})`,
  );
  lines.push('per-class training counts (class: count):');
  for (let c = 0; c < s.train_counts.length; c += 10) {
    lines.push(
      '  ' +
        s.train_counts
          .slice(c, c + 10)
          .map((n, k) => `${String(c + k).padStart(3)}: ${String(n).padStart(5)}`)
          .join('  '),
    );
  }
  lines.push(
    `shot groups: many (> 100) ${s.groups.many} classes, medium (20..100) ${s.groups.medium}, few (< 20) ${s.groups.few}`,
  );
  lines.push('test sets (from the balanced test set, test transforms only):');
  for (const [name, n] of Object.entries(s.test_sets)) lines.push(`  ${name.padEnd(11)} ${n}`);
  return lines.join('\n');
}
