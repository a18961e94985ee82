// CUDA graphs (torch.cuda.CUDAGraph, torch.cuda.graph): a stream's kernels captured once and
// replayed with one launch, so that a launch-bound step (many small kernels, as a ResNet-32 at
// batch 128) no longer waits for the CPU to issue them. A capture records kernels, it runs none:
// whatever the captured code reads must live in tensors whose memory stays put (static inputs,
// parameters, optimizer state, learning rates as device tensors) and be updated in place between
// replays; a host number used inside the captured code is frozen at its capture-time value, and a
// read back to the host (item(), toArray()) inside a capture is an error.
import { native } from './native.js';
import { parseDevice, type DeviceLike } from './device.js';
import { UserError } from '../util/errors.js';

/** A capture was asked for where CUDA graphs cannot run (the message says why). */
export class CudaGraphUnavailableError extends UserError {}

/** Whether CUDA graphs can be captured here; `reason` says why not. */
export function cudaGraphsInfo(): { available: boolean; reason?: string } {
  const addon = native as Partial<typeof native>;
  if (typeof addon.cudaGraphsInfo !== 'function')
    return {
      available: false,
      reason: 'the native addon predates CUDA graphs; rebuild it (npm run build:native)',
    };
  const info = native.cudaGraphsInfo();
  return info.available ? { available: true } : { available: false, reason: info.reason ?? 'unknown' };
}

/**
 * Runs `fn` with a side stream of `device` current: the side stream first waits for the work
 * queued on the current stream, and afterwards the current stream waits for the side stream's
 * (torch.cuda.stream with wait_stream on both sides). Captures must run off the default stream.
 */
export function onSideStream<T>(device: DeviceLike, fn: () => T): T {
  native.cudaSideStreamEnter(parseDevice(device).name);
  try {
    return fn();
  } finally {
    native.cudaSideStreamExit();
  }
}

/**
 * A captured CUDA graph (torch.cuda.CUDAGraph), with its own private memory pool.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * if (torch.cudaGraphsInfo().available) {
 *   const x = torch.keep(torch.zeros([4], 'float32', 'cuda'));
 *   const y = torch.keep(torch.zeros([4], 'float32', 'cuda'));
 *   const graph = new torch.CUDAGraph();
 *   torch.onSideStream('cuda', () => graph.capture(() => torch.tidy(() => y.copy_(x.mul(2).add(1)))));
 *   x.copy_(torch.ones([4]));
 *   graph.replay(); // y is now 3 everywhere
 *   graph.dispose();
 * }
 * ```
 */
export class CUDAGraph {
  private handle: number | null;
  private captured = false;

  constructor() {
    const info = cudaGraphsInfo();
    if (!info.available) throw new CudaGraphUnavailableError(`CUDA graphs are not available: ${info.reason}`);
    this.handle = native.cudaGraphNew();
  }

  /**
   * Captures the kernels `fn` queues on the current stream (which must be a side stream: see
   * onSideStream). Nothing runs; on an error the capture is ended and the graph reset.
   */
  capture(fn: () => void): void {
    const h = this.live();
    if (this.captured) throw new Error('CUDAGraph.capture: already captured; reset() it first');
    native.cudaGraphCall(h, 'begin');
    try {
      fn();
    } catch (e) {
      try {
        native.cudaGraphCall(h, 'end');
      } catch {
        // the capture was already invalidated by the error that got us here
      }
      native.cudaGraphCall(h, 'reset');
      throw e;
    }
    native.cudaGraphCall(h, 'end');
    this.captured = true;
  }

  /** Launches the captured kernels on the current stream. */
  replay(): void {
    if (!this.captured) throw new Error('CUDAGraph.replay: nothing was captured');
    native.cudaGraphCall(this.live(), 'replay');
  }

  /** Drops the capture (its memory pool is released); the graph can capture again. */
  reset(): void {
    native.cudaGraphCall(this.live(), 'reset');
    this.captured = false;
  }

  /** Frees the graph and its memory pool; the object cannot be used again. */
  dispose(): void {
    if (this.handle !== null) native.cudaGraphDispose(this.handle);
    this.handle = null;
    this.captured = false;
  }

  private live(): number {
    if (this.handle === null) throw new Error('CUDAGraph: used after dispose()');
    return this.handle;
  }
}
