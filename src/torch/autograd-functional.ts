// Higher-level autograd over whole functions (torch.autograd.functional): vector-Jacobian and
// Jacobian-vector products, Jacobians, Hessians and Hessian-vector products, computed as PyTorch
// 1.13 computes them (reverse mode, with the double-backward trick for the forward-mode products),
// so results, shapes and strict-mode errors are PyTorch's. `func` takes the inputs as separate
// arguments and returns a Tensor or an array of them (PyTorch's tuple); results come back in the
// same form. Every intermediate is freed before a function returns; the results belong to the
// caller's scope (or to the caller, outside any).
import { Tensor } from './tensor.js';
import { zerosLike, stack } from './creation.js';
import { tidy } from './scope.js';
import { enableGrad } from './autograd.js';
import { forwardJacobian, vectorizedJacobian } from './autograd-functional-vectorized.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../util/arguments.js';
import {
  asTuple,
  autogradGrad,
  callFunc,
  checkFunction,
  checkOptions,
  checkRequiresGrad,
  fillInZeros,
  gradModeFor,
  gradPostprocess,
  gradPreprocess,
  singleElement,
  StrictModeError,
  unpack,
  validateV,
  type FunctionalOptions,
  type HessianOf,
  type JacobianOf,
  type HessianOptions,
  type JacobianOptions,
  type JacobianStrategy,
  type Like,
  type TensorFunction,
  type TensorOrTensors,
} from './autograd-functional-parts.js';

export {
  StrictModeError,
  type FunctionalOptions,
  type HessianOf,
  type JacobianOf,
  type HessianOptions,
  type JacobianOptions,
  type JacobianStrategy,
  type Like,
  type TensorFunction,
  type TensorOrTensors,
};

/**
 * The vector-Jacobian product vᵀ J of `func` at `inputs` (torch.autograd.functional.vjp):
 * `[func(inputs), vjp]`, vjp shaped as the inputs. `v` (shaped as func's outputs) may be left out
 * only when func returns a single one-element tensor.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const x = torch.tensor([1, 2, 3], { dtype: 'float64' });
 * const [y, g] = torch.autograd.functional.vjp((t) => t.pow(2).sum(), x);
 * console.log(y.item(), g.toNumbers()); // 14 [2, 4, 6]
 * ```
 */
export function vjp<O extends TensorOrTensors, I extends TensorOrTensors>(
  func: TensorFunction<O>,
  inputs: I,
  v: Like<O> | null = null,
  options: FunctionalOptions = {},
): [Like<O>, Like<I>] {
  const c = checksOf('autograd.functional.vjp');
  checkFunction(c, func);
  const { createGraph, strict } = checkOptions(c, options);
  return tidy(() => {
    const [isInputsTuple, raw] = asTuple(c, inputs, 'inputs');
    const [ins, vs, isOutputsTuple, outputs] = enableGrad(() => {
      const ins = gradPreprocess(raw, createGraph, true);
      const [isOutputsTuple, outputs] = callFunc(c, func, ins);
      checkRequiresGrad('vjp', outputs, 'outputs', strict);
      let vs: Tensor[] | null = null;
      if (v !== null) vs = gradPreprocess(validateV(c, v, outputs, isOutputsTuple), createGraph, false);
      else if (outputs.length !== 1 || outputs[0]!.numel !== 1)
        throw new ArgumentError(
          `${c.fn}: v may be left out only when func returns a single Tensor with a single element`,
        );
      return [ins, vs, isOutputsTuple, outputs] as const;
    });
    const result = gradModeFor(createGraph, () =>
      fillInZeros('vjp', autogradGrad(outputs, ins, vs, createGraph), ins, strict, createGraph, 'back'),
    );
    return [
      unpack(gradPostprocess(outputs, createGraph), isOutputsTuple),
      unpack(gradPostprocess(result, createGraph), isInputsTuple),
    ] as [Like<O>, Like<I>];
  });
}

