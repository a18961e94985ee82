// The training, test and test-time-training transforms of the recipes, kept apart on purpose:
// SADE built its non-uniform CIFAR test sets with the training augmentation; here test sets only
// ever get the deterministic test transform.
import {
  compose,
  horizontalFlip,
  randomApply,
  randomCrop,
  randomResizedCrop,
  rotation,
  centerCrop,
  type ImageTransform,
} from './augment.js';
import { colorJitter, gaussianBlur, grayscale, normalize } from './augment-color.js';
import { cifar10Policy } from './autoaugment.js';
import { withFused, withHostOnly } from './fused.js';

export interface Normalization {
  mean: number[];
  std: number[];
}

/** The statistics the references normalize with. */
export const NORMALIZATION: Record<PipelineKind, Normalization> = {
  // SADE / BalPoE / PRL use the CIFAR-10 statistics for CIFAR-100 too
  cifar: { mean: [0.4914, 0.4822, 0.4465], std: [0.2023, 0.1994, 0.201] },
  imagenet: { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] },
  fmnist: { mean: [0.286], std: [0.353] },
  // SADE's iNaturalist 2018 loader
  inat: { mean: [0.466, 0.471, 0.38], std: [0.195, 0.194, 0.192] },
};

/** 'inat' is the ImageNet pipeline with iNaturalist statistics and no color jitter (SADE). */
export type PipelineKind = 'cifar' | 'imagenet' | 'fmnist' | 'inat';

export interface TrainAugmentOptions {
  /** Random rotation range in degrees (BalPoE adds 15 for CIFAR); 0 = none. */
  rotationDegrees?: number;
  /** Output size for 'imagenet' (RandomResizedCrop), default 224. */
  size?: number;
  /** Color jitter strength for 'imagenet' (0.4 in the references), 0 = none. */
  jitter?: number;
  /**
   * AutoAugment's CIFAR-10 policy after crop and flip ('cifar' only): BalPoE's long-training
   * CIFAR-100 recipe (`randaugm: true`). Drawn on the host only.
   */
  autoAugment?: boolean;
}

/**
 * Training augmentation: CIFAR crop 32 pad 4 + flip (+ rotation, + AutoAugment); ImageNet
 * RandomResizedCrop + flip + jitter.
 * @throws RangeError for AutoAugment with another pipeline than 'cifar'.
 */
export function trainTransform(kind: PipelineKind, options: TrainAugmentOptions = {}): ImageTransform {
  const norm = NORMALIZATION[kind];
  const steps: ImageTransform[] = [];
  if (options.autoAugment && kind !== 'cifar')
    throw new RangeError(`AutoAugment's CIFAR-10 policy is a 'cifar' pipeline step, not '${kind}'`);
  if (kind === 'cifar' || kind === 'fmnist') {
    const size = kind === 'cifar' ? 32 : 28;
    const padding = kind === 'cifar' ? 4 : 2;
    steps.push(randomCrop(size, size, padding), horizontalFlip());
    if (options.rotationDegrees) steps.push(rotation(options.rotationDegrees));
    if (options.autoAugment) {
      // the policy works on the 8-bit image, between flip and normalization, image by image:
      // no fused or device form
      steps.push(cifar10Policy(), normalize(norm.mean, norm.std));
      return withHostOnly(compose(...steps), 'AutoAugment runs on the host only');
    }
    // same draws and values as the composed steps, in one pass from the bytes
    const t = compose(...steps, normalize(norm.mean, norm.std));
    return withFused(t, {
      crop: { height: size, width: size, padding },
      flipP: 0.5,
      ...(options.rotationDegrees ? { rotationDegrees: options.rotationDegrees } : {}),
      ...norm,
    });
  } else {
    const size = options.size ?? 224;
    steps.push(randomResizedCrop(size), horizontalFlip());
    const j = options.jitter ?? (kind === 'inat' ? 0 : 0.4);
    if (j > 0) steps.push(colorJitter(j, j, j, 0));
  }
  steps.push(normalize(norm.mean, norm.std));
  return compose(...steps);
}

/**
 * Test transform: deterministic. CIFAR / Fashion-MNIST: normalization only; image lists are
 * decoded with Resize(256) + CenterCrop(224) already, so only a center crop to `size` (a no-op
 * at the decoded size) and normalization remain.
 */
export function testTransform(kind: PipelineKind, size = 224): ImageTransform {
  const norm = NORMALIZATION[kind];
  if (kind === 'imagenet' || kind === 'inat')
    return compose(centerCrop(size), normalize(norm.mean, norm.std));
  return withFused(normalize(norm.mean, norm.std), { flipP: 0, ...norm });
}

/**
 * The view augmentation of SADE's test-time self-supervised aggregation (apply it twice to the
 * same images, `views: 2`): crop + color jitter (0.4, 0.4, 0.4, 0.1) with p 0.8 + grayscale
 * p 0.2 + Gaussian blur p 0.2 + horizontal flip.
 */
export function testTimeViewTransform(kind: PipelineKind, size = 224): ImageTransform {
  const norm = NORMALIZATION[kind];
  const crop =
    kind === 'cifar'
      ? randomCrop(32, 32, 4)
      : kind === 'fmnist'
        ? randomCrop(28, 28, 2)
        : randomResizedCrop(size, size, [0.2, 1]);
  return compose(
    crop,
    randomApply(colorJitter(0.4, 0.4, 0.4, 0.1), 0.8),
    grayscale(0.2),
    randomApply(gaussianBlur(0.1, 2.0), 0.2),
    horizontalFlip(),
    normalize(norm.mean, norm.std),
  );
}

/** A transform described by data, so that worker threads can build the same one. */
export interface PipelineSpec {
  stage: 'train' | 'test' | 'test-time-views';
  kind: PipelineKind;
  options?: TrainAugmentOptions;
  /** Output size of the 'imagenet' test and view transforms (default 224). */
  size?: number;
}

export function makeTransform(spec: PipelineSpec): ImageTransform {
  switch (spec.stage) {
    case 'train':
      return trainTransform(spec.kind, spec.options);
    case 'test':
      return testTransform(spec.kind, spec.size);
    case 'test-time-views':
      return testTimeViewTransform(spec.kind, spec.size);
    default:
      throw new RangeError(
        `unknown pipeline stage '${String(spec.stage)}' (use train, test or test-time-views)`,
      );
  }
}
