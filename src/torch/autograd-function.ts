// Custom differentiable operations with a forward and a backward of one's own
// (torch.autograd.Function). The forward runs here with grad mode off; its outputs then become the
// outputs of a libtorch graph node (a C++ custom Function) whose backward calls the class's static
// backward, so they take part in backward, autograd.grad, double backward and hooks as any
// operator's outputs do (autograd-hooks.ts).
import { Tensor } from './tensor.js';
import { noGrad, isGradEnabled } from './autograd.js';
import { applyJsFunction } from './autograd-hooks.js';
import { ArgumentError, describeValue } from '../util/arguments.js';

/** What a Function's forward returns: a tensor, or an array of tensors (other values pass through). */
export type FunctionOutput = Tensor | readonly unknown[];

/**
 * The context of one call of a {@link Function} (PyTorch's `ctx`): forward saves what backward
 * needs on it, and may set further properties of its own (`ctx.alpha = alpha`), which backward
 * reads. Tensors that backward needs go through {@link FunctionCtx.saveForBackward}: they stay
 * alive with the graph, and libtorch checks that nothing modified them in place meanwhile.
 */
export class FunctionCtx {
  /** Per forward argument: whether backward must compute its gradient (a tensor that requires grad). */
  readonly needsInputGrad: readonly boolean[];
  /** Properties a forward sets for its backward (`ctx.scale = 2`). */
  [property: string]: unknown;
  #toSave: (Tensor | null)[] = [];
  #saved: (Tensor | null)[] | null = null;
  #dirty: Tensor[] = [];
  #nonDifferentiable: Tensor[] = [];
  #materializeGrads = true;

  /** @internal Made by Function.apply. */
  constructor(needsInputGrad: boolean[]) {
    this.needsInputGrad = needsInputGrad;
  }

  /** Saves tensors (inputs, outputs or others; null for none) for backward's {@link FunctionCtx.savedTensors}. Called once, in forward. */
  saveForBackward(...tensors: (Tensor | null | undefined)[]): void {
    tensors.forEach((t, i) => {
      if (t !== null && t !== undefined && !(t instanceof Tensor))
        throw new ArgumentError(
          `tailor: FunctionCtx.saveForBackward: argument ${i} must be a Tensor or null, got ${describeValue(t)}`,
        );
    });
    this.#toSave = tensors.map((t) => t ?? null);
  }

