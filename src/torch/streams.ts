// Independent branches of work on CUDA streams of their own (torch.cuda.stream per branch, with
// wait_stream both ways), so that their kernels can run on the GPU at the same time; in a
// captured CUDA graph they become parallel branches of the graph. Autograd runs each backward
// operator on its forward operator's stream and joins the streams itself, so the branches'
// backward passes are parallel too.
//
// onParallelStreams always uses streams (on a CUDA device). parallelBranches uses them only
// inside withBranchStreams(true, ...), a mode like autocast: code with independent parts (a
// multi-expert model's experts, PRL's preference draws) calls parallelBranches, and whoever
// runs that code decides whether the parts go on streams (graph mode's capture does).
import { native } from './native.js';
import { checksOf } from '../util/arguments.js';
import { checkDevice, type DeviceLike } from './device.js';
import { Tensor } from './tensor.js';
import { isAutocastActive } from './amp.js';

/** What a branch returns: a tensor, or tensors in an array or an object's values (one level). */
export type BranchResult = Tensor | readonly Tensor[] | { readonly [key: string]: Tensor | undefined };

function tensorsOf(result: BranchResult): Tensor[] {
  if (result instanceof Tensor) return [result];
  const values = Array.isArray(result) ? result : Object.values(result);
  return values.filter((t): t is Tensor => t instanceof Tensor);
}

/**
 * Runs independent branches of work, each on a CUDA stream of its own: every branch stream
 * first waits for the work queued on the current stream, and the current stream afterwards waits
 * for every branch. The branches run one after another on the host, in order; each returns the
 * tensors the rest of the work reads (marked as used on the current stream, so their memory is
 * not reused under it). On a device without streams (the CPU) they simply run in order. Pays
 * where each branch's kernels fill a small part of the GPU (a multi-expert model's experts at a
 * small batch, replayed from a CUDA graph); eagerly, the host's launches are the limit anyway.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const device = torch.cuda.isAvailable() ? 'cuda' : 'cpu';
 * const x = torch.randn([8, 16], 'float32', device);
 * const weights = [torch.randn([16, 4], 'float32', device), torch.randn([16, 4], 'float32', device)];
 * const [a, b] = torch.onParallelStreams(device, weights.map((w) => () => x.matmul(w).relu()));
 * console.log(a!.shape, b!.shape); // [8, 4] [8, 4]
 * ```
 */
export function onParallelStreams<T extends BranchResult>(
  device: DeviceLike,
  branches: ReadonlyArray<() => T>,
): T[] {
  const d = checkDevice(device);
  if (d.type !== 'cuda' || branches.length < 2) return branches.map((branch) => branch());
  native.cudaBranchStreamsFork(d.name, branches.length);
  const results: T[] = [];
  try {
    branches.forEach((branch, i) => {
      native.cudaBranchStreamUse(i);
      results.push(branch());
    });
  } finally {
    // on an error too: the current stream is the original one again
    const outputs = results.flatMap(tensorsOf).filter((t) => !t.isDisposed);
    native.cudaBranchStreamsJoin(outputs.map((t) => t.handle));
  }
  return results;
}

let branchStreams = false;

/** Whether parallelBranches puts branches on streams here (inside withBranchStreams(true, ...)). */
export function branchStreamsEnabled(): boolean {
  return branchStreams;
}

/**
 * Runs fn with parallelBranches on streams (`on`) or in order on the current stream (not on);
 * the mode before is restored afterwards.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const x = torch.ones([4]);
 * const parts = torch.withBranchStreams(true, () =>
 *   torch.parallelBranches('cpu', [() => x.mul(2), () => x.add(1)]),
 * );
 * console.log(parts.map((t) => t.sum().item())); // [8, 8]
 * ```
 */
export function withBranchStreams<T>(on: boolean, fn: () => T): T {
  const c = checksOf('tailor: withBranchStreams');
  if (typeof on !== 'boolean') c.fail('on', 'a boolean', on);
  if (typeof fn !== 'function') c.fail('fn', 'a function (the work to run)', fn);
  const before = branchStreams;
  branchStreams = on;
  try {
    return fn();
  } finally {
    branchStreams = before;
  }
}

/** How branches relate to each other, for parallelBranches. */
export interface BranchOptions {
  /**
   * The branches use the same parameters (a hypernetwork called once per branch). Autocast
   * keeps one cast of each parameter per region, made on the stream of the first branch that
   * uses it, which the other branches would read unsynchronised: inside autocast such branches
   * run in order.
   */
  sharedParameters?: boolean;
}

/**
 * Independent branches of work: on CUDA streams of their own (onParallelStreams) inside
 * withBranchStreams(true, ...), else in order on the current stream. Either way the same
 * operators run on the same data, so the results are the same.
 */
export function parallelBranches<T extends BranchResult>(
  device: DeviceLike,
  branches: ReadonlyArray<() => T>,
  options: BranchOptions = {},
): T[] {
  const c = checksOf('tailor: parallelBranches');
  for (const [i, branch] of c.array(branches, 'branches').entries())
    if (typeof branch !== 'function') c.fail(`branches[${i}]`, 'a function', branch);
  const { sharedParameters } = c.object(options, 'options') as BranchOptions;
  const streams = branchStreams && !(sharedParameters && isAutocastActive());
  return streams ? onParallelStreams(device, branches) : branches.map((branch) => branch());
}
