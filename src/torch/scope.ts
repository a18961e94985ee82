// Deterministic memory management for native tensors. Every tensor created while a scope is
// open belongs to that scope and is freed when it closes, except what the scope returns
// (moved to the enclosing scope) and what was kept. Outside any scope, tensors are the
// caller's to dispose; a FinalizationRegistry frees forgotten ones as a safety net only.
// tidy() scopes are synchronous; code that awaits holds a TensorScope object (withScope), which
// owns only what its own run() steps create.
import { native } from './native.js';

export interface Disposable {
  dispose(): void;
  readonly isDisposed: boolean;
}

/** Set on a tensor while the safety net holds it, so dispose() unregisters only those. */
export const inSafetyNet: unique symbol = Symbol('inSafetyNet');
/** The scope that will free a tensor (undefined: the caller owns it); one owner at most. */
export const scopeOwner: unique symbol = Symbol('scopeOwner');

/** What a scope holds: the tensors it will free. */
export type ScopeOwner = Set<Tracked>;
type Owner = ScopeOwner;
type Tracked = Disposable & { readonly handle: number; [inSafetyNet]?: boolean; [scopeOwner]?: Owner };

// The scopes open in the synchronous code now running, innermost last. Only synchronous code
// pushes and pops (tidy, TensorScope.run), so the stack is empty whenever a task or microtask
// starts: an `await` can never leave a scope open behind it or let another task's tensors in.
const scopes: Owner[] = [];

const safetyNet = new FinalizationRegistry<number>((handle) => {
  native.dispose(handle);
});

function protect(tensor: Tracked): void {
  if (tensor.isDisposed || tensor[inSafetyNet]) return;
  safetyNet.register(tensor, tensor.handle, tensor);
  tensor[inSafetyNet] = true;
}

// Unowned tensors wait here before they get their finalizer. FinalizationRegistry's register
// plus unregister cost more than a whole small op (about 1 us), and most tensors made outside a
// scope are disposed right away (`x.add(y).dispose()`), so registration is deferred: a batch is
// registered when it fills or when the current task's synchronous code ends, skipping the
// tensors disposed by then. A forgotten tensor is thus collectable a little later, never leaked.
let pending: Tracked[] = [];
const pendingLimit = 256;
let flushQueued = false;

function protectPending(): void {
  const batch = pending;
  pending = [];
  for (const t of batch) protect(t);
}

function flushAtTaskEnd(): void {
  flushQueued = false;
  protectPending();
}

/**
 * Called by Tensor's constructor: registers the new tensor with the innermost scope, which
 * will free it. Only tensors no scope owns get the (comparatively costly) finalizer.
 */
export function track(tensor: Tracked): void {
  const scope = scopes[scopes.length - 1];
  if (scope) {
    scope.add(tensor);
    tensor[scopeOwner] = scope;
    return;
  }
  if (!flushQueued) {
    flushQueued = true;
    queueMicrotask(flushAtTaskEnd);
  } else if (pending.length >= pendingLimit) {
    protectPending();
  }
  pending.push(tensor);
}

/** Called when a tensor is disposed explicitly, so the safety net never frees a reused slot. */
export function untrack(tensor: Tracked): void {
  if (tensor[inSafetyNet]) {
    safetyNet.unregister(tensor);
    tensor[inSafetyNet] = false;
  }
  release(tensor);
}

function release(tensor: Tracked): boolean {
  const owner = tensor[scopeOwner];
  if (!owner) return false;
  owner.delete(tensor);
  tensor[scopeOwner] = undefined;
  return true;
}

function adopt(owner: Owner, tensor: Tracked): void {
  owner.add(tensor);
  tensor[scopeOwner] = owner;
}

/**
 * Takes the tensors in a value (a tensor, or any structure of them: see tidy) away from the
 * scope that owns them, open or held: the caller owns them and disposes them.
 */
export function keep<T>(value: T): T {
  visit(value, true, (t) => {
    if (release(t)) protect(t);
  });
  return value;
}

/**
 * Calls fn on every tensor in value: arrays, Sets, Maps and plain objects are searched, and
 * with `instances` also the own enumerable fields of class instances (not #private ones).
 * Typed arrays, buffers and promises are leaves.
 */
