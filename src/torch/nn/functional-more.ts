// More functions of torch.nn.functional: the shrink activations, randomized leaky ReLU, alpha
// dropout, the bilinear form and local response normalisation, each as PyTorch 1.13 computes it
// (one ATen kernel, or the same composition of kernels as its Python code) so that outputs,
// gradients and seeded random draws are PyTorch's. The layers of activation-shrink.ts and
// layers-more.ts call the `...Of` forms, which name the layer in their errors. Re-exported by
// functional.ts.
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { tidy } from '../scope.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';

const shapeOf = (t: Tensor) => `[${t.shape.join(', ')}]`;

const tensorArg = (fn: string, x: unknown, name = 'x'): Tensor => {
  if (!(x instanceof Tensor)) checksOf(fn).fail(name, 'a Tensor', x);
  return x as Tensor;
};

/** x - tanh(x) (F.tanhshrink). */
export function tanhshrink(x: Tensor): Tensor {
  tensorArg('tanhshrink', x);
  return tidy(() => x.sub(x.tanh()));
}

/** x - lambd where x > lambd, x + lambd where x < -lambd, 0 between (F.softshrink; lambd >= 0, default 0.5). */
export function softshrink(x: Tensor, lambd = 0.5): Tensor {
  checkSoftshrink('softshrink', lambd);
  return aten.softshrink(tensorArg('softshrink', x), { float: lambd });
}

/** Softshrink's lambd, checked (libtorch refuses a negative one). */
export function checkSoftshrink(fn: string, lambd: unknown): void {
  checksOf(fn).number(lambd, 'lambd', { min: 0 });
}

/** x where |x| > lambd, 0 elsewhere (F.hardshrink; default lambd 0.5). */
export function hardshrink(x: Tensor, lambd = 0.5): Tensor {
  checkHardshrink('hardshrink', lambd);
  return aten.hardshrink(tensorArg('hardshrink', x), { float: lambd });
}

/** Hardshrink's lambd, checked: a finite number. */
export function checkHardshrink(fn: string, lambd: unknown): void {
  checksOf(fn).number(lambd, 'lambd');
}

/**
 * Randomized leaky ReLU (F.rrelu): max(0, x) + a min(0, x), the slope a drawn from U(lower, upper)
 * for each element when `training` (from the global generator, as PyTorch draws it), (lower +
 * upper) / 2 otherwise. Defaults 1/8, 1/3 and training false.
 */
export function rrelu(x: Tensor, lower = 1 / 8, upper = 1 / 3, training = false): Tensor {
  return rreluOf('rrelu', x, lower, upper, training);
}

/** RReLU's bounds, checked: lower <= upper. */
export function checkRrelu(fn: string, lower: unknown, upper: unknown): void {
  const c = checksOf(fn);
  const low = c.number(lower, 'lower');
  c.number(upper, 'upper (at least lower)', { min: low });
}

/** rrelu with errors named after `fn`. */
export function rreluOf(fn: string, x: Tensor, lower: number, upper: number, training: boolean): Tensor {
  checkRrelu(fn, lower, upper);
  if (typeof training !== 'boolean') checksOf(fn).fail('training', 'true or false', training);
  return aten.rrelu(tensorArg(fn, x), { float: lower }, { float: upper }, training);
}

/** Dropout's probability, checked. */
export function checkDropoutP(fn: string, p: unknown): number {
  return checksOf(fn).number(p, 'p', { min: 0, max: 1 });
}

/**
 * Alpha dropout (F.alpha_dropout): when `training`, sets elements to SELU's negative saturation
 * with probability p and scales and shifts the result so that a SELU network keeps zero mean and
 * unit variance; the identity otherwise. Defaults p 0.5, training false (as PyTorch's).
 */
export function alphaDropout(x: Tensor, p = 0.5, training = false): Tensor {
  return alphaDropoutOf('alphaDropout', x, p, training, false);
}

/**
 * Alpha dropout of whole channels (F.feature_alpha_dropout): as {@link alphaDropout}, one draw
 * per channel (dimension 1 of an input of at least 2 dimensions [N, C, ...]).
 */
export function featureAlphaDropout(x: Tensor, p = 0.5, training = false): Tensor {
  return alphaDropoutOf('featureAlphaDropout', x, p, training, true);
}

/** alphaDropout or featureAlphaDropout with errors named after `fn`. */
export function alphaDropoutOf(
  fn: string,
  x: Tensor,
  p: number,
  training: boolean,
  feature: boolean,
): Tensor {
  checkDropoutP(fn, p);
  tensorArg(fn, x);
  if (typeof training !== 'boolean') checksOf(fn).fail('training', 'true or false', training);
  if (!feature) return aten.alpha_dropout(x, p, training);
  if (x.ndim < 2)
    throw new ArgumentError(
      `${fn}: feature alpha dropout needs an input of at least 2 dimensions [N, C, ...], got shape ${shapeOf(x)}`,
    );
  return aten.feature_alpha_dropout(x, p, training);
}