  /** The tensors forward saved, in order (in backward only). */
  get savedTensors(): (Tensor | null)[] {
    if (this.#saved === null)
      throw new ArgumentError(
        'tailor: FunctionCtx.savedTensors: read it in backward (forward saves with saveForBackward)',
      );
    return this.#saved;
  }

  /** Marks inputs that forward modified in place (and returns as outputs), as PyTorch's `mark_dirty`. */
  markDirty(...tensors: Tensor[]): void {
    this.#dirty = checkTensors('markDirty', tensors);
  }

  /** Marks outputs that have no gradient (indices, masks): they do not require grad, and backward gets zeros (or null) for them. */
  markNonDifferentiable(...tensors: Tensor[]): void {
    this.#nonDifferentiable = checkTensors('markNonDifferentiable', tensors);
  }

  /** Whether backward gets zeros (true, the default) or null for the outputs no gradient reached. */
  setMaterializeGrads(value: boolean): void {
    if (typeof value !== 'boolean')
      throw new ArgumentError(
        `tailor: FunctionCtx.setMaterializeGrads: value must be a boolean, got ${describeValue(value)}`,
      );
    this.#materializeGrads = value;
  }

  /** @internal What forward asked for. */
  forwardRequests(): {
    saved: (Tensor | null)[];
    dirty: Tensor[];
    nonDifferentiable: Tensor[];
    materializeGrads: boolean;
  } {
    return {
      saved: this.#toSave,
      dirty: this.#dirty,
      nonDifferentiable: this.#nonDifferentiable,
      materializeGrads: this.#materializeGrads,
    };
  }

  /** @internal Runs backward with the saved tensors readable. */
  withSaved<T>(saved: (Tensor | null)[], fn: () => T): T {
    this.#saved = saved;
    try {
      return fn();
    } finally {
      this.#saved = null;
    }
  }
}

function checkTensors(method: string, tensors: unknown[]): Tensor[] {
  tensors.forEach((t, i) => {
    if (!(t instanceof Tensor))
      throw new ArgumentError(
        `tailor: FunctionCtx.${method}: argument ${i} must be a Tensor, got ${describeValue(t)}`,
      );
  });
  return tensors as Tensor[];
}

/** What a backward returns: one gradient (or null) per forward argument, or a single one. */
export type Gradients = Tensor | null | undefined | readonly (Tensor | null | undefined)[];

/**
 * A differentiable operation with its own forward and backward (torch.autograd.Function). Extend
 * it with two static methods, `forward` and `backward`, and call the class's `apply` (see the
 * example below).
 *
 * forward gets the arguments of `apply` (tensors and other values) and runs with grad mode off;
 * it returns a tensor or an array of tensors. backward gets one gradient per output (zeros where
 * none arrived, or null after `ctx.setMaterializeGrads(false)`) and returns one gradient per
 * forward argument: a tensor of the argument's shape (or one that sums to it), or null (for
 * arguments that are not tensors or need no gradient; `ctx.needsInputGrad` says which). backward
 * runs with grad mode on under `createGraph`, so a backward written in differentiable operations
 * gives second derivatives. As in PyTorch, the outputs are new tensors (an input returned as it
 * is comes back as a view of it), and tensors that are not saved with `saveForBackward` must not
 * be used in backward (they are freed with forward's scope).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * import { autograd, type Tensor } from 'tailor/torch';
 * class Exp extends autograd.Function {
 *   static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
 *     const y = x.exp();
 *     ctx.saveForBackward(y);
 *     return y;
 *   }
 *   static backward(ctx: autograd.FunctionCtx, gradY: Tensor | null): Tensor {
 *     const [y] = ctx.savedTensors;
 *     return gradY!.mul(y!);
 *   }
 * }
 * const x = torch.tensor([0.5, 1, 2], { requiresGrad: true });
 * torch.tidy(() => {
 *   const y = Exp.apply(x); // y.gradFn === 'ExpBackward'
 *   y.sum().backward(); // x.grad equals exp(x)
 * });
 * ```
 */
export class Function {
  /** Runs forward on `args` and records the operation for backward (PyTorch's `MyFunction.apply(...)`). */
  static apply<A extends unknown[], R extends FunctionOutput>(this: FunctionClass<A, R>, ...args: A): R {
    if ((this as unknown) === Function)
      throw new ArgumentError(
        'tailor: autograd.Function.apply: call it on a subclass that defines forward and backward',
      );
    if (typeof this.forward !== 'function')
      throw new ArgumentError(
        `tailor: autograd.Function: ${this.name} must define static forward(ctx, ...args)`,
      );
    const recording = isGradEnabled();
    const needs = args.map((a) => recording && a instanceof Tensor && a.requiresGrad);
    const ctx = new FunctionCtx(needs);
    const result = noGrad(() => this.forward(ctx, ...args));
    const single = result instanceof Tensor;
    if (!single && !Array.isArray(result))
      throw new ArgumentError(
        `tailor: ${this.name}.forward must return a Tensor or an array, got ${describeValue(result)}`,
      );
    if (!needs.some(Boolean)) return result;
    const items: unknown[] = single ? [result] : [...(result as unknown[])];
    const at = items.flatMap((o, i) => (o instanceof Tensor ? [i] : []));
    if (at.length === 0) return result;
    const inputs = args.filter((a): a is Tensor => a instanceof Tensor);
    // The arguments' shapes now: backward may run after the caller's scope has freed them.
    const shapes = args.map((a) => (a instanceof Tensor ? a.shape : null));
    const made = applyJsFunction({
      name: `${this.name}Backward`,
      inputs,
      outputs: at.map((i) => items[i] as Tensor),
      ...ctx.forwardRequests(),
      backward: (saved, grads) => ctx.withSaved(saved, () => gradientsOf(this, ctx, shapes, grads)),
    });
    // The outputs forward made are replaced by the node's (the same tensors, now with a graph):
    // free forward's handles unless they are arguments the caller still holds.
    at.forEach((i, k) => {
      const raw = items[i] as Tensor;
      if (!args.includes(raw)) raw.dispose();
      items[i] = made[k];
    });
    return (single ? items[0] : items) as R;
  }
}

/** What {@link Function.apply} needs of a subclass: its static forward and backward. */
export interface FunctionClass<A extends unknown[], R extends FunctionOutput> {
  readonly name: string;
  /** The computation, with grad mode off. */
  forward(ctx: FunctionCtx, ...args: A): R;
  /** The gradients of the forward arguments from those of the outputs. */
  backward?(ctx: FunctionCtx, ...gradOutputs: (Tensor | null)[]): Gradients;
}

/** Calls backward and checks what it returns against the forward arguments, as PyTorch does. */
function gradientsOf(
  cls: { readonly name: string; backward?(ctx: FunctionCtx, ...gradOutputs: (Tensor | null)[]): Gradients },
  ctx: FunctionCtx,
  shapes: (number[] | null)[],
  grads: (Tensor | null)[],
): (Tensor | null)[] {
  if (typeof cls.backward !== 'function')
    throw new ArgumentError(
      `tailor: autograd.Function: ${cls.name} must define static backward(ctx, ...gradOutputs) to be differentiated`,
    );
  const returned = cls.backward(ctx, ...grads);
  const list: unknown[] = Array.isArray(returned) ? [...returned] : [returned];
  // More values than arguments are allowed when the extra ones are all null (PyTorch's rule).
  while (
    list.length > shapes.length &&
    (list[list.length - 1] === null || list[list.length - 1] === undefined)
  )
    list.pop();
  if (list.length !== shapes.length)
    throw new ArgumentError(
      `tailor: ${cls.name}.backward returned ${list.length} gradients, expected ${shapes.length} (one per argument of forward, null for those that are not tensors or need none)`,
    );
  const out: (Tensor | null)[] = [];
  shapes.forEach((shape, i) => {
    const g = list[i];
    if (shape === null) {
      if (g !== null && g !== undefined)
        throw new ArgumentError(
          `tailor: ${cls.name}.backward returned a gradient for argument ${i}, which is not a tensor; return null there`,
        );
      return;
    }
    if (g === null || g === undefined) {
      out.push(null);
      return;
    }
    if (!(g instanceof Tensor))
      throw new ArgumentError(
        `tailor: ${cls.name}.backward: gradient ${i} must be a Tensor or null, got ${describeValue(g)}`,
      );
    out.push(fitGradient(cls, i, g, shape));
  });
  return out;
}

/** A gradient of the argument's shape; one that broadcasts over it is summed down (PyTorch's validate_outputs). */
function fitGradient(cls: { name: string }, index: number, g: Tensor, shape: number[]): Tensor {
  const got = g.shape;
  if (got.length === shape.length && got.every((n, i) => n === shape[i])) return g;
  const lead = got.length - shape.length;
  const expandable = lead >= 0 && shape.every((n, i) => n === got[lead + i] || n === 1);
  if (!expandable)
    throw new ArgumentError(
      `tailor: ${cls.name}.backward returned an invalid gradient at index ${index}: got [${got.join(', ')}] but expected shape compatible with [${shape.join(', ')}]`,
    );
  let r = lead > 0 ? g.sum(Array.from({ length: lead }, (_, i) => i)) : g;
  const ones = shape.flatMap((n, i) => (n === 1 && r.shape[i] !== 1 ? [i] : []));
  if (ones.length > 0) r = r.sum(ones, true);
  return r;
}
