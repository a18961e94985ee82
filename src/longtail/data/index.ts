// One entry point for the built-in data sets: Fashion-MNIST (idx), CIFAR-10/100 (python or
// binary layout), each as balanced train and test splits held in memory.
import { readCifar } from './cifar.js';
import { FASHION_MNIST_DEFAULT_ROOT, readFashionMnist } from './idx.js';
import type { PipelineKind } from './pipelines.js';
import type { ImageDataset } from './types.js';

/** The built-in data sets: Fashion-MNIST, CIFAR-10 and CIFAR-100. */
export type BuiltinDataset = 'fmnist' | 'cifar10' | 'cifar100';
/** Every {@link BuiltinDataset}. */
export const BUILTIN_DATASETS: readonly BuiltinDataset[] = ['fmnist', 'cifar10', 'cifar100'];

/** Per-class sizes of the published balanced splits (for summaries without the files). */
export const PUBLISHED_SPLITS: Record<
  BuiltinDataset,
  { classes: number; trainPerClass: number; testPerClass: number }
> = {
  fmnist: { classes: 10, trainPerClass: 6000, testPerClass: 1000 },
  cifar10: { classes: 10, trainPerClass: 5000, testPerClass: 1000 },
  cifar100: { classes: 100, trainPerClass: 500, testPerClass: 100 },
};

export function pipelineKind(name: BuiltinDataset): PipelineKind {
  return name === 'fmnist' ? 'fmnist' : 'cifar';
}

/**
 * Reads a split of a built-in data set (Fashion-MNIST, CIFAR-10, CIFAR-100) from its files.
 * @param root The folder of the files (default the data set's usual system folder, e.g. /usr/share/datasets/fashion-mnist).
 * @throws {@link DataFormatError} when a file is missing or malformed.
 *
 * @example
 * ```ts
 * import { loadBuiltin, longTailSubset } from 'tailor/longtail';
 * const train = loadBuiltin('fmnist', 'train');
 * ```
 */
export function loadBuiltin(name: BuiltinDataset, split: 'train' | 'test', root?: string): ImageDataset {
  switch (name) {
    case 'fmnist':
      return readFashionMnist(root ?? FASHION_MNIST_DEFAULT_ROOT, split);
    case 'cifar10':
    case 'cifar100':
      if (!root) throw new Error(`${name} needs a data directory (no download at run time)`);
      return readCifar(root, name, split);
    default:
      throw new RangeError(`unknown data set '${String(name)}' (use ${BUILTIN_DATASETS.join(', ')})`);
  }
}
