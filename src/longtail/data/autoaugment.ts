// AutoAugment's CIFAR-10 policy (Cubuk et al. 2019) as BalPoE-CalibratedLT trains with it
// (dataset/autoaugm.py, DeepVoltaire's PIL implementation): 25 sub-policies of two operations,
// each applied with its probability at a fixed magnitude level; shear, translate and the four
// enhancers take a random sign, rotation does not; geometric fill grey (128, 128, 128). The
// operations run on the 8-bit image as Pillow runs them (pil-ops.ts, pil-affine.ts); every draw comes from the
// pipeline's Rng, in the reference's order (sub-policy, then per operation: fires?, then sign).
import type { Rng } from '../../util/rng.js';
import type { ImageTransform, ImageView } from './augment.js';
import { affineBicubic, affineNearest, rotate } from './pil-affine.js';
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
  type ByteImage,
} from './pil-ops.js';

/** The operations of AutoAugment's search space that the CIFAR-10 policy and its tests use. */
export type AutoAugmentOp =
  | 'shearX'
  | 'shearY'
  | 'translateX'
  | 'translateY'
  | 'rotate'
  | 'color'
  | 'posterize'
  | 'solarize'
  | 'contrast'
  | 'sharpness'
  | 'brightness'
  | 'autocontrast'
  | 'equalize'
  | 'invert';

/** The fill of the geometric operations (the reference's fillcolor). */
export const AUTOAUGMENT_FILL: readonly number[] = [128, 128, 128];

/** The operations whose magnitude takes a random sign. */
export const SIGNED_OPS: ReadonlySet<AutoAugmentOp> = new Set<AutoAugmentOp>([
  'shearX',
  'shearY',
  'translateX',
  'translateY',
  'color',
  'contrast',
  'sharpness',
  'brightness',
]);

/** numpy.linspace(start, stop, 10)[level], numpy's arithmetic (level * step + start, the last exact). */
function linspace10(start: number, stop: number, level: number): number {
  return level === 9 ? stop : level * ((stop - start) / 9) + start;
}

/**
 * The magnitude of `op` at level 0..9, the reference's table: shear 0..0.3, translate
 * 0..150/331 of the image size, rotate 0..30 degrees, posterize 8..4 bits, solarize threshold
 * 256..0, color / contrast / sharpness / brightness 0..0.9 (added to 1 as the enhance factor).
 */
export function autoAugmentMagnitude(op: AutoAugmentOp, level: number): number {
  if (!Number.isInteger(level) || level < 0 || level > 9)
    throw new RangeError(`AutoAugment levels are integers 0..9, got ${level}`);
  switch (op) {
    case 'shearX':
    case 'shearY':
      return linspace10(0, 0.3, level);
    case 'translateX':
    case 'translateY':
      return linspace10(0, 150 / 331, level);
    case 'rotate':
      return linspace10(0, 30, level);
    case 'posterize':
      return Math.round(linspace10(8, 4, level));
    case 'solarize':
      return linspace10(256, 0, level);
    case 'color':
    case 'contrast':
    case 'sharpness':
    case 'brightness':
      return linspace10(0, 0.9, level);
    case 'autocontrast':
    case 'equalize':
    case 'invert':
      return 0;
  }
}

/**
 * Applies one operation at a magnitude with a sign (+1 or -1; ignored by the unsigned operations),
 * as the reference's SubPolicy calls Pillow.
 */
export function applyAutoAugmentOp(img: ByteImage, op: AutoAugmentOp, magnitude: number, sign: 1 | -1): ByteImage {
  const fill = AUTOAUGMENT_FILL;
  switch (op) {
    case 'shearX':
      return affineBicubic(img, [1, magnitude * sign, 0, 0, 1, 0], fill);
    case 'shearY':
      return affineBicubic(img, [1, 0, 0, magnitude * sign, 1, 0], fill);
    case 'translateX':
      return affineNearest(img, [1, 0, magnitude * img.w * sign, 0, 1, 0], fill);
    case 'translateY':
      return affineNearest(img, [1, 0, 0, 0, 1, magnitude * img.h * sign], fill);
    case 'rotate':
      return rotate(img, magnitude, fill);
    case 'color':
      return color(img, 1 + magnitude * sign);
    case 'posterize':
      return posterize(img, magnitude);
    case 'solarize':
      return solarize(img, magnitude);
    case 'contrast':
      return contrast(img, 1 + magnitude * sign);
    case 'sharpness':
      return sharpness(img, 1 + magnitude * sign);
    case 'brightness':
      return brightness(img, 1 + magnitude * sign);
    case 'autocontrast':
      return autocontrast(img);
    case 'equalize':
      return equalize(img);
    case 'invert':
      return invert(img);
  }
}

/** One sub-policy: two operations, each with its probability and magnitude level. */
export interface SubPolicy {
  p1: number;
  op1: AutoAugmentOp;
  level1: number;
  p2: number;
  op2: AutoAugmentOp;
  level2: number;
}

function sub(p1: number, op1: AutoAugmentOp, level1: number, p2: number, op2: AutoAugmentOp, level2: number): SubPolicy {
  return { p1, op1, level1, p2, op2, level2 };
}

