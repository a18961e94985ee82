// PyTorch's elementwise functions of two tensors (torch.fmod, torch.remainder, torch.div with
// rounding_mode, torch.float_power, torch.copysign, torch.logaddexp, torch.gcd, torch.fmax,
// torch.clamp_min...) under their names in camelCase, over libtorch's kernels so that results,
// dtype promotion, broadcasting and gradients are PyTorch's; a number for the second argument
// where PyTorch takes one (elementwise-args.ts).
import { Tensor, type Scalar } from './tensor.js';
import * as aten from './generated/aten.js';
import { checksOf } from '../util/arguments.js';
import {
  eitherScalarPair,
  inputArg,
  roundingModeArg,
  tensorOrScalarPair,
  tensorPairArg,
  type RoundingMode,
} from './elementwise-args.js';

export type { RoundingMode } from './elementwise-args.js';

/**
 * `input / other` elementwise with broadcasting (torch.div); `roundingMode` 'trunc' rounds the
 * quotient toward zero, 'floor' down (Python's //), and null (the default) keeps true division.
 */
export function div(
  input: Tensor,
  other: Tensor | Scalar,
  options: { roundingMode?: RoundingMode } = {},
): Tensor {
  const fn = 'div';
  const mode = roundingModeArg(fn, checksOf(fn).object(options, 'options').roundingMode);
  return mode === null
    ? tensorOrScalarPair(fn, input, other, aten.div_Tensor, aten.div_Scalar)
    : tensorOrScalarPair(
        fn,
        input,
        other,
        (a, b) => aten.div_Tensor_mode(a, b, mode),
        (a, b) => aten.div_Scalar_mode(a, b, mode),
      );
}
/** `input / other` as true (floating-point) division, PyTorch's alias of div (torch.true_divide). */
export function trueDivide(input: Tensor, other: Tensor | Scalar): Tensor {
  return tensorOrScalarPair('trueDivide', input, other, aten.true_divide_Tensor, aten.true_divide_Scalar);
}
/** The quotient rounded down, floor(input / other) (torch.floor_divide). */
export function floorDivide(input: Tensor, other: Tensor | Scalar): Tensor {
  return tensorOrScalarPair('floorDivide', input, other, aten.floor_divide, aten.floor_divide_Scalar);
}
/** The remainder of division toward zero, with the dividend's sign, as C's fmod (torch.fmod). */
export function fmod(input: Tensor, other: Tensor | Scalar): Tensor {
  return tensorOrScalarPair('fmod', input, other, aten.fmod_Tensor, aten.fmod_Scalar);
}
/** The remainder of floor division, with the divisor's sign, as Python's % (torch.remainder). */
export function remainder(input: Tensor | Scalar, other: Tensor | Scalar): Tensor {
  return eitherScalarPair('remainder', input, other, {
    both: aten.remainder_Tensor,
    firstScalar: aten.remainder_Scalar_Tensor,
    secondScalar: aten.remainder_Scalar,
  });
}
/** `input ** exponent` computed in double precision: float64 (complex128) results (torch.float_power). */
export function floatPower(input: Tensor | Scalar, exponent: Tensor | Scalar): Tensor {
  return eitherScalarPair(
    'floatPower',
    input,
    exponent,
    {
      both: aten.float_power_Tensor_Tensor,
      firstScalar: aten.float_power_Scalar,
      secondScalar: aten.float_power_Tensor_Scalar,
    },
    'exponent',
  );
}
/** x log(y), 0 where x is 0 and y is not NaN; either may be a number (torch.xlogy). */
export function xlogy(input: Tensor | Scalar, other: Tensor | Scalar): Tensor {
  return eitherScalarPair('xlogy', input, other, {
    both: aten.xlogy_Tensor,
    firstScalar: aten.xlogy_Scalar_Self,
    secondScalar: aten.xlogy_Scalar_Other,
  });
}
/** The magnitude of `input` with the sign of `other` (the sign bit: -0 counts as negative) (torch.copysign). */
export function copysign(input: Tensor, other: Tensor | Scalar): Tensor {
  return tensorOrScalarPair('copysign', input, other, aten.copysign_Tensor, aten.copysign_Scalar);
}
/** The next representable floating-point value after `input` toward `other` (torch.nextafter). */
export function nextafter(input: Tensor, other: Tensor): Tensor {
  return aten.nextafter(input, tensorPairArg('nextafter', input, other));
}
/** input * 2^other, elementwise (torch.ldexp). */
export function ldexp(input: Tensor, other: Tensor): Tensor {
  return aten.ldexp_Tensor(input, tensorPairArg('ldexp', input, other));
}
/**
 * `input` split into a mantissa in (-1, -0.5] ∪ [0.5, 1) (or 0) and an int32 exponent with
 * input = mantissa * 2^exponent (torch.frexp; floating-point inputs only).
 */
export function frexp(input: Tensor): [mantissa: Tensor, exponent: Tensor] {
  return aten.frexp_Tensor(inputArg('frexp', input));
}
/** log(exp(input) + exp(other)), computed without overflow (torch.logaddexp). */
export function logaddexp(input: Tensor, other: Tensor): Tensor {
  return aten.logaddexp(input, tensorPairArg('logaddexp', input, other));
}
/** log2(2^input + 2^other), computed without overflow (torch.logaddexp2). */
export function logaddexp2(input: Tensor, other: Tensor): Tensor {
  return aten.logaddexp2(input, tensorPairArg('logaddexp2', input, other));
}
/** The Heaviside step: 0 where input < 0, 1 where input > 0, `values` where input is 0 (torch.heaviside). */
export function heaviside(input: Tensor, values: Tensor): Tensor {
  return aten.heaviside(input, tensorPairArg('heaviside', input, values, 'values'));
}
/** The greatest common divisor of integer tensors, non-negative (torch.gcd). */
export function gcd(input: Tensor, other: Tensor): Tensor {
  return aten.gcd(input, tensorPairArg('gcd', input, other));
}
/** The least common multiple of integer tensors, non-negative (torch.lcm). */
export function lcm(input: Tensor, other: Tensor): Tensor {
  return aten.lcm(input, tensorPairArg('lcm', input, other));
}
/** The elementwise maximum ignoring NaN: NaN only where both are NaN (torch.fmax). */
export function fmax(input: Tensor, other: Tensor): Tensor {
  return aten.fmax(input, tensorPairArg('fmax', input, other));
}
/** The elementwise minimum ignoring NaN: NaN only where both are NaN (torch.fmin). */
export function fmin(input: Tensor, other: Tensor): Tensor {
  return aten.fmin(input, tensorPairArg('fmin', input, other));
}
/** `input` bounded below by `min`, a number or a tensor that broadcasts (torch.clamp_min). */
export function clampMin(input: Tensor, min: Tensor | Scalar): Tensor {
  return tensorOrScalarPair('clampMin', input, min, aten.clamp_min_Tensor, aten.clamp_min, 'min');
}
/** `input` bounded above by `max`, a number or a tensor that broadcasts (torch.clamp_max). */
export function clampMax(input: Tensor, max: Tensor | Scalar): Tensor {
  return tensorOrScalarPair('clampMax', input, max, aten.clamp_max_Tensor, aten.clamp_max, 'max');
}
