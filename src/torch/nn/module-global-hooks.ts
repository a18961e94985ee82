// Global module hooks (torch.nn.modules.module.register_module_forward_hook and its kin): hooks
// run for every module, before the module's own. A module with hooks of its own runs them in its
// hooked forward (module-hooks.ts); every other module is reached through its class: while a
// global hook exists, the `forward` of every Module class made so far (and of each class made
// later, at its first construction) is wrapped on the class's prototype, and the wrapper runs the
// hooks only for the instances whose `forward` it is (so a subclass calling `super.forward(x)`
// runs them once). With the last global hook removed the prototypes get their own forward back,
// so a model pays nothing for global hooks unless some exist.
import type { Module } from './module.js';
import { RemovableHandle } from '../hook-handle.js';
import { ArgumentError } from '../../util/arguments.js';
import {
  addHook,
  globalHooks,
  hookCount,
  hookOptions,
  hookedForward,
  type ForwardHook,
  type ForwardPreHook,
} from './module-hooks.js';
import type { FullBackwardHook, FullBackwardPreHook } from './module-backward-hooks.js';

type AnyFunction = (...args: unknown[]) => unknown;

/** The classes of the modules made so far (their constructors). */
const moduleClasses = new Set<abstract new (...args: never[]) => Module>();
/** The prototypes whose forward is wrapped now, with their own forward's descriptor. */
const wrapped = new Map<object, PropertyDescriptor>();

/** The object whose own `forward` a call `module.forward(...)` reaches: the instance or a prototype. */
function forwardOwner(module: object): object | null {
  for (let at: object | null = module; at !== null; at = Object.getPrototypeOf(at) as object | null)
    if (Object.prototype.hasOwnProperty.call(at, 'forward')) return at;
  return null;
}

function wrapClass(moduleClass: abstract new (...args: never[]) => Module): void {
  for (
    let proto = moduleClass.prototype as object | null;
    proto !== null;
    proto = Object.getPrototypeOf(proto)
  ) {
    // A wrapped prototype's bases were wrapped with it.
    if (wrapped.has(proto)) return;
    const own = Object.getOwnPropertyDescriptor(proto, 'forward');
    if (!own || typeof own.value !== 'function') continue;
    const forward = own.value as AnyFunction;
    const at = proto;
    wrapped.set(at, own);
    Object.defineProperty(at, 'forward', {
      ...own,
      value: function (this: Module, ...args: unknown[]): unknown {
        // Another forward comes first (the instance's hooked one, a subclass's calling super):
        // the hooks run there. A forward called unbound has no module to hook.
        if (typeof this !== 'object' || this === null || forwardOwner(this) !== at)
          return forward.apply(this, args);
        return hookedForward(this, forward, args);
      },
    });
  }
}

function unwrapAll(): void {
  for (const [proto, own] of wrapped) Object.defineProperty(proto, 'forward', own);
  wrapped.clear();
}

/** @internal Called by Module's constructor: wraps the class's forward when global hooks exist. */
export function noteModuleClass(moduleClass: abstract new (...args: never[]) => Module): void {
  if (moduleClasses.has(moduleClass)) return;
  moduleClasses.add(moduleClass);
  if (hookCount(globalHooks) > 0) wrapClass(moduleClass);
}

function addGlobal(
  kind: 'pre' | 'post' | 'backward' | 'backwardPre',
  method: string,
  hook: ForwardPreHook | ForwardHook | FullBackwardHook | FullBackwardPreHook,
  alwaysCall = false,
): RemovableHandle {
  if (typeof hook !== 'function')
    throw new ArgumentError(`tailor: ${method}: hook must be a function, got ${typeof hook}`);
  if (hookCount(globalHooks) === 0) for (const moduleClass of moduleClasses) wrapClass(moduleClass);
  const id = addHook(globalHooks, kind, hook, false);
  if (alwaysCall) globalHooks.alwaysCalled.add(id);
  return new RemovableHandle(id, () => {
    globalHooks[kind].delete(id);
    globalHooks.alwaysCalled.delete(id);
    if (hookCount(globalHooks) === 0) unwrapAll();
  });
}

/**
 * Adds a forward pre-hook run before the `forward` of every module, before the module's own
 * pre-hooks (torch.nn.modules.module.register_module_forward_pre_hook), as
 * {@link Module.registerForwardPreHook}'s hooks: it may return replacement arguments. Meant for
 * debugging and profiling, as in PyTorch; `remove()` on the handle takes it off.
 *
 * @example
 * ```ts
 * import { nn } from 'tailor/torch';
 * const calls: string[] = [];
 * const handle = nn.registerModuleForwardPreHook((m) => void calls.push(m.constructor.name));
 * // ... model.forward(x) ...
 * handle.remove();
 * ```
 */
export function registerModuleForwardPreHook(hook: ForwardPreHook): RemovableHandle {
  return addGlobal('pre', 'registerModuleForwardPreHook', hook);
}

/**
 * Adds a forward hook run after the `forward` of every module, before the module's own forward
 * hooks (torch.nn.modules.module.register_module_forward_hook); it may return a replacement
 * output. `alwaysCall` runs it when forward throws too (PyTorch 2.x).
 */
export function registerModuleForwardHook(
  hook: ForwardHook,
  options: { alwaysCall?: boolean } = {},
): RemovableHandle {
  const { alwaysCall } = hookOptions('registerModuleForwardHook', options, ['alwaysCall']);
  return addGlobal('post', 'registerModuleForwardHook', hook, alwaysCall);
}

/**
 * Adds a full backward hook to every module, run before the module's own
 * (torch.nn.modules.module.register_module_full_backward_hook): see
 * {@link Module.registerFullBackwardHook}. Every module called with grad enabled while it exists
 * puts identity nodes on its inputs and outputs, so it costs a little in every forward.
 */
export function registerModuleFullBackwardHook(hook: FullBackwardHook): RemovableHandle {
  return addGlobal('backward', 'registerModuleFullBackwardHook', hook);
}

/**
 * Adds a full backward pre-hook to every module, run before the module's own (PyTorch 2.x's
 * torch.nn.modules.module.register_module_full_backward_pre_hook): see
 * {@link Module.registerFullBackwardPreHook}.
 */
export function registerModuleFullBackwardPreHook(hook: FullBackwardPreHook): RemovableHandle {
  return addGlobal('backwardPre', 'registerModuleFullBackwardPreHook', hook);
}
