// Forward hooks of a Module (torch.nn.Module.register_forward_pre_hook / register_forward_hook).
// TypeScript callers call `m.forward(x)` directly (there is no `__call__`), so the first hook
// registered on a module puts an own `forward` on that instance that runs the hooks around the
// class's forward; a parent's forward calling `this.child.forward(x)` goes through it too. When the
// last hook is removed the instance gets its plain forward back, so modules without hooks pay
// nothing. The global hooks (module-global-hooks.ts) run through the same `hookedForward`, before
// the module's own, as PyTorch's _call_impl runs them.
import type { Module } from './module.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
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
 * hook). Returning `undefined` keeps the output; any other value replaces it. A hook registered
 * with `alwaysCall` also runs when forward (or a hook before it) throws: then `output` is
 * `undefined`.
 */
export type ForwardHook<M extends Module = Module> = (module: M, args: unknown[], output: unknown) => unknown;

/**
 * Options of a module's hook registration (PyTorch 2.x's keyword arguments). PyTorch's
 * `with_kwargs` has no counterpart: tailor's forward takes positional arguments only (an options
 * object is one of `args`, which the hooks see and may replace), and passing it is a named error.
 */
export interface ModuleHookOptions {
  /** Run this hook before the hooks of its kind registered earlier (default: after them). */
  prepend?: boolean;
}

/** Options of {@link Module.registerForwardHook}. */
export interface ForwardHookOptions extends ModuleHookOptions {
  /**
   * Run the hook even when forward, or a hook before this one, throws (PyTorch 2.x's
   * `always_call`); its output argument is then `undefined`, and an error it throws itself is
   * reported as a process warning so that the first error goes on.
   */
  alwaysCall?: boolean;
}

export { RemovableHandle };

type AnyFunction = (...args: unknown[]) => unknown;

/** @internal One set of module hooks: a module's own, or the global ones. */
export interface HookLists {
  readonly pre: Map<number, ForwardPreHook<Module>>;
  readonly post: Map<number, ForwardHook<Module>>;
  readonly backward: Map<number, FullBackwardHook<Module>>;
  readonly backwardPre: Map<number, FullBackwardPreHook<Module>>;
  /** The ids of the forward hooks registered with `alwaysCall`. */
  readonly alwaysCalled: Set<number>;
}

interface HookTable extends HookLists {
  /** The instance's own `forward` before the hooks were installed (an arrow-function field), if any. */
  readonly ownForward: PropertyDescriptor | undefined;
}

/** @internal A set of empty hook lists. */
export function emptyHookLists(): HookLists {
  return {
    pre: new Map(),
    post: new Map(),
    backward: new Map(),
    backwardPre: new Map(),
    alwaysCalled: new Set(),
  };
}

/** @internal The global module hooks (nn.registerModuleForwardHook...), run before each module's own. */
export const globalHooks: HookLists = emptyHookLists();

/** @internal How many hooks `lists` holds. */
export function hookCount(lists: HookLists): number {
  return lists.pre.size + lists.post.size + lists.backward.size + lists.backwardPre.size;
}

const tables = new WeakMap<Module, HookTable>();

/**
 * @internal One call of `forward` on `module` with the global hooks and `own` (the module's
 * hooks, if it has any) around it, in PyTorch's order: forward pre-hooks, the inputs hooked for
 * backward, forward, forward hooks, the output hooked for backward.
 */
export function hookedForward(
  module: Module,
  forward: AnyFunction,
  callArgs: unknown[],
  own?: HookLists,
): unknown {
  // Copies of the hook lists: a hook that removes itself (or adds another) changes the next call,
  // not this one.
  const both = <T>(pick: (lists: HookLists) => Map<number, T>): [number, T][] => [
    ...pick(globalHooks),
    ...(own ? pick(own) : []),
  ];
  const pre = both((l) => l.pre);
  const post = both((l) => l.post);
  const always = new Set(
    post.filter(([id]) => globalHooks.alwaysCalled.has(id) || own?.alwaysCalled.has(id)).map(([id]) => id),
  );
  const called = new Set<number>();
  let args = callArgs;
  let output: unknown;
  try {
    for (const [, hook] of pre) {
      const result = hook(module, args);
      if (result !== undefined) args = Array.isArray(result) ? result : [result];
    }
    const full = both((l) => l.backward).map(([, h]) => h);
    const backwardPre = both((l) => l.backwardPre).map(([, h]) => h);
    const backward = hooksBackward(full, backwardPre) ? backwardCall(module, full, backwardPre) : null;
    if (backward) args = backward.inputs(args);
    output = forward.apply(module, args);
    for (const [id, hook] of post) {
      called.add(id);
      const result = hook(module, args, output);
      if (result !== undefined) output = result;
    }
    return backward ? backward.output(output) : output;
  } catch (error) {
    for (const [id, hook] of post) {
      if (!always.has(id) || called.has(id)) continue;
      try {
        const result = hook(module, args, output);
        if (result !== undefined) output = result;
      } catch (hookError) {
        process.emitWarning(
          `tailor: a forward hook registered with alwaysCall threw while an error of ${module.constructor.name}'s forward was on its way (${hookError instanceof Error ? hookError.message : String(hookError)}); the forward's error goes on`,
          { code: 'TAILOR_ALWAYS_CALL_HOOK' },
        );
      }
    }
    throw error;
  }
}

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
    ...emptyHookLists(),
    ownForward: Object.getOwnPropertyDescriptor(module, 'forward'),
  };
  tables.set(module, table);
  Object.defineProperty(module, 'forward', {
    configurable: true,
    enumerable: false,
    writable: true,
    value: (...callArgs: unknown[]): unknown => hookedForward(module, forward, callArgs, table),
  });
  return table;
}

