// Mixed precision: libtorch's autocast (operators run in bf16/fp16 where that is safe, the rest in
// fp32, by libtorch's own per-operator lists) and a gradient scaler for fp16, whose small range
// would flush gradients to zero without one. bf16 needs no scaler.
import { UserError } from '../util/errors.js';
import { describeValue } from '../util/arguments.js';
import { native } from './native.js';
import { dtypeCode } from './dtype.js';
import { parseDevice, type DeviceLike } from './device.js';
import { noGrad } from './autograd.js';
import { tidy } from './scope.js';
import type { Tensor } from './tensor.js';
import type { Optimizer } from './optim/optimizer.js';

/** The mixed-precision modes: 'bf16' (bfloat16 autocast) and 'fp16' (float16 autocast with a GradScaler). */
export type AmpMode = 'bf16' | 'fp16';

export class AmpUnsupportedError extends UserError {
  constructor(message: string) {
    super(`AmpUnsupportedError: ${message}`);
  }
}

/** Checks an --amp value against the device; throws AmpUnsupportedError naming the remedy. */
export function checkAmp(mode: string, device: DeviceLike): AmpMode {
  if (mode !== 'bf16' && mode !== 'fp16') {
    // described, not interpolated: a nested array's string would overflow the stack
    throw new AmpUnsupportedError(`unknown mode ${describeValue(mode)} (expected bf16 or fp16)`);
  }
  const { type } = parseDevice(device);
  if (type === 'cpu' && mode === 'fp16') {
    throw new AmpUnsupportedError(
      'fp16 autocast is not supported on the CPU by this libtorch; use --amp bf16 on the CPU, or fp16 on a CUDA device (--device cuda)',
    );
  }
  return mode;
}

/** Autocast regions entered through autocast() and not yet left. */
let autocastDepth = 0;

/** Whether code runs inside an autocast() region (any device type). */
export function isAutocastActive(): boolean {
  return autocastDepth > 0;
}

/** Runs fn with autocast on for the device's type, restoring the previous state afterwards. */
export function autocast<T>(mode: AmpMode, device: DeviceLike, fn: () => T): T {
  checkAmp(mode, device);
  const type = parseDevice(device).type;
  const previous = native.setAutocast(type, true, dtypeCode(mode === 'bf16' ? 'bfloat16' : 'float16'), 1);
  autocastDepth++;
  try {
    return fn();
  } finally {
    autocastDepth--;
    native.setAutocast(type, previous.enabled, previous.dtype, -1);
  }
}

/** Options of GradScaler (torch.cuda.amp.GradScaler's defaults: initial scale 2^16, growth 2, backoff 0.5, interval 2000). */
export interface GradScalerOptions {
  initScale: number;
  growthFactor: number;
  backoffFactor: number;
  growthInterval: number;
}

/** What a GradScaler saves in a checkpoint: its options, scale and growth tracker. */
export interface GradScalerState extends GradScalerOptions {
  scale: number;
  growthTracker: number;
}

/**
 * Dynamic loss scaling as torch.cuda.amp.GradScaler: the loss is multiplied by `scale` before
 * backward; step() unscales the gradients, skips the update when any is inf/NaN (and halves the
 * scale), and otherwise grows the scale after `growthInterval` clean steps.
 */
export class GradScaler {
  private options: GradScalerOptions;
  private scaleValue: number;
  private growthTracker = 0;
  /** Whether the last step() was skipped because of non-finite gradients. */
  lastStepSkipped = false;

  constructor(options: Partial<GradScalerOptions> = {}) {
    this.options = {
      initScale: options.initScale ?? 65536,
      growthFactor: options.growthFactor ?? 2,
      backoffFactor: options.backoffFactor ?? 0.5,
      growthInterval: options.growthInterval ?? 2000,
    };
    if (
      !(this.options.initScale > 0) ||
      !(this.options.growthFactor > 1) ||
      !(this.options.backoffFactor < 1)
    )
      throw new RangeError('GradScaler: needs initScale > 0, growthFactor > 1 and backoffFactor < 1');
    this.scaleValue = this.options.initScale;
  }

  get scale(): number {
    return this.scaleValue;
  }

  /** The loss multiplied by the current scale (call backward on this). */
  scaleLoss(loss: Tensor): Tensor {
    return loss.mul({ float: this.scaleValue });
  }

  /**
   * Unscales the gradients and steps the optimizer unless one of them is inf/NaN; then updates
   * the scale. Returns whether the optimizer stepped.
   */
  step(optimizer: Optimizer<{ lr: number }>): boolean {
    const grads = optimizer.paramGroups.flatMap((g) => g.params).map((p) => p.grad);
    const inv = 1 / this.scaleValue;
    // One sum over all |grad|: inf or NaN anywhere makes it non-finite (a single read-back).
    const total = noGrad(() =>
      tidy(() => {
        let acc: Tensor | null = null;
        for (const g of grads) {
          if (!g) continue;
          g.mul_({ float: inv });
          const s = g.abs().sum().to('float32');
          acc = acc ? acc.add(s) : s;
        }
        return acc ? acc.item() : 0;
      }),
    );
    for (const g of grads) g?.dispose();
    const finite = Number.isFinite(total);
    this.lastStepSkipped = !finite;
    if (finite) optimizer.step();
    this.update(finite);
    return finite;
  }

  private update(finite: boolean): void {
    if (!finite) {
      this.scaleValue *= this.options.backoffFactor;
      this.growthTracker = 0;
      return;
    }
    this.growthTracker++;
    if (this.growthTracker >= this.options.growthInterval) {
      this.scaleValue *= this.options.growthFactor;
      this.growthTracker = 0;
    }
  }

  /** The state to save. */
  stateDict(): GradScalerState {
    return { ...this.options, scale: this.scaleValue, growthTracker: this.growthTracker };
  }

  /** Restores a saved state. */
  loadStateDict(state: GradScalerState): void {
    this.options = {
      initScale: state.initScale,
      growthFactor: state.growthFactor,
      backoffFactor: state.backoffFactor,
      growthInterval: state.growthInterval,
    };
    this.scaleValue = state.scale;
    this.growthTracker = state.growthTracker;
  }
}
