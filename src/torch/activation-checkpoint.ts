// Activation checkpointing (torch.utils.checkpoint, its reentrant form): a segment of a model runs
// without keeping its intermediate activations, and runs again during backward, with grad mode
// on and the random generators as they were, to compute its gradients. Memory for compute, as
// large images and deep backbones need. It is an autograd.Function whose backward runs a nested
// backward through the recomputed segment (JavaScript inside the engine: autograd-hooks.ts).
import { Tensor } from './tensor.js';
import { Function, type FunctionCtx } from './autograd-function.js';
import { enableGrad } from './autograd.js';
import { currentEngineCall } from './autograd-hooks.js';
import { getRngState, setRngState } from './creation.js';
import { native } from './native.js';
import { tidy } from './scope.js';
import { ArgumentError, checksOf, describeValue } from '../util/arguments.js';

/** Options of {@link checkpoint} (PyTorch's keyword arguments). */
export interface CheckpointOptions {
  /**
   * Restore the CPU generator and those of the CUDA devices of the tensor arguments for the
   * recomputation, so that dropout draws the same masks as in forward (default true, as
   * PyTorch's preserve_rng_state).
   */
  preserveRngState?: boolean;
}

/** A checkpointed segment: tensors (and other values) in, a tensor or an array of tensors out. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CheckpointFunction<R extends Tensor | Tensor[]> = (...args: any[]) => R;

interface RngSnapshot {
  cpu: Uint8Array;
  devices: [string, Uint8Array][];
}

function rngSnapshot(args: unknown[]): RngSnapshot {
  const devices = new Set<string>();
  for (const a of args) if (a instanceof Tensor && a.device.type === 'cuda') devices.add(a.device.name);
  return { cpu: getRngState(), devices: [...devices].map((d) => [d, native.getDeviceRngState(d)]) };
}

function rngRestore(s: RngSnapshot): void {
  setRngState(s.cpu);
  for (const [d, state] of s.devices) native.setDeviceRngState(d, state);
}

let warnedNoGrad = false;

class Checkpointed extends Function {
  static forward(
    ctx: FunctionCtx,
    run: CheckpointFunction<Tensor | Tensor[]>,
    preserve: boolean,
    ...args: unknown[]
  ): Tensor | Tensor[] {
    ctx.run = run;
    ctx.rng = preserve ? rngSnapshot(args) : null;
    ctx.args = args;
    ctx.saveForBackward(...args.filter((a): a is Tensor => a instanceof Tensor));
    // The segment's intermediate tensors go at once: keeping them is what checkpointing avoids.
    return tidy(() => checkOutput(run(...args)));
  }

  static backward(ctx: FunctionCtx, ...grads: (Tensor | null)[]): (Tensor | null)[] {
    if (currentEngineCall() === 'grad')
      throw new ArgumentError(
        "tailor: utils.checkpoint.checkpoint: a checkpointed segment cannot be differentiated by autograd.grad (as PyTorch's reentrant checkpoint); use backward() and read .grad",
      );
    const saved = ctx.savedTensors;
    let k = 0;
    // The saved inputs, detached: the recomputation's graph starts at them, and their .grad is
    // what this backward hands on.
    const inputs = (ctx.args as unknown[]).map((a) => {
      if (!(a instanceof Tensor)) return a;
      const t = saved[k++]!;
      return t.detach().requiresGrad_(t.requiresGrad);
    });
    const rng = ctx.rng as RngSnapshot | null;
    const now = rng ? rngSnapshot(inputs) : null;
    try {
      if (rng) rngRestore(rng);
      enableGrad(() =>
        tidy(() => {
          // a scope of its own, so that the segment's intermediate handles go before its backward
          const out = tidy(() => checkOutput((ctx.run as CheckpointFunction<Tensor | Tensor[]>)(...inputs)));
          const outputs = Array.isArray(out) ? out : [out];
          const pairs = outputs.flatMap((o, i) =>
            o.requiresGrad && grads[i] ? [[o, grads[i]!] as const] : [],
          );
          if (pairs.length === 0)
            throw new ArgumentError(
              'tailor: utils.checkpoint.checkpoint: no output of the segment requires grad, so it needs no checkpoint',
            );
          // One backward for all outputs: two over a shared graph would free it after the first.
          const total = pairs.map(([o, g]) => o.mul(g.detach()).sum()).reduce((a, b) => a.add(b));
          total.backward();
        }),
      );
    } finally {
      if (now) rngRestore(now);
    }
    return [null, null, ...inputs.map((a) => (a instanceof Tensor ? a.grad : null))];
  }
}

function checkOutput(out: unknown): Tensor | Tensor[] {
  if (
    out instanceof Tensor ||
    (Array.isArray(out) && out.length > 0 && out.every((o) => o instanceof Tensor))
  )
    return out as Tensor | Tensor[];
  throw new ArgumentError(
    `tailor: utils.checkpoint.checkpoint: the function must return a Tensor or a non-empty array of Tensors, got ${describeValue(out)}`,
  );
}

/**
 * Runs `fn(...args)` without keeping its intermediate activations for backward, and runs it
 * again in backward to compute its gradients (torch.utils.checkpoint.checkpoint, the reentrant
 * form: `checkpoint(f, x, y)` in PyTorch is `checkpoint(f, [x, y])` here). The parameters `fn`
 * uses get their gradients in that second run. As in PyTorch: at least one tensor argument must
 * require grad (otherwise nothing is recorded and the parameters get no gradient: a warning says
 * so once), the segment cannot be differentiated by `autograd.grad` (a named error), and the
 * random generators are restored for the second run unless `preserveRngState` is false.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * import { nn, utils } from 'tailor/torch';
 * const block = new nn.Sequential(new nn.Linear(16, 64), new nn.ReLU(), new nn.Linear(64, 16));
 * const x = torch.randn([8, 16]).requiresGrad_();
 * torch.tidy(() => {
 *   const y = utils.checkpoint.checkpoint((t: torch.Tensor) => block.forward(t), [x]);
 *   y.square().mean().backward(); // block's parameters get their .grad here
 * });
 * ```
 */
