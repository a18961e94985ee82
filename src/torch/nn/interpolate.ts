// F.interpolate with PyTorch 1.13's modes and options, and the upsampling layers built on it
// (torch.nn.Upsample, UpsamplingNearest2d, UpsamplingBilinear2d).
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';

/** The modes of interpolate, as PyTorch's (linear 3-d, bilinear and bicubic 4-d, trilinear 5-d inputs only). */
export type InterpolateMode =
  'nearest' | 'nearest-exact' | 'linear' | 'bilinear' | 'bicubic' | 'trilinear' | 'area';
const MODES: readonly InterpolateMode[] = [
  'nearest',
  'nearest-exact',
  'linear',
  'bilinear',
  'bicubic',
  'trilinear',
  'area',
];
/** The spatial axes each interpolating mode is for. */
const MODE_DIMS: Partial<Record<InterpolateMode, number>> = {
  linear: 1,
  bilinear: 2,
  bicubic: 2,
  trilinear: 3,
};

/**
 * Options of interpolate (PyTorch's, camelCase): one of size and scaleFactor, each one number for
 * every spatial axis or one per axis.
 */
export interface InterpolateOptions {
  /** The output's spatial size. */
  size?: number | number[];
  /** The factor of each spatial size: output floor(n scaleFactor), the kernel using scaleFactor itself unless recomputeScaleFactor. */
  scaleFactor?: number | number[];
  /** The interpolation (default 'nearest'); 'area' is adaptive average pooling. */
  mode?: InterpolateMode;
  /** The corner pixels' centres map onto each other (linear, bilinear, bicubic, trilinear only; default false). */
  alignCorners?: boolean;
  /** With scaleFactor: compute the output size, then interpolate as if that size had been given (default false). */
  recomputeScaleFactor?: boolean;
  /** Anti-aliased downsampling, as PIL (bilinear and bicubic only; default false). */
  antialias?: boolean;
}

/** One number per spatial axis: a number repeated, or an array of exactly `dims` checked by `check`. */
function perSpatialAxis(
  c: ArgumentChecks,
  value: unknown,
  name: string,
  dims: number,
  check: (v: unknown, name: string) => number,
): number[] {
  if (typeof value === 'number') return new Array<number>(dims).fill(check(value, name));
  if (!Array.isArray(value) || value.length !== dims)
    c.fail(name, `a number or an array of ${dims} (one per spatial axis of the ${dims + 2}-d input)`, value);
  return (value as unknown[]).map((v, i) => check(v, `${name}[${i}]`));
}

/**
 * Resizes [N, C, L], [N, C, H, W] or [N, C, D, H, W] inputs to `size` or by `scaleFactor`, as
 * F.interpolate: 'nearest' (floor(dst / scale), PyTorch's default), 'nearest-exact' (the pixel
 * centres', as PIL and scikit-image), 'linear', 'bilinear', 'bicubic' (a = -0.75), 'trilinear'
 * and 'area' (adaptive average pooling).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * torch.tidy(() => {
 *   const x = torch.randn([1, 3, 8, 8]);
 *   const up = torch.nn.functional.interpolate(x, { scaleFactor: 2, mode: 'bicubic', alignCorners: true }); // [1, 3, 16, 16]
 *   const down = torch.nn.functional.interpolate(x, { size: [3, 5], mode: 'bilinear', antialias: true });
 * });
 * ```
 */
