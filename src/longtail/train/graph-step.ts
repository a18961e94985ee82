// Graph mode: the whole training step (forward, loss, backward, optimizer step, the device-side
// figures) captured once in a CUDA graph and replayed per batch, as PyTorch's whole-network
// capture does. What changes between replays lives in tensors updated in place before each
// replay: the batch (copied into static input tensors), the step number (for the figures), the
// learning rate (and AdamW's step count: the optimizer's capturable mode) and the loss constants
// (made once, cached). What changes rarely is captured again: when the loss's capture key changes
// (the DRW weights switching on), the graph is dropped and the next full batch captures a new one.
//
// The first WARMUP_STEPS full batches of a capture train eagerly on a side stream (libtorch's
// lazy initialisations, the optimizer's momentum buffers and the cached constants happen there,
// outside the capture); the capture itself runs nothing, so the batch it was made for is then
// trained by its first replay. A last partial batch trains eagerly. A capture that fails (an
// operation that reads back to the host, an operation CUDA cannot capture) logs one line naming
// the cause, and the run goes on eagerly.
//
// The warm-up steps and the capture run with branch streams (torch.withBranchStreams, unless
// TrainOptions.branchStreams is false): the step's independent parts (the experts of a
// multi-expert model, PRL's preference draws) each run on a CUDA stream of their own, so the graph
// holds them as parallel branches, and at a small batch, where one part's kernels use a small
// part of the GPU, they run side by side. A capture with branch streams that fails is tried again
// on one stream before the run turns eager.
import * as torch from '../../torch/index.js';
import type { Rng } from '../../util/rng.js';
import { cacheConstants } from '../losses/priors.js';
import { forwardBackward, trainStep, type StepContext, type StepInput } from './step.js';
import type { TrainOptions } from './train-options.js';

/** Eager steps on the side stream before each capture. */
export const WARMUP_STEPS = 3;

/** A captured step: replayed per batch, disposed when the run ends or the capture is redone. */
export interface CapturedStep {
  replay(): void;
  dispose(): void;
}

/** Where graphs come from: libtorch's CUDA graphs, or a stand-in in tests. */
export interface GraphBackend {
  /** Runs fn with a side stream current (captures and their warm-up steps run there). */
  onSideStream<T>(device: torch.Device, fn: () => T): T;
  /** Captures fn's kernels (runs nothing). */
  capture(device: torch.Device, fn: () => void): CapturedStep;
}

/** libtorch's CUDA graphs. */
export const cudaGraphBackend: GraphBackend = {
  onSideStream: (device, fn) => torch.onSideStream(device, fn),
  capture(device, fn) {
    const graph = new torch.CUDAGraph();
    try {
      torch.onSideStream(device, () => graph.capture(fn));
    } catch (e) {
      graph.dispose();
      throw e;
    }
    return { replay: () => graph.replay(), dispose: () => graph.dispose() };
  },
};

/**
 * Why this run's step cannot be captured, or null when it can. Each reason names what keeps the
 * step eager (see docs/gpus.md).
 */
export function graphBlocker(o: TrainOptions, ctx: StepContext): string | null {
  if (ctx.ddp) return 'data-parallel steps stay eager (the gradient allreduce is not captured)';
  if (ctx.scaler)
    return 'fp16 autocast reads its gradient scale back to the host every step (use --amp bf16)';
  return null;
}

/** The static tensors a capture reads: the batch, its labels, mixup's partner and weight, the host draws, the step number. */
interface StaticInputs {
  x: torch.Tensor;
  y: torch.Tensor;
  yB: torch.Tensor | null;
  lam: torch.Tensor | null;
  draws: torch.Tensor | null;
  step: torch.Tensor;
  n: number;
}

/** Runs a run's training steps in graph mode (see the file comment). */
export class GraphedSteps {
  private captured: CapturedStep | null = null;
  private statics: StaticInputs | null = null;
  private key: string | null = null;
  private warm = 0;
  private failed: string | null = null;
  /** Whether grads hold the capture's static gradient tensors (to clear before an eager step). */
  private gradsFromCapture = false;
  /** How many steps were replayed from a graph (for the run's record). */
  replays = 0;
  /** Whether the graph-mode steps run their independent parts on streams of their own. */
  private streams: boolean;

  constructor(
    private readonly o: TrainOptions,
    /** The run's step context (its `graphed` is null: the eager steps here must not recurse). */
    private readonly ctx: StepContext,
    private readonly backend: GraphBackend,
    private readonly log: (line: string) => void,
  ) {
    o.optimizer.capturable = true;
    cacheConstants(true);
    this.streams = o.branchStreams ?? true;
  }

  /** Whether the captured step runs its independent parts on CUDA streams of their own. */
  get branchStreams(): boolean {
    return this.streams;
  }

  /** The reason graph mode gave up (null while it works). */
  get failure(): string | null {
    return this.failed;
  }

  /** One training step on the batch `input` makes. */
  step(input: () => StepInput, rng: Rng, step: number): void {
    if (this.failed) {
      this.eager({ input, rng, step }, false);
      return;
    }
    const key = this.o.system.loss.captureKey?.() ?? '';
    if (this.captured && key !== this.key) this.drop();
    torch.tidy(() => {
      // the host draws in eager mode's order: the batch (mixup's), then the forward's (PRL's)
      const batch = input();
      const drawn = this.o.system.hostDraws?.draw(rng) ?? null;
      const draws = drawn && torch.tensor(Float32Array.from(drawn), { device: this.o.system.device });
      if (this.statics !== null && batch.n !== this.statics.n) {
        this.eager({ input: () => batch, rng, step, draws }, false);
        return;
      }
      const statics = this.load(batch, draws, step);
      if (!this.captured && this.warm < WARMUP_STEPS) {
        this.warm++;
        this.eager({ input: () => statics, rng, step, draws: this.statics!.draws }, true);
        return;
      }
      if (!this.captured) {
        if (!this.capture(statics, rng)) {
          this.eager({ input: () => batch, rng, step, draws }, false);
          return;
        }
        this.key = key;
      }
      this.captured!.replay();
      this.replays++;
    });
  }

