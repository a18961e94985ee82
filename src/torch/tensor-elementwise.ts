// PyTorch's elementwise functions of one tensor (torch.tan, torch.expm1, torch.erfinv, torch.ceil,
// torch.nan_to_num...) under their names in camelCase, over libtorch's kernels so that values,
// edge cases (NaN, the infinities, the ends of a domain) and gradients are PyTorch's. Each returns
// a new tensor; the in-place forms are Tensor methods (tensor-methods-inplace.ts).
import { Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import { inputArg, logitEpsArg, replacementArg } from './elementwise-args.js';

/** The tangent, elementwise (torch.tan). */
export function tan(input: Tensor): Tensor {
  return aten.tan(inputArg('tan', input));
}
/** The arcsine, in [-π/2, π/2] (NaN outside [-1, 1]), elementwise (torch.asin). */
export function asin(input: Tensor): Tensor {
  return aten.asin(inputArg('asin', input));
}
/** The arccosine, in [0, π] (NaN outside [-1, 1]), elementwise (torch.acos). */
export function acos(input: Tensor): Tensor {
  return aten.acos(inputArg('acos', input));
}
/** The arctangent, in (-π/2, π/2), elementwise (torch.atan). */
export function atan(input: Tensor): Tensor {
  return aten.atan(inputArg('atan', input));
}
/** The hyperbolic sine, elementwise (torch.sinh). */
export function sinh(input: Tensor): Tensor {
  return aten.sinh(inputArg('sinh', input));
}
/** The hyperbolic cosine, elementwise (torch.cosh). */
export function cosh(input: Tensor): Tensor {
  return aten.cosh(inputArg('cosh', input));
}
/** The inverse hyperbolic sine, elementwise (torch.asinh). */
export function asinh(input: Tensor): Tensor {
  return aten.asinh(inputArg('asinh', input));
}
/** The inverse hyperbolic cosine (NaN below 1), elementwise (torch.acosh). */
export function acosh(input: Tensor): Tensor {
  return aten.acosh(inputArg('acosh', input));
}
/** The inverse hyperbolic tangent (±Infinity at ±1, NaN outside [-1, 1]), elementwise (torch.atanh). */
export function atanh(input: Tensor): Tensor {
  return aten.atanh(inputArg('atanh', input));
}
/** 2^x, elementwise (torch.exp2). */
export function exp2(input: Tensor): Tensor {
  return aten.exp2(inputArg('exp2', input));
}
/** exp(x) - 1, accurate near 0, elementwise (torch.expm1). */
export function expm1(input: Tensor): Tensor {
  return aten.expm1(inputArg('expm1', input));
}
/** The base-2 logarithm, elementwise (torch.log2). */
export function log2(input: Tensor): Tensor {
  return aten.log2(inputArg('log2', input));
}
/** The base-10 logarithm, elementwise (torch.log10). */
export function log10(input: Tensor): Tensor {
  return aten.log10(inputArg('log10', input));
}
/** The error function, elementwise (torch.erf). */
export function erf(input: Tensor): Tensor {
  return aten.erf(inputArg('erf', input));
}
/** The complementary error function 1 - erf(x), elementwise (torch.erfc). */
export function erfc(input: Tensor): Tensor {
  return aten.erfc(inputArg('erfc', input));
}
/** The inverse error function (±Infinity at ±1, NaN outside [-1, 1]), elementwise (torch.erfinv). */
export function erfinv(input: Tensor): Tensor {
  return aten.erfinv(inputArg('erfinv', input));
}
/** The log of the absolute value of the gamma function, elementwise (torch.lgamma). */
export function lgamma(input: Tensor): Tensor {
  return aten.lgamma(inputArg('lgamma', input));
}
/** The digamma function, the derivative of lgamma (-Infinity at 0), elementwise (torch.digamma). */
export function digamma(input: Tensor): Tensor {
  return aten.digamma(inputArg('digamma', input));
}
/** The normalised sinc sin(πx) / (πx), 1 at 0, elementwise (torch.sinc). */
export function sinc(input: Tensor): Tensor {
  return aten.sinc(inputArg('sinc', input));
}
/** The smallest integer not below x, elementwise (torch.ceil). */
export function ceil(input: Tensor): Tensor {
  return aten.ceil(inputArg('ceil', input));
}
/** x rounded toward zero, elementwise (torch.trunc). */
export function trunc(input: Tensor): Tensor {
  return aten.trunc(inputArg('trunc', input));
}
/** x rounded toward zero, PyTorch's alias of trunc, elementwise (torch.fix). */
export function fix(input: Tensor): Tensor {
  return aten.fix(inputArg('fix', input));
}
/** The fractional part x - trunc(x), with x's sign, elementwise (torch.frac). */
export function frac(input: Tensor): Tensor {
  return aten.frac(inputArg('frac', input));
}
/** The sign (-1, 0 or 1; for complex numbers x / |x|), elementwise (torch.sgn). */
export function sgn(input: Tensor): Tensor {
  return aten.sgn(inputArg('sgn', input));
}
/** `input` itself (the same tensor's data: a view), as unary plus, elementwise (torch.positive). */
export function positive(input: Tensor): Tensor {
  return aten.positive(inputArg('positive', input));
}
/** Degrees converted to radians, elementwise (torch.deg2rad). */
export function deg2rad(input: Tensor): Tensor {
  return aten.deg2rad(inputArg('deg2rad', input));
}
/** Radians converted to degrees, elementwise (torch.rad2deg). */
export function rad2deg(input: Tensor): Tensor {
  return aten.rad2deg(inputArg('rad2deg', input));
}

// PyTorch's NumPy-style aliases of the inverse trigonometric and hyperbolic functions.

/** The arcsine, as {@link asin} (torch.arcsin). */
export function arcsin(input: Tensor): Tensor {
  return aten.asin(inputArg('arcsin', input));
}
/** The arccosine, as {@link acos} (torch.arccos). */
export function arccos(input: Tensor): Tensor {
  return aten.acos(inputArg('arccos', input));
}
/** The arctangent, as {@link atan} (torch.arctan). */
export function arctan(input: Tensor): Tensor {
  return aten.atan(inputArg('arctan', input));
}
/** The inverse hyperbolic sine, as {@link asinh} (torch.arcsinh). */
export function arcsinh(input: Tensor): Tensor {
  return aten.asinh(inputArg('arcsinh', input));
}
/** The inverse hyperbolic cosine, as {@link acosh} (torch.arccosh). */
export function arccosh(input: Tensor): Tensor {
  return aten.acosh(inputArg('arccosh', input));
}
/** The inverse hyperbolic tangent, as {@link atanh} (torch.arctanh). */
export function arctanh(input: Tensor): Tensor {
  return aten.atanh(inputArg('arctanh', input));
}

/**
 * The log-odds log(p / (1 - p)), elementwise (torch.logit); with `eps`, p is first clamped to
 * [eps, 1 - eps] (its gradient is 0 outside), without it 0 and 1 give -Infinity and Infinity.
 */
export function logit(input: Tensor, eps: number | null = null): Tensor {
  inputArg('logit', input);
  return aten.logit(input, logitEpsArg('logit', eps));
}

/**
 * `input` with NaN replaced by `nan` (default 0), +Infinity by `posinf` and -Infinity by `neginf`
 * (default: the largest and the lowest finite value of the dtype), elementwise (torch.nan_to_num).
 */
export function nanToNum(
  input: Tensor,
  nan: number | null = 0,
  posinf: number | null = null,
  neginf: number | null = null,
): Tensor {
  const fn = 'nanToNum';
  inputArg(fn, input);
  return aten.nan_to_num(
    input,
    replacementArg(fn, nan, 'nan'),
    replacementArg(fn, posinf, 'posinf'),
    replacementArg(fn, neginf, 'neginf'),
  );
}
