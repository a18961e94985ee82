// RandAugment as BalPoE-CalibratedLT's long-training image-list recipe runs it: aug_plus's
// 'randcls' augmentation (PaCo's, dataset/others.py) calls
// rand_augment_transform('rand-n2-m10-mstd0.5', ra_params) of its dataset/randaugment.py (Ross
// Wightman's timm implementation of that time). Per image, two operations are chosen uniformly
// with replacement among 15; each fires with probability 0.5 and then draws its magnitude from
// a normal of mean 10 and standard deviation 0.5, clipped to 0..10; rotate, shear and translate
// take a random sign and a random filter (BILINEAR or BICUBIC), and fill with the ImageNet mean
// (124, 116, 104). The operations run on the 8-bit image as Pillow 9.4 runs them (pil-ops.ts,
// pil-affine.ts). Every draw comes from the image's own generator, in the reference's order (the
// two operations; then per operation: fires?, magnitude, sign, filter), so a batch is the same
// whichever thread builds it, and a resumed run draws what the uninterrupted one drew.
import type { Rng } from '../../util/rng.js';
import { affine, rotate, type Resample } from './pil-affine.js';
import {
  autocontrast,
  brightness,
  color,
  contrast,
  equalize,
  invert,
  posterize,
  sharpness,
  solarize,
  solarizeAdd,
  unchanged,
  type ByteImage,
} from './pil-ops.js';

/** The reference's _RAND_TRANSFORMS, in its order (the uniform choice indexes this list). */
export const RAND_AUGMENT_OPS = [
  'AutoContrast',
  'Equalize',
  'Invert',
  'Rotate',
  'PosterizeTpu',
  'Solarize',
  'SolarizeAdd',
  'Color',
  'Contrast',
  'Brightness',
  'Sharpness',
  'ShearX',
  'ShearY',
  'TranslateXRel',
  'TranslateYRel',
] as const;

/** One operation of RandAugment's list. */
export type RandAugmentOp = (typeof RAND_AUGMENT_OPS)[number];

/** The magnitude scale's top (the reference's _MAX_LEVEL): magnitudes are clipped to 0..10. */
export const RAND_AUGMENT_MAX_LEVEL = 10;

/** A RandAugment recipe: the reference's config string and hyper-parameters. */
export interface RandAugmentRecipe {
  /** Operations chosen per image (the config string's n). */
  layers: number;
  /** Mean magnitude (m), 0..10. */
  magnitude: number;
  /** Standard deviation of the magnitude's normal noise (mstd); 0: a fixed magnitude. */
  magnitudeStd: number;
  /** Probability that a chosen operation is applied. */
  prob: number;
  /** Fill of the geometric operations (hparams img_mean), one value per channel. */
  fill: readonly number[];
  /** Filters a geometric operation chooses from, uniformly (the reference's _RANDOM_INTERPOLATION). */
  resamples: readonly Resample[];
}

/**
 * BalPoE's recipe ('rand-n2-m10-mstd0.5'; img_mean is round(255 x the ImageNet mean), for
 * ImageNet-LT and iNaturalist alike): two operations, magnitude 10 with noise 0.5, each applied
 * with probability 0.5, uniform choice (no weights), BILINEAR or BICUBIC.
 */
export const BALPOE_RAND_AUGMENT: RandAugmentRecipe = Object.freeze({
  layers: 2,
  magnitude: 10,
  magnitudeStd: 0.5,
  prob: 0.5,
  fill: Object.freeze([124, 116, 104]),
  resamples: Object.freeze(['bilinear', 'bicubic'] as Resample[]),
});

/** The operations whose argument takes a random sign (the reference's _randomly_negate). */
export const RAND_AUGMENT_SIGNED: ReadonlySet<RandAugmentOp> = new Set<RandAugmentOp>([
  'Rotate',
  'ShearX',
  'ShearY',
  'TranslateXRel',
  'TranslateYRel',
]);

