// The pieces torch.autograd.functional's functions share, after PyTorch 1.13's private helpers
// (_as_tuple, _grad_preprocess, _autograd_grad, _check_requires_grad, _fill_in_zeros...): the
// argument checks, the stand-ins for the inputs, grad over the outputs that need it, and strict
// mode's checks with PyTorch's messages. The types and StrictModeError are public through
// autograd-functional.ts.
import { Tensor } from './tensor.js';
import { zerosLike } from './creation.js';
import { enableGrad, grad } from './autograd.js';
import { UserError } from '../util/errors.js';
import { ArgumentError, describeValue, type ArgumentChecks } from '../util/arguments.js';

/** One tensor or an array of tensors (PyTorch's tuple of tensors). */
export type TensorOrTensors = Tensor | Tensor[];
/** A function of the inputs, one argument per input tensor, returning one tensor or an array of them. */
export type TensorFunction<O extends TensorOrTensors = TensorOrTensors> = (...inputs: Tensor[]) => O;
/** `Tensor` for a tensor, `Tensor[]` for an array of tensors: the form of a result that follows T. */
export type Like<T extends TensorOrTensors> = T extends Tensor ? Tensor : Tensor[];
/** The Jacobian's form: `J[i][j]` (output i, input j) with an array of each, one index dropped where either is a single tensor. */
export type JacobianOf<O extends TensorOrTensors, I extends TensorOrTensors> = O extends Tensor
  ? Like<I>
  : I extends Tensor
    ? Tensor[]
    : Tensor[][];
/** The Hessian's form: a tensor for one input tensor, `H[i][j]` for an array of inputs. */
export type HessianOf<I extends TensorOrTensors> = I extends Tensor ? Tensor : Tensor[][];

/** Options of vjp, jvp, vhp and hvp. */
export interface FunctionalOptions {
  /** Keep the graph of the results so that they can be differentiated again (default false: results are detached). */
  createGraph?: boolean;
  /** Raise a StrictModeError where an output, a gradient or the Jacobian does not depend on an input, instead of returning zeros (default false). */
  strict?: boolean;
}
/** How a Jacobian is computed: backward passes (the default) or forward-mode tangents. */
export type JacobianStrategy = 'reverse-mode' | 'forward-mode';

/** Options of jacobian. */
export interface JacobianOptions extends FunctionalOptions {
  /**
   * One pass for the whole Jacobian through vmap (batched gradients over the standard basis)
   * instead of one per output element, as PyTorch's `vectorize=True`; not with `strict`.
   */
  vectorize?: boolean;
  /**
   * `'forward-mode'` pushes the standard basis of the inputs through forward-mode AD (one
   * vmapped pass; needs `vectorize: true`, not with `strict`), which pays where inputs are fewer
   * than outputs; default `'reverse-mode'`.
   */
  strategy?: JacobianStrategy;
}

/** Options of hessian. */
export interface HessianOptions extends FunctionalOptions {
  /** The outer Jacobian (of the gradient) in one vmapped pass, as PyTorch's `vectorize=True`. */
  vectorize?: boolean;
  /** The outer Jacobian's strategy: `'forward-mode'` (forward-over-reverse) needs `vectorize`. */
  outerJacobianStrategy?: JacobianStrategy;
}

/** The checked options of every torch.autograd.functional function. */
export interface CheckedOptions {
  createGraph: boolean;
  strict: boolean;
  vectorize: boolean;
  forwardMode: boolean;
}

/**
 * A violation of `strict: true` in torch.autograd.functional: an output (or gradient, Jacobian,
 * Hessian) that does not depend on an input, where the default (non-strict) mode would return
 * zeros. The message is PyTorch's, after the function's name.
 */
export class StrictModeError extends UserError {}

type Stage = 'back' | 'back_trick' | 'double_back' | 'double_back_trick';
type RequiresGradKind = 'outputs' | 'grad_inputs' | 'jacobian' | 'hessian';

/** A Tensor or an array of Tensors as [was it an array, the tensors]. */
export function asTuple(c: ArgumentChecks, value: unknown, name: string): [boolean, Tensor[]] {
  if (value instanceof Tensor) return [false, [value]];
  if (!Array.isArray(value)) return c.fail(name, 'a Tensor or an array of Tensors', value);
  value.forEach((el, i) => {
    if (!(el instanceof Tensor)) c.fail(`${name}[${i}]`, 'a Tensor', el);
  });
  return [true, value as Tensor[]];
}