function visit(
  value: unknown,
  instances: boolean,
  fn: (t: Tracked) => void,
  seen = new Set<unknown>(),
): void {
  if (value === null || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  if (isTracked(value)) {
    fn(value);
    return;
  }
  if (Array.isArray(value) || value instanceof Set) {
    for (const v of value) visit(v, instances, fn, seen);
  } else if (value instanceof Map) {
    for (const v of value.values()) visit(v, instances, fn, seen);
  } else if (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null) {
    for (const v of Object.values(value)) visit(v, instances, fn, seen);
  } else if (instances && !isLeaf(value)) {
    for (const v of Object.values(value)) visit(v, instances, fn, seen);
  }
}

function isLeaf(value: object): boolean {
  return (
    ArrayBuffer.isView(value) ||
    value instanceof ArrayBuffer ||
    value instanceof SharedArrayBuffer ||
    value instanceof Promise ||
    value instanceof Date ||
    value instanceof RegExp ||
    value instanceof Error ||
    value instanceof WeakMap ||
    value instanceof WeakSet
  );
}

function isTracked(value: object): value is Tracked {
  return (
    typeof (value as Tracked).dispose === 'function' &&
    typeof (value as { handle?: unknown }).handle !== 'undefined' &&
    'isDisposed' in value
  );
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

/**
 * Opens owner on the scope stack for fn's synchronous run and closes it again whatever fn does.
 * An async fn is refused: its code after the first `await` would run with the scope closed, so
 * its tensors would belong to nobody or to whichever scope happened to be open.
 */
function runIn<T>(owner: Owner, fn: () => T, api: string): T {
  scopes.push(owner);
  let result: T;
  try {
    result = fn();
  } finally {
    const index = scopes.lastIndexOf(owner);
    if (index >= 0) scopes.splice(index, 1);
  }
  if (isPromiseLike(result)) {
    // The caller gets the TypeError; the abandoned promise must not also crash the process.
    Promise.resolve(result).then(undefined, () => {});
    throw new TypeError(
      `${api} got an async function; use withScope(async (scope) => ...) and scope.run() for the synchronous steps`,
    );
  }
  return result;
}

/**
 * Runs fn (synchronous) in a new scope. Tensors created inside are freed when it returns or
 * throws, except the tensors in its result, which move to the enclosing scope (or, with none
 * open, to the caller). The result is searched through arrays, Sets, Maps, plain objects and
 * the public fields of class instances. Async code: see withScope.
 */
export function tidy<T>(fn: () => T): T {
  const scope: Owner = new Set();
  let result: T;
  try {
    result = runIn(scope, fn, 'tidy()');
  } catch (error) {
    closeScope(scope, undefined);
    throw error;
  }
  closeScope(scope, result);
  return result;
}

function closeScope(scope: Owner, result: unknown): void {
  const survivors = new Set<Tracked>();
  visit(result, true, (t) => survivors.add(t));
  const parent = scopes[scopes.length - 1];
  for (const t of scope) {
    t[scopeOwner] = undefined;
    if (t.isDisposed) continue;
    if (survivors.has(t)) {
      if (parent) adopt(parent, t);
      else protect(t);
    } else {
      t.dispose();
    }
  }
  scope.clear();
}

/**
 * A scope held as an object, for code that awaits: it owns the tensors created inside its
 * run() calls (synchronous steps) until dispose() frees them, however many awaits lie between.
 * Nothing else can slip in: between run() calls it is not on the scope stack. Works with
 * `using` (Symbol.dispose).
 */
export class TensorScope {
  readonly #owned: Owner = new Set();
  #disposed = false;

  /** Runs a synchronous step; the tensors it creates, its result included, belong to this scope. */
  run<T>(fn: () => T): T {
    if (this.#disposed) throw new Error('TensorScope.run: this scope was already disposed');
    return runIn(this.#owned, fn, 'TensorScope.run()');
  }

  /** Takes the tensors in value away from this scope: the caller owns them. */
  keep<T>(value: T): T {
    visit(value, true, (t) => {
      if (t[scopeOwner] === this.#owned && release(t)) protect(t);
    });
    return value;
  }

  /** Number of live tensors this scope will free. */
  get size(): number {
    let n = 0;
    for (const t of this.#owned) if (!t.isDisposed) n++;
    return n;
  }

  get isDisposed(): boolean {
    return this.#disposed;
  }

  /** Frees every tensor the scope still owns; later run() calls throw. */
  dispose(): void {
    this.#disposed = true;
    closeScope(this.#owned, undefined);
  }

  /** Ends the scope (for `using` declarations): frees its tensors. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

/**
 * Runs an async function with a TensorScope that is disposed when it settles (resolved or
 * rejected). The tensors in the result that the scope owns are kept: they become the caller's.
 *
 *   const logits = await withScope(async (scope) => {
 *     const batch = await loader.next();
 *     return scope.run(() => model.forward(batch.x));
 *   });
 */
export async function withScope<T>(fn: (scope: TensorScope) => Promise<T>): Promise<T> {
  const scope = new TensorScope();
  try {
    return scope.keep(await fn(scope));
  } finally {
    scope.dispose();
  }
}

/** Disposes every tensor in a value (a tensor, an array, a plain object or a Map of them). */
export function dispose(value: unknown): void {
  visit(value, false, (t) => {
    if (!t.isDisposed) t.dispose();
  });
}

/** Number of live native tensors (for leak checks in tests and benchmarks). */
export function liveTensors(): number {
  return native.liveTensors();
}
