// The activations of torch.nn.functional that PyTorch 1.13 computes with one ATen kernel each
// (prelu, relu6, hardtanh, ...), and the ones it writes in Python (softsign, softmin), written the
// same way so that outputs and gradients are PyTorch's. Re-exported by functional.ts.
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { tidy } from '../scope.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';

const tensorArg = (fn: string, x: unknown, name = 'x'): Tensor => {
  if (!(x instanceof Tensor)) checksOf(fn).fail(name, 'a Tensor', x);
  return x as Tensor;
};

const dimArg = (fn: string, x: Tensor, dim: unknown): number => {
  const rank = Math.max(x.ndim, 1);
  return checksOf(fn).integer(dim, 'dim', { min: -rank, max: rank - 1 });
};

/**
 * max(0, x) + weight min(0, x) (F.prelu): `weight` holds one slope, or one per channel (dimension
 * 1 of the input; an input of fewer than 2 dimensions has one channel, as in PyTorch 1.13).
 */
export function prelu(x: Tensor, weight: Tensor): Tensor {
  return preluOf('prelu', x, weight);
}

/** prelu with errors named after `fn` (the layer's name). */
export function preluOf(fn: string, x: Tensor, weight: Tensor): Tensor {
  tensorArg(fn, x);
  tensorArg(fn, weight, 'weight');
  if (weight.ndim > 1) checksOf(fn).fail('weight', 'a 0-d or 1-d Tensor (one slope per channel)', weight);
  const slopes = weight.numel;
  const channels = x.ndim >= 2 ? x.shape[1]! : 1;
  if (slopes !== 1 && slopes !== channels)
    throw new ArgumentError(
      `${fn}: weight has ${slopes} slopes but the input has ${channels} channels (shape [${x.shape.join(', ')}], channels on dimension 1); give one slope or one per channel`,
    );
  return aten.prelu(x, weight);
}

/** min(max(0, x), 6) (F.relu6). */
export function relu6(x: Tensor): Tensor {
  return aten.relu6(tensorArg('relu6', x));
}

/** x clipped to [minVal, maxVal] (F.hardtanh; defaults -1 and 1). */
export function hardtanh(x: Tensor, minVal = -1, maxVal = 1): Tensor {
  checkHardtanh('hardtanh', minVal, maxVal);
  return aten.hardtanh(tensorArg('hardtanh', x), { float: minVal }, { float: maxVal });
}

/** The bounds of Hardtanh, checked (PyTorch asserts maxVal > minVal). */
export function checkHardtanh(fn: string, minVal: unknown, maxVal: unknown): void {
  const c = checksOf(fn);
  const low = c.number(minVal, 'minVal');
  c.number(maxVal, 'maxVal', { above: low });
}

/** x relu6(x + 3) / 6 (F.hardswish). */
export function hardswish(x: Tensor): Tensor {
  return aten.hardswish(tensorArg('hardswish', x));
}

/** relu6(x + 3) / 6 (F.hardsigmoid). */
export function hardsigmoid(x: Tensor): Tensor {
  return aten.hardsigmoid(tensorArg('hardsigmoid', x));
}

/** x tanh(softplus(x)) (F.mish). */
export function mish(x: Tensor): Tensor {
  return aten.mish(tensorArg('mish', x));
}

/** log(sigmoid(x)), computed stably (F.logsigmoid). */
export function logsigmoid(x: Tensor): Tensor {
  return aten.log_sigmoid(tensorArg('logsigmoid', x));
}

/** x / (1 + |x|) (F.softsign). */
export function softsign(x: Tensor): Tensor {
  tensorArg('softsign', x);
  return tidy(() => x.div(x.abs().add(1)));
}

/** softmax(-x) along `dim` (F.softmin; `dim` defaults to -1 here, where PyTorch's legacy default guesses). */
export function softmin(x: Tensor, dim = -1): Tensor {
  return softminOf('softmin', x, dim);
}

/** softmin with errors named after `fn`. */
export function softminOf(fn: string, x: Tensor, dim: number): Tensor {
  const d = dimArg(fn, tensorArg(fn, x), dim);
  return tidy(() => aten.softmax_int(x.neg(), d));
}

/**
 * The gated linear unit (F.glu): the input split in halves a, b along `dim` (default -1), a
 * sigmoid(b); that dimension's size must be even.
 */
export function glu(x: Tensor, dim = -1): Tensor {
  return gluOf('glu', x, dim);
}

/** glu with errors named after `fn`. */
export function gluOf(fn: string, x: Tensor, dim: number): Tensor {
  tensorArg(fn, x);
  if (x.ndim === 0)
    throw new ArgumentError(`${fn}: x must have at least one dimension to halve, got a scalar`);
  const d = dimArg(fn, x, dim);
  const size = x.shape[d < 0 ? d + x.ndim : d]!;
  if (size % 2 !== 0)
    throw new ArgumentError(
      `${fn}: dimension ${dim} of the input (shape [${x.shape.join(', ')}]) has odd size ${size}; the input must split into two halves along dim`,
    );
  return aten.glu(x, d);
}

/** scale (max(0, x) + min(0, alpha (exp(x) - 1))) with SELU's fixed alpha and scale (F.selu). */
export function selu(x: Tensor): Tensor {
  return aten.selu(tensorArg('selu', x));
}

/** max(0, x) + min(0, alpha (exp(x / alpha) - 1)) (F.celu; default alpha 1). */
export function celu(x: Tensor, alpha = 1): Tensor {
  checkCelu('celu', alpha);
  return aten.celu(tensorArg('celu', x), { float: alpha });
}

/** CELU's alpha, checked: it divides x, so 0 is refused. */
export function checkCelu(fn: string, alpha: unknown): void {
  const a = checksOf(fn).number(alpha, 'alpha');
  if (a === 0) checksOf(fn).fail('alpha', 'a finite number other than 0 (CELU divides by it)', alpha);
}

/** x where x > threshold, `value` elsewhere (F.threshold). */
export function threshold(x: Tensor, threshold: number, value: number): Tensor {
  const c = checksOf('threshold');
  c.number(threshold, 'threshold');
  c.number(value, 'value');
  return aten.threshold(tensorArg('threshold', x), { float: threshold }, { float: value });
}
