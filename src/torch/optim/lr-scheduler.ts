// Learning-rate schedules: pure functions of the epoch (or step), and small scheduler classes
// that follow torch.optim.lr_scheduler 1.13's protocol: the constructor applies epoch 0, each
// step() moves to the next epoch and writes the new rate into every parameter group's `lr`.

/** What a scheduler drives: anything with parameter groups that have an `lr` (every Optimizer). */
export interface HasParamGroups {
  paramGroups: { lr: number }[];
}

import { checksOf } from '../../util/arguments.js';
import { initialLrOf } from './initial-lr.js';

// ---- pure functions ----

/** Number of milestones <= epoch (Python's bisect_right on sorted milestones). */
function milestonesPassed(epoch: number, milestones: readonly number[]): number {
  checksOf('milestones').numbers(milestones, 'milestones');
  let n = 0;
  for (const m of milestones) if (m <= epoch) n++;
  return n;
}

/** Options of WarmupMultiStepLR: linear warmup epochs, then the rate times gamma (default 0.1) at each milestone. */
export interface WarmupMultiStepOptions {
  /** Epochs of linear warmup: epoch e < warmupEpochs gets factor (e + 1) / warmupEpochs. */
  warmupEpochs: number;
  /** Epochs at which the rate is multiplied by gamma (each one passed multiplies once more). */
  milestones: readonly number[];
  gamma?: number;
}

/**
 * Linear warmup then step decay, as a factor of the base rate. With milestones [s1, s2] this is
 * exactly the SADE/BalPoE `CustomLR` lambda (same floating-point operations in the same order).
 */
export function warmupMultiStepFactor(epoch: number, options: WarmupMultiStepOptions): number {
  checksOf('warmupMultiStepFactor').object(options, 'options');
  const gamma = options.gamma ?? 0.1;
  let factor = 1;
  const passed = milestonesPassed(epoch, options.milestones);
  // gamma * gamma (not gamma ** 2) for two milestones, as the reference code writes it.
  for (let i = 0; i < passed; i++) factor = i === 0 ? gamma : factor * gamma;
  if (epoch < options.warmupEpochs) factor = (factor * (1 + epoch)) / options.warmupEpochs;
  return factor;
}

/** Options of CustomLR (the SADE / BalPoE schedule): warmup epochs, then gamma (default 0.1) at step1 and again at step2. */
export interface CustomLROptions {
  step1: number;
  step2: number;
  gamma?: number;
  warmupEpoch: number;
}

/** The SADE / BalPoE `CustomLR` lambda (utils/util.py learning_rate_scheduler): factor of the base rate. */
export function customLrFactor(epoch: number, options: CustomLROptions): number {
  checksOf('customLrFactor').object(options, 'options');
  const gamma = options.gamma ?? 0.1;
  let lr = epoch >= options.step2 ? gamma * gamma : epoch >= options.step1 ? gamma : 1;
  if (epoch < options.warmupEpoch) lr = (lr * (1 + epoch)) / options.warmupEpoch;
  return lr;
}

/** MultiStepLR's factor in closed form: gamma ** (milestones passed). */
export function multiStepFactor(epoch: number, milestones: readonly number[], gamma = 0.1): number {
  return gamma ** milestonesPassed(epoch, milestones);
}

/** CosineAnnealingLR's closed form: etaMin + (baseLr - etaMin) (1 + cos(pi t / tMax)) / 2. */
export function cosineAnnealingLr(epoch: number, baseLr: number, tMax: number, etaMin = 0): number {
  return etaMin + ((baseLr - etaMin) * (1 + Math.cos((Math.PI * epoch) / tMax))) / 2;
}

/** Options of WarmupCosineLR: linear warmup steps, total steps, and the final factor. */
export interface WarmupCosineOptions {
  /** Steps of linear warmup: step s < warmupSteps gets factor (s + 1) / warmupSteps. */
  warmupSteps: number;
  /** Total steps; the cosine runs from the end of warmup to here and stays at minFactor after. */
  totalSteps: number;
  /** Final factor (etaMin / baseLr); default 0. */
  minFactor?: number;
}