/**
 * The options; `vectorize` and the strategy only for jacobian (`strategy`) and hessian
 * (`outerJacobianStrategy`), with PyTorch's rules on combining them.
 */
export function checkOptions(
  c: ArgumentChecks,
  options: unknown,
  kind: 'plain' | 'jacobian' | 'hessian' = 'plain',
): CheckedOptions {
  const o = c.object(options ?? {}, 'options') as JacobianOptions & HessianOptions;
  const strategyKey = kind === 'hessian' ? 'outerJacobianStrategy' : 'strategy';
  for (const key of ['vectorize', 'strategy', 'outerJacobianStrategy'] as const)
    if (o[key] !== undefined && (kind === 'plain' || (key !== 'vectorize' && key !== strategyKey)))
      c.fail(`options.${key}`, `left out (${c.fn.split('.').pop()} has no such option)`, o[key]);
  for (const key of ['createGraph', 'strict', 'vectorize'] as const)
    if (o[key] !== undefined && typeof o[key] !== 'boolean') c.fail(`options.${key}`, 'a boolean', o[key]);
  const strategy =
    o[strategyKey] === undefined
      ? 'reverse-mode'
      : c.oneOf(o[strategyKey], `options.${strategyKey}`, ['reverse-mode', 'forward-mode']);
  const forwardMode = strategy === 'forward-mode';
  if (o.vectorize === true && o.strict === true)
    c.fail('options', 'strict and vectorize not both true (PyTorch supports them together neither)', o);
  if (forwardMode && o.strict === true)
    c.fail(
      'options',
      `strict left out with ${strategyKey} 'forward-mode' (PyTorch supports them together neither)`,
      o,
    );
  if (forwardMode && o.vectorize !== true)
    c.fail(
      'options.vectorize',
      `true with ${strategyKey} 'forward-mode' (the forward-mode Jacobian is computed through vmap)`,
      o.vectorize,
    );
  return {
    createGraph: o.createGraph ?? false,
    strict: o.strict ?? false,
    vectorize: o.vectorize ?? false,
    forwardMode,
  };
}

export function checkFunction(c: ArgumentChecks, func: unknown): void {
  if (typeof func !== 'function') c.fail('func', 'a function of the input tensors', func);
}

/** Fresh differentiable stand-ins for the inputs; views that keep the inputs' own graph with createGraph. */
export function gradPreprocess(inputs: Tensor[], createGraph: boolean, needGraph: boolean): Tensor[] {
  return inputs.map((inp) =>
    createGraph && inp.requiresGrad ? inp.view(...inp.shape) : inp.detach().requiresGrad_(needGraph),
  );
}

export function gradPostprocess(tensors: Tensor[], createGraph: boolean): Tensor[] {
  return createGraph ? tensors : tensors.map((t) => t.detach());
}

/** `res` as PyTorch's _tuple_postprocess leaves it: the single element where the argument was a tensor. */
export function unpack<T>(res: T[], isTuple: boolean): T | T[] {
  return isTuple ? res : res[0]!;
}

/** autograd.grad over the outputs that require gradients (null for every input if none does). */
export function autogradGrad(
  outputs: (Tensor | null)[],
  inputs: Tensor[],
  gradOutputs: Tensor[] | null,
  createGraph: boolean,
  retainGraph?: boolean,
  isGradsBatched = false,
): (Tensor | null)[] {
  const keep = outputs.map((o) => o !== null && o.requiresGrad);
  const used = outputs.filter((_, k) => keep[k]) as Tensor[];
  if (used.length === 0) return inputs.map(() => null);
  return grad(used, inputs, {
    gradOutputs: gradOutputs === null ? undefined : gradOutputs.filter((_, k) => keep[k]),
    retainGraph,
    createGraph,
    allowUnused: true,
    isGradsBatched,
  });
}