  /** Frees the graph, the static inputs and the cached constants; the optimizer turns eager again. */
  dispose(): void {
    this.drop();
    const s = this.statics;
    if (s) torch.dispose([s.x, s.y, s.yB, s.lam, s.draws, s.step].filter((t) => t !== null));
    this.statics = null;
    cacheConstants(false);
    this.o.optimizer.capturable = false;
  }

  private drop(): void {
    this.captured?.dispose();
    this.captured = null;
    this.warm = WARMUP_STEPS - 1;
  }

  /** An eager step (on the side stream while warming up for a capture). */
  private eager(
    s: { input: () => StepInput; rng: Rng; step: number; draws?: torch.Tensor | null },
    onSide: boolean,
  ): void {
    if (this.gradsFromCapture) {
      this.o.optimizer.zeroGrad();
      this.gradsFromCapture = false;
    }
    // a partial batch in a later epoch than the last full one may need this epoch's rate
    this.o.optimizer.syncLearningRates();
    const run = () => trainStep(this.o, this.ctx, s);
    // the warm-up steps on the branch streams too: what libtorch sets up per stream (cuBLAS
    // workspaces) is then in place before the capture
    if (onSide) this.backend.onSideStream(this.o.system.device, () => this.withStreams(run));
    else run();
  }

  /** Runs fn with branch streams as graph mode has them. */
  private withStreams<T>(fn: () => T): T {
    return torch.withBranchStreams(this.streams, fn);
  }

  /**
   * Copies the batch, mixup's partner and weight, the host draws and the step number into the
   * static inputs (made at the first full batch); returns the step input that reads them.
   */
  private load(batch: StepInput, draws: torch.Tensor | null, step: number): StepInput {
    const device = this.o.system.device;
    const mixup = this.o.mixupAlpha !== undefined && this.o.mixupAlpha > 0;
    const s = (this.statics ??= {
      // a copy of the first batch: the same shape, dtype, device and memory format (channels-last too)
      x: torch.keep(torch.noGrad(() => batch.x.detach().clone())),
      y: torch.keep(torch.zeros(batch.yA.shape, batch.yA.dtype, device)),
      yB: mixup ? torch.keep(torch.zeros(batch.yA.shape, batch.yA.dtype, device)) : null,
      // float64, as the number it stands for: 1 - lam rounds as in eager mode
      lam: mixup ? torch.keep(torch.zeros([], 'float64', device)) : null,
      draws: draws ? torch.keep(torch.zeros(draws.shape, 'float32', device)) : null,
      step: torch.keep(torch.zeros([], 'float64', device)),
      n: batch.n,
    });
    torch.noGrad(() => {
      s.x.copy_(batch.x);
      s.y.copy_(batch.yA);
      s.yB?.copy_(batch.yB ?? batch.yA);
      s.lam?.fill_(typeof batch.lam === 'number' ? batch.lam : batch.lam.item());
      if (draws) s.draws?.copy_(draws);
      s.step.fill_(step);
    });
    this.o.optimizer.syncLearningRates();
    return { x: s.x, yA: s.y, yB: s.yB, lam: s.lam ?? 1, n: s.n };
  }

  /**
   * Captures the step on the static inputs; false (with one line naming why) when it cannot. A
   * capture with branch streams that fails is tried once more on one stream.
   */
  private capture(input: StepInput, rng: Rng): boolean {
    let error = this.tryCapture(input, rng);
    if (error !== null && this.streams) {
      this.log(
        `graph mode: the step with branch streams (a CUDA stream per expert or preference draw) could not be captured (${error}); capturing it on one stream`,
      );
      this.streams = false;
      error = this.tryCapture(input, rng);
    }
    if (error === null) {
      this.gradsFromCapture = true;
      return true;
    }
    // from here on the steps are plain eager ones: the rate as a number, constants made per step
    this.o.optimizer.capturable = false;
    cacheConstants(false);
    this.failed = `the step could not be captured in a CUDA graph (${error})`;
    this.log(`graph mode: ${this.failed}; training on eagerly`);
    return false;
  }

  /** One capture of the step: null when it worked, else the error's first line. */
  private tryCapture(input: StepInput, rng: Rng): string | null {
    const { o, ctx } = this;
    const s = this.statics!;
    o.optimizer.zeroGrad();
    try {
      this.captured = this.withStreams(() =>
        this.backend.capture(o.system.device, () => {
          // The gradients are none here, so the backward makes them afresh (as every replay then
          // does); inside a real capture this clears nothing, for a stand-in that reruns the step
          // it does what the capture recorded.
          o.optimizer.zeroGrad();
          torch.tidy(() => forwardBackward(o, ctx, input, { rng, step: s.step, draws: s.draws }));
          o.optimizer.step();
        }),
      );
      return null;
    } catch (e) {
      o.optimizer.zeroGrad();
      return (e as Error).message.split('\n')[0]!;
    }
  }
}
