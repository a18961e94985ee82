// Forward hooks of a Module (torch.nn.Module.register_forward_pre_hook / register_forward_hook).
// TypeScript callers call `m.forward(x)` directly (there is no `__call__`), so the first hook
// registered on a module puts an own `forward` on that instance that runs the hooks around the
// class's forward; a parent's forward calling `this.child.forward(x)` goes through it too. When the
// last hook is removed the instance gets its plain forward back, so modules without hooks pay
// nothing.
import type { Module } from './module.js';
import { ArgumentError } from '../../util/arguments.js';
import { RemovableHandle, nextHookId } from '../hook-handle.js';
import {
  backwardCall,
  hooksBackward,
  type FullBackwardHook,
  type FullBackwardPreHook,
} from './module-backward-hooks.js';

/**
 * Runs before `forward` with its arguments (torch's forward pre-hook). Returning `undefined`
 * keeps the arguments; an array replaces the whole argument list, any other value becomes the
 * only argument (PyTorch's "a non-tuple result is wrapped"). A forward whose one argument is
 * itself an array gets it replaced by returning `[array]`.
 */
export type ForwardPreHook<M extends Module = Module> = (module: M, args: unknown[]) => unknown;

/**
 * Runs after `forward` with its arguments (after the pre-hooks) and its output (torch's forward
 * hook). Returning `undefined` keeps the output; any other value replaces it.
 */
export type ForwardHook<M extends Module = Module> = (module: M, args: unknown[], output: unknown) => unknown;

export { RemovableHandle };

type AnyFunction = (...args: unknown[]) => unknown;

interface HookTable {
  readonly pre: Map<number, ForwardPreHook<Module>>;
  readonly post: Map<number, ForwardHook<Module>>;
  readonly backward: Map<number, FullBackwardHook<Module>>;
  readonly backwardPre: Map<number, FullBackwardPreHook<Module>>;
  /** The instance's own `forward` before the hooks were installed (an arrow-function field), if any. */
  readonly ownForward: PropertyDescriptor | undefined;
}

const tables = new WeakMap<Module, HookTable>();

function install(module: Module, method: string): HookTable {
  const existing = tables.get(module);
  if (existing) return existing;
  const plain = (module as unknown as { forward?: unknown }).forward;
  if (typeof plain !== 'function')
    throw new ArgumentError(
      `tailor: ${method}: ${module.constructor.name} has no forward method to hook; define forward(...) on the module`,
    );
  const forward = plain as AnyFunction;
  const table: HookTable = {
    pre: new Map(),
    post: new Map(),
    backward: new Map(),
    backwardPre: new Map(),
    ownForward: Object.getOwnPropertyDescriptor(module, 'forward'),
  };
  tables.set(module, table);
  Object.defineProperty(module, 'forward', {
    configurable: true,
    enumerable: false,
    writable: true,
    value: (...callArgs: unknown[]): unknown => {
      // Copies of the hook lists: a hook that removes itself (or adds another) changes the next
      // call, not this one.
      let args = callArgs;
      for (const hook of [...table.pre.values()]) {
        const result = hook(module, args);
        if (result !== undefined) args = Array.isArray(result) ? result : [result];
      }
      // As PyTorch's _call_impl: the inputs are hooked for backward after the forward pre-hooks,
      // the output after the forward hooks.
      const backward = hooksBackward(table.backward, table.backwardPre) ? backwardCall(module, table) : null;
      if (backward) args = backward.inputs(args);
      let output = forward.apply(module, args);
      for (const hook of [...table.post.values()]) {
        const result = hook(module, args, output);
        if (result !== undefined) output = result;
      }
      return backward ? backward.output(output) : output;
    },
  });
  return table;
}

function uninstall(module: Module, table: HookTable): void {
  const sizes = table.pre.size + table.post.size + table.backward.size + table.backwardPre.size;
  if (sizes > 0 || tables.get(module) !== table) return;
  tables.delete(module);
  if (table.ownForward) Object.defineProperty(module, 'forward', table.ownForward);
  else delete (module as unknown as { forward?: unknown }).forward;
}

const METHODS = {
  pre: 'registerForwardPreHook',
  post: 'registerForwardHook',
  backward: 'registerFullBackwardHook',
  backwardPre: 'registerFullBackwardPreHook',
} as const;

/** @internal Adds a hook of `kind` to `module` (Module's register*Hook). */
export function addForwardHook(
  module: Module,
  kind: keyof typeof METHODS,
  hook: ForwardPreHook<Module> | ForwardHook<Module> | FullBackwardHook<Module> | FullBackwardPreHook<Module>,
): RemovableHandle {
  const method = METHODS[kind];
  if (typeof hook !== 'function')
    throw new ArgumentError(`tailor: ${method}: hook must be a function, got ${typeof hook}`);
  const table = install(module, method);
  const id = nextHookId();
  const map = table[kind] as Map<number, unknown>;
  map.set(id, hook);
  return new RemovableHandle(id, () => {
    map.delete(id);
    uninstall(module, table);
  });
}

/** @internal Whether `module` has forward hooks installed (its forward is the hooked one). */
export function hasForwardHooks(module: Module): boolean {
  return tables.has(module);
}
