// The in-place Tensor methods of PyTorch's elementwise functions (x.tan_(), x.sub_(y),
// x.clamp_(0, 1), x.fmod_(2), x.bitwiseAnd_(m)...): each writes its result into the tensor over
// libtorch's in-place kernel and returns the tensor itself, as PyTorch's `_` methods do (the
// result must fit the tensor's dtype and shape: libtorch refuses, for example, a float result into
// an integer tensor). Declared on Tensor by module augmentation, attached when the index loads.
import { attachTensorFunctions } from './tensor-attach.js';
import { Tensor, type Scalar } from './tensor.js';
import * as aten from './generated/aten.js';
import { checksOf } from '../util/arguments.js';
import { isScalar } from './tensor-args.js';
import {
  logitEpsArg,
  replacementArg,
  roundingModeArg,
  tensorOrScalarPair,
  tensorPairArg,
  type RoundingMode,
} from './elementwise-args.js';

declare module './tensor.js' {
  interface Tensor {
    /** tan() in place; returns this (torch.Tensor.tan_). */
    tan_(): this;
    /** asin() in place; returns this (torch.Tensor.asin_). */
    asin_(): this;
    /** acos() in place; returns this (torch.Tensor.acos_). */
    acos_(): this;
    /** atan() in place; returns this (torch.Tensor.atan_). */
    atan_(): this;
    /** sinh() in place; returns this (torch.Tensor.sinh_). */
    sinh_(): this;
    /** cosh() in place; returns this (torch.Tensor.cosh_). */
    cosh_(): this;
    /** asinh() in place; returns this (torch.Tensor.asinh_). */
    asinh_(): this;
    /** acosh() in place; returns this (torch.Tensor.acosh_). */
    acosh_(): this;
    /** atanh() in place; returns this (torch.Tensor.atanh_). */
    atanh_(): this;
    /** exp2() in place; returns this (torch.Tensor.exp2_). */
    exp2_(): this;
    /** expm1() in place; returns this (torch.Tensor.expm1_). */
    expm1_(): this;
    /** log2() in place; returns this (torch.Tensor.log2_). */
    log2_(): this;
    /** log10() in place; returns this (torch.Tensor.log10_). */
    log10_(): this;
    /** erf() in place; returns this (torch.Tensor.erf_). */
    erf_(): this;
    /** erfc() in place; returns this (torch.Tensor.erfc_). */
    erfc_(): this;
    /** erfinv() in place; returns this (torch.Tensor.erfinv_). */
    erfinv_(): this;
    /** lgamma() in place; returns this (torch.Tensor.lgamma_). */
    lgamma_(): this;
    /** digamma() in place; returns this (torch.Tensor.digamma_). */
    digamma_(): this;
    /** sinc() in place; returns this (torch.Tensor.sinc_). */
    sinc_(): this;
    /** ceil() in place; returns this (torch.Tensor.ceil_). */
    ceil_(): this;
    /** trunc() in place; returns this (torch.Tensor.trunc_). */
    trunc_(): this;
    /** fix() in place; returns this (torch.Tensor.fix_). */
    fix_(): this;
    /** frac() in place; returns this (torch.Tensor.frac_). */
    frac_(): this;
    /** sgn() in place; returns this (torch.Tensor.sgn_). */
    sgn_(): this;
    /** deg2rad() in place; returns this (torch.Tensor.deg2rad_). */
    deg2rad_(): this;
    /** rad2deg() in place; returns this (torch.Tensor.rad2deg_). */
    rad2deg_(): this;
    /** sigmoid() in place; returns this (torch.Tensor.sigmoid_). */
    sigmoid_(): this;
    /** exp() in place; returns this (torch.Tensor.exp_). */
    exp_(): this;
    /** log() in place; returns this (torch.Tensor.log_). */
    log_(): this;
    /** sqrt() in place; returns this (torch.Tensor.sqrt_). */
    sqrt_(): this;
    /** abs() in place; returns this (torch.Tensor.abs_). */
    abs_(): this;
    /** neg() in place; returns this (torch.Tensor.neg_). */
    neg_(): this;
    /** sin() in place; returns this (torch.Tensor.sin_). */
    sin_(): this;
    /** cos() in place; returns this (torch.Tensor.cos_). */
    cos_(): this;
    /** tanh() in place; returns this (torch.Tensor.tanh_). */
    tanh_(): this;
    /** relu() in place; returns this (torch.Tensor.relu_). */
    relu_(): this;
    /** floor() in place; returns this (torch.Tensor.floor_). */
    floor_(): this;
    /** round() in place; returns this (torch.Tensor.round_). */
    round_(): this;
    /** log1p() in place; returns this (torch.Tensor.log1p_). */
    log1p_(): this;
    /** rsqrt() in place; returns this (torch.Tensor.rsqrt_). */
    rsqrt_(): this;
    /** reciprocal() in place; returns this (torch.Tensor.reciprocal_). */
    reciprocal_(): this;
    /** sign() in place; returns this (torch.Tensor.sign_). */
    sign_(): this;
    /** square() in place; returns this (torch.Tensor.square_). */
    square_(): this;
    /** arcsin() in place; returns this (torch.Tensor.arcsin_). */
    arcsin_(): this;
    /** arccos() in place; returns this (torch.Tensor.arccos_). */
    arccos_(): this;
    /** arctan() in place; returns this (torch.Tensor.arctan_). */
    arctan_(): this;
    /** arcsinh() in place; returns this (torch.Tensor.arcsinh_). */
    arcsinh_(): this;
    /** arccosh() in place; returns this (torch.Tensor.arccosh_). */
    arccosh_(): this;
    /** arctanh() in place; returns this (torch.Tensor.arctanh_). */
    arctanh_(): this;
    /** logicalNot() in place; returns this (torch.Tensor.logical_not_). */
    logicalNot_(): this;
    /** bitwiseNot() in place; returns this (torch.Tensor.bitwise_not_). */
    bitwiseNot_(): this;
    /** logit(eps) in place; returns this (torch.Tensor.logit_). */
    logit_(eps?: number | null): this;
    /** nanToNum(nan, posinf, neginf) in place; returns this (torch.Tensor.nan_to_num_). */
    nanToNum_(nan?: number | null, posinf?: number | null, neginf?: number | null): this;
    /** this - alpha * other in place; returns this (torch.Tensor.sub_). */
    sub_(other: Tensor | Scalar, alpha?: Scalar): this;
    /** Divides in place, rounding as `roundingMode` says; returns this (torch.Tensor.div_). */
    div_(other: Tensor | Scalar, options?: { roundingMode?: RoundingMode }): this;
    /** Raises to `exponent` in place; returns this (torch.Tensor.pow_). */
    pow_(exponent: Tensor | Scalar): this;
    /** Clamps to [min, max] in place, each bound a number, a tensor or null; returns this (torch.Tensor.clamp_). */
    clamp_(min?: Tensor | Scalar | null, max?: Tensor | Scalar | null): this;
    /** clampMin(min) in place; returns this (torch.Tensor.clamp_min_). */
    clampMin_(min: Tensor | Scalar): this;
    /** clampMax(max) in place; returns this (torch.Tensor.clamp_max_). */
    clampMax_(max: Tensor | Scalar): this;
    /** xlogy(other) in place; returns this (torch.Tensor.xlogy_). */
    xlogy_(other: Tensor | Scalar): this;
    /** fmod(other) in place; returns this (torch.Tensor.fmod_). */
    fmod_(other: Tensor | Scalar): this;
    /** remainder(other) in place; returns this (torch.Tensor.remainder_). */
    remainder_(other: Tensor | Scalar): this;
    /** floorDivide(other) in place; returns this (torch.Tensor.floor_divide_). */
    floorDivide_(other: Tensor | Scalar): this;
    /** trueDivide(other) in place; returns this (torch.Tensor.true_divide_). */
    trueDivide_(other: Tensor | Scalar): this;
    /** floatPower(exponent) in place, for float64 tensors; returns this (torch.Tensor.float_power_). */
    floatPower_(exponent: Tensor | Scalar): this;
    /** copysign(other) in place; returns this (torch.Tensor.copysign_). */
    copysign_(other: Tensor | Scalar): this;
    /** nextafter(other) in place; returns this (torch.Tensor.nextafter_). */
    nextafter_(other: Tensor): this;
    /** ldexp(other) in place; returns this (torch.Tensor.ldexp_). */
    ldexp_(other: Tensor): this;
    /** heaviside(values) in place; returns this (torch.Tensor.heaviside_). */
    heaviside_(values: Tensor): this;
    /** gcd(other) in place; returns this (torch.Tensor.gcd_). */
    gcd_(other: Tensor): this;
    /** lcm(other) in place; returns this (torch.Tensor.lcm_). */
    lcm_(other: Tensor): this;
    /** logicalAnd(other) in place (1 or 0 in this tensor's dtype); returns this (torch.Tensor.logical_and_). */
    logicalAnd_(other: Tensor): this;
    /** logicalOr(other) in place; returns this (torch.Tensor.logical_or_). */
    logicalOr_(other: Tensor): this;
    /** logicalXor(other) in place; returns this (torch.Tensor.logical_xor_). */
    logicalXor_(other: Tensor): this;
    /** bitwiseAnd(other) in place; returns this (torch.Tensor.bitwise_and_). */
    bitwiseAnd_(other: Tensor | Scalar): this;
    /** bitwiseOr(other) in place; returns this (torch.Tensor.bitwise_or_). */
    bitwiseOr_(other: Tensor | Scalar): this;
    /** bitwiseXor(other) in place; returns this (torch.Tensor.bitwise_xor_). */
    bitwiseXor_(other: Tensor | Scalar): this;
    /** bitwiseLeftShift(other) in place; returns this (torch.Tensor.bitwise_left_shift_). */
    bitwiseLeftShift_(other: Tensor | Scalar): this;
    /** bitwiseRightShift(other) in place; returns this (torch.Tensor.bitwise_right_shift_). */
    bitwiseRightShift_(other: Tensor | Scalar): this;
  }
}