/**
 * The Jacobian-vector product J v of `func` at `inputs` (torch.autograd.functional.jvp), by the
 * double-backward trick as PyTorch: `[func(inputs), jvp]`, jvp shaped as func's outputs. `v`
 * (shaped as the inputs) may be left out only for a single one-element input.
 */
export function jvp<O extends TensorOrTensors, I extends TensorOrTensors>(
  func: TensorFunction<O>,
  inputs: I,
  v: Like<I> | null = null,
  options: FunctionalOptions = {},
): [Like<O>, Like<O>] {
  const c = checksOf('autograd.functional.jvp');
  checkFunction(c, func);
  const { createGraph, strict } = checkOptions(c, options);
  return tidy(() => {
    const [isInputsTuple, raw] = asTuple(c, inputs, 'inputs');
    const [vs, isOutputsTuple, outputs, gradOutputs, gradInputs] = enableGrad(() => {
      const ins = gradPreprocess(raw, createGraph, true);
      let vs: Tensor[] | null = null;
      if (v !== null) vs = gradPreprocess(validateV(c, v, ins, isInputsTuple), createGraph, false);
      else if (ins.length !== 1 || ins[0]!.numel !== 1)
        throw new ArgumentError(
          `${c.fn}: v may be left out only when the input is a single Tensor with a single element`,
        );
      const [isOutputsTuple, outputs] = callFunc(c, func, ins);
      checkRequiresGrad('jvp', outputs, 'outputs', strict);
      const gradOutputs = outputs.map((o) => zerosLike(o).requiresGrad_());
      const gradInputs = autogradGrad(outputs, ins, gradOutputs, true);
      checkRequiresGrad('jvp', gradInputs, 'grad_inputs', strict);
      return [vs, isOutputsTuple, outputs, gradOutputs, gradInputs] as const;
    });
    const result = gradModeFor(createGraph, () =>
      fillInZeros(
        'jvp',
        autogradGrad(gradInputs, gradOutputs, vs, createGraph),
        outputs,
        strict,
        createGraph,
        'back_trick',
      ),
    );
    return [
      unpack(gradPostprocess(outputs, createGraph), isOutputsTuple),
      unpack(gradPostprocess(result, createGraph), isOutputsTuple),
    ] as [Like<O>, Like<O>];
  });
}

/** The Jacobian as lists [output i][input j], PyTorch's loop of one backward per output element. */
function jacobianLists(
  c: ArgumentChecks,
  func: TensorFunction,
  raw: Tensor[],
  createGraph: boolean,
  strict: boolean,
  vectorize = false,
): [boolean, Tensor[][]] {
  return enableGrad(() => {
    const ins = gradPreprocess(raw, createGraph, true);
    const [isOutputsTuple, outputs] = callFunc(c, func, ins);
    checkRequiresGrad(c.fn.slice('autograd.functional.'.length), outputs, 'outputs', strict);
    if (vectorize) return [isOutputsTuple, vectorizedJacobian(outputs, ins, createGraph)];
    const jacobian = outputs.map((out, i) => {
      const rows: Tensor[][] = ins.map(() => []);
      const flat = out.reshape(-1);
      for (let j = 0; j < out.numel; j++) {
        const vj = autogradGrad([flat.select(0, j)], ins, null, createGraph, true);
        vj.forEach((g, k) => {
          if (g === null) {
            if (strict)
              throw new StrictModeError(
                `${c.fn}: output ${i} of the user-provided function is independent of input ${k}. This is not allowed in strict mode.`,
              );
            rows[k]!.push(zerosLike(ins[k]!));
          } else {
            if (strict && createGraph && !g.requiresGrad)
              throw new StrictModeError(
                `${c.fn}: the jacobian of the user-provided function is independent of input ${k}. ` +
                  'This is not allowed in strict mode when createGraph is true.',
              );
            rows[k]!.push(g);
          }
        });
      }
      return rows.map((row, k) => stack(row, 0).view(...out.shape, ...ins[k]!.shape));
    });
    return [isOutputsTuple, jacobian.map((row) => gradPostprocess(row, createGraph))];
  });
}