/** Linear warmup then cosine decay to minFactor, as a factor of the base rate (per epoch or per iteration). */
export function warmupCosineFactor(step: number, options: WarmupCosineOptions): number {
  checksOf('warmupCosineFactor').object(options, 'options');
  const { warmupSteps, totalSteps } = options;
  const minFactor = options.minFactor ?? 0;
  if (step < warmupSteps) return (1 + step) / warmupSteps;
  const span = Math.max(1, totalSteps - warmupSteps);
  const progress = Math.min(1, Math.max(0, (step - warmupSteps) / span));
  return minFactor + ((1 - minFactor) * (1 + Math.cos(Math.PI * progress))) / 2;
}

// ---- scheduler classes ----

/** What a scheduler saves in a checkpoint: the last epoch, the base and the last rates. */
export interface SchedulerState {
  lastEpoch: number;
  baseLrs: number[];
  lastLrs: number[];
}

/** The base of the learning-rate schedules (torch.optim.lr_scheduler): call `step()` once per epoch (or per iteration, for the warmup-cosine schedule) after the optimizer's step; it sets each group's `lr`. */
export abstract class LRScheduler {
  readonly optimizer: HasParamGroups;
  /** The base rate of each group: its `lr` when the first scheduler of the optimizer was created. */
  baseLrs: number[];
  /** The epoch (or step) count: 0 after construction, +1 per step(). */
  lastEpoch = -1;
  protected lastLrs: number[] = [];

  constructor(optimizer: HasParamGroups) {
    if (!optimizer || !Array.isArray(optimizer.paramGroups) || optimizer.paramGroups.length === 0) {
      throw new TypeError(`${this.constructor.name}: expected an optimizer with parameter groups`);
    }
    this.optimizer = optimizer;
    this.baseLrs = optimizer.paramGroups.map(initialLrOf);
  }

  /** Subclasses call this at the end of their constructor: PyTorch's initial step to epoch 0. */
  protected initialStep(): void {
    this.step();
  }

  /** The rates for this.lastEpoch (may read the groups' current rates: the chainable form). */
  protected abstract computeLrs(): number[];

  /**
   * The rates at this.lastEpoch computed from the base rates alone, for a step to a given epoch
   * (PyTorch's _get_closed_form_lr); undefined where PyTorch has none (the chainable form is used).
   */
  protected closedFormLrs?(): number[];

  /**
   * Moves to the next epoch, or to `epoch` (PyTorch's deprecated step(epoch), which SequentialLR
   * uses to restart a schedule), and writes its rate into the optimizer's groups.
   */
  step(epoch?: number): void {
    let lrs: number[];
    if (epoch === undefined) {
      this.lastEpoch += 1;
      lrs = this.computeLrs();
    } else {
      this.lastEpoch = checksOf(`${this.constructor.name}.step`).integer(epoch, 'epoch', { min: 0 });
      lrs = this.closedFormLrs ? this.closedFormLrs() : this.computeLrs();
    }
    lrs.forEach((lr, i) => {
      this.optimizer.paramGroups[i]!.lr = lr;
    });
    this.lastLrs = lrs;
  }

  /** The rates the last step() set, one per group. */
  getLastLr(): number[] {
    return [...this.lastLrs];
  }

  /** The state to save (see SchedulerState). */
  stateDict(): SchedulerState {
    return { lastEpoch: this.lastEpoch, baseLrs: [...this.baseLrs], lastLrs: [...this.lastLrs] };
  }

  /** Restores a saved position and writes its rates into the groups (so resuming needs no extra step). */
  loadStateDict(state: SchedulerState): void {
    const n = this.optimizer.paramGroups.length;
    if (
      !state ||
      !Number.isInteger(state.lastEpoch) ||
      !Array.isArray(state.baseLrs) ||
      state.baseLrs.length !== n
    ) {
      throw new Error(
        `${this.constructor.name}.loadStateDict: expected { lastEpoch, baseLrs, lastLrs } for ${n} parameter groups`,
      );
    }
    this.lastEpoch = state.lastEpoch;
    this.baseLrs = [...state.baseLrs];
    this.lastLrs = [...(state.lastLrs ?? [])];
    this.lastLrs.forEach((lr, i) => {
      if (i < n) this.optimizer.paramGroups[i]!.lr = lr;
    });
  }
}