/** AutoAugment's 25 CIFAR-10 sub-policies, in the reference's order. */
export const CIFAR10_POLICY: readonly SubPolicy[] = [
  sub(0.1, 'invert', 7, 0.2, 'contrast', 6),
  sub(0.7, 'rotate', 2, 0.3, 'translateX', 9),
  sub(0.8, 'sharpness', 1, 0.9, 'sharpness', 3),
  sub(0.5, 'shearY', 8, 0.7, 'translateY', 9),
  sub(0.5, 'autocontrast', 8, 0.9, 'equalize', 2),
  sub(0.2, 'shearY', 7, 0.3, 'posterize', 7),
  sub(0.4, 'color', 3, 0.6, 'brightness', 7),
  sub(0.3, 'sharpness', 9, 0.7, 'brightness', 9),
  sub(0.6, 'equalize', 5, 0.5, 'equalize', 1),
  sub(0.6, 'contrast', 7, 0.6, 'sharpness', 5),
  sub(0.7, 'color', 7, 0.5, 'translateX', 8),
  sub(0.3, 'equalize', 7, 0.4, 'autocontrast', 8),
  sub(0.4, 'translateY', 3, 0.2, 'sharpness', 6),
  sub(0.9, 'brightness', 6, 0.2, 'color', 8),
  sub(0.5, 'solarize', 2, 0.0, 'invert', 3),
  sub(0.2, 'equalize', 0, 0.6, 'autocontrast', 0),
  sub(0.2, 'equalize', 8, 0.6, 'equalize', 4),
  sub(0.9, 'color', 9, 0.6, 'equalize', 6),
  sub(0.8, 'autocontrast', 4, 0.2, 'solarize', 8),
  sub(0.1, 'brightness', 3, 0.7, 'color', 0),
  sub(0.4, 'solarize', 5, 0.9, 'autocontrast', 3),
  sub(0.9, 'translateY', 9, 0.7, 'translateY', 9),
  sub(0.9, 'autocontrast', 2, 0.8, 'solarize', 3),
  sub(0.8, 'equalize', 8, 0.1, 'invert', 3),
  sub(0.7, 'translateY', 9, 0.9, 'autocontrast', 1),
];

/** What one application of a policy drew: the sub-policy and, per operation, whether it fired and its sign. */
export interface PolicyDraw {
  index: number;
  fired: [boolean, boolean];
  signs: [1 | -1 | 0, 1 | -1 | 0];
}

/** Applies `op` if a uniform draw is below p, drawing its sign when it fires (the reference's order). */
function maybeApply(
  img: ByteImage,
  p: number,
  op: AutoAugmentOp,
  level: number,
  rng: Rng,
): { img: ByteImage; fired: boolean; sign: 1 | -1 | 0 } {
  if (!(rng.uniform() < p)) return { img, fired: false, sign: 0 };
  const sign: 1 | -1 = SIGNED_OPS.has(op) ? (rng.uniform() < 0.5 ? -1 : 1) : 1;
  return {
    img: applyAutoAugmentOp(img, op, autoAugmentMagnitude(op, level), sign),
    fired: true,
    sign: SIGNED_OPS.has(op) ? sign : 0,
  };
}

/**
 * One draw of a policy on an 8-bit image: a sub-policy uniformly, then each of its operations
 * with its probability. Returns the image and what was drawn (for the statistical tests).
 */
export function applyPolicy(
  img: ByteImage,
  rng: Rng,
  policy: readonly SubPolicy[] = CIFAR10_POLICY,
): { img: ByteImage; draw: PolicyDraw } {
  const index = rng.int(policy.length);
  const s = policy[index]!;
  const first = maybeApply(img, s.p1, s.op1, s.level1, rng);
  const second = maybeApply(first.img, s.p2, s.op2, s.level2, rng);
  return {
    img: second.img,
    draw: { index, fired: [first.fired, second.fired], signs: [first.sign, second.sign] },
  };
}

/**
 * The 8-bit form of a float RGB image in [0, 1] (the CIFAR pipeline's images are exact multiples
 * of 1/255 before normalization, so this is the byte image PIL would hold).
 */
export function toByteImage(img: ImageView): ByteImage {
  if (img.c !== 3) throw new RangeError(`AutoAugment works on RGB images, got ${img.c} channels`);
  const data = new Uint8Array(img.data.length);
  for (let p = 0; p < data.length; p++) data[p] = Math.min(255, Math.max(0, Math.round(img.data[p]! * 255)));
  return { data, h: img.h, w: img.w };
}

/** The float image of an 8-bit RGB image, as the batch builder converts bytes (k * (1 / 255)). */
export function fromByteImage(img: ByteImage): ImageView {
  const data = new Float32Array(img.data.length);
  const scale = 1 / 255;
  for (let p = 0; p < data.length; p++) data[p] = img.data[p]! * scale;
  return { data, c: 3, h: img.h, w: img.w };
}

/**
 * AutoAugment's CIFAR-10 policy as a pipeline step on float RGB images in [0, 1] (before
 * normalization): the image goes through its 8-bit form only when an operation fires.
 */
export function cifar10Policy(): ImageTransform {
  return (img: ImageView, rng: Rng) => {
    const bytes = toByteImage(img);
    const { img: out, draw } = applyPolicy(bytes, rng);
    return draw.fired[0] || draw.fired[1] ? fromByteImage(out) : img;
  };
}
