// The functional forms of the pools that nn also has as layers (pooling-more.ts): adaptive max
// pooling, power-average pooling and fractional max pooling, each as PyTorch 1.13's
// torch.nn.functional computes it. The layers call the `...Of` forms with their checked sizes,
// so that their errors name the layer and there is one implementation. Re-exported by
// functional.ts.
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { rand } from '../creation.js';
import { tidy } from '../scope.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';
import { checkRank, perAxis } from './layer-util.js';

/** The options of the adaptive and fractional max pools: PyTorch's return_indices. */
export interface ReturnIndicesOptions<R extends boolean = false> {
  /** forward returns [values, indices] instead of the values (default false); forwardWithIndices always does. */
  returnIndices?: R;
}

/** What forward returns: the values, or [values, indices] with returnIndices. */
export type MaxPoolOutput<R extends boolean> = R extends true ? [Tensor, Tensor] : Tensor;

/** Options of the fractional max pools: the output size or its ratio to the input's (one of them), and returnIndices. */
export interface FractionalMaxPoolOptions<R extends boolean = false> extends ReturnIndicesOptions<R> {
  /** The output's spatial size: one number for every axis, or one per axis. */
  outputSize?: number | number[];
  /** The output's size as a fraction in (0, 1) of the input's: one number for every axis, or one per axis. */
  outputRatio?: number | number[];
  /**
   * The windows' positions, [N, C, dims] values in [0, 1) of the input's dtype (PyTorch's
   * `_random_samples`; N is 1 for an input without the batch dimension); default: drawn with
   * torch.rand at each call.
   */
  randomSamples?: Tensor | null;
}

const tensorArg = (fn: string, x: unknown, name = 'input'): Tensor => {
  if (!(x instanceof Tensor)) checksOf(fn).fail(name, 'a Tensor', x);
  return x as Tensor;
};

/** The returnIndices flag, checked. @internal */
export function returnIndicesOf(c: ArgumentChecks, options: unknown): boolean {
  const o = c.object(options, 'options');
  if (o.returnIndices !== undefined && typeof o.returnIndices !== 'boolean')
    c.fail('options.returnIndices', 'true or false', o.returnIndices);
  return o.returnIndices === true;
}

/** The values, or [values, indices] when `returnIndices` (the indices freed otherwise). */
function valuesOrBoth<R extends boolean>([values, indices]: [Tensor, Tensor], returnIndices: boolean) {
  if (returnIndices) return [values, indices] as MaxPoolOutput<R>;
  indices.dispose();
  return values as MaxPoolOutput<R>;
}

/** An adaptive pool's output size per axis: a number for all, or one per axis, null keeping the input's size. @internal */
export function adaptiveSizes(c: ArgumentChecks, outputSize: unknown, dims: number): (number | null)[] {
  if (typeof outputSize === 'number')
    return new Array<number>(dims).fill(c.integer(outputSize, 'outputSize', { min: 1 }));
  if (!Array.isArray(outputSize) || outputSize.length !== dims)
    c.fail(
      'outputSize',
      `an integer >= 1 or an array of ${dims} of them or null (one per spatial axis)`,
      outputSize,
    );
  return (outputSize as unknown[]).map((v, i) =>
    v === null ? null : c.integer(v, `outputSize[${i}]`, { min: 1 }),
  );
}

const LAYOUTS = ['N, C, L', 'N, C, H, W', 'N, C, D, H, W'];
const ADAPTIVE_MAX = [aten.adaptive_max_pool1d, aten.adaptive_max_pool2d, aten.adaptive_max_pool3d];

/**
 * Adaptive max pooling of `x` over its last `sizes.length` axes to `sizes` (null: the input's
 * size), windows [floor(i n / o), ceil((i + 1) n / o)); the values and the flat indices of their
 * maxima. @internal
 */
export function adaptiveMaxPoolOf(fn: string, x: Tensor, sizes: (number | null)[]): [Tensor, Tensor] {
  const dims = sizes.length;
  checkRank(fn, tensorArg(fn, x), dims + 2, LAYOUTS[dims - 1]!);
  const spatial = x.shape.slice(-dims);
  return ADAPTIVE_MAX[dims - 1]!(
    x,
    sizes.map((s, i) => s ?? spatial[i]!),
  );
}

function adaptiveMaxPool<R extends boolean>(
  fn: string,
  dims: number,
  input: Tensor,
  outputSize: unknown,
  options: ReturnIndicesOptions<R>,
): MaxPoolOutput<R> {
  const c = checksOf(fn);
  const returnIndices = returnIndicesOf(c, options);
  return valuesOrBoth(adaptiveMaxPoolOf(fn, input, adaptiveSizes(c, outputSize, dims)), returnIndices);
}

