// Gradient hooks without engine callbacks. libtorch runs backward in C++ and the addon has no way
// to call JavaScript from inside it, so hooks that must see (and may replace) a gradient midway
// are made by cutting the graph: the hooked tensor's uses are given a detached leaf instead (a
// "segment" boundary), and `Tensor.backward` runs the engine once per segment, latest first,
// handing each boundary's gradient to its hook before sending it on into the graph behind it.
// Gradients of leaves (parameters) are hooked without a cut: their `.grad` is set aside before the
// engine runs and the new gradient passes through the hooks before it is added back.
// Retained gradients (Tensor.retainGrad) are libtorch's own and add up over the engine runs of one
// backward, as over several backwards; only a cut's stand-in leaf (a hooked module's output, a
// non-leaf in PyTorch) has its retained gradient kept here (see retainStandInGrad).
import { native } from './native.js';
import { Tensor } from './tensor.js';
import { tidy } from './scope.js';
import { ArgumentError } from '../util/arguments.js';
import { RemovableHandle, nextHookId } from './hook-handle.js';

/** A gradient hook: the replacement gradient, or undefined to keep it. */
export type GradHook = (grad: Tensor) => Tensor | undefined | void;

/** What a segment's hook returns: replacements aligned with the gradients it was given. */
type SegmentHook = (grads: (Tensor | null)[]) => (Tensor | null | undefined)[] | undefined;

interface Segment {
  /** Owned shared handles: the tensors whose graphs continue behind the cut. */
  readonly originals: number[];
  /** Owned shared handles to the detached leaves that stand for them in front of the cut. */
  readonly leaves: number[];
  readonly hook: SegmentHook;
  /** Per leaf: whether its stand-in's gradient is retained (Tensor.retainGrad on it). */
  readonly retained: boolean[];
}

const segments = new Map<number, Segment>();
let nextSegment = 0;
const leafHooks = new Map<Tensor, Map<number, GradHook>>();
const afterRun: (() => void)[] = [];
/** The stand-in leaves cutGraph handed out: their segment and position in it. */
const standIns = new WeakMap<Tensor, { segment: Segment; index: number }>();
/** Stand-ins whose gradient is retained (they keep answering retainsGrad after their segment goes). */
const retainedStandIns = new WeakSet<Tensor>();

/** @internal Runs `fn` when the backward now running ends (to free what its hooks held). */
export function afterBackward(fn: () => void): void {
  afterRun.push(fn);
}

/**
 * @internal Cuts the graph after `tensors` (each requiring grad): returns detached leaves to use
 * in their place. When a backward reaches the leaves, `hook` gets their gradients (null where
 * none arrived) and may replace them; the (replaced) gradients then continue into the graph
 * behind. The segment lives until a backward without retainGraph passes through it.
 */
export function cutGraph(tensors: Tensor[], hook: SegmentHook): Tensor[] {
  const leaves = tensors.map((t) => t.detach().requiresGrad_());
  const segment: Segment = {
    originals: tensors.map((t) => native.share(t.handle)),
    leaves: leaves.map((t) => native.share(t.handle)),
    hook,
    retained: leaves.map(() => false),
  };
  segments.set(nextSegment++, segment);
  leaves.forEach((t, index) => standIns.set(t, { segment, index }));
  return leaves;
}

/**
 * @internal Tensor.retainGrad for a cut's stand-in leaf (what a module with backward hooks returns
 * in place of its output, a non-leaf in PyTorch): marks its gradient as retained, and answers
 * whether `tensor` is such a stand-in. The engine sees a leaf, whose gradient the segment takes
 * for its hook; runBackward gives the stand-in that gradient as it arrived, before any hook
 * replaces it, added up over backwards as libtorch's retained gradients are.
 */
export function retainStandInGrad(tensor: Tensor): boolean {
  const at = standIns.get(tensor);
  if (!at || ![...segments.values()].includes(at.segment)) return false;
  at.segment.retained[at.index] = true;
  retainedStandIns.add(tensor);
  return true;
}

/** @internal Whether retainStandInGrad marked `tensor`. */
export function standInRetainsGrad(tensor: Tensor): boolean {
  return retainedStandIns.has(tensor);
}

/** @internal How many segments wait for a backward (for tests and leak reports). */
export function pendingSegments(): number {
  return segments.size;
}

function release(key: number, segment: Segment): void {
  segments.delete(key);
  native.dispose([...segment.originals, ...segment.leaves]);
}

