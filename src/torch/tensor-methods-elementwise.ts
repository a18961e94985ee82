// The Tensor methods of PyTorch's elementwise functions (x.tan(), x.fmod(2), x.isnan(),
// x.bitwiseAnd(y)...): each is the torch.* function of tensor-elementwise.ts, tensor-arithmetic.ts
// or tensor-logical.ts applied to the tensor, declared on Tensor by module augmentation and
// attached to its prototype when the package's index loads (their in-place forms are in
// tensor-methods-inplace.ts).
import { attachTensorFunctions } from './tensor-attach.js';
import { Tensor, type Scalar } from './tensor.js';
import * as elementwise from './tensor-elementwise.js';
import * as arithmetic from './tensor-arithmetic.js';
import * as logical from './tensor-logical.js';

declare module './tensor.js' {
  interface Tensor {
    /** The tangent, as torch.tan(this). */
    tan(): Tensor;
    /** The arcsine, in [-π/2, π/2] (NaN outside [-1, 1]), as torch.asin(this). */
    asin(): Tensor;
    /** The arccosine, in [0, π] (NaN outside [-1, 1]), as torch.acos(this). */
    acos(): Tensor;
    /** The arctangent, in (-π/2, π/2), as torch.atan(this). */
    atan(): Tensor;
    /** The hyperbolic sine, as torch.sinh(this). */
    sinh(): Tensor;
    /** The hyperbolic cosine, as torch.cosh(this). */
    cosh(): Tensor;
    /** The inverse hyperbolic sine, as torch.asinh(this). */
    asinh(): Tensor;
    /** The inverse hyperbolic cosine (NaN below 1), as torch.acosh(this). */
    acosh(): Tensor;
    /** The inverse hyperbolic tangent (±Infinity at ±1, NaN outside [-1, 1]), as torch.atanh(this). */
    atanh(): Tensor;
    /** The arcsine, as torch.arcsin(this). */
    arcsin(): Tensor;
    /** The arccosine, as torch.arccos(this). */
    arccos(): Tensor;
    /** The arctangent, as torch.arctan(this). */
    arctan(): Tensor;
    /** The inverse hyperbolic sine, as torch.arcsinh(this). */
    arcsinh(): Tensor;
    /** The inverse hyperbolic cosine, as torch.arccosh(this). */
    arccosh(): Tensor;
    /** The inverse hyperbolic tangent, as torch.arctanh(this). */
    arctanh(): Tensor;
    /** 2^x, as torch.exp2(this). */
    exp2(): Tensor;
    /** exp(x) - 1, accurate near 0, as torch.expm1(this). */
    expm1(): Tensor;
    /** The base-2 logarithm, as torch.log2(this). */
    log2(): Tensor;
    /** The base-10 logarithm, as torch.log10(this). */
    log10(): Tensor;
    /** The error function, as torch.erf(this). */
    erf(): Tensor;
    /** The complementary error function 1 - erf(x), as torch.erfc(this). */
    erfc(): Tensor;
    /** The inverse error function (±Infinity at ±1, NaN outside [-1, 1]), as torch.erfinv(this). */
    erfinv(): Tensor;
    /** The log of the absolute value of the gamma function, as torch.lgamma(this). */
    lgamma(): Tensor;
    /** The digamma function, the derivative of lgamma (-Infinity at 0), as torch.digamma(this). */
    digamma(): Tensor;
    /** The normalised sinc sin(πx) / (πx), 1 at 0, as torch.sinc(this). */
    sinc(): Tensor;
    /** The smallest integer not below x, as torch.ceil(this). */
    ceil(): Tensor;
    /** x rounded toward zero, as torch.trunc(this). */
    trunc(): Tensor;
    /** x rounded toward zero, as torch.fix(this). */
    fix(): Tensor;
    /** The fractional part x - trunc(x), with x's sign, as torch.frac(this). */
    frac(): Tensor;
    /** The sign (-1, 0 or 1; for complex numbers x / |x|), as torch.sgn(this). */
    sgn(): Tensor;
    /** This tensor itself as a view (unary plus), as torch.positive(this). */
    positive(): Tensor;
    /** Degrees converted to radians, as torch.deg2rad(this). */
    deg2rad(): Tensor;
    /** Radians converted to degrees, as torch.rad2deg(this). */
    rad2deg(): Tensor;
    /** The log-odds, `eps` clamping first, as torch.logit(this, eps). */
    logit(eps?: number | null): Tensor;
    /** NaN and the infinities replaced, as torch.nan_to_num(this, ...). */
    nanToNum(nan?: number | null, posinf?: number | null, neginf?: number | null): Tensor;
    /** this / other as true division, as torch.true_divide(this, other). */
    trueDivide(other: Tensor | Scalar): Tensor;
    /** The quotient rounded down, floor(this / other), as torch.floor_divide(this, other). */
    floorDivide(other: Tensor | Scalar): Tensor;
    /** The remainder with this tensor's sign (C's fmod), as torch.fmod(this, other). */
    fmod(other: Tensor | Scalar): Tensor;
    /** The remainder with the divisor's sign (Python's %), as torch.remainder(this, other). */
    remainder(other: Tensor | Scalar): Tensor;
    /** this ** exponent in double precision, as torch.float_power(this, exponent). */
    floatPower(exponent: Tensor | Scalar): Tensor;
    /** this * log(other), 0 where this is 0, as torch.xlogy(this, other). */
    xlogy(other: Tensor | Scalar): Tensor;
    /** The magnitude of this with the sign of `other`, as torch.copysign(this, other). */
    copysign(other: Tensor | Scalar): Tensor;
    /** Bounded below by `min`, a number or a tensor that broadcasts, as torch.clamp_min(this, min). */
    clampMin(min: Tensor | Scalar): Tensor;
    /** Bounded above by `max`, a number or a tensor that broadcasts, as torch.clamp_max(this, max). */
    clampMax(max: Tensor | Scalar): Tensor;
    /** The next float after this toward `other`, as torch.nextafter(this, other). */
    nextafter(other: Tensor): Tensor;
    /** this * 2^other, as torch.ldexp(this, other). */
    ldexp(other: Tensor): Tensor;
    /** log(exp(this) + exp(other)), computed without overflow, as torch.logaddexp(this, other). */
    logaddexp(other: Tensor): Tensor;
    /** log2(2^this + 2^other), computed without overflow, as torch.logaddexp2(this, other). */
    logaddexp2(other: Tensor): Tensor;
    /** The Heaviside step, `values` at 0, as torch.heaviside(this, values). */
    heaviside(values: Tensor): Tensor;
    /** The greatest common divisor of integer tensors, non-negative, as torch.gcd(this, other). */
    gcd(other: Tensor): Tensor;
    /** The least common multiple of integer tensors, non-negative, as torch.lcm(this, other). */
    lcm(other: Tensor): Tensor;
    /** The maximum ignoring NaN, as torch.fmax(this, other). */
    fmax(other: Tensor): Tensor;
    /** The minimum ignoring NaN, as torch.fmin(this, other). */
    fmin(other: Tensor): Tensor;
    /** The mantissa and the exponent, as torch.frexp(this). */
    frexp(): [mantissa: Tensor, exponent: Tensor];
    /** Whether each element is NaN, as a bool tensor, as torch.isnan(this). */
    isnan(): Tensor;
    /** Whether each element is +Infinity or -Infinity, as a bool tensor, as torch.isinf(this). */
    isinf(): Tensor;
    /** Whether each element is +Infinity, as a bool tensor, as torch.isposinf(this). */
    isposinf(): Tensor;
    /** Whether each element is -Infinity, as a bool tensor, as torch.isneginf(this). */
    isneginf(): Tensor;
    /** Whether each element is finite, as a bool tensor, as torch.isfinite(this). */
    isfinite(): Tensor;
    /** Whether each element is real, as torch.isreal(this). */
    isreal(): Tensor;
    /** Whether each element's sign bit is set (true for -0 and negative NaN too), as torch.signbit(this). */
    signbit(): Tensor;
    /** The logical NOT, zero becoming true, as a bool tensor, as torch.logical_not(this). */
    logicalNot(): Tensor;
    /** The bitwise NOT of an integer tensor (logical NOT for bool), as torch.bitwise_not(this). */
    bitwiseNot(): Tensor;
    /** The logical AND of two tensors, as a bool tensor, as torch.logical_and(this, other). */
    logicalAnd(other: Tensor): Tensor;
    /** The logical OR of two tensors, as a bool tensor, as torch.logical_or(this, other). */
    logicalOr(other: Tensor): Tensor;
    /** The logical exclusive OR of two tensors, as a bool tensor, as torch.logical_xor(this, other). */
    logicalXor(other: Tensor): Tensor;
    /** The bitwise AND of integer or bool tensors, as torch.bitwise_and(this, other). */
    bitwiseAnd(other: Tensor | Scalar): Tensor;
    /** The bitwise OR of integer or bool tensors, as torch.bitwise_or(this, other). */
    bitwiseOr(other: Tensor | Scalar): Tensor;
    /** The bitwise exclusive OR of integer or bool tensors, as torch.bitwise_xor(this, other). */
    bitwiseXor(other: Tensor | Scalar): Tensor;
    /** Shifted left by `other` bits, as torch.bitwise_left_shift(this, other). */
    bitwiseLeftShift(other: Tensor | Scalar): Tensor;
    /** Shifted right by `other` bits, as torch.bitwise_right_shift(this, other). */
    bitwiseRightShift(other: Tensor | Scalar): Tensor;
  }
}

