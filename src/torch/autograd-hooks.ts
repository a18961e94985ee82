// Gradient hooks and JavaScript backward functions inside libtorch's autograd engine. The addon
// registers a C++ hook (or a custom Function node) per JavaScript one; while any exists, backward
// and autograd.grad run the engine on a helper thread and the JavaScript thread answers the
// engine's calls, which all come through `dispatch` below. So a hook sees the total gradient of
// its tensor once, in the engine's order, as PyTorch's does, and autograd.grad passes through
// hooked modules and custom Functions alike.
import { native } from './native.js';
import { Tensor } from './tensor.js';
import { tidy } from './scope.js';
import { ArgumentError, describeValue } from '../util/arguments.js';
import { RemovableHandle, nextHookId } from './hook-handle.js';

/** A gradient hook: the replacement gradient, or undefined to keep it. */
export type GradHook = (grad: Tensor) => Tensor | undefined | void;

/**
 * @internal A JavaScript backward: the tensors saved in forward and the gradients of the outputs
 * (null where none arrived and the Function does not materialize them) to the gradients of the
 * tensor inputs (null for none).
 */
export type JsBackward = (saved: (Tensor | null)[], grads: (Tensor | null)[]) => (Tensor | null)[];

type Entry = { kind: 'hook'; hook: GradHook; shape: number[] } | { kind: 'function'; backward: JsBackward };

const entries = new Map<number, Entry>();
const afterRun: (() => void)[] = [];
let dispatcherSet = false;

function dispatch(
  isFunction: boolean,
  id: number,
  handles: (number | null)[],
  saved: number,
): (number | null)[] {
  const tensors = handles.map((h) => (h === null ? null : new Tensor(h)));
  try {
    const entry = entries.get(id);
    // A hook removed while the engine held it: the gradient passes unchanged.
    if (entry === undefined || (entry.kind === 'hook') === isFunction) {
      if (!isFunction) return [null];
      throw new Error(`tailor: autograd: the backward of custom Function ${id} is gone (an internal error)`);
    }
    return tidy(() => {
      const out =
        entry.kind === 'hook'
          ? [runHook(entry.hook, entry.shape, tensors[0])]
          : entry.backward(tensors.slice(0, saved), tensors.slice(saved));
      return out.map((t) => (t === null ? null : native.share(t.handle)));
    });
  } finally {
    for (const t of tensors) t?.dispose();
  }
}

function runHook(hook: GradHook, shape: number[], grad: Tensor | null): Tensor | null {
  if (grad === null) return null;
  const out = hook(grad);
  if (out === undefined) return null;
  if (!(out instanceof Tensor))
    throw new ArgumentError(
      `tailor: registerHook: a hook must return a Tensor or undefined, got ${describeValue(out)}`,
    );
  const got = out.shape;
  if (got.length !== shape.length || got.some((n, i) => n !== shape[i]))
    throw new ArgumentError(
      `tailor: registerHook: the hook returned a gradient of shape [${got.join(', ')}] for a tensor of shape [${shape.join(', ')}]; return one of the tensor's shape (or undefined to keep the gradient)`,
    );
  return out;
}

function ensureDispatcher(): void {
  if (dispatcherSet) return;
  native.setAutogradDispatcher(dispatch);
  dispatcherSet = true;
}

/** Drops the entries whose C++ hook or graph node is gone. */
function dropReleased(): void {
  for (const id of native.releasedAutogradIds()) entries.delete(id);
}

/** @internal Runs `fn` when the engine run now under way ends (to free what its hooks held). */
export function afterBackward(fn: () => void): void {
  afterRun.push(fn);
}

/** What started each engine run under way, innermost last. */
const engineCalls: ('backward' | 'grad')[] = [];

/** @internal Runs an engine call (backward, autograd.grad), then what its hooks left to free. */
export function engineRun<T>(kind: 'backward' | 'grad', fn: () => T): T {
  const outer = afterRun.length;
  engineCalls.push(kind);
  try {
    return fn();
  } finally {
    engineCalls.pop();
    for (const done of afterRun.splice(outer)) done();
    dropReleased();
  }
}

