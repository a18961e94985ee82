// Builds what a config describes: the long-tailed training set and the balanced test set (the
// built-in sets in memory, or image lists read lazily), the model, the optimizer and the
// learning-rate schedule.
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { loadBuiltin, pipelineKind, type BuiltinDataset } from '../data/index.js';
import { longTailSubset, type LongTailSubset } from '../data/longtail.js';
import { classCounts, type ImageDataset } from '../data/types.js';
import { describeValidation, holdOutFromList, holdOutValidation } from '../data/validation.js';
import { LazyImageDataset, readImageList, type ImageList } from '../data/imagelist.js';
import type { ImageListPipeline } from '../data/imagelist-loader.js';
import type { PipelineKind } from '../data/pipelines.js';
import type { ImageSet } from '../data/source.js';
import { ConfigError, type TrainConfig } from './config.js';

export { buildModel, buildOptimizer, buildScheduler } from './model-optimizer.js';

const LOADER_DATASETS = {
  ImbalanceCIFAR100DataLoader: 'cifar100',
  ImbalanceCIFAR10DataLoader: 'cifar10',
  ImbalanceFashionMNISTDataLoader: 'fmnist',
} as const satisfies Record<string, BuiltinDataset>;

type LoaderSection = TrainConfig['data_loader'];
type BuiltinSection = Extract<LoaderSection, { type: keyof typeof LOADER_DATASETS }>;
type ImageListSection = Exclude<LoaderSection, BuiltinSection>;
const isBuiltin = (loader: LoaderSection): loader is BuiltinSection =>
  Object.hasOwn(LOADER_DATASETS, loader.type);

/**
 * The image-list loaders of the SADE configs (data_loader/imagenet_lt_data_loaders.py,
 * places_loader.py, inaturalist_data_loaders.py): the data set they read, its pipeline and the
 * list files they look for (in data_dir, or under data_txt/<folder> as the reference keeps them).
 */
export interface ImageListLoader {
  dataset: string;
  pipeline: PipelineKind;
  lists: { train: string; val: string; test: string };
  folder: string;
}

const IMAGENET_LT: ImageListLoader = {
  dataset: 'imagenet_lt',
  pipeline: 'imagenet',
  lists: { train: 'ImageNet_LT_train.txt', val: 'ImageNet_LT_val.txt', test: 'ImageNet_LT_test.txt' },
  folder: 'ImageNet_LT',
};
const PLACES_LT: ImageListLoader = {
  dataset: 'places_lt',
  pipeline: 'imagenet',
  lists: { train: 'Places_LT_train.txt', val: 'Places_LT_val.txt', test: 'Places_LT_test.txt' },
  folder: 'Places_LT_v2',
};
// iNaturalist 2018 has no separate test split: its validation list is the test set
const INATURALIST: ImageListLoader = {
  dataset: 'inat2018',
  pipeline: 'inat',
  lists: { train: 'iNaturalist18_train.txt', val: 'iNaturalist18_val.txt', test: 'iNaturalist18_val.txt' },
  folder: 'iNaturalist18',
};

export const IMAGE_LIST_LOADERS: Record<string, ImageListLoader> = {
  ImageNetLTDataLoader: IMAGENET_LT,
  // SADE's class is Places_LT; Places_LT_DataLoader is accepted as well
  Places_LT: PLACES_LT,
  Places_LT_DataLoader: PLACES_LT,
  iNaturalistDataLoader: INATURALIST,
};

/**
 * The data of a session: the data set, its pipeline, the train, validation and test splits and
 * their class counts.
 */
