// Deterministic memory management for native tensors. Every tensor created while a scope is
// open belongs to that scope and is freed when it closes, except what the scope returns
// (moved to the enclosing scope) and what was kept. Outside any scope, tensors are the
// caller's to dispose; a FinalizationRegistry frees forgotten ones as a safety net only.
import { native } from './native.js';

export interface Disposable {
  dispose(): void;
  readonly isDisposed: boolean;
}

/** Set on a tensor while the safety net holds it, so dispose() unregisters only those. */
export const inSafetyNet: unique symbol = Symbol('inSafetyNet');

type Tracked = Disposable & { readonly handle: number; [inSafetyNet]?: boolean };

const scopes: Set<Tracked>[] = [];

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
  const scope = scopes[scopes.length - 1];
  if (scope) scope.delete(tensor);
}

/** Removes a tensor (or every tensor in a structure) from all open scopes: the caller owns it. */
export function keep<T>(value: T): T {
  visit(value, (t) => {
    let owned = false;
    for (const scope of scopes) owned = scope.delete(t) || owned;
    if (owned) protect(t);
  });
  return value;
}

function visit(value: unknown, fn: (t: Tracked) => void, seen = new Set<unknown>()): void {
  if (value === null || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  if (isTracked(value)) {
    fn(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) visit(v, fn, seen);
  } else if (value instanceof Map) {
    for (const v of value.values()) visit(v, fn, seen);
  } else if (Object.getPrototypeOf(value) === Object.prototype) {
    for (const v of Object.values(value)) visit(v, fn, seen);
  }
}

function isTracked(value: object): value is Tracked {
  return (
    typeof (value as Tracked).dispose === 'function' &&
    typeof (value as { handle?: unknown }).handle !== 'undefined' &&
    'isDisposed' in value
  );
}

/**
 * Runs fn in a new scope. Tensors created inside are freed when it returns, except the
 * tensors in its result (arrays, plain objects and Maps are searched), which move to the
 * enclosing scope. Works with async functions too (awaited before the scope closes).
 */
export function tidy<T>(fn: () => T): T {
  const scope = new Set<Tracked>();
  scopes.push(scope);
  let result: T;
  try {
    result = fn();
  } catch (error) {
    closeScope(scope, undefined);
    throw error;
  }
  if (result instanceof Promise) {
    throw new TypeError('tidy() got an async function; use tidyAsync() so the scope closes after it settles');
  }
  closeScope(scope, result);
  return result;
}

/** tidy() for async functions: the scope stays open until the promise settles. */
export async function tidyAsync<T>(fn: () => Promise<T>): Promise<T> {
  const scope = new Set<Tracked>();
  scopes.push(scope);
  let result: T;
  try {
    result = await fn();
  } catch (error) {
    closeScope(scope, undefined);
    throw error;
  }
  closeScope(scope, result);
  return result;
}

function closeScope(scope: Set<Tracked>, result: unknown): void {
  const index = scopes.lastIndexOf(scope);
  if (index >= 0) scopes.splice(index, 1);
  const survivors = new Set<Tracked>();
  visit(result, (t) => survivors.add(t));
  const parent = scopes[scopes.length - 1];
  for (const t of scope) {
    if (survivors.has(t)) {
      if (parent) parent.add(t);
      else protect(t);
    } else if (!t.isDisposed) {
      t.dispose();
    }
  }
}

/** Disposes every tensor in a value (a tensor, an array, a plain object or a Map of them). */
export function dispose(value: unknown): void {
  visit(value, (t) => {
    if (!t.isDisposed) t.dispose();
  });
}

/** Number of live native tensors (for leak checks in tests and benchmarks). */
export function liveTensors(): number {
  return native.liveTensors();
}
