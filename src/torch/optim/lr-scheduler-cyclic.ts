// torch.optim.lr_scheduler 1.13's CyclicLR (with momentum cycling: SGD's momentum, and Adam's
// beta1 as PyTorch 2.x cycles it), and the schedulers that combine others: SequentialLR (one
// after another at milestones) and ChainedScheduler (all of them at every step).
import { LRScheduler, type HasParamGroups, type SchedulerState } from './lr-scheduler.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';

type Group = { lr: number; momentum?: number; betas?: number[] } & Record<string, unknown>;

/** Options of CyclicLR (PyTorch's names and defaults, camelCase). */
export interface CyclicLROptions {
  /** The lower rate of the cycle: one, or one per parameter group. */
  baseLr: number | number[];
  /** The upper rate of the cycle: one, or one per parameter group. */
  maxLr: number | number[];
  /** Steps from the lower to the upper rate (default 2000). */
  stepSizeUp?: number;
  /** Steps back down (default stepSizeUp). */
  stepSizeDown?: number;
  /** 'triangular' (default), 'triangular2' (the amplitude halves each cycle) or 'exp_range' (times gamma ** step). */
  mode?: 'triangular' | 'triangular2' | 'exp_range';
  /** The base of 'exp_range' (default 1). */
  gamma?: number;
  /** A scaling of the amplitude of your own, in [0, 1]; replaces the mode. */
  scaleFn?: (x: number) => number;
  /** What scaleFn takes: the cycle number ('cycle', default) or the step ('iterations'). */
  scaleMode?: 'cycle' | 'iterations';
  /** Cycle SGD's momentum (Adam's beta1) inversely to the rate (default true). */
  cycleMomentum?: boolean;
  /** default 0.8; one, or one per group. */
  baseMomentum?: number | number[];
  /** default 0.9; one, or one per group. */
  maxMomentum?: number | number[];
}

function perGroup(c: ArgumentChecks, value: unknown, name: string, n: number): number[] {
  const list = Array.isArray(value) ? value : new Array<unknown>(n).fill(value);
  if (list.length !== n) c.fail(name, `one number or ${n} (one per parameter group)`, value);
  return list.map((v, i) => c.number(v, Array.isArray(value) ? `${name}[${i}]` : name));
}

/**
 * torch.optim.lr_scheduler.CyclicLR: the rate cycles between baseLr and maxLr (the cyclical
 * learning rates of Smith 2017), stepped once per batch; momentum moves the other way between
 * maxMomentum and baseMomentum.
 */
export class CyclicLR extends LRScheduler {
  private readonly maxLrs: number[];
  private readonly totalSize: number;
  private readonly stepRatio: number;
  private readonly scale: (x: number) => number;
  private readonly scaleMode: 'cycle' | 'iterations';
  private readonly cycleMomentum: boolean;
  private readonly baseMomenta: number[] = [];
  private readonly maxMomenta: number[] = [];

  constructor(optimizer: HasParamGroups, options: CyclicLROptions) {
    super(CyclicLR.startAtBase(optimizer, options));
    const c = checksOf('CyclicLR');
    const groups = optimizer.paramGroups as Group[];
    const n = groups.length;
    this.baseLrs = perGroup(c, options.baseLr, 'options.baseLr', n);
    this.maxLrs = perGroup(c, options.maxLr, 'options.maxLr', n);
    const up = c.number(options.stepSizeUp ?? 2000, 'options.stepSizeUp', { above: 0 });
    const down = c.number(options.stepSizeDown ?? up, 'options.stepSizeDown', { min: 0 });
    this.totalSize = up + down;
    this.stepRatio = up / this.totalSize;
    const gamma = c.number(options.gamma ?? 1, 'options.gamma');
    if (options.scaleFn !== undefined) {
      if (typeof options.scaleFn !== 'function') c.fail('options.scaleFn', 'a function', options.scaleFn);
      this.scale = options.scaleFn;
      this.scaleMode = c.oneOf(options.scaleMode ?? 'cycle', 'options.scaleMode', ['cycle', 'iterations']);
    } else {
      const mode = c.oneOf(options.mode ?? 'triangular', 'options.mode', [
        'triangular',
        'triangular2',
        'exp_range',
      ]);
      this.scale =
        mode === 'triangular'
          ? () => 1
          : mode === 'triangular2'
            ? (x) => 1 / 2 ** (x - 1)
            : (x) => gamma ** x;
      this.scaleMode = mode === 'exp_range' ? 'iterations' : 'cycle';
    }
    this.cycleMomentum = options.cycleMomentum ?? true;
    if (typeof this.cycleMomentum !== 'boolean')
      c.fail('options.cycleMomentum', 'true or false', this.cycleMomentum);
    if (this.cycleMomentum) {
      groups.forEach((g, i) => {
        if (!Array.isArray(g.betas) && typeof g.momentum !== 'number')
          throw new ArgumentError(
            `CyclicLR: options.cycleMomentum needs an optimizer with momentum (SGD, RMSprop) or betas (Adam, AdamW); parameter group ${i} has neither: set cycleMomentum: false`,
          );
      });
      const base = perGroup(c, options.baseMomentum ?? 0.8, 'options.baseMomentum', n);
      groups.forEach((g, i) => this.setMomentum(g, base[i]!));
      this.baseMomenta = groups.map((g) => (Array.isArray(g.betas) ? g.betas[0]! : g.momentum!));
      this.maxMomenta = perGroup(c, options.maxMomentum ?? 0.9, 'options.maxMomentum', n);
    }
    this.initialStep();
  }