/** Adaptive max pooling of [N, C, L] ([C, L]) to length `outputSize` (F.adaptive_max_pool1d); [values, indices] with returnIndices. */
export function adaptiveMaxPool1d<R extends boolean = false>(
  input: Tensor,
  outputSize: number | [number],
  options: ReturnIndicesOptions<R> = {},
): MaxPoolOutput<R> {
  return adaptiveMaxPool('adaptiveMaxPool1d', 1, input, outputSize, options);
}

/** Adaptive max pooling of [N, C, H, W] ([C, H, W]) to [H', W'], null keeping an axis (F.adaptive_max_pool2d). */
export function adaptiveMaxPool2d<R extends boolean = false>(
  input: Tensor,
  outputSize: number | [number | null, number | null],
  options: ReturnIndicesOptions<R> = {},
): MaxPoolOutput<R> {
  return adaptiveMaxPool('adaptiveMaxPool2d', 2, input, outputSize, options);
}

/** Adaptive max pooling of [N, C, D, H, W] ([C, D, H, W]) to [D', H', W'], null keeping an axis (F.adaptive_max_pool3d). */
export function adaptiveMaxPool3d<R extends boolean = false>(
  input: Tensor,
  outputSize: number | [number | null, number | null, number | null],
  options: ReturnIndicesOptions<R> = {},
): MaxPoolOutput<R> {
  return adaptiveMaxPool('adaptiveMaxPool3d', 3, input, outputSize, options);
}

/** LPPool's arguments checked, the kernel and stride per axis. @internal */
export function lpPoolArgs(
  c: ArgumentChecks,
  dims: number,
  normType: unknown,
  kernelSize: unknown,
  stride: unknown,
  ceilMode: unknown,
): { normType: number; kernel: number[]; strides: number[]; ceilMode: boolean } {
  const p = c.number(normType, 'normType', { above: 0 });
  const kernel = perAxis(c, kernelSize, 'kernelSize', dims, 1);
  const strides = stride == null ? kernel : perAxis(c, stride, 'stride', dims, 1);
  if (typeof ceilMode !== 'boolean') c.fail('ceilMode', 'true or false', ceilMode);
  return { normType: p, kernel, strides, ceilMode: ceilMode as boolean };
}

/**
 * Power-average pooling, (sum over the window of x^p)^(1/p), as PyTorch's lp_pool computes it:
 * an average pool of x^p times the window size (no padding), negative sums set to 0, then the 1/p
 * power. @internal
 */
export function lpPoolOf(fn: string, x: Tensor, a: ReturnType<typeof lpPoolArgs>): Tensor {
  tensorArg(fn, x);
  const { normType, kernel, strides, ceilMode } = a;
  return tidy(() => {
    const xp = x.pow(normType);
    const out =
      kernel.length === 1
        ? aten.avg_pool1d(xp, kernel, strides, [0], ceilMode, true)
        : aten.avg_pool2d(xp, kernel, strides, [0, 0], ceilMode, true, null);
    const size = kernel.reduce((m, k) => m * k, 1);
    return out
      .sign()
      .mul(out.abs().relu())
      .mul(size)
      .pow(1 / normType);
  });
}

/** Power-average pooling of [N, C, L] ([C, L]) (F.lp_pool1d): norm p, windows kernelSize moved by stride (default kernelSize). */
export function lpPool1d(
  input: Tensor,
  normType: number,
  kernelSize: number | [number],
  stride?: number | [number] | null,
  ceilMode = false,
): Tensor {
  const fn = 'lpPool1d';
  return lpPoolOf(fn, input, lpPoolArgs(checksOf(fn), 1, normType, kernelSize, stride, ceilMode));
}

/** Power-average pooling of [N, C, H, W] ([C, H, W]) (F.lp_pool2d): norm p, windows [kH, kW] moved by stride (default kernelSize). */
export function lpPool2d(
  input: Tensor,
  normType: number,
  kernelSize: number | [number, number],
  stride?: number | [number, number] | null,
  ceilMode = false,
): Tensor {
  const fn = 'lpPool2d';
  return lpPoolOf(fn, input, lpPoolArgs(checksOf(fn), 2, normType, kernelSize, stride, ceilMode));
}

/** A fractional max pool's sizes, checked: the kernel per axis and the output size or ratio per axis. @internal */
export interface FractionalSizes {
  kernel: number[];
  outputSize: number[] | null;
  outputRatio: number[] | null;
}