/**
 * The Jacobian of `func` at `inputs` (torch.autograd.functional.jacobian): for output i and input
 * j a tensor of shape [...output_i.shape, ...input_j.shape]; `J[i][j]` when func returns an array
 * and inputs is one, with the index of a single tensor dropped (PyTorch's tuple nesting).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const x = torch.tensor([1, 2], { dtype: 'float64' });
 * const J = torch.autograd.functional.jacobian((t) => t.pow(2), x);
 * console.log(J.shape, J.toNumbers()); // [2, 2] [2, 0, 0, 4]
 * ```
 */
export function jacobian<O extends TensorOrTensors, I extends TensorOrTensors>(
  func: TensorFunction<O>,
  inputs: I,
  options: JacobianOptions = {},
): JacobianOf<O, I> {
  const c = checksOf('autograd.functional.jacobian');
  checkFunction(c, func);
  const { createGraph, strict, vectorize, forwardMode } = checkOptions(c, options, 'jacobian');
  return tidy(() => {
    const [isInputsTuple, raw] = asTuple(c, inputs, 'inputs');
    const [isOutputsTuple, jac] = forwardMode
      ? forwardJacobian(c, func, raw, createGraph)
      : jacobianLists(c, func, raw, createGraph, strict, vectorize);
    return unpack(
      jac.map((row) => unpack(row, isInputsTuple)),
      isOutputsTuple,
    ) as JacobianOf<O, I>;
  });
}

/**
 * The Hessian of the scalar function `func` (a single one-element tensor) at `inputs`
 * (torch.autograd.functional.hessian), as the Jacobian of its gradient: for one input of shape s a
 * tensor of shape [...s, ...s]; for an array of inputs `H[i][j]` of shape [...s_i, ...s_j].
 */
export function hessian<I extends TensorOrTensors>(
  func: TensorFunction<Tensor>,
  inputs: I,
  options: HessianOptions = {},
): HessianOf<I> {
  const c = checksOf('autograd.functional.hessian');
  checkFunction(c, func);
  const { createGraph, strict, vectorize, forwardMode } = checkOptions(c, options, 'hessian');
  return tidy(() => {
    const [isInputsTuple, raw] = asTuple(c, inputs, 'inputs');
    const single: TensorFunction = (...inp) => {
      const [isTuple, outs] = callFunc(c, func, inp);
      checkRequiresGrad('hessian', outs, 'outputs', strict);
      singleElement(c, isTuple, outs[0]!);
      return outs[0]!.squeeze();
    };
    const gradient: TensorFunction = (...inp) => {
      // Forward over reverse: the dual inputs must require grad, so that the inner Jacobian keeps
      // them (and their tangents) as views instead of detached copies.
      if (forwardMode) inp.forEach((t) => t.requiresGrad_(true));
      const [, rows] = jacobianLists(c, single, inp, true, false);
      const jac = rows[0]!;
      checkRequiresGrad('hessian', jac, 'jacobian', strict);
      return jac;
    };
    // As PyTorch: the inner Jacobian (the gradient) is the loop form, the outer one vectorized.
    const [, H] = forwardMode
      ? forwardJacobian(c, gradient, raw, createGraph)
      : jacobianLists(c, gradient, raw, createGraph, strict, vectorize);
    return unpack(
      H.map((row) => unpack(row, isInputsTuple)),
      isInputsTuple,
    ) as HessianOf<I>;
  });
}