/** lr = baseLr * factor(epoch) (torch.optim.lr_scheduler.LambdaLR); one function, or one per group. */
export class LambdaLR extends LRScheduler {
  private readonly factors: ((epoch: number) => number)[];

  constructor(
    optimizer: HasParamGroups,
    factor: ((epoch: number) => number) | ((epoch: number) => number)[],
  ) {
    super(optimizer);
    const n = optimizer.paramGroups.length;
    if (Array.isArray(factor) && factor.length !== n) {
      throw new RangeError(`LambdaLR: got ${factor.length} functions for ${n} parameter groups`);
    }
    this.factors = Array.isArray(factor) ? factor : new Array<(epoch: number) => number>(n).fill(factor);
    this.factors.forEach(
      (f, i) =>
        typeof f === 'function' || checksOf('LambdaLR').fail(`factor[${i}]`, 'a function of the epoch', f),
    );
    this.initialStep();
  }

  protected computeLrs(): number[] {
    return this.baseLrs.map((base, i) => base * this.factors[i]!(this.lastEpoch));
  }
}

/** SADE / BalPoE `CustomLR`: linear warmup for warmupEpoch epochs, x gamma at step1, x gamma^2 at step2. */
export class CustomLR extends LambdaLR {
  constructor(optimizer: HasParamGroups, options: CustomLROptions) {
    super(optimizer, (epoch) => customLrFactor(epoch, options));
  }
}

/** Linear warmup then x gamma at each milestone. */
export class WarmupMultiStepLR extends LambdaLR {
  constructor(optimizer: HasParamGroups, options: WarmupMultiStepOptions) {
    super(optimizer, (epoch) => warmupMultiStepFactor(epoch, options));
  }
}

/** Linear warmup then cosine decay (step it per epoch or per iteration, matching the options). */
export class WarmupCosineLR extends LambdaLR {
  constructor(optimizer: HasParamGroups, options: WarmupCosineOptions) {
    super(optimizer, (step) => warmupCosineFactor(step, options));
  }
}

/** torch.optim.lr_scheduler.MultiStepLR, in its chainable form (lr *= gamma at each milestone). */
export class MultiStepLR extends LRScheduler {
  private readonly milestones: number[];
  private readonly gamma: number;

  constructor(optimizer: HasParamGroups, options: { milestones: readonly number[]; gamma?: number }) {
    super(optimizer);
    checksOf('MultiStepLR').object(options, 'options');
    this.milestones = Array.from(
      checksOf('MultiStepLR').numbers(options.milestones, 'options.milestones'),
    ).sort((a, b) => a - b);
    this.gamma = options.gamma ?? 0.1;
    this.initialStep();
  }

  protected override closedFormLrs(): number[] {
    return this.baseLrs.map((base) => base * this.gamma ** milestonesPassed(this.lastEpoch, this.milestones));
  }

  protected computeLrs(): number[] {
    const hits = this.milestones.filter((m) => m === this.lastEpoch).length;
    return this.optimizer.paramGroups.map((g) => (hits === 0 ? g.lr : g.lr * this.gamma ** hits));
  }
}

/** torch.optim.lr_scheduler.StepLR, chainable form: lr *= gamma every stepSize epochs. */
export class StepLR extends LRScheduler {
  constructor(
    optimizer: HasParamGroups,
    private readonly options: { stepSize: number; gamma?: number },
  ) {
    super(optimizer);
    checksOf('StepLR').object(options, 'options');
    if (!(options.stepSize >= 1))
      throw new RangeError(`StepLR: stepSize must be >= 1, got ${options.stepSize}`);
    this.initialStep();
  }

  protected override closedFormLrs(): number[] {
    const { stepSize, gamma = 0.1 } = this.options;
    return this.baseLrs.map((base) => base * gamma ** Math.floor(this.lastEpoch / stepSize));
  }