export interface ExperimentData {
  /** fmnist, cifar10, cifar100, or imagenet_lt, places_lt, inat2018 for image lists. */
  dataset: string;
  pipeline: PipelineKind;
  /** Output size of the transforms of image lists (224 by default). */
  imageSize?: number;
  train: ImageSet;
  test: ImageSet;
  /** Evaluated after every epoch, for model_best and calibration: held out of the training pool, or an image list's val list. */
  val: ImageSet;
  /** How the validation split was made (recorded in the run). */
  validation: ReturnType<typeof describeValidation>;
  /** The list files read (image lists only), for messages. */
  lists?: { train: string; val: string; test: string };
  subset: LongTailSubset;
  /**
   * Built-in data sets: which images of the source's training split the train and val splits
   * are, in their order (the test split is the test file's first test_per_class per class).
   */
  sourceIndices?: { train: Int32Array; val: Int32Array };
  /** Training images per class of the long-tailed set. */
  trainCounts: number[];
  batchSize: number;
  balancedSampling: boolean;
  /** data_loader.args.on_device: where training batches are drawn (absent: 'auto'). */
  onDevice?: boolean | 'auto';
  /** Image lists: how training batches are decoded, augmented and prefetched (num_workers). */
  trainLoader?: ImageListPipeline;
  /**
   * Training batches go through AutoAugment's CIFAR-10 policy after crop and flip: BalPoE's
   * long-training CIFAR-100 loader (`randaugm: true`).
   */
  autoAugment?: boolean;
  /**
   * RandomRotation range of the training batches in degrees: 15 for CIFAR, as the SADE, BalPoE
   * and RIDE CIFAR loaders rotate (none in BalPoE's long-training path); absent: none.
   */
  rotationDegrees?: number;
}

/**
 * Data settings that replace a config's (root, test and train caps, imbalance, ...), for quick
 * runs and the CLI flags.
 */
export interface DataOverrides {
  root?: string;
  /** Keep at most this many images per class of the test set (quick runs and tests). */
  testPerClass?: number;
  /** Cap the head class (quick runs and tests): nMax of the long-tail profile. */
  trainMaxPerClass?: number;
}

/** Validation images per class held out of the training pool unless data_loader.args.validation_per_class says otherwise. */
export const DEFAULT_VALIDATION_PER_CLASS = 20;

export function buildData(
  config: TrainConfig,
  overrides: DataOverrides = {},
  file = 'config',
): ExperimentData {
  const loader = config.data_loader;
  if (!isBuiltin(loader)) {
    const listLoader = IMAGE_LIST_LOADERS[loader.type];
    if (!listLoader)
      throw new ConfigError(file, 'data_loader.type', `unsupported data loader '${loader.type}'`);
    return buildImageListData(config, loader, listLoader, overrides, file);
  }
  const dataset = LOADER_DATASETS[loader.type];
  const args = loader.args;
  // The config's caps, unless the command line gives its own.
  overrides = {
    ...(args.n_max ? { trainMaxPerClass: args.n_max } : {}),
    ...(args.test_per_class ? { testPerClass: args.test_per_class } : {}),
    ...overrides,
  };
  const root = overrides.root ?? (dataset === 'fmnist' ? undefined : args.data_dir);
  const train = loadBuiltin(
    dataset,
    'train',
    root ?? (dataset === 'fmnist' && args.data_dir ? args.data_dir : undefined),
  );
  let test = loadBuiltin(
    dataset,
    'test',
    root ?? (dataset === 'fmnist' && args.data_dir ? args.data_dir : undefined),
  );
  const imbFactor = args.imb_factor ?? 0.01;
  if (!(imbFactor > 0 && imbFactor <= 1))
    throw new ConfigError(file, 'data_loader.args.imb_factor', 'must be in (0, 1], e.g. 0.01 for IR100');
  const subset = longTailSubset(train.labels, train.classes, {
    imbalance: 1 / imbFactor,
    profile: args.imb_type ?? 'exp',
    seed: args.seed ?? 0,
    ...(overrides.trainMaxPerClass ? { nMax: overrides.trainMaxPerClass } : {}),
  });
  const validation = holdOutValidation(
    train.labels,
    train.classes,
    subset.indices,
    args.validation_per_class ?? DEFAULT_VALIDATION_PER_CLASS,
    args.seed ?? 0,
  );
  const trainSet = selectByIndices(train, validation.train);
  if (overrides.testPerClass) {
    const keep: number[] = [];
    const seen = new Array<number>(test.classes).fill(0);
    test.labels.forEach((y, i) => {
      if (seen[y]! < overrides.testPerClass!) {
        seen[y]!++;
        keep.push(i);
      }
    });
    test = selectByIndices(test, keep);
  }
  return {
    dataset,
    pipeline: pipelineKind(dataset),
    train: trainSet,
    test,
    val: selectByIndices(train, validation.indices),
    validation: describeValidation(validation),
    subset,
    sourceIndices: { train: validation.train, val: validation.indices },
    trainCounts: subset.counts.map((n, c) => n - validation.fromSubset[c]!),
    batchSize: args.batch_size ?? 128,
    balancedSampling: args.balanced ?? false,
    ...(args.on_device !== undefined ? { onDevice: args.on_device } : {}),
    // BalPoE's CIFAR-100 loader maps randaugm to AutoAugment ('auto'); its CIFAR-10 loader passes
    // randaugm itself (true) where 'auto' is compared, so CIFAR-10 long training gets no policy:
    // crop, flip and normalization only
    ...(args.randaugm && dataset === 'cifar100' ? { autoAugment: true } : {}),
    // the standard CIFAR loaders of SADE, BalPoE and RIDE rotate by up to 15 degrees after crop
    // and flip; BalPoE's long-training path (cifar_aug_plus) does not
    ...(dataset !== 'fmnist' && !args.randaugm ? { rotationDegrees: 15 } : {}),
  };
}