/**
 * The bilinear form y_k = x1^T W_k x2 + b_k (F.bilinear): x1 [..., in1], x2 [..., in2] (the same
 * leading dimensions), weight [out, in1, in2], bias [out] or null; output [..., out].
 */
export function bilinear(x1: Tensor, x2: Tensor, weight: Tensor, bias: Tensor | null = null): Tensor {
  return bilinearOf('bilinear', x1, x2, weight, bias);
}

/** bilinear with errors named after `fn`. */
export function bilinearOf(fn: string, x1: Tensor, x2: Tensor, weight: Tensor, bias: Tensor | null): Tensor {
  tensorArg(fn, x1, 'x1');
  tensorArg(fn, x2, 'x2');
  tensorArg(fn, weight, 'weight');
  if (bias !== null && bias !== undefined) tensorArg(fn, bias, 'bias');
  if (weight.ndim !== 3) checksOf(fn).fail('weight', 'a 3-d Tensor [out, in1, in2]', weight);
  const [, in1, in2] = weight.shape as [number, number, number];
  if (x1.ndim === 0 || x1.shape[x1.ndim - 1] !== in1 || x2.ndim === 0 || x2.shape[x2.ndim - 1] !== in2)
    throw new ArgumentError(
      `${fn}: x1 and x2 must end in ${in1} and ${in2} features (weight ${shapeOf(weight)}), got ${shapeOf(x1)} and ${shapeOf(x2)}`,
    );
  if (x1.shape.slice(0, -1).join() !== x2.shape.slice(0, -1).join())
    throw new ArgumentError(
      `${fn}: x1 and x2 must have the same leading dimensions, got ${shapeOf(x1)} and ${shapeOf(x2)}`,
    );
  if (bias != null && (bias.ndim !== 1 || bias.shape[0] !== weight.shape[0]))
    throw new ArgumentError(
      `${fn}: bias must be of shape [${weight.shape[0]}] (out of weight ${shapeOf(weight)}), got ${shapeOf(bias)}`,
    );
  return aten.bilinear(x1, x2, weight, bias ?? null);
}

/** Options of localResponseNorm (PyTorch's defaults). */
export interface LocalResponseNormOptions {
  /** The multiplicative factor (default 1e-4). */
  alpha?: number;
  /** The exponent (default 0.75). */
  beta?: number;
  /** The additive factor (default 1). */
  k?: number;
}

/** The options of local response normalisation, checked, with PyTorch's defaults. */
export function lrnOptions(fn: string, size: unknown, options: unknown): Required<LocalResponseNormOptions> {
  const c = checksOf(fn);
  c.integer(size, 'size', { min: 1 });
  const o = c.object(options, 'options') as LocalResponseNormOptions;
  return {
    alpha: c.number(o.alpha ?? 1e-4, 'options.alpha'),
    beta: c.number(o.beta ?? 0.75, 'options.beta'),
    k: c.number(o.k ?? 1, 'options.k'),
  };
}

/**
 * Local response normalisation across channels (F.local_response_norm): x / (k + alpha / size *
 * sum of x^2 over the `size` neighbouring channels)^beta, for an input [N, C, ...] of at least 3
 * dimensions.
 */
export function localResponseNorm(x: Tensor, size: number, options: LocalResponseNormOptions = {}): Tensor {
  return localResponseNormOf('localResponseNorm', x, size, lrnOptions('localResponseNorm', size, options));
}

/** localResponseNorm with its options checked and errors named after `fn`; PyTorch's composition. */
export function localResponseNormOf(
  fn: string,
  x: Tensor,
  size: number,
  o: Required<LocalResponseNormOptions>,
): Tensor {
  tensorArg(fn, x);
  if (x.ndim < 3)
    throw new ArgumentError(`${fn}: x must have at least 3 dimensions [N, C, ...], got shape ${shapeOf(x)}`);
  // as PyTorch, an empty input comes back unchanged (a new handle on it, which the caller frees)
  if (x.numel === 0) return x.view(...x.shape);
  const before = Math.floor(size / 2);
  const after = Math.floor((size - 1) / 2);
  return tidy(() => {
    let div = x.mul(x).unsqueeze(1);
    if (x.ndim === 3) {
      div = aten.constant_pad_nd(div, [0, 0, before, after], 0);
      div = aten.avg_pool2d(div, [size, 1], 1).squeeze(1);
    } else {
      const [n, c, d] = x.shape as [number, number, number];
      div = div.view(n, 1, c, d, -1);
      div = aten.constant_pad_nd(div, [0, 0, 0, 0, before, after], 0);
      div = aten
        .avg_pool3d(div, [size, 1, 1], 1)
        .squeeze(1)
        .view(...x.shape);
    }
    return x.div(div.mul({ float: o.alpha }).add({ float: o.k }).pow({ float: o.beta }));
  });
}
