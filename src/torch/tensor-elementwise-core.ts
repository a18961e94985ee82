// The torch.* function forms of the core Tensor's elementwise methods (torch.add, torch.exp,
// torch.maximum, torch.eq...): PyTorch code calls them as functions as often as methods. Each
// checks its arguments (an ArgumentError naming the function and the argument) and is the method
// of tensor.ts applied to the tensor, so that the two forms cannot differ; the arguments PyTorch
// takes by keyword only (`alpha`, `decimals`) are an options object.
import { Tensor, type Scalar } from './tensor.js';
import * as aten from './generated/aten.js';
import { checksOf } from '../util/arguments.js';
import { isScalar, tensorOrScalarArg } from './tensor-args.js';
import { eitherScalarPair, inputArg, tensorPairArg } from './elementwise-args.js';

/** `options.alpha` of add and sub: a number (default 1). */
function alphaArg(fn: string, options: unknown): Scalar | undefined {
  const alpha = checksOf(fn).object(options, 'options').alpha;
  if (alpha !== undefined && !isScalar(alpha)) checksOf(fn).fail('alpha', 'a number', alpha);
  return alpha as Scalar | undefined;
}

/** `input` and `other` checked: a Tensor and a Tensor or a number. */
function pairArgs(fn: string, input: unknown, other: unknown, name = 'other'): [Tensor, Tensor | Scalar] {
  return [inputArg(fn, input), tensorOrScalarArg(checksOf(fn), other, name)];
}

/** input + alpha * other, with broadcasting (torch.add). */
export function add(input: Tensor, other: Tensor | Scalar, options: { alpha?: Scalar } = {}): Tensor {
  const [a, b] = pairArgs('add', input, other);
  return a.add(b, alphaArg('add', options));
}
/** input - alpha * other, with broadcasting (torch.sub). */
export function sub(input: Tensor, other: Tensor | Scalar, options: { alpha?: Scalar } = {}): Tensor {
  const [a, b] = pairArgs('sub', input, other);
  return a.sub(b, alphaArg('sub', options));
}
/** The elementwise product, with broadcasting (torch.mul). */
export function mul(input: Tensor, other: Tensor | Scalar): Tensor {
  const [a, b] = pairArgs('mul', input, other);
  return a.mul(b);
}
/** input ** exponent elementwise; `input` may be a number when `exponent` is a tensor (torch.pow). */
export function pow(input: Tensor | Scalar, exponent: Tensor | Scalar): Tensor {
  return eitherScalarPair(
    'pow',
    input,
    exponent,
    { both: aten.pow_Tensor_Tensor, firstScalar: aten.pow_Scalar, secondScalar: aten.pow_Tensor_Scalar },
    'exponent',
  );
}
/** -input, elementwise (torch.neg). */
export function neg(input: Tensor): Tensor {
  return inputArg('neg', input).neg();
}
/** e^x, elementwise (torch.exp). */
export function exp(input: Tensor): Tensor {
  return inputArg('exp', input).exp();
}
/** The natural logarithm, elementwise (torch.log). */
export function log(input: Tensor): Tensor {
  return inputArg('log', input).log();
}
/** log(1 + x), accurate near 0, elementwise (torch.log1p). */
export function log1p(input: Tensor): Tensor {
  return inputArg('log1p', input).log1p();
}
/** The square root, elementwise (torch.sqrt). */
export function sqrt(input: Tensor): Tensor {
  return inputArg('sqrt', input).sqrt();
}
/** 1 / sqrt(x), elementwise (torch.rsqrt). */
export function rsqrt(input: Tensor): Tensor {
  return inputArg('rsqrt', input).rsqrt();
}
/** The absolute value, elementwise (torch.abs). */
export function abs(input: Tensor): Tensor {
  return inputArg('abs', input).abs();
}
/** x², elementwise (torch.square). */
export function square(input: Tensor): Tensor {
  return inputArg('square', input).square();
}
/** The sign -1, 0 or 1, elementwise (torch.sign). */
export function sign(input: Tensor): Tensor {
  return inputArg('sign', input).sign();
}
/** 1 / x, elementwise (torch.reciprocal). */
export function reciprocal(input: Tensor): Tensor {
  return inputArg('reciprocal', input).reciprocal();
}
/** The sine, elementwise (torch.sin). */
export function sin(input: Tensor): Tensor {
  return inputArg('sin', input).sin();
}
/** The cosine, elementwise (torch.cos). */
export function cos(input: Tensor): Tensor {
  return inputArg('cos', input).cos();
}
/** The largest integer not above x, elementwise (torch.floor). */
export function floor(input: Tensor): Tensor {
  return inputArg('floor', input).floor();
}
/**
 * Rounded half to even, elementwise (torch.round); with `decimals`, to that many decimal places
 * (negative: tens, hundreds...).
 */
export function round(input: Tensor, options: { decimals?: number } = {}): Tensor {
  const x = inputArg('round', input);
  const decimals = checksOf('round').object(options, 'options').decimals;
  if (decimals === undefined) return x.round();
  return aten.special_round(x, checksOf('round').integer(decimals, 'decimals'));
}
/** max(x, 0), elementwise (torch.relu). */
export function relu(input: Tensor): Tensor {
  return inputArg('relu', input).relu();
}
/** The logistic sigmoid 1 / (1 + e^-x), elementwise (torch.sigmoid). */
export function sigmoid(input: Tensor): Tensor {
  return inputArg('sigmoid', input).sigmoid();
}
/** The hyperbolic tangent, elementwise (torch.tanh). */
export function tanh(input: Tensor): Tensor {
  return inputArg('tanh', input).tanh();
}
/** The elementwise maximum of two tensors, NaN where either is NaN (torch.maximum). */
export function maximum(input: Tensor, other: Tensor): Tensor {
  return input.maximum(tensorPairArg('maximum', input, other));
}
/** The elementwise minimum of two tensors, NaN where either is NaN (torch.minimum). */
export function minimum(input: Tensor, other: Tensor): Tensor {
  return input.minimum(tensorPairArg('minimum', input, other));
}
/** input == other elementwise, as a bool tensor (torch.eq). */
export function eq(input: Tensor, other: Tensor | Scalar): Tensor {
  const [a, b] = pairArgs('eq', input, other);
  return a.eq(b);
}
/** input != other elementwise, as a bool tensor (torch.ne). */
export function ne(input: Tensor, other: Tensor | Scalar): Tensor {
  const [a, b] = pairArgs('ne', input, other);
  return a.ne(b);
}
/** input < other elementwise, as a bool tensor (torch.lt). */
export function lt(input: Tensor, other: Tensor | Scalar): Tensor {
  const [a, b] = pairArgs('lt', input, other);
  return a.lt(b);
}
/** input <= other elementwise, as a bool tensor (torch.le). */
export function le(input: Tensor, other: Tensor | Scalar): Tensor {
  const [a, b] = pairArgs('le', input, other);
  return a.le(b);
}
/** input > other elementwise, as a bool tensor (torch.gt). */
export function gt(input: Tensor, other: Tensor | Scalar): Tensor {
  const [a, b] = pairArgs('gt', input, other);
  return a.gt(b);
}
/** input >= other elementwise, as a bool tensor (torch.ge). */
export function ge(input: Tensor, other: Tensor | Scalar): Tensor {
  const [a, b] = pairArgs('ge', input, other);
  return a.ge(b);
}