function uninstall(module: Module, table: HookTable): void {
  if (hookCount(table) > 0 || tables.get(module) !== table) return;
  tables.delete(module);
  if (table.ownForward) Object.defineProperty(module, 'forward', table.ownForward);
  else delete (module as unknown as { forward?: unknown }).forward;
}

/** @internal The hook kinds and the registration each belongs to (for messages). */
export const METHODS = {
  pre: 'registerForwardPreHook',
  post: 'registerForwardHook',
  backward: 'registerFullBackwardHook',
  backwardPre: 'registerFullBackwardPreHook',
} as const;

type Kind = keyof typeof METHODS;
type AnyHook =
  ForwardPreHook<Module> | ForwardHook<Module> | FullBackwardHook<Module> | FullBackwardPreHook<Module>;

/**
 * @internal The checked options of a hook registration: an object whose keys are among `allowed`,
 * each a boolean; `withKwargs` is named as having no counterpart.
 */
export function hookOptions(
  method: string,
  options: unknown,
  allowed: readonly string[],
): { prepend: boolean; alwaysCall: boolean } {
  const c = checksOf(`tailor: ${method}`);
  const o = c.object(options, 'options');
  for (const [key, value] of Object.entries(o)) {
    if (key === 'withKwargs')
      throw new ArgumentError(
        `tailor: ${method}: withKwargs has no counterpart in tailor: forward takes positional arguments only (an options object is one of args, which the hook sees and may replace); register the hook without it`,
      );
    if (!allowed.includes(key))
      throw new ArgumentError(
        `tailor: ${method}: unknown option '${key}' (the options are ${allowed.map((k) => `'${k}'`).join(', ')})`,
      );
    if (value !== undefined && typeof value !== 'boolean') c.fail(`options.${key}`, 'a boolean', value);
  }
  return { prepend: o.prepend === true, alwaysCall: o.alwaysCall === true };
}

/** @internal Puts `hook` into `lists` under a new id, first when `prepend`; returns the id. */
export function addHook(lists: HookLists, kind: Kind, hook: AnyHook, prepend: boolean): number {
  if (typeof hook !== 'function')
    throw new ArgumentError(`tailor: ${METHODS[kind]}: hook must be a function, got ${typeof hook}`);
  const id = nextHookId();
  const map = lists[kind] as Map<number, AnyHook>;
  if (prepend) {
    // A Map keeps insertion order: refilling it puts the new hook first, and the handles of the
    // others (which delete by id) stay valid.
    const rest = [...map];
    map.clear();
    map.set(id, hook);
    for (const [k, h] of rest) map.set(k, h);
  } else map.set(id, hook);
  return id;
}

/** @internal Adds a hook of `kind` to `module` (Module's register*Hook). */
export function addForwardHook(
  module: Module,
  kind: Kind,
  hook: AnyHook,
  options: unknown = {},
): RemovableHandle {
  const method = METHODS[kind];
  const { prepend, alwaysCall } = hookOptions(
    method,
    options,
    kind === 'post' ? ['prepend', 'alwaysCall'] : ['prepend'],
  );
  if (typeof hook !== 'function')
    throw new ArgumentError(`tailor: ${method}: hook must be a function, got ${typeof hook}`);
  const table = install(module, method);
  const id = addHook(table, kind, hook, prepend);
  if (alwaysCall) table.alwaysCalled.add(id);
  return new RemovableHandle(id, () => {
    table[kind].delete(id);
    table.alwaysCalled.delete(id);
    uninstall(module, table);
  });
}

/** @internal Whether `module` has forward hooks installed (its forward is the hooked one). */
export function hasForwardHooks(module: Module): boolean {
  return tables.has(module);
}