/** The operations that resample (and so draw a filter): the signed ones. */
export const RAND_AUGMENT_GEOMETRIC: ReadonlySet<RandAugmentOp> = RAND_AUGMENT_SIGNED;

/** What one chosen operation drew. */
export interface RandAugmentOpDraw {
  op: RandAugmentOp;
  /** Whether it was applied (probability `prob`); nothing else is drawn when it was not. */
  fired: boolean;
  /** The magnitude, clipped to 0..10 (fired operations). */
  magnitude?: number;
  /** The argument's sign (fired rotate, shear and translate). */
  sign?: 1 | -1;
  /** The filter (fired rotate, shear and translate). */
  resample?: Resample;
}

/**
 * A standard normal draw (Marsaglia's polar method) that keeps no spare value: Rng.normal keeps
 * its second value for the next call outside the generator's state, so a generator restored from
 * state() would draw another sequence.
 */
function normal(rng: Rng): number {
  for (;;) {
    const u = 2 * rng.uniform() - 1;
    const v = 2 * rng.uniform() - 1;
    const s = u * u + v * v;
    if (s > 0 && s < 1) return u * Math.sqrt((-2 * Math.log(s)) / s);
  }
}

/**
 * One image's draws: `layers` operations uniformly with replacement (numpy.random.choice
 * without weights), then per operation, as AutoAugmentOp.__call__ draws: applied when a uniform
 * draw is at most `prob`; magnitude + std x normal, clipped to 0..10; for the geometric
 * operations a sign (negative above 0.5) and a filter.
 */
export function drawRandAugment(rng: Rng, recipe: RandAugmentRecipe = BALPOE_RAND_AUGMENT): RandAugmentOpDraw[] {
  const ops = Array.from({ length: recipe.layers }, () => RAND_AUGMENT_OPS[rng.int(RAND_AUGMENT_OPS.length)]!);
  return ops.map((op) => {
    if (rng.uniform() > recipe.prob) return { op, fired: false };
    let magnitude = recipe.magnitude;
    if (recipe.magnitudeStd > 0) magnitude += recipe.magnitudeStd * normal(rng);
    magnitude = Math.min(RAND_AUGMENT_MAX_LEVEL, Math.max(0, magnitude));
    if (!RAND_AUGMENT_GEOMETRIC.has(op)) return { op, fired: true, magnitude };
    const sign: 1 | -1 = rng.uniform() > 0.5 ? -1 : 1;
    const resample = recipe.resamples[rng.int(recipe.resamples.length)]!;
    return { op, fired: true, magnitude, sign, resample };
  });
}

/**
 * The argument the reference's level_to_arg gives `op` at `magnitude` (0..10) and `sign`:
 * rotate 30 degrees x m / 10; posterize (the TPU variant) int(4 m / 10) bits; solarize threshold
 * int(256 m / 10); solarize-add int(110 m / 10); the enhancers' factor 1.8 m / 10 + 0.1 (no
 * sign); shear 0.3 m / 10; translate 0.45 m / 10 of the image's width or height. 0 for the
 * operations without one.
 */
export function randAugmentArg(op: RandAugmentOp, magnitude: number, sign: 1 | -1 = 1): number {
  const level = magnitude / RAND_AUGMENT_MAX_LEVEL;
  const signed = (v: number) => (sign < 0 ? -v : v);
  switch (op) {
    case 'Rotate':
      return signed(level * 30);
    case 'PosterizeTpu':
      return Math.trunc(level * 4);
    case 'Solarize':
      return Math.trunc(level * 256);
    case 'SolarizeAdd':
      return Math.trunc(level * 110);
    case 'Color':
    case 'Contrast':
    case 'Brightness':
    case 'Sharpness':
      return level * 1.8 + 0.1;
    case 'ShearX':
    case 'ShearY':
      return signed(level * 0.3);
    case 'TranslateXRel':
    case 'TranslateYRel':
      return signed(level * 0.45);
    case 'AutoContrast':
    case 'Equalize':
    case 'Invert':
      return 0;
  }
}