/** @internal The innermost engine run under way (a backward function asks), or null. */
export function currentEngineCall(): 'backward' | 'grad' | null {
  return engineCalls[engineCalls.length - 1] ?? null;
}

/** @internal How many JavaScript hooks and Function nodes the engine holds (for tests and leak reports). */
export function liveJsAutograd(): number {
  return native.jsAutogradLive();
}

/** @internal Tensor.backward: see the Tensor method. */
export function runBackward(
  root: Tensor,
  gradient: Tensor | undefined,
  retain: boolean,
  create: boolean,
): void {
  engineRun('backward', () =>
    native.backward(root.handle, gradient ? gradient.handle : null, retain, create),
  );
}

/** @internal Tensor.registerHook: see the Tensor method. */
export function registerTensorHook(tensor: Tensor, hook: GradHook): RemovableHandle {
  if (typeof hook !== 'function')
    throw new ArgumentError(`tailor: registerHook: hook must be a function, got ${typeof hook}`);
  if (!tensor.requiresGrad)
    throw new ArgumentError(
      'tailor: registerHook: the tensor does not require grad, so no gradient reaches it; call requiresGrad_() first (on a leaf) or hook a tensor computed from one',
    );
  ensureDispatcher();
  dropReleased();
  const id = nextHookId();
  const position = native.registerTensorHook(tensor.handle, id);
  entries.set(id, { kind: 'hook', hook, shape: tensor.shape });
  return new RemovableHandle(id, () => {
    entries.delete(id);
    if (!tensor.isDisposed) native.removeTensorHook(tensor.handle, position);
  });
}

/** @internal What applyJsFunction hands the engine besides the backward. */
export interface JsFunctionParts {
  /** The node's name, as gradFn shows it (`MyFunctionBackward`). */
  name: string;
  /** The tensor inputs, in order: the backward returns one gradient (or null) for each. */
  inputs: Tensor[];
  /** What forward computed, without a graph; an input itself may be among them. */
  outputs: Tensor[];
  saved: (Tensor | null)[];
  dirty: Tensor[];
  nonDifferentiable: Tensor[];
  materializeGrads: boolean;
  backward: JsBackward;
}

/**
 * @internal Makes `outputs` the outputs of a graph node whose backward is JavaScript (a libtorch
 * custom Function). Returns new tensors for them (an output that is an input comes back as a view
 * of it, as PyTorch's Function gives). The caller has checked that grad mode is on and an input
 * requires grad.
 */
export function applyJsFunction(parts: JsFunctionParts): Tensor[] {
  ensureDispatcher();
  dropReleased();
  const id = nextHookId();
  const handles = (ts: Tensor[]): number[] => ts.map((t) => t.handle);
  const made = native.functionApply(
    handles(parts.inputs),
    handles(parts.outputs),
    parts.saved.map((t) => (t === null ? null : t.handle)),
    handles(parts.dirty),
    handles(parts.nonDifferentiable),
    parts.materializeGrads,
    id,
    parts.name,
  );
  // Registered once the node exists (apply calls no JavaScript): a failed apply leaves no entry.
  entries.set(id, { kind: 'function', backward: parts.backward });
  return made.map((h) => new Tensor(h));
}

/**
 * @internal Hooks the gradients of `tensors` (each requiring grad) with an identity node: returns
 * views of them to use in their place. When a backward reaches the views, `hook` gets their
 * gradients (null where none arrived) and may replace them; the (replaced) gradients then go on
 * into the graph behind, within the same engine run (PyTorch's BackwardHookFunction).
 */
export function hookGradients(
  tensors: Tensor[],
  hook: (grads: (Tensor | null)[]) => (Tensor | null | undefined)[] | undefined,
): Tensor[] {
  return applyJsFunction({
    name: 'BackwardHookFunctionBackward',
    inputs: tensors,
    outputs: tensors,
    saved: [],
    dirty: [],
    nonDifferentiable: [],
    materializeGrads: false,
    backward: (_saved, grads) => {
      const replaced = hook(grads);
      return grads.map((g, i) => (replaced && replaced[i] !== undefined ? replaced[i] : g));
    },
  });
}