// The functions whose first argument is the tensor, by method name.
const methods: Record<string, (input: Tensor, ...rest: never[]) => unknown> = {
  tan: elementwise.tan,
  asin: elementwise.asin,
  acos: elementwise.acos,
  atan: elementwise.atan,
  sinh: elementwise.sinh,
  cosh: elementwise.cosh,
  asinh: elementwise.asinh,
  acosh: elementwise.acosh,
  atanh: elementwise.atanh,
  arcsin: elementwise.arcsin,
  arccos: elementwise.arccos,
  arctan: elementwise.arctan,
  arcsinh: elementwise.arcsinh,
  arccosh: elementwise.arccosh,
  arctanh: elementwise.arctanh,
  exp2: elementwise.exp2,
  expm1: elementwise.expm1,
  log2: elementwise.log2,
  log10: elementwise.log10,
  erf: elementwise.erf,
  erfc: elementwise.erfc,
  erfinv: elementwise.erfinv,
  lgamma: elementwise.lgamma,
  digamma: elementwise.digamma,
  sinc: elementwise.sinc,
  ceil: elementwise.ceil,
  trunc: elementwise.trunc,
  fix: elementwise.fix,
  frac: elementwise.frac,
  sgn: elementwise.sgn,
  positive: elementwise.positive,
  deg2rad: elementwise.deg2rad,
  rad2deg: elementwise.rad2deg,
  logit: elementwise.logit,
  nanToNum: elementwise.nanToNum,
  trueDivide: arithmetic.trueDivide,
  floorDivide: arithmetic.floorDivide,
  fmod: arithmetic.fmod,
  remainder: arithmetic.remainder,
  floatPower: arithmetic.floatPower,
  xlogy: arithmetic.xlogy,
  copysign: arithmetic.copysign,
  clampMin: arithmetic.clampMin,
  clampMax: arithmetic.clampMax,
  nextafter: arithmetic.nextafter,
  ldexp: arithmetic.ldexp,
  logaddexp: arithmetic.logaddexp,
  logaddexp2: arithmetic.logaddexp2,
  heaviside: arithmetic.heaviside,
  gcd: arithmetic.gcd,
  lcm: arithmetic.lcm,
  fmax: arithmetic.fmax,
  fmin: arithmetic.fmin,
  frexp: arithmetic.frexp,
  isnan: logical.isnan,
  isinf: logical.isinf,
  isposinf: logical.isposinf,
  isneginf: logical.isneginf,
  isfinite: logical.isfinite,
  isreal: logical.isreal,
  signbit: logical.signbit,
  logicalNot: logical.logicalNot,
  bitwiseNot: logical.bitwiseNot,
  logicalAnd: logical.logicalAnd,
  logicalOr: logical.logicalOr,
  logicalXor: logical.logicalXor,
  bitwiseAnd: logical.bitwiseAnd,
  bitwiseOr: logical.bitwiseOr,
  bitwiseXor: logical.bitwiseXor,
  bitwiseLeftShift: logical.bitwiseLeftShift,
  bitwiseRightShift: logical.bitwiseRightShift,
};

// Non-enumerable like the class's own methods; a name already defined is refused at load.
attachTensorFunctions('tensor-methods-elementwise.ts', methods);

/** The names of the elementwise methods this module attaches to Tensor (for the tests that check them all). */
export const TENSOR_ELEMENTWISE_METHODS: readonly string[] = Object.keys(methods);