/** The in-place method `name` of a Tensor-only second argument. */
function withTensor(name: string, op: (self: Tensor, other: Tensor) => Tensor, argName = 'other') {
  return (self: Tensor, other: Tensor): Tensor =>
    op(self, tensorPairArg(`Tensor.${name}`, self, other, argName));
}

/** The in-place method `name` of a Tensor or Scalar second argument, by the overload of each. */
function withEither(
  name: string,
  tensorOp: (self: Tensor, other: Tensor) => Tensor,
  scalarOp: (self: Tensor, other: Scalar) => Tensor,
  argName = 'other',
) {
  return (self: Tensor, other: Tensor | Scalar): Tensor =>
    tensorOrScalarPair(`Tensor.${name}`, self, other, tensorOp, scalarOp, argName);
}

function sub_(self: Tensor, other: Tensor | Scalar, alpha?: Scalar): Tensor {
  if (alpha !== undefined && !isScalar(alpha)) checksOf('Tensor.sub_').fail('alpha', 'a number', alpha);
  return tensorOrScalarPair(
    'Tensor.sub_',
    self,
    other,
    (a, b) => aten.sub__Tensor(a, b, alpha),
    (a, b) => aten.sub__Scalar(a, b, alpha),
  );
}

function div_(self: Tensor, other: Tensor | Scalar, options: { roundingMode?: RoundingMode } = {}): Tensor {
  const fn = 'Tensor.div_';
  const mode = roundingModeArg(fn, checksOf(fn).object(options, 'options').roundingMode);
  return mode === null
    ? tensorOrScalarPair(fn, self, other, aten.div__Tensor, aten.div__Scalar)
    : tensorOrScalarPair(
        fn,
        self,
        other,
        (a, b) => aten.div__Tensor_mode(a, b, mode),
        (a, b) => aten.div__Scalar_mode(a, b, mode),
      );
}