/**
 * Where a list file is: an explicit `*_txt` is tried as given (absolute, or relative to the
 * working directory) and under data_dir (SADE writes data_dir + "/ImageNet_LT_train.txt"); the
 * default name is looked for in data_dir, data_dir/data_txt/<folder> and ./data_txt/<folder>.
 */
function findList(
  dataDir: string,
  loader: ImageListLoader,
  split: 'train' | 'val' | 'test',
  explicit: string | undefined,
  file: string,
  key: string,
): string | null {
  const candidates = explicit
    ? [...(isAbsolute(explicit) ? [explicit] : []), join(dataDir, explicit), resolve(explicit)]
    : [
        join(dataDir, loader.lists[split]),
        join(dataDir, 'data_txt', loader.folder, loader.lists[split]),
        resolve('data_txt', loader.folder, loader.lists[split]),
      ];
  const found = candidates.find((c) => existsSync(c));
  if (found) return resolve(found);
  if (!explicit && split === 'val') return null;
  throw new ConfigError(
    file,
    `data_loader.args.${key}`,
    `no ${split} list found (tried ${[...new Set(candidates)].join(', ')})` +
      (explicit ? '' : `; set data_loader.args.${key} to the list file`),
  );
}

/** The first `perClass` entries of every class, in list order (quick runs and tests). */
function capPerClass(list: ImageList, perClass: number | undefined): ImageList {
  if (!perClass) return list;
  const seen = new Array<number>(list.classes).fill(0);
  const entries = list.entries.filter((e) => seen[e.label]!++ < perClass);
  return { ...list, entries };
}