  protected computeLrs(): number[] {
    const decay = this.lastEpoch !== 0 && this.lastEpoch % this.options.stepSize === 0;
    return this.optimizer.paramGroups.map((g) => (decay ? g.lr * (this.options.gamma ?? 0.1) : g.lr));
  }
}

/**
 * torch.optim.lr_scheduler.CosineAnnealingLR with its recursive update, so a run stepped epoch by
 * epoch gets the same rates as PyTorch bit for bit (cosineAnnealingLr is the closed form).
 */
export class CosineAnnealingLR extends LRScheduler {
  private readonly tMax: number;
  private readonly etaMin: number;

  constructor(optimizer: HasParamGroups, options: { tMax: number; etaMin?: number }) {
    super(optimizer);
    checksOf('CosineAnnealingLR').object(options, 'options');
    if (!(options.tMax > 0)) throw new RangeError(`CosineAnnealingLR: tMax must be > 0, got ${options.tMax}`);
    this.tMax = options.tMax;
    this.etaMin = options.etaMin ?? 0;
    this.initialStep();
  }

  protected override closedFormLrs(): number[] {
    return this.baseLrs.map(
      (base) =>
        this.etaMin + ((base - this.etaMin) * (1 + Math.cos((Math.PI * this.lastEpoch) / this.tMax))) / 2,
    );
  }

  protected computeLrs(): number[] {
    const { tMax, etaMin, lastEpoch: t } = this;
    const groups = this.optimizer.paramGroups;
    if (t === 0) return groups.map((g) => g.lr);
    if ((t - 1 - tMax) % (2 * tMax) === 0) {
      return groups.map((g, i) => g.lr + ((this.baseLrs[i]! - etaMin) * (1 - Math.cos(Math.PI / tMax))) / 2);
    }
    return groups.map(
      (g) =>
        ((1 + Math.cos((Math.PI * t) / tMax)) / (1 + Math.cos((Math.PI * (t - 1)) / tMax))) *
          (g.lr - etaMin) +
        etaMin,
    );
  }
}

/** A reference project's `lr_scheduler` config section: `{ "type": ..., "args": { ... } }`. */
export interface SchedulerConfig {
  type: string;
  args?: Record<string, unknown>;
}

function numberArg(config: SchedulerConfig, key: string, fallback?: number): number {
  const value = config.args?.[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(
      `lr_scheduler (${config.type}): args.${key} must be a number, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * Builds a scheduler from a SADE/BalPoE-style config section (the names and argument names those
 * JSON files use): CustomLR {step1, step2, gamma=0.1, warmup_epoch}, CosineAnnealingLR {T_max,
 * eta_min=0}, MultiStepLR {milestones, gamma=0.1}, StepLR {step_size, gamma=0.1}.
 */
export function schedulerFromConfig(optimizer: HasParamGroups, config: SchedulerConfig): LRScheduler {
  switch (config?.type) {
    case 'CustomLR':
      return new CustomLR(optimizer, {
        step1: numberArg(config, 'step1'),
        step2: numberArg(config, 'step2'),
        gamma: numberArg(config, 'gamma', 0.1),
        warmupEpoch: numberArg(config, 'warmup_epoch'),
      });
    case 'CosineAnnealingLR':
      return new CosineAnnealingLR(optimizer, {
        tMax: numberArg(config, 'T_max'),
        etaMin: numberArg(config, 'eta_min', 0),
      });
    case 'MultiStepLR': {
      const milestones = config.args?.milestones;
      if (!Array.isArray(milestones) || milestones.some((m) => typeof m !== 'number')) {
        throw new TypeError(`lr_scheduler (MultiStepLR): args.milestones must be an array of epochs`);
      }
      return new MultiStepLR(optimizer, {
        milestones: milestones as number[],
        gamma: numberArg(config, 'gamma', 0.1),
      });
    }
    case 'StepLR':
      return new StepLR(optimizer, {
        stepSize: numberArg(config, 'step_size'),
        gamma: numberArg(config, 'gamma', 0.1),
      });
    default:
      throw new TypeError(
        `lr_scheduler: unsupported type ${JSON.stringify(config?.type)} (supported: CustomLR, CosineAnnealingLR, MultiStepLR, StepLR)`,
      );
  }
}
