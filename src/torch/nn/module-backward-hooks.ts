// Module backward hooks (torch.nn.Module.register_full_backward_hook and PyTorch 2.x's
// register_full_backward_pre_hook). PyTorch puts identity autograd functions on a module's inputs
// and outputs in __call__ and hooks their gradients; tailor's forward wrapper (module-hooks.ts)
// does the same (hookGradients in autograd-hooks.ts): the module sees views of its inputs and its
// callers views of its outputs, made by identity nodes whose JavaScript backward hands the
// gradients to the hooks within the engine's run.
import type { Module } from './module.js';
import { Tensor } from '../tensor.js';
import { keep } from '../scope.js';
import { native } from '../native.js';
import { afterBackward, hookGradients } from '../autograd-hooks.js';
import { ArgumentError } from '../../util/arguments.js';

/**
 * Runs when the gradients with respect to a module's inputs are computed (torch's full backward
 * hook), with those (`gradInput`: one entry per forward argument, null for arguments that are not
 * tensors requiring grad) and the gradients with respect to its outputs (`gradOutput`: one entry
 * per output tensor, null where none arrived). Returning an array of the same length replaces
 * `gradInput`; `undefined` keeps it. The tensors are freed after backward: keep a clone to hold one.
 */
export type FullBackwardHook<M extends Module = Module> = (
  module: M,
  gradInput: (Tensor | null)[],
  gradOutput: (Tensor | null)[],
) => (Tensor | null)[] | undefined | void;

/**
 * Runs when the gradients with respect to a module's outputs are computed, before they go into
 * the module (PyTorch 2.x's full backward pre-hook). Returning an array of the same length
 * replaces `gradOutput`; `undefined` keeps it.
 */
export type FullBackwardPreHook<M extends Module = Module> = (
  module: M,
  gradOutput: (Tensor | null)[],
) => (Tensor | null)[] | undefined | void;

/** @internal Whether a module call needs the backward wrapping. */
export function hooksBackward(full: readonly unknown[], pre: readonly unknown[]): boolean {
  return (full.length > 0 || pre.length > 0) && native.isGradEnabled();
}

function checkReplacement(method: string, result: unknown, length: number, what: string): (Tensor | null)[] {
  if (
    !Array.isArray(result) ||
    result.length !== length ||
    !result.every((g) => g === null || g instanceof Tensor)
  )
    throw new ArgumentError(
      `tailor: ${method}: the hook must return undefined or an array of ${length} tensors or nulls (one per ${what}), got ${Array.isArray(result) ? `an array of ${result.length}` : typeof result}`,
    );
  return result as (Tensor | null)[];
}

/**
 * @internal One call of a hooked module: `inputs` puts the identity node before the forward, `output`
 * after it. `full` and `pre` are the hooks registered when the forward runs (the global ones
 * first), as in PyTorch.
 */
export function backwardCall(
  module: Module,
  full: readonly FullBackwardHook<Module>[],
  pre: readonly FullBackwardPreHook<Module>[],
): { inputs(args: unknown[]): unknown[]; output(output: unknown): unknown } {
  let nInputs = 0;
  let inputsCut = false;
  let gradOutput: (Tensor | null)[] | null = null;

  const callFull = (gradInput: (Tensor | null)[], noInputs: boolean): (Tensor | null)[] => {
    let gin = gradInput;
    for (const hook of full) {
      const result = hook(module, gin, gradOutput ?? []);
      if (result === undefined) continue;
      const replaced = checkReplacement('registerFullBackwardHook', result, nInputs, 'forward argument');
      if (noInputs && replaced.some((g) => g !== null))
        throw new ArgumentError(
          'tailor: registerFullBackwardHook: no input of this module call requires grad, so the hook must return undefined or nulls only',
        );
      gin = replaced;
    }
    return gin;
  };

  return {
    inputs(args) {
      nInputs = args.length;
      const at = args.flatMap((a, i) => (a instanceof Tensor && a.requiresGrad ? [i] : []));
      if (at.length === 0) return args;
      inputsCut = true;
      const views = hookGradients(
        at.map((i) => args[i] as Tensor),
        (grads) => {
          if (gradOutput === null) return undefined;
          const gradInput: (Tensor | null)[] = args.map(() => null);
          at.forEach((i, k) => (gradInput[i] = grads[k]));
          const gin = callFull(gradInput, false);
          return at.map((i) => gin[i]);
        },
      );
      const out = [...args];
      at.forEach((i, k) => (out[i] = views[k]));
      return out;
    },
    output(output) {
      const items =
        output instanceof Tensor ? [output] : Array.isArray(output) ? (output as unknown[]) : null;
      if (items === null) return output;
      const at = items.flatMap((o, i) => (o instanceof Tensor && o.requiresGrad ? [i] : []));
      if (at.length === 0) return output;
      const views = hookGradients(
        at.map((i) => items[i] as Tensor),
        (grads) => {
          let gout: (Tensor | null)[] = items.map(() => null);
          at.forEach((i, k) => (gout[i] = grads[k]));
          for (const hook of pre) {
            const result = hook(module, gout);
            if (result !== undefined)
              gout = checkReplacement('registerFullBackwardPreHook', result, items.length, 'output tensor');
          }
          // Held for the input side's hooks, which run later in the same backward: views of
          // their own, so a tensor the hook returned stays the caller's.
          const held = keep(gout.map((g) => (g === null ? null : g.detach())));
          gradOutput = held;
          afterBackward(() => {
            for (const g of held) g?.dispose();
            gradOutput = null;
          });
          if (!inputsCut && full.length > 0) callFull(args0(nInputs), true);
          return at.map((i) => gout[i]);
        },
      );
      if (output instanceof Tensor) return views[0];
      const out = [...items];
      at.forEach((i, k) => (out[i] = views[k]));
      return out;
    },
  };
}

function args0(n: number): null[] {
  return Array.from({ length: n }, () => null);
}