/** Image lists (ImageNet-LT, Places-LT, iNaturalist 2018): long-tailed as given, decoded per batch. */
function buildImageListData(
  config: TrainConfig,
  section: ImageListSection,
  loader: ImageListLoader,
  overrides: DataOverrides,
  file: string,
): ExperimentData {
  const args = section.args;
  overrides = {
    ...(args.n_max ? { trainMaxPerClass: args.n_max } : {}),
    ...(args.test_per_class ? { testPerClass: args.test_per_class } : {}),
    ...overrides,
  };
  const dataDir = resolve(overrides.root ?? args.data_dir ?? '.');
  if (!existsSync(dataDir))
    throw new ConfigError(file, 'data_loader.args.data_dir', `image root '${dataDir}' does not exist`);
  const imageSize = args.image_size ?? 224;
  const resizeSize = args.resize_size ?? Math.round((imageSize * 256) / 224);
  if (resizeSize < imageSize)
    throw new ConfigError(file, 'data_loader.args.resize_size', `must be >= image_size (${imageSize})`);
  const numClasses = config.arch.args.num_classes;
  const missing = args.skip_missing ? 'skip' : 'error';
  const trainFile = findList(dataDir, loader, 'train', args.train_txt, file, 'train_txt')!;
  const testFile = findList(dataDir, loader, 'test', args.test_txt, file, 'test_txt')!;
  const valExplicit = args.val_txt ?? args.eval_txt;
  const valFile =
    findList(dataDir, loader, 'val', valExplicit, file, args.val_txt ? 'val_txt' : 'eval_txt') ?? testFile;
  let trainList = capPerClass(
    readImageList(dataDir, trainFile, { ...(numClasses ? { classes: numClasses } : {}), missing }),
    overrides.trainMaxPerClass,
  );
  // Without a val list of its own, the validation split comes out of the training list.
  const heldOut =
    valFile === testFile
      ? holdOutFromList(trainList, args.validation_per_class ?? DEFAULT_VALIDATION_PER_CLASS, 0)
      : null;
  if (heldOut) trainList = heldOut.train;
  const classes = trainList.classes;
  const read = (f: string) =>
    capPerClass(readImageList(dataDir, f, { classes, missing }), overrides.testPerClass);
  // training: RandomResizedCrop draws from the whole image, decoded (stretched) at resize_size;
  // evaluation: Resize(resize_size) + CenterCrop(image_size) at decoding
  const train = new LazyImageDataset(trainList, { height: resizeSize, width: resizeSize, mode: 'stretch' });
  const evalDecode = {
    height: imageSize,
    width: imageSize,
    mode: 'resize-crop' as const,
    resizeShorter: resizeSize,
  };
  const test = new LazyImageDataset(read(testFile), evalDecode);
  const val = new LazyImageDataset(heldOut ? heldOut.val : read(valFile), evalDecode);
  const counts = classCounts(train.labels, classes);
  const positive = counts.filter((c) => c > 0);
  const subset: LongTailSubset = {
    indices: Int32Array.from({ length: train.length }, (_, i) => i),
    counts,
    classOrder: Array.from({ length: classes }, (_, i) => i),
    imbalance: Math.max(...positive) / Math.min(...positive),
    profile: 'none',
    seed: 0,
    sampler: 'tailor',
    nMax: Math.max(...counts),
  };
  return {
    dataset: loader.dataset,
    pipeline: loader.pipeline,
    imageSize,
    train,
    test,
    val,
    validation: heldOut
      ? describeValidation(heldOut.split)
      : describeValidation({ source: valFile, counts: classCounts(val.labels, classes) }),
    lists: { train: trainFile, val: heldOut ? `${trainFile} (held out)` : valFile, test: testFile },
    subset,
    trainCounts: counts,
    batchSize: args.batch_size ?? 128,
    balancedSampling: args.balanced ?? false,
    // training batches: RandomResizedCrop in the original image, as torchvision does, on
    // num_workers threads (the stretched decode of `train` serves the other uses of the set);
    // randaugm adds BalPoE's RandAugment (aug_plus), whose test transform is the Resize +
    // CenterCrop of `test` and `val` above, normalized with the same statistics
    trainLoader: {
      spec: {
        stage: 'train',
        kind: loader.pipeline === 'inat' ? 'inat' : 'imagenet',
        size: imageSize,
        ...(args.randaugm ? { randAugment: true } : {}),
      },
      workers: args.num_workers ?? 0,
      prefetch: (args.prefetch_factor ?? 2) * Math.max(1, args.num_workers ?? 0),
      ...(args.skip_corrupt ? { skipCorrupt: true } : {}),
    },
  };
}

function selectByIndices(ds: ImageDataset, indices: ArrayLike<number>): ImageDataset {
  const size = ds.shape[0] * ds.shape[1] * ds.shape[2];
  const images = new Uint8Array(indices.length * size);
  const labels = new Int32Array(indices.length);
  for (let k = 0; k < indices.length; k++) {
    const i = indices[k]!;
    images.set(ds.images.subarray(i * size, (i + 1) * size), k * size);
    labels[k] = ds.labels[i]!;
  }
  return { ...ds, images, labels };
}