export function interpolate(x: Tensor, options: InterpolateOptions): Tensor {
  const fn = 'interpolate';
  const c = checksOf(fn);
  if (!(x instanceof Tensor) || x.ndim < 3 || x.ndim > 5)
    c.fail('x', 'a 3-d, 4-d or 5-d Tensor [N, C, ...spatial]', x);
  const o = c.object(options, 'options');
  const mode = c.oneOf(o.mode ?? 'nearest', 'options.mode', MODES);
  const dims = x.ndim - 2;
  const needs = MODE_DIMS[mode];
  if (needs !== undefined && needs !== dims)
    throw new ArgumentError(`${fn}: options.mode '${mode}' needs a ${needs + 2}-d input, got ${x.ndim}-d`);
  const interpolating = needs !== undefined;
  if (!interpolating && o.alignCorners !== undefined)
    throw new ArgumentError(
      `${fn}: options.alignCorners applies to the modes linear, bilinear, bicubic and trilinear only, not '${mode}': leave it out`,
    );
  for (const key of ['alignCorners', 'recomputeScaleFactor', 'antialias'])
    if (o[key] !== undefined && typeof o[key] !== 'boolean')
      c.fail(`options.${key}`, 'true or false', o[key]);
  if ((o.size === undefined) === (o.scaleFactor === undefined))
    c.fail('options', 'one of size and scaleFactor', options);
  let size =
    o.size === undefined
      ? null
      : perSpatialAxis(c, o.size, 'options.size', dims, (v, name) => c.integer(v, name, { min: 1 }));
  let scales =
    o.scaleFactor === undefined
      ? null
      : perSpatialAxis(c, o.scaleFactor, 'options.scaleFactor', dims, (v, name) =>
          c.number(v, name, { above: 0 }),
        );
  if (o.recomputeScaleFactor === true && size !== null)
    throw new ArgumentError(`${fn}: options.recomputeScaleFactor goes with scaleFactor, not with size`);
  // as PyTorch: area needs a size, and a recomputed scale is the output size's own
  if (scales !== null && (o.recomputeScaleFactor === true || mode === 'area')) {
    const spatial = x.shape.slice(2);
    size = scales.map((s, i) => Math.floor(spatial[i]! * s));
    scales = null;
  }
  const antialias = o.antialias === true;
  if (antialias && mode !== 'bilinear' && mode !== 'bicubic')
    throw new ArgumentError(
      `${fn}: options.antialias is for the modes bilinear and bicubic only, not '${mode}'`,
    );
  const align = o.alignCorners === true;
  switch (mode) {
    case 'nearest':
      return [aten.upsample_nearest1d_vec, aten.upsample_nearest2d_vec, aten.upsample_nearest3d_vec][
        dims - 1
      ]!(x, size, scales);
    case 'nearest-exact':
      return [
        aten._upsample_nearest_exact1d_vec,
        aten._upsample_nearest_exact2d_vec,
        aten._upsample_nearest_exact3d_vec,
      ][dims - 1]!(x, size, scales);
    case 'area':
      return [aten.adaptive_avg_pool1d, aten.adaptive_avg_pool2d, aten.adaptive_avg_pool3d][dims - 1]!(
        x,
        size!,
      );
    case 'linear':
      return aten.upsample_linear1d_vec(x, size, align, scales);
    case 'bilinear':
      return (antialias ? aten._upsample_bilinear2d_aa_vec : aten.upsample_bilinear2d_vec)(
        x,
        size,
        align,
        scales,
      );
    case 'bicubic':
      return (antialias ? aten._upsample_bicubic2d_aa_vec : aten.upsample_bicubic2d_vec)(
        x,
        size,
        align,
        scales,
      );
    case 'trilinear':
      return aten.upsample_trilinear3d_vec(x, size, align, scales);
  }
}

/** Options of nn.Upsample: interpolate's, with size and scaleFactor one number per spatial axis. */
export interface UpsampleOptions extends Omit<InterpolateOptions, 'size' | 'scaleFactor'> {
  /** The output's spatial size, one per axis. */
  size?: number[];
  /** The factor of each spatial size, one per axis. */
  scaleFactor?: number[];
}

/**
 * Resizes [N, C, L], [N, C, H, W] or [N, C, D, H, W] inputs to `size` or by `scaleFactor` per
 * spatial dimension (torch.nn.Upsample): interpolate with these options ('nearest' by default).
 */
export class Upsample extends Module {
  readonly options: UpsampleOptions;
  constructor(options: UpsampleOptions) {
    super();
    const c = checksOf(this.constructor.name);
    c.object(options, 'options');
    if ((options.size === undefined) === (options.scaleFactor === undefined))
      c.fail('options', 'one of size and scaleFactor', options);
    for (const [key, values] of [
      ['size', options.size],
      ['scaleFactor', options.scaleFactor],
    ] as const)
      if (values !== undefined) {
        if (!Array.isArray(values) || values.length < 1 || values.length > 3)
          c.fail(`options.${key}`, 'an array of 1 to 3 numbers (one per spatial dimension)', values);
        values.forEach((v, i) =>
          key === 'size'
            ? c.integer(v, `options.size[${i}]`, { min: 1 })
            : c.number(v, `options.scaleFactor[${i}]`, { above: 0 }),
        );
      }
    const mode = c.oneOf(options.mode ?? 'nearest', 'options.mode', MODES);
    this.options = { ...options, mode };
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return interpolate(x, this.options);
  }
}

/** Options of UpsamplingNearest2d and UpsamplingBilinear2d: one of size and scaleFactor, one number for both axes or [H, W]. */
export interface Upsampling2dOptions {
  /** The output size [H, W] (one number for both). */
  size?: number | [number, number];
  /** The factor of each spatial size (one number for both). */
  scaleFactor?: number | [number, number];
}

/** Both axes' values of an Upsampling2d option. */
const pair = (v: number | [number, number] | undefined) =>
  v === undefined ? undefined : typeof v === 'number' ? [v, v] : v;

/** Nearest-neighbour upsampling of [N, C, H, W] (torch.nn.UpsamplingNearest2d: Upsample with mode 'nearest'). */
export class UpsamplingNearest2d extends Upsample {
  constructor(options: Upsampling2dOptions) {
    checksOf('UpsamplingNearest2d').object(options, 'options');
    super({ size: pair(options.size), scaleFactor: pair(options.scaleFactor), mode: 'nearest' });
  }
}
/** Bilinear upsampling of [N, C, H, W] with the corners aligned (torch.nn.UpsamplingBilinear2d: Upsample with mode 'bilinear', alignCorners true). */
export class UpsamplingBilinear2d extends Upsample {
  constructor(options: Upsampling2dOptions) {
    checksOf('UpsamplingBilinear2d').object(options, 'options');
    super({
      size: pair(options.size),
      scaleFactor: pair(options.scaleFactor),
      mode: 'bilinear',
      alignCorners: true,
    });
  }
}
