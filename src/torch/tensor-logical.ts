// PyTorch's elementwise tests, logical and bitwise functions (torch.isnan, torch.isfinite,
// torch.signbit, torch.logical_and, torch.bitwise_xor, torch.bitwise_left_shift...) under their
// names in camelCase, over libtorch's kernels. The tests and the logical functions give bool
// tensors (any dtype in, zero counting as false); the bitwise functions take integer or bool
// tensors and, where PyTorch does, a number for the second argument.
import { Tensor, type Scalar } from './tensor.js';
import * as aten from './generated/aten.js';
import { inputArg, tensorOrScalarPair, tensorPairArg } from './elementwise-args.js';

/** Whether each element is NaN, as a bool tensor (torch.isnan). */
export function isnan(input: Tensor): Tensor {
  return aten.isnan(inputArg('isnan', input));
}
/** Whether each element is +Infinity or -Infinity, as a bool tensor (torch.isinf). */
export function isinf(input: Tensor): Tensor {
  return aten.isinf(inputArg('isinf', input));
}
/** Whether each element is +Infinity, as a bool tensor (torch.isposinf). */
export function isposinf(input: Tensor): Tensor {
  return aten.isposinf(inputArg('isposinf', input));
}
/** Whether each element is -Infinity, as a bool tensor (torch.isneginf). */
export function isneginf(input: Tensor): Tensor {
  return aten.isneginf(inputArg('isneginf', input));
}
/** Whether each element is finite (neither NaN nor infinite), as a bool tensor (torch.isfinite). */
export function isfinite(input: Tensor): Tensor {
  return aten.isfinite(inputArg('isfinite', input));
}
/** Whether each element is real (its imaginary part 0; always true for real dtypes) (torch.isreal). */
export function isreal(input: Tensor): Tensor {
  return aten.isreal(inputArg('isreal', input));
}
/** Whether each element's sign bit is set (true for -0 and negative NaN too) (torch.signbit). */
export function signbit(input: Tensor): Tensor {
  return aten.signbit(inputArg('signbit', input));
}

/** The logical AND of two tensors, nonzero counting as true, as a bool tensor (torch.logical_and). */
export function logicalAnd(input: Tensor, other: Tensor): Tensor {
  return aten.logical_and(input, tensorPairArg('logicalAnd', input, other));
}
/** The logical OR of two tensors, as a bool tensor (torch.logical_or). */
export function logicalOr(input: Tensor, other: Tensor): Tensor {
  return aten.logical_or(input, tensorPairArg('logicalOr', input, other));
}
/** The logical exclusive OR of two tensors, as a bool tensor (torch.logical_xor). */
export function logicalXor(input: Tensor, other: Tensor): Tensor {
  return aten.logical_xor(input, tensorPairArg('logicalXor', input, other));
}
/** The logical NOT, zero becoming true, as a bool tensor (torch.logical_not). */
export function logicalNot(input: Tensor): Tensor {
  return aten.logical_not(inputArg('logicalNot', input));
}

/** The bitwise AND of integer or bool tensors (torch.bitwise_and). */
export function bitwiseAnd(input: Tensor, other: Tensor | Scalar): Tensor {
  return tensorOrScalarPair('bitwiseAnd', input, other, aten.bitwise_and_Tensor, aten.bitwise_and_Scalar);
}
/** The bitwise OR of integer or bool tensors (torch.bitwise_or). */
export function bitwiseOr(input: Tensor, other: Tensor | Scalar): Tensor {
  return tensorOrScalarPair('bitwiseOr', input, other, aten.bitwise_or_Tensor, aten.bitwise_or_Scalar);
}
/** The bitwise exclusive OR of integer or bool tensors (torch.bitwise_xor). */
export function bitwiseXor(input: Tensor, other: Tensor | Scalar): Tensor {
  return tensorOrScalarPair('bitwiseXor', input, other, aten.bitwise_xor_Tensor, aten.bitwise_xor_Scalar);
}
/** The bitwise NOT of an integer tensor (logical NOT for bool) (torch.bitwise_not). */
export function bitwiseNot(input: Tensor): Tensor {
  return aten.bitwise_not(inputArg('bitwiseNot', input));
}
/** `input` shifted left by `other` bits, input * 2^other (torch.bitwise_left_shift). */
export function bitwiseLeftShift(input: Tensor, other: Tensor | Scalar): Tensor {
  return tensorOrScalarPair(
    'bitwiseLeftShift',
    input,
    other,
    aten.bitwise_left_shift_Tensor,
    aten.bitwise_left_shift_Tensor_Scalar,
  );
}
/** `input` shifted right by `other` bits, arithmetically (the sign kept) (torch.bitwise_right_shift). */
export function bitwiseRightShift(input: Tensor, other: Tensor | Scalar): Tensor {
  return tensorOrScalarPair(
    'bitwiseRightShift',
    input,
    other,
    aten.bitwise_right_shift_Tensor,
    aten.bitwise_right_shift_Tensor_Scalar,
  );
}
