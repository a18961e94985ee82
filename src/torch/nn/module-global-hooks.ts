// Global module hooks (torch.nn.modules.module.register_module_forward_hook and its kin): hooks
// run for every module, before the module's own. A module with hooks of its own runs them in its
// hooked forward (module-hooks.ts); every other module is reached through its class: while a
// global hook exists, the `forward` of every Module class made so far (and of each class made
// later, at its first construction) is wrapped on the class's prototype, and the wrapper runs the
// hooks only for the instances whose `forward` it is (so a subclass calling `super.forward(x)`
// runs them once). With the last global hook removed the prototypes get their own forward back,
// so a model pays nothing for global hooks unless some exist. A class whose prototype's forward
// cannot be redefined (a frozen prototype) cannot be reached so: registering the first global hook
// while such a class exists, or making such a class's first module while global hooks exist,
// fails by name and leaves every prototype as it was.
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
/** The prototypes whose forward is wrapped now: their own forward's descriptor and the wrapper. */
const wrapped = new Map<object, { own: PropertyDescriptor; wrapper: AnyFunction }>();

/** The object whose own `forward` a call `module.forward(...)` reaches: the instance or a prototype. */
function forwardOwner(module: object): object | null {
  for (let at: object | null = module; at !== null; at = Object.getPrototypeOf(at) as object | null)
    if (Object.prototype.hasOwnProperty.call(at, 'forward')) return at;
  return null;
}

/**
 * Wraps the forward of every prototype on the class's chain, or none: a prototype whose forward
 * cannot be redefined (a frozen one) would leave the others wrapped with no hook to run, and its
 * own modules silently unhooked, so the prototypes wrapped before it get their forward back and
 * the call that wanted them wrapped (`method`) fails by name.
 */
function wrapClass(moduleClass: abstract new (...args: never[]) => Module, method: string): void {
  const done: object[] = [];
  let at: object | null = moduleClass.prototype as object;
  try {
    for (; at !== null; at = Object.getPrototypeOf(at) as object | null) {
      if (wrapped.has(at)) continue;
      const own = Object.getOwnPropertyDescriptor(at, 'forward');
      if (!own || typeof own.value !== 'function') continue;
      const forward = own.value as AnyFunction;
      const owner = at;
      const wrapper = function (this: Module, ...args: unknown[]): unknown {
        // Another forward comes first (the instance's hooked one, a subclass's calling super):
        // the hooks run there. A forward called unbound has no module to hook.
        if (typeof this !== 'object' || this === null || forwardOwner(this) !== owner)
          return forward.apply(this, args);
        return hookedForward(this, forward, args);
      };
      Object.defineProperty(at, 'forward', { ...own, value: wrapper });
      wrapped.set(at, { own, wrapper });
      done.push(at);
    }
  } catch (error) {
    for (const proto of done.reverse()) {
      Object.defineProperty(proto, 'forward', wrapped.get(proto)!.own);
      wrapped.delete(proto);
    }
    const name = (at as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    throw new ArgumentError(
      `tailor: ${method}: the forward of ${typeof name === 'string' && name ? name : moduleClass.name}.prototype cannot be wrapped for the global module hooks (${error instanceof Error ? error.message : String(error)}: a frozen prototype?); global hooks reach a module through its class's forward: leave that prototype unfrozen, or register the hook on the modules themselves (registerForwardHook and its kin)`,
    );
  }
}

/**
 * Gives every wrapped prototype its own forward back. One frozen after it was wrapped keeps its
 * wrapper (which, with no global hook left, only calls forward) and stays listed, so that the
 * next global hook finds it wrapped; one whose forward was replaced since keeps the replacement.
 */
function unwrapAll(): void {
  for (const [proto, { own, wrapper }] of wrapped) {
    const now = Object.getOwnPropertyDescriptor(proto, 'forward');
    try {
      if (now?.value === wrapper) Object.defineProperty(proto, 'forward', own);
      wrapped.delete(proto);
    } catch {
      // frozen since: see above
    }
  }
}

/** @internal Called by Module's constructor: wraps the class's forward when global hooks exist. */
export function noteModuleClass(moduleClass: abstract new (...args: never[]) => Module): void {
  if (moduleClasses.has(moduleClass)) return;
  // noted only once wrapped, so that a class that failed is tried again at its next construction
  if (hookCount(globalHooks) > 0) wrapClass(moduleClass, `new ${moduleClass.name}()`);
  moduleClasses.add(moduleClass);
}

function addGlobal(
  kind: 'pre' | 'post' | 'backward' | 'backwardPre',
  method: string,
  hook: ForwardPreHook | ForwardHook | FullBackwardHook | FullBackwardPreHook,
  alwaysCall = false,
): RemovableHandle {
  if (typeof hook !== 'function')
    throw new ArgumentError(`tailor: ${method}: hook must be a function, got ${typeof hook}`);
  if (hookCount(globalHooks) === 0)
    try {
      for (const moduleClass of moduleClasses) wrapClass(moduleClass, method);
    } catch (error) {
      // all or none: the classes wrapped before the failing one get their forward back
      unwrapAll();
      throw error;
    }
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