export function checkRequiresGrad(
  fn: string,
  tensors: (Tensor | null)[],
  kind: RequiresGradKind,
  strict: boolean,
): void {
  if (!strict) return;
  const fail = (message: string): never => {
    throw new StrictModeError(`autograd.functional.${fn}: ${message}`);
  };
  tensors.forEach((t, i) => {
    if (t === null)
      fail(
        `the output of the user-provided function is independent of input ${i}. This is not allowed in strict mode.`,
      );
    else if (!t.requiresGrad) {
      if (kind === 'hessian')
        fail(
          `the hessian of the user-provided function with respect to input ${i} is independent of the input. ` +
            'This is not allowed in strict mode. You should ensure that your function is thrice differentiable ' +
            'and that the hessian depends on the inputs.',
        );
      if (kind === 'jacobian')
        fail(
          `while computing the hessian, found that the jacobian of the user-provided function with respect to input ${i} ` +
            'is independent of the input. This is not allowed in strict mode. You should ensure that your function is ' +
            'twice differentiable and that the jacobian depends on the inputs (this would be violated by a linear function for example).',
        );
      if (kind === 'grad_inputs')
        fail(
          `the gradient with respect to input ${i} is independent of the inputs of the user-provided function. ` +
            'This is not allowed in strict mode.',
        );
      fail(
        `output ${i} of the user-provided function does not require gradients. The outputs must be computed ` +
          'in a differentiable manner from the input when running in strict mode.',
      );
    }
  });
}

/** The gradients with zeros (shaped as `refs`) where a gradient is null, or strict mode's error. */
export function fillInZeros(
  fn: string,
  grads: (Tensor | null)[],
  refs: Tensor[],
  strict: boolean,
  createGraph: boolean,
  stage: Stage,
): Tensor[] {
  const fail = (message: string): never => {
    throw new StrictModeError(`autograd.functional.${fn}: ${message}`);
  };
  return grads.map((g, i) => {
    if (g === null) {
      if (strict) {
        if (stage === 'back')
          fail(
            `the output of the user-provided function is independent of input ${i}. This is not allowed in strict mode.`,
          );
        if (stage === 'back_trick')
          fail(
            `the gradient with respect to the input is independent of entry ${i} in the grad_outputs when using ` +
              'the double backward trick to compute forward mode gradients. This is not allowed in strict mode.',
          );
        if (stage === 'double_back')
          fail(
            `the jacobian of the user-provided function is independent of input ${i}. This is not allowed in strict mode.`,
          );
        fail(
          `the hessian of the user-provided function is independent of entry ${i} in the grad_jacobian. This is not ` +
            'allowed in strict mode as it prevents from using the double backward trick to replace forward mode AD.',
        );
      }
      return zerosLike(refs[i]!);
    }
    if (strict && createGraph && !g.requiresGrad)
      fail(
        `the ${stage.startsWith('double') ? 'hessian' : 'jacobian'} of the user-provided function is independent of ` +
          `input ${i}. This is not allowed in strict mode when createGraph is true.`,
      );
    return g;
  });
}

/** v as a list checked against the tensors it multiplies (their number and shapes). */
export function validateV(c: ArgumentChecks, v: unknown, other: Tensor[], otherIsTuple: boolean): Tensor[] {
  const [, vs] = asTuple(c, v, 'v');
  if (vs.length !== other.length)
    throw new ArgumentError(
      otherIsTuple
        ? `${c.fn}: v must be an array of ${other.length} Tensors, got ${vs.length}`
        : `${c.fn}: v must be a single Tensor, got ${describeValue(v)}`,
    );
  vs.forEach((el, i) => {
    const want = other[i]!.shape;
    if (el.shape.length !== want.length || el.shape.some((s, k) => s !== want[k]))
      throw new ArgumentError(
        `${c.fn}: ${otherIsTuple ? `v[${i}]` : 'v'} must have shape [${want.join(', ')}], got [${el.shape.join(', ')}]`,
      );
  });
  return vs;
}

/** The user function's result as a list, with an error naming `fn` when it is not tensors. */
export function callFunc(c: ArgumentChecks, func: TensorFunction, inputs: Tensor[]): [boolean, Tensor[]] {
  return asTuple(c, func(...inputs), 'the result of func');
}

export function singleElement(c: ArgumentChecks, isTuple: boolean, out: Tensor): void {
  if (isTuple) throw new ArgumentError(`${c.fn}: func must return a single Tensor, got an array`);
  if (out.numel !== 1)
    throw new ArgumentError(
      `${c.fn}: the Tensor func returns must have a single element, got shape [${out.shape.join(', ')}]`,
    );
}

/** Runs fn with grad mode on when `createGraph`, else in the caller's grad mode (PyTorch's set_grad_enabled). */
export function gradModeFor<T>(createGraph: boolean, fn: () => T): T {
  return createGraph ? enableGrad(fn) : fn();
}