export function checkpoint<R extends Tensor | Tensor[]>(
  fn: CheckpointFunction<R>,
  args: readonly unknown[] = [],
  options: CheckpointOptions = {},
): R {
  const c = checksOf('utils.checkpoint.checkpoint');
  if (typeof fn !== 'function') c.fail('fn', 'a function', fn);
  if (!Array.isArray(args)) c.fail('args', 'an array of the arguments of fn', args);
  if (options === null || typeof options !== 'object') c.fail('options', 'an object', options);
  const preserve = options.preserveRngState ?? true;
  if (typeof preserve !== 'boolean') c.fail('options.preserveRngState', 'a boolean', preserve);
  if (!warnedNoGrad && !args.some((a) => a instanceof Tensor && a.requiresGrad)) {
    warnedNoGrad = true;
    process.emitWarning(
      'utils.checkpoint.checkpoint: no tensor argument requires grad, so the segment records nothing and its parameters get no gradient (make an input require grad)',
      { code: 'TAILOR_CHECKPOINT_NO_GRAD' },
    );
  }
  return Checkpointed.apply(fn, preserve, ...args) as R;
}

/**
 * Runs `functions` (modules, or functions of one tensor) in sequence on `input`, in `segments`
 * checkpointed chunks but the last, which runs normally
 * (torch.utils.checkpoint.checkpoint_sequential); `[...sequential.children()]` passes a
 * Sequential's layers.
 */
export function checkpointSequential(
  functions: readonly (((x: Tensor) => Tensor) | object)[],
  segments: number,
  input: Tensor,
  options: CheckpointOptions = {},
): Tensor {
  const c = checksOf('utils.checkpoint.checkpointSequential');
  if (!Array.isArray(functions) || functions.length === 0)
    c.fail('functions', 'a non-empty array of modules or functions', functions);
  functions.forEach((f, i) => {
    if (typeof f !== 'function' && typeof (f as { forward?: unknown }).forward !== 'function')
      c.fail(`functions[${i}]`, 'a module (with forward) or a function', f);
  });
  if (!Number.isInteger(segments) || segments < 1) c.fail('segments', 'a positive integer', segments);
  if (!(input instanceof Tensor)) c.fail('input', 'a Tensor', input);
  const call = (f: (typeof functions)[number], x: Tensor): Tensor => {
    const y: unknown =
      typeof f === 'function'
        ? (f as (x: Tensor) => unknown)(x)
        : (f as { forward(x: Tensor): unknown }).forward(x);
    if (!(y instanceof Tensor))
      throw new ArgumentError(
        `tailor: utils.checkpoint.checkpointSequential: each function must return a Tensor, got ${describeValue(y)}`,
      );
    return y;
  };
  const size = Math.floor(functions.length / segments);
  // Each intermediate output is freed as soon as the next exists (as Sequential does): autograd
  // keeps what backward needs, and a handle held to the end would keep the rest.
  const runRange = (start: number, end: number) => (x: Tensor) => {
    let y = x;
    for (let i = start; i <= end; i++) {
      const next = call(functions[i]!, y);
      if (y !== x && next !== y) y.dispose();
      y = next;
    }
    return y;
  };
  let end = -1;
  let x = input;
  for (let start = 0; start < size * (segments - 1); start += size) {
    end = start + size - 1;
    x = checkpoint(runRange(start, end), [x], options);
  }
  return runRange(end + 1, functions.length - 1)(x);
}