/** @internal Tensor.backward with the hooks: see the file comment. */
export function runBackward(
  root: Tensor,
  gradient: Tensor | undefined,
  retain: boolean,
  create: boolean,
): void {
  if (segments.size === 0 && leafHooks.size === 0) {
    native.backward(root.handle, gradient ? gradient.handle : null, retain, create);
    return;
  }
  // Leaves' gradients so far, set aside so the hooks see this backward's gradient alone.
  const setAside = new Map<Tensor, number | null>();
  for (const t of [...leafHooks.keys()]) {
    if (t.isDisposed) {
      leafHooks.delete(t);
      continue;
    }
    setAside.set(t, native.grad(t.handle));
    native.setGrad(t.handle, null);
  }
  // Retained stand-ins: an owned handle to each, with its gradient so far (the total to come).
  const retained = new Map<number, { own: number; total: number | null }>();
  for (const segment of segments.values())
    segment.leaves.forEach((h, i) => {
      if (!segment.retained[i]) return;
      const own = native.share(h);
      retained.set(h, { own, total: native.grad(own) });
      native.setGrad(own, null);
    });
  try {
    native.backward(root.handle, gradient ? gradient.handle : null, retain, create);
    // Latest first: a segment's leaves get gradients only from graphs built after them.
    for (const [key, segment] of [...segments.entries()].reverse()) {
      if (!segments.has(key)) continue;
      const handles = segment.leaves.map((h) => native.grad(h));
      if (handles.every((h) => h === null)) continue;
      for (const h of segment.leaves) native.setGrad(h, null);
      tidy(() => {
        const grads = handles.map((h) => (h === null ? null : new Tensor(h)));
        grads.forEach((g, i) => {
          const entry = retained.get(segment.leaves[i]!);
          if (!entry || !g) return;
          // As libtorch's retain_grad: a copy the first time, a sum after.
          const sum = entry.total === null ? g.clone() : new Tensor(entry.total).add(g);
          entry.total = native.share(sum.handle);
        });
        // Hooks run as PyTorch runs them in backward: recording a graph only with createGraph.
        const mode = native.isGradEnabled();
        native.setGradEnabled(create);
        let replaced: ReturnType<SegmentHook>;
        try {
          replaced = segment.hook(grads);
        } finally {
          native.setGradEnabled(mode);
        }
        const outs = grads.map((g, i) => (replaced && replaced[i] !== undefined ? replaced[i] : g));
        const pairs: [number, Tensor][] = [];
        outs.forEach((g, i) => {
          if (g) pairs.push([segment.originals[i], g]);
        });
        if (pairs.length === 1) native.backward(pairs[0][0], pairs[0][1].handle, retain, create);
        else if (pairs.length > 1) {
          // One engine run for all of them: two runs over a shared graph would free it after the first.
          const total = pairs
            .map(([h, g]) => new Tensor(native.share(h)).mul(create ? g : g.detach()).sum())
            .reduce((a, b) => a.add(b));
          native.backward(total.handle, null, retain, create);
        }
      });
      if (!retain) release(key, segment);
    }
  } catch (error) {
    // An abandoned backward cannot be resumed: without retainGraph the graphs behind the cuts
    // are partly freed, so every waiting segment goes.
    if (!retain) for (const [key, segment] of [...segments]) release(key, segment);
    throw error;
  } finally {
    for (const fn of afterRun.splice(0)) fn();
    for (const { own, total } of retained.values()) {
      native.setGrad(own, total);
      native.dispose(total === null ? [own] : [own, total]);
    }
    for (const [t, before] of setAside) {
      tidy(() => {
        const now = native.grad(t.handle);
        let g = now === null ? null : new Tensor(now);
        if (g) for (const hook of [...(leafHooks.get(t)?.values() ?? [])]) g = hook(g) ?? g;
        const total = before === null ? g : g ? new Tensor(before).add(g) : new Tensor(before);
        native.setGrad(t.handle, total ? total.handle : null);
      });
    }
  }
}

/** @internal Tensor.registerHook: see the Tensor method. */
export function registerTensorHook(tensor: Tensor, hook: GradHook): RemovableHandle {
  if (typeof hook !== 'function')
    throw new ArgumentError(`tailor: registerHook: hook must be a function, got ${typeof hook}`);
  if (!tensor.requiresGrad)
    throw new ArgumentError(
      'tailor: registerHook: the tensor does not require grad, so no gradient reaches it; call requiresGrad_() first (on a leaf) or hook a tensor computed from one',
    );
  if (!tensor.isLeaf)
    throw new ArgumentError(
      'tailor: registerHook: only leaf tensors (parameters, inputs made with requiresGrad_()) take tensor hooks; for a layer output use the module hooks registerFullBackwardHook or registerFullBackwardPreHook',
    );
  let hooks = leafHooks.get(tensor);
  if (!hooks) leafHooks.set(tensor, (hooks = new Map()));
  const id = nextHookId();
  hooks.set(id, hook);
  return new RemovableHandle(id, () => {
    hooks.delete(id);
    if (hooks.size === 0 && leafHooks.get(tensor) === hooks) leafHooks.delete(tensor);
  });
}

/**
 * @internal autograd.grad's check: the engine alone would stop at a cut, so a grad whose outputs
 * reach a live segment is refused rather than answered without the graph behind it.
 */
export function checkNoSegments(outputs: Tensor[], gradOutputs: Tensor[] | undefined): void {
  if (segments.size === 0) return;
  const leaves = [...segments.values()].flatMap((s) => s.leaves);
  const reached = native.autogradGrad(
    outputs.map((t) => t.handle),
    leaves,
    gradOutputs ? gradOutputs.map((t) => t.handle) : null,
    true,
    false,
    true,
  );
  const hit = reached.some((h) => h !== null);
  native.dispose(reached.filter((h): h is number => h !== null));
  if (hit)
    throw new ArgumentError(
      'tailor: autograd.grad: the outputs depend on a module with backward hooks, which autograd.grad cannot pass through; use backward() and read .grad, or remove the hooks first',
    );
}