// As torch.clamp (tensor-index.ts): one tensor and one number bound clamp below, then above.
function clamp_(
  self: Tensor,
  min: Tensor | Scalar | null = null,
  max: Tensor | Scalar | null = null,
): Tensor {
  const c = checksOf('Tensor.clamp_');
  if (min !== null && !(min instanceof Tensor) && !isScalar(min))
    c.fail('min', 'a Tensor, a number or null', min);
  if (max !== null && !(max instanceof Tensor) && !isScalar(max))
    c.fail('max', 'a Tensor, a number or null', max);
  if (min === null && max === null) c.fail('min', 'a bound (min or max, or both)', min);
  const lowIsTensor = min instanceof Tensor;
  const highIsTensor = max instanceof Tensor;
  if (!lowIsTensor && !highIsTensor) return aten.clamp_(self, min as Scalar | null, max as Scalar | null);
  if ((lowIsTensor || min === null) && (highIsTensor || max === null))
    return aten.clamp__Tensor(self, min as Tensor | null, max as Tensor | null);
  if (lowIsTensor) aten.clamp_min__Tensor(self, min);
  else aten.clamp_min_(self, min as Scalar);
  return highIsTensor ? aten.clamp_max__Tensor(self, max) : aten.clamp_max_(self, max as Scalar);
}