/** The shared part of vhp and hvp: the inputs' stand-ins, v, func's output and its gradient with a graph. */
function firstDerivative(
  c: ArgumentChecks,
  func: TensorFunction<Tensor>,
  inputs: unknown,
  v: unknown,
  createGraph: boolean,
  strict: boolean,
): { isInputsTuple: boolean; ins: Tensor[]; vs: Tensor[] | null; output: Tensor; jac: (Tensor | null)[] } {
  const fn = c.fn.slice('autograd.functional.'.length);
  const [isInputsTuple, raw] = asTuple(c, inputs, 'inputs');
  return enableGrad(() => {
    const ins = gradPreprocess(raw, createGraph, true);
    let vs: Tensor[] | null = null;
    if (v !== null) vs = gradPreprocess(validateV(c, v, ins, isInputsTuple), createGraph, false);
    else if (ins.length !== 1 || ins[0]!.numel !== 1)
      throw new ArgumentError(
        `${c.fn}: v may be left out only when the input is a single Tensor with a single element`,
      );
    const [isTuple, outs] = callFunc(c, func, ins);
    checkRequiresGrad(fn, outs, 'outputs', strict);
    singleElement(c, isTuple, outs[0]!);
    const jac = autogradGrad(outs, ins, null, true);
    checkRequiresGrad(fn, jac, 'jacobian', strict);
    return { isInputsTuple, ins, vs, output: outs[0]!, jac };
  });
}

/**
 * The vector-Hessian product vᵀ H of the scalar function `func` at `inputs`
 * (torch.autograd.functional.vhp): `[func(inputs), vhp]`, vhp shaped as the inputs.
 */
export function vhp<I extends TensorOrTensors>(
  func: TensorFunction<Tensor>,
  inputs: I,
  v: Like<I> | null = null,
  options: FunctionalOptions = {},
): [Tensor, Like<I>] {
  const c = checksOf('autograd.functional.vhp');
  checkFunction(c, func);
  const { createGraph, strict } = checkOptions(c, options);
  return tidy(() => {
    const { isInputsTuple, ins, vs, output, jac } = firstDerivative(c, func, inputs, v, createGraph, strict);
    const result = gradModeFor(createGraph, () =>
      fillInZeros('vhp', autogradGrad(jac, ins, vs, createGraph), ins, strict, createGraph, 'double_back'),
    );
    return [
      gradPostprocess([output], createGraph)[0]!,
      unpack(gradPostprocess(result, createGraph), isInputsTuple),
    ] as [Tensor, Like<I>];
  });
}

/**
 * The Hessian-vector product H v of the scalar function `func` at `inputs`
 * (torch.autograd.functional.hvp), by the double-backward trick as PyTorch: `[func(inputs), hvp]`,
 * hvp shaped as the inputs.
 */
export function hvp<I extends TensorOrTensors>(
  func: TensorFunction<Tensor>,
  inputs: I,
  v: Like<I> | null = null,
  options: FunctionalOptions = {},
): [Tensor, Like<I>] {
  const c = checksOf('autograd.functional.hvp');
  checkFunction(c, func);
  const { createGraph, strict } = checkOptions(c, options);
  return tidy(() => {
    const { isInputsTuple, ins, vs, output, jac } = firstDerivative(c, func, inputs, v, createGraph, strict);
    const [gradJac, doubleBack] = enableGrad(() => {
      const gradJac = ins.map((inp) => zerosLike(inp).requiresGrad_());
      const doubleBack = autogradGrad(jac, ins, gradJac, true);
      // PyTorch 1.13 checks the Jacobian here again, not the double backward.
      checkRequiresGrad('hvp', jac, 'hessian', strict);
      return [gradJac, doubleBack] as const;
    });
    const result = gradModeFor(createGraph, () =>
      fillInZeros(
        'hvp',
        autogradGrad(doubleBack, gradJac, vs, createGraph),
        ins,
        strict,
        createGraph,
        'double_back_trick',
      ),
    );
    return [
      gradPostprocess([output], createGraph)[0]!,
      unpack(gradPostprocess(result, createGraph), isInputsTuple),
    ] as [Tensor, Like<I>];
  });
}