  /** Sets each group's rate to its base rate before the base class records the initial rates, as PyTorch does. */
  private static startAtBase(optimizer: HasParamGroups, options: CyclicLROptions): HasParamGroups {
    const c = checksOf('CyclicLR');
    c.object(options, 'options');
    if (!optimizer || !Array.isArray(optimizer.paramGroups) || optimizer.paramGroups.length === 0)
      c.fail('optimizer', 'an optimizer with parameter groups', optimizer);
    const base = perGroup(c, options.baseLr, 'options.baseLr', optimizer.paramGroups.length);
    optimizer.paramGroups.forEach((g, i) => (g.lr = base[i]!));
    return optimizer;
  }

  private setMomentum(g: Group, m: number): void {
    if (Array.isArray(g.betas)) g.betas = [m, ...g.betas.slice(1)];
    else g.momentum = m;
  }

  protected computeLrs(): number[] {
    const t = this.lastEpoch;
    const cycle = Math.floor(1 + t / this.totalSize);
    const x = 1 + t / this.totalSize - cycle;
    const factor = x <= this.stepRatio ? x / this.stepRatio : (x - 1) / (this.stepRatio - 1);
    const s = this.scale(this.scaleMode === 'cycle' ? cycle : t);
    const lrs = this.baseLrs.map((base, i) => base + (this.maxLrs[i]! - base) * factor * s);
    if (this.cycleMomentum)
      (this.optimizer.paramGroups as Group[]).forEach((g, i) => {
        const max = this.maxMomenta[i]!;
        this.setMomentum(g, max - (max - this.baseMomenta[i]!) * factor * s);
      });
    return lrs;
  }
}

/** Refuses a scheduler list that is empty, holds something else, or drives another optimizer. */
function checkSchedulers(fn: string, optimizer: HasParamGroups | null, schedulers: unknown): LRScheduler[] {
  const c = checksOf(fn);
  const list = c.array(schedulers, 'schedulers', { minLength: 1 });
  list.forEach((s, i) => {
    if (!(s instanceof LRScheduler))
      c.fail(
        `schedulers[${i}]`,
        'an LRScheduler (ReduceLROnPlateau steps on a metric and cannot be combined)',
        s,
      );
  });
  const first = optimizer ?? (list[0] as LRScheduler).optimizer;
  list.forEach((s, i) => {
    if ((s as LRScheduler).optimizer !== first)
      throw new ArgumentError(
        `${fn}: schedulers[${i}] drives another optimizer: build every scheduler on ${optimizer ? 'the optimizer given' : 'the optimizer of schedulers[0]'}`,
      );
  });
  return list as LRScheduler[];
}

/** What SequentialLR and ChainedScheduler save: their own position and each scheduler's state. */
export interface CombinedSchedulerState extends SchedulerState {
  schedulers: SchedulerState[];
}

/** Options of SequentialLR: the schedulers, and the epochs at which each one after the first takes over. */
export interface SequentialLROptions {
  schedulers: LRScheduler[];
  /** One fewer than the schedulers, in increasing order. */
  milestones: number[];
}

/**
 * torch.optim.lr_scheduler.SequentialLR: runs schedulers[0] until milestones[0], then restarts
 * schedulers[1] from its epoch 0, and so on (a warm-up then a decay, say). Build the schedulers on
 * the optimizer first; SequentialLR undoes their initial steps but the first one's.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const w = torch.keep(torch.zeros([2]).requiresGrad_());
 * const opt = new torch.optim.SGD([w], { lr: 0.1 });
 * const warmup = new torch.optim.LinearLR(opt, { startFactor: 0.1, totalIters: 5 });
 * const decay = new torch.optim.CosineAnnealingLR(opt, { tMax: 95 });
 * const schedule = new torch.optim.SequentialLR(opt, { schedulers: [warmup, decay], milestones: [5] });
 * for (let epoch = 0; epoch < 100; epoch++) {
 *   // train one epoch ...
 *   schedule.step();
 * }
 * ```
 */