// The in-place methods, by name (the kernels return the tensor they were given).
const inPlace: Record<string, (self: Tensor, ...rest: never[]) => unknown> = {
  tan_: (self: Tensor) => aten.tan_(self),
  asin_: (self: Tensor) => aten.asin_(self),
  acos_: (self: Tensor) => aten.acos_(self),
  atan_: (self: Tensor) => aten.atan_(self),
  sinh_: (self: Tensor) => aten.sinh_(self),
  cosh_: (self: Tensor) => aten.cosh_(self),
  asinh_: (self: Tensor) => aten.asinh_(self),
  acosh_: (self: Tensor) => aten.acosh_(self),
  atanh_: (self: Tensor) => aten.atanh_(self),
  exp2_: (self: Tensor) => aten.exp2_(self),
  expm1_: (self: Tensor) => aten.expm1_(self),
  log2_: (self: Tensor) => aten.log2_(self),
  log10_: (self: Tensor) => aten.log10_(self),
  erf_: (self: Tensor) => aten.erf_(self),
  erfc_: (self: Tensor) => aten.erfc_(self),
  erfinv_: (self: Tensor) => aten.erfinv_(self),
  lgamma_: (self: Tensor) => aten.lgamma_(self),
  digamma_: (self: Tensor) => aten.digamma_(self),
  sinc_: (self: Tensor) => aten.sinc_(self),
  ceil_: (self: Tensor) => aten.ceil_(self),
  trunc_: (self: Tensor) => aten.trunc_(self),
  fix_: (self: Tensor) => aten.fix_(self),
  frac_: (self: Tensor) => aten.frac_(self),
  sgn_: (self: Tensor) => aten.sgn_(self),
  deg2rad_: (self: Tensor) => aten.deg2rad_(self),
  rad2deg_: (self: Tensor) => aten.rad2deg_(self),
  sigmoid_: (self: Tensor) => aten.sigmoid_(self),
  exp_: (self: Tensor) => aten.exp_(self),
  log_: (self: Tensor) => aten.log_(self),
  sqrt_: (self: Tensor) => aten.sqrt_(self),
  abs_: (self: Tensor) => aten.abs_(self),
  neg_: (self: Tensor) => aten.neg_(self),
  sin_: (self: Tensor) => aten.sin_(self),
  cos_: (self: Tensor) => aten.cos_(self),
  tanh_: (self: Tensor) => aten.tanh_(self),
  relu_: (self: Tensor) => aten.relu_(self),
  floor_: (self: Tensor) => aten.floor_(self),
  round_: (self: Tensor) => aten.round_(self),
  log1p_: (self: Tensor) => aten.log1p_(self),
  rsqrt_: (self: Tensor) => aten.rsqrt_(self),
  reciprocal_: (self: Tensor) => aten.reciprocal_(self),
  sign_: (self: Tensor) => aten.sign_(self),
  square_: (self: Tensor) => aten.square_(self),
  arcsin_: (self: Tensor) => aten.asin_(self),
  arccos_: (self: Tensor) => aten.acos_(self),
  arctan_: (self: Tensor) => aten.atan_(self),
  arcsinh_: (self: Tensor) => aten.asinh_(self),
  arccosh_: (self: Tensor) => aten.acosh_(self),
  arctanh_: (self: Tensor) => aten.atanh_(self),
  logicalNot_: (self: Tensor) => aten.logical_not_(self),
  bitwiseNot_: (self: Tensor) => aten.bitwise_not_(self),
  logit_: (self: Tensor, eps: number | null = null) => aten.logit_(self, logitEpsArg('Tensor.logit_', eps)),
  nanToNum_: (
    self: Tensor,
    nan: number | null = 0,
    posinf: number | null = null,
    neginf: number | null = null,
  ) =>
    aten.nan_to_num_(
      self,
      replacementArg('Tensor.nanToNum_', nan, 'nan'),
      replacementArg('Tensor.nanToNum_', posinf, 'posinf'),
      replacementArg('Tensor.nanToNum_', neginf, 'neginf'),
    ),
  sub_,
  div_,
  pow_: withEither('pow_', aten.pow__Tensor, aten.pow__Scalar, 'exponent'),
  clamp_,
  clampMin_: withEither('clampMin_', aten.clamp_min__Tensor, aten.clamp_min_, 'min'),
  clampMax_: withEither('clampMax_', aten.clamp_max__Tensor, aten.clamp_max_, 'max'),
  xlogy_: withEither('xlogy_', aten.xlogy__Tensor, aten.xlogy__Scalar_Other),
  fmod_: withEither('fmod_', aten.fmod__Tensor, aten.fmod__Scalar),
  remainder_: withEither('remainder_', aten.remainder__Tensor, aten.remainder__Scalar),
  floorDivide_: withEither('floorDivide_', aten.floor_divide__Tensor, aten.floor_divide__Scalar),
  trueDivide_: withEither('trueDivide_', aten.true_divide__Tensor, aten.true_divide__Scalar),
  floatPower_: withEither('floatPower_', aten.float_power__Tensor, aten.float_power__Scalar, 'exponent'),
  copysign_: withEither('copysign_', aten.copysign__Tensor, aten.copysign__Scalar),
  nextafter_: withTensor('nextafter_', aten.nextafter_),
  ldexp_: withTensor('ldexp_', aten.ldexp_),
  heaviside_: withTensor('heaviside_', aten.heaviside_, 'values'),
  gcd_: withTensor('gcd_', aten.gcd_),
  lcm_: withTensor('lcm_', aten.lcm_),
  logicalAnd_: withTensor('logicalAnd_', aten.logical_and_),
  logicalOr_: withTensor('logicalOr_', aten.logical_or_),
  logicalXor_: withTensor('logicalXor_', aten.logical_xor_),
  bitwiseAnd_: withEither('bitwiseAnd_', aten.bitwise_and__Tensor, aten.bitwise_and__Scalar),
  bitwiseOr_: withEither('bitwiseOr_', aten.bitwise_or__Tensor, aten.bitwise_or__Scalar),
  bitwiseXor_: withEither('bitwiseXor_', aten.bitwise_xor__Tensor, aten.bitwise_xor__Scalar),
  bitwiseLeftShift_: withEither(
    'bitwiseLeftShift_',
    aten.bitwise_left_shift__Tensor,
    aten.bitwise_left_shift__Tensor_Scalar,
  ),
  bitwiseRightShift_: withEither(
    'bitwiseRightShift_',
    aten.bitwise_right_shift__Tensor,
    aten.bitwise_right_shift__Tensor_Scalar,
  ),
};

// Non-enumerable like the class's own methods; a name already defined is refused at load.
attachTensorFunctions('tensor-methods-inplace.ts', inPlace);

/** The names of the in-place methods this module attaches to Tensor (for the tests that check them all). */
export const TENSOR_INPLACE_METHODS: readonly string[] = Object.keys(inPlace);