/**
 * The operations that compute each pixel from its own values (and the image's histograms or
 * mean): they may write over their input. The others read neighbouring pixels.
 */
export const RAND_AUGMENT_POINTWISE: ReadonlySet<RandAugmentOp> = new Set<RandAugmentOp>([
  'AutoContrast',
  'Equalize',
  'Invert',
  'PosterizeTpu',
  'Solarize',
  'SolarizeAdd',
  'Color',
  'Contrast',
  'Brightness',
]);

/**
 * Applies one fired operation as the reference's op functions call Pillow. The result goes to
 * `into` when given (for the operations of RAND_AUGMENT_POINTWISE it may be img.data itself),
 * else to a new image; an operation that does not fire returns `img` (copied into `into`).
 */
export function applyRandAugmentOp(
  img: ByteImage,
  draw: RandAugmentOpDraw,
  recipe: RandAugmentRecipe = BALPOE_RAND_AUGMENT,
  into?: Uint8Array,
): ByteImage {
  if (!draw.fired) return unchanged(img, into);
  const arg = randAugmentArg(draw.op, draw.magnitude ?? recipe.magnitude, draw.sign ?? 1);
  const resample = draw.resample ?? recipe.resamples[0]!;
  const fill = recipe.fill;
  switch (draw.op) {
    case 'AutoContrast':
      return autocontrast(img, into);
    case 'Equalize':
      return equalize(img, into);
    case 'Invert':
      return invert(img, into);
    case 'Rotate':
      return rotate(img, arg, fill, resample, into);
    case 'PosterizeTpu':
      return arg >= 8 ? unchanged(img, into) : posterize(img, arg, into);
    case 'Solarize':
      return solarize(img, arg, into);
    case 'SolarizeAdd':
      return solarizeAdd(img, arg, 128, into);
    case 'Color':
      return color(img, arg, into);
    case 'Contrast':
      return contrast(img, arg, into);
    case 'Brightness':
      return brightness(img, arg, into);
    case 'Sharpness':
      return sharpness(img, arg, into);
    case 'ShearX':
      return affine(img, [1, arg, 0, 0, 1, 0], fill, resample, into);
    case 'ShearY':
      return affine(img, [1, 0, 0, arg, 1, 0], fill, resample, into);
    case 'TranslateXRel':
      return affine(img, [1, 0, arg * img.w, 0, 1, 0], fill, resample, into);
    case 'TranslateYRel':
      return affine(img, [1, 0, 0, 0, 1, arg * img.h], fill, resample, into);
  }
}

/**
 * The drawn operations applied in turn. With `scratch` (a buffer of the image's length) nothing is
 * allocated: the pointwise operations write over the current image and the others into the
 * other buffer, so img.data and scratch are both overwritten and the result lies in one of them.
 * Without it img is left as it is and every fired operation makes a new image.
 */
export function applyRandAugment(
  img: ByteImage,
  draws: readonly RandAugmentOpDraw[],
  recipe: RandAugmentRecipe = BALPOE_RAND_AUGMENT,
  scratch?: Uint8Array,
): ByteImage {
  let current = img;
  let spare = scratch;
  for (const draw of draws) {
    if (!draw.fired) continue;
    if (!spare) current = applyRandAugmentOp(current, draw, recipe);
    else if (RAND_AUGMENT_POINTWISE.has(draw.op)) current = applyRandAugmentOp(current, draw, recipe, current.data);
    else {
      const next = applyRandAugmentOp(current, draw, recipe, spare);
      spare = current.data;
      current = next;
    }
  }
  return current;
}

/** One RandAugment draw on an 8-bit image: the image and what was drawn (for the statistical tests). */
export function randAugment(
  img: ByteImage,
  rng: Rng,
  recipe: RandAugmentRecipe = BALPOE_RAND_AUGMENT,
): { img: ByteImage; draws: RandAugmentOpDraw[] } {
  const draws = drawRandAugment(rng, recipe);
  return { img: applyRandAugment(img, draws, recipe), draws };
}