export class SequentialLR extends LRScheduler {
  private readonly schedulers: LRScheduler[];
  private readonly milestones: number[];

  constructor(optimizer: HasParamGroups, options: SequentialLROptions) {
    super(optimizer);
    const c = checksOf('SequentialLR');
    c.object(options, 'options');
    this.schedulers = checkSchedulers('SequentialLR', optimizer, options.schedulers);
    const milestones = c.array(options.milestones, 'options.milestones');
    if (milestones.length !== this.schedulers.length - 1)
      throw new ArgumentError(
        `SequentialLR: options.milestones must hold one epoch fewer than there are schedulers (${this.schedulers.length - 1}), got ${milestones.length}`,
      );
    this.milestones = milestones.map((m, i) =>
      c.integer(m, `options.milestones[${i}]`, { min: i === 0 ? 0 : (milestones[i - 1] as number) }),
    );
    this.lastEpoch = 0;
    optimizer.paramGroups.forEach((g, i) => (g.lr = this.baseLrs[i]!));
    for (const s of this.schedulers) s.lastEpoch -= 1;
    this.schedulers[0]!.step();
    this.lastLrs = this.schedulers[0]!.getLastLr();
  }

  protected computeLrs(): number[] {
    return this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** Moves to the next epoch: the scheduler of that epoch steps, or restarts at its milestone. */
  override step(epoch?: number): void {
    if (epoch !== undefined)
      throw new ArgumentError('SequentialLR.step takes no epoch (PyTorch steps it one epoch at a time)');
    this.lastEpoch += 1;
    let idx = 0;
    while (idx < this.milestones.length && this.milestones[idx]! <= this.lastEpoch) idx++;
    const scheduler = this.schedulers[idx]!;
    if (idx > 0 && this.milestones[idx - 1] === this.lastEpoch) scheduler.step(0);
    else scheduler.step();
    this.lastLrs = scheduler.getLastLr();
  }

  /** The state to save: the position and every scheduler's state. */
  override stateDict(): CombinedSchedulerState {
    return { ...super.stateDict(), schedulers: this.schedulers.map((s) => s.stateDict()) };
  }

  /** Restores a saved state (every scheduler's too) and writes its rates into the groups. */
  override loadStateDict(state: CombinedSchedulerState): void {
    loadCombined('SequentialLR', this.schedulers, state);
    super.loadStateDict(state);
  }
}

function loadCombined(fn: string, schedulers: LRScheduler[], state: CombinedSchedulerState): void {
  const c = checksOf(`${fn}.loadStateDict`);
  c.object(state, 'state');
  if (!Array.isArray(state.schedulers) || state.schedulers.length !== schedulers.length)
    c.fail('state.schedulers', `the states of ${schedulers.length} schedulers`, state.schedulers);
  schedulers.forEach((s, i) => s.loadStateDict(state.schedulers[i]!));
}

/**
 * torch.optim.lr_scheduler.ChainedScheduler: every step() steps each scheduler in turn, so their
 * factors multiply (chainable schedulers only: those whose rate follows from the current one).
 */
export class ChainedScheduler extends LRScheduler {
  private readonly schedulers: LRScheduler[];

  constructor(schedulers: LRScheduler[]) {
    const list = checkSchedulers('ChainedScheduler', null, schedulers);
    super(list[0]!.optimizer);
    this.schedulers = list;
    this.lastEpoch = 0;
    this.lastLrs = this.optimizer.paramGroups.map((g) => g.lr);
  }

  protected computeLrs(): number[] {
    return this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** Steps every scheduler once, in order. */
  override step(epoch?: number): void {
    if (epoch !== undefined)
      throw new ArgumentError('ChainedScheduler.step takes no epoch (PyTorch steps it one epoch at a time)');
    this.lastEpoch += 1;
    for (const s of this.schedulers) s.step();
    this.lastLrs = this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** The state to save: the position and every scheduler's state. */
  override stateDict(): CombinedSchedulerState {
    return { ...super.stateDict(), schedulers: this.schedulers.map((s) => s.stateDict()) };
  }

  /** Restores a saved state (every scheduler's too) and writes its rates into the groups. */
  override loadStateDict(state: CombinedSchedulerState): void {
    loadCombined('ChainedScheduler', this.schedulers, state);
    super.loadStateDict(state);
  }
}