/** A fractional max pool's kernel size and options.outputSize / outputRatio (one of them), checked. @internal */
export function fractionalSizes(
  c: ArgumentChecks,
  dims: number,
  kernelSize: unknown,
  options: unknown,
): FractionalSizes {
  const kernel = perAxis(c, kernelSize, 'kernelSize', dims, 1);
  const { outputSize, outputRatio } = c.object(options, 'options');
  if ((outputSize === undefined) === (outputRatio === undefined))
    throw new ArgumentError(
      `${c.fn}: give one of options.outputSize and options.outputRatio (got ${outputSize === undefined ? 'neither' : 'both'})`,
    );
  if (outputSize !== undefined)
    return { kernel, outputSize: perAxis(c, outputSize, 'options.outputSize', dims, 1), outputRatio: null };
  const expected = `a number in (0, 1) or an array of ${dims} of them (one per spatial axis)`;
  if (typeof outputRatio !== 'number' && (!Array.isArray(outputRatio) || outputRatio.length !== dims))
    c.fail('options.outputRatio', expected, outputRatio);
  const ratios: unknown[] =
    typeof outputRatio === 'number' ? new Array<number>(dims).fill(outputRatio) : (outputRatio as unknown[]);
  ratios.forEach((r) => {
    if (typeof r !== 'number' || !(r > 0 && r < 1)) c.fail('options.outputRatio', expected, outputRatio);
  });
  return { kernel, outputSize: null, outputRatio: ratios as number[] };
}

/**
 * Fractional max pooling of `x` with checked sizes: the windows' positions from `randomSamples`
 * or, when null, from samples torch.rand([N, C, dims]) of the input's dtype drawn from the global
 * generator here, as PyTorch's F.fractional_max_pool draws them (a seeded run equals PyTorch's).
 * @internal
 */
export function fractionalMaxPoolOf(
  fn: string,
  x: Tensor,
  sizes: FractionalSizes,
  randomSamples: Tensor | null | undefined,
): [Tensor, Tensor] {
  const dims = sizes.kernel.length;
  checkRank(fn, tensorArg(fn, x), dims + 2, LAYOUTS[dims - 1]!);
  const spatial = x.shape.slice(-dims);
  const size = sizes.outputSize ?? sizes.outputRatio!.map((r, i) => Math.trunc(spatial[i]! * r));
  const batch = x.ndim === dims + 2 ? x.shape[0]! : 1;
  const channels = x.shape[x.ndim - dims - 1]!;
  const op = dims === 2 ? aten.fractional_max_pool2d : aten.fractional_max_pool3d;
  if (randomSamples != null) {
    checkSamples(fn, randomSamples, x, [batch, channels, dims]);
    return op(x, sizes.kernel, size, randomSamples);
  }
  const samples = rand([batch, channels, dims], x.dtype, x.device.name);
  try {
    return op(x, sizes.kernel, size, samples);
  } finally {
    samples.dispose();
  }
}

/** Given samples: a tensor of the input's dtype and of shape [N, C, dims]. */
function checkSamples(fn: string, samples: unknown, x: Tensor, shape: number[]): void {
  const name = 'options.randomSamples';
  tensorArg(fn, samples, name);
  const s = samples as Tensor;
  if (s.shape.join() !== shape.join() || s.dtype !== x.dtype)
    throw new ArgumentError(
      `${fn}: ${name} must be a ${x.dtype} tensor of shape [${shape.join(', ')}] (batch, channels, spatial axes) for an input of shape [${x.shape.join(', ')}], got a ${s.dtype} tensor of shape [${s.shape.join(', ')}]`,
    );
}

function fractionalMaxPool<R extends boolean>(
  fn: string,
  dims: number,
  input: Tensor,
  kernelSize: unknown,
  options: FractionalMaxPoolOptions<R>,
): MaxPoolOutput<R> {
  const c = checksOf(fn);
  const returnIndices = returnIndicesOf(c, options);
  const sizes = fractionalSizes(c, dims, kernelSize, options);
  return valuesOrBoth(fractionalMaxPoolOf(fn, input, sizes, options.randomSamples), returnIndices);
}

/**
 * Fractional max pooling of [N, C, H, W] ([C, H, W]) (F.fractional_max_pool2d): windows of
 * kernelSize at pseudo-random positions that shrink each axis to options.outputSize (or
 * floor(n outputRatio)); [values, indices] with returnIndices.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const F = torch.nn.functional;
 *
 * torch.tidy(() => {
 *   const x = torch.randn([1, 3, 10, 10]);
 *   const [y, indices] = F.fractionalMaxPool2d(x, 2, { outputRatio: 0.5, returnIndices: true });
 *   console.log(y.shape, indices.dtype); // [1, 3, 5, 5] int64
 * });
 * ```
 */
export function fractionalMaxPool2d<R extends boolean = false>(
  input: Tensor,
  kernelSize: number | [number, number],
  options: FractionalMaxPoolOptions<R>,
): MaxPoolOutput<R> {
  return fractionalMaxPool('fractionalMaxPool2d', 2, input, kernelSize, options);
}

/** Fractional max pooling of [N, C, D, H, W] ([C, D, H, W]) (F.fractional_max_pool3d; see {@link fractionalMaxPool2d}). */
export function fractionalMaxPool3d<R extends boolean = false>(
  input: Tensor,
  kernelSize: number | [number, number, number],
  options: FractionalMaxPoolOptions<R>,
): MaxPoolOutput<R> {
  return fractionalMaxPool('fractionalMaxPool3d', 3, input, kernelSize, options);
}
