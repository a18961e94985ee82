// More of torch.optim.lr_scheduler 1.13, in its chainable forms: ExponentialLR and LinearLR (per
// epoch), OneCycleLR (per iteration, with momentum cycling), and ReduceLROnPlateau (driven by a
// metric, not by the epoch count).
import { LRScheduler, type HasParamGroups } from './lr-scheduler.js';
import { setInitialLr } from './initial-lr.js';
import { checksOf } from '../../util/arguments.js';

/** torch.optim.lr_scheduler.ExponentialLR: lr *= gamma every epoch. */
export class ExponentialLR extends LRScheduler {
  constructor(
    optimizer: HasParamGroups,
    private readonly options: { gamma: number },
  ) {
    super(optimizer);
    checksOf('ExponentialLR').number(options?.gamma, 'options.gamma', { above: 0 });
    this.initialStep();
  }

  protected override closedFormLrs(): number[] {
    return this.baseLrs.map((base) => base * this.options.gamma ** this.lastEpoch);
  }

  protected computeLrs(): number[] {
    const groups = this.optimizer.paramGroups;
    return groups.map((g) => (this.lastEpoch === 0 ? g.lr : g.lr * this.options.gamma));
  }
}

/** Options of LinearLR: the factor moves linearly from startFactor to endFactor over totalIters steps. */
export interface LinearLROptions {
  /** Default 1/3. */
  startFactor?: number;
  /** Default 1. */
  endFactor?: number;
  /** Default 5. */
  totalIters?: number;
}

/** torch.optim.lr_scheduler.LinearLR (a linear warmup or decay of the factor), chainable form. */
export class LinearLR extends LRScheduler {
  private readonly start: number;
  private readonly end: number;
  private readonly total: number;

  constructor(optimizer: HasParamGroups, options: LinearLROptions = {}) {
    super(optimizer);
    const c = checksOf('LinearLR');
    c.object(options, 'options');
    this.start = c.number(options.startFactor ?? 1 / 3, 'options.startFactor', { above: 0, max: 1 });
    this.end = c.number(options.endFactor ?? 1, 'options.endFactor', { min: 0, max: 1 });
    this.total = c.integer(options.totalIters ?? 5, 'options.totalIters', { min: 1 });
    this.initialStep();
  }

  protected override closedFormLrs(): number[] {
    const { start, end, total, lastEpoch: t } = this;
    return this.baseLrs.map((base) => base * (start + ((end - start) * Math.min(total, t)) / total));
  }

  protected computeLrs(): number[] {
    const { start, end, total, lastEpoch: t } = this;
    const groups = this.optimizer.paramGroups;
    if (t === 0) return groups.map((g) => g.lr * start);
    if (t > total) return groups.map((g) => g.lr);
    return groups.map((g) => g.lr * (1 + (end - start) / (total * start + (t - 1) * (end - start))));
  }
}

/** Options of OneCycleLR (PyTorch's names and defaults, camelCase). */
export interface OneCycleLROptions {
  /** The peak rate: one number, or one per parameter group. */
  maxLr: number | number[];
  /** Steps of the whole cycle (or give epochs and stepsPerEpoch). */
  totalSteps?: number;
  epochs?: number;
  stepsPerEpoch?: number;
  /** Fraction of the cycle spent raising the rate (default 0.3). */
  pctStart?: number;
  /** 'cos' (default) or 'linear'. */
  annealStrategy?: 'cos' | 'linear';
  /** Cycle SGD's momentum or Adam's beta1 inversely to the rate (default true). */
  cycleMomentum?: boolean;
  baseMomentum?: number;
  maxMomentum?: number;
  /** initial rate = maxLr / divFactor (default 25). */
  divFactor?: number;
  /** final rate = initial rate / finalDivFactor (default 1e4). */
  finalDivFactor?: number;
  /** Three phases (up, down to the initial rate, then to the final one), as fastai's schedule (default false). */
  threePhase?: boolean;
}

interface Phase {
  endStep: number;
  lr: [start: 'initial' | 'max' | 'min', end: 'initial' | 'max' | 'min'];
  momentum: [start: 'max' | 'base', end: 'max' | 'base'];
}

type Group = { lr: number; momentum?: number; betas?: number[] } & Record<string, unknown>;

/**
 * torch.optim.lr_scheduler.OneCycleLR: the 1cycle policy, stepped once per batch. The rate rises
 * from maxLr / divFactor to maxLr over pctStart of the steps and anneals to the initial rate /
 * finalDivFactor; momentum (SGD's `momentum`, Adam's `betas[0]`) moves the other way.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const w = torch.keep(torch.zeros([2]).requiresGrad_());
 * const opt = new torch.optim.SGD([w], { lr: 0.1, momentum: 0.9 });
 * const schedule = new torch.optim.OneCycleLR(opt, { maxLr: 0.1, totalSteps: 100 });
 * for (let i = 0; i < 100; i++) {
 *   // forward, backward, opt.step() ...
 *   schedule.step();
 * }
 * ```
 */
export class OneCycleLR extends LRScheduler {
  private readonly totalSteps: number;
  private readonly phases: Phase[];
  private readonly anneal: (start: number, end: number, pct: number) => number;
  private readonly cycleMomentum: boolean;
  private readonly rates: { initial: number; max: number; min: number }[];
  private readonly momenta: { max: number; base: number };

  constructor(optimizer: HasParamGroups, options: OneCycleLROptions) {
    super(optimizer);
    const c = checksOf('OneCycleLR');
    c.object(options, 'options');
    const groups = optimizer.paramGroups as Group[];
    this.totalSteps =
      options.totalSteps !== undefined
        ? c.integer(options.totalSteps, 'options.totalSteps', { min: 1 })
        : options.epochs !== undefined && options.stepsPerEpoch !== undefined
          ? c.integer(options.epochs, 'options.epochs', { min: 1 }) *
            c.integer(options.stepsPerEpoch, 'options.stepsPerEpoch', { min: 1 })
          : c.fail('options', 'totalSteps, or epochs and stepsPerEpoch', options);
    const pctStart = c.number(options.pctStart ?? 0.3, 'options.pctStart', { min: 0, max: 1 });
    const maxLrs = Array.isArray(options.maxLr) ? options.maxLr : groups.map(() => options.maxLr as number);
    if (maxLrs.length !== groups.length)
      c.fail('options.maxLr', `one rate or ${groups.length} (one per parameter group)`, options.maxLr);
    const div = c.number(options.divFactor ?? 25, 'options.divFactor', { above: 0 });
    const finalDiv = c.number(options.finalDivFactor ?? 1e4, 'options.finalDivFactor', { above: 0 });
    this.rates = maxLrs.map((m, i) => {
      const max = c.number(m, `options.maxLr[${i}]`, { above: 0 });
      return { initial: max / div, max, min: max / div / finalDiv };
    });
    const strategy = options.annealStrategy ?? 'cos';
    if (strategy !== 'cos' && strategy !== 'linear')
      c.fail('options.annealStrategy', "'cos' or 'linear'", strategy);
    this.anneal =
      strategy === 'cos'
        ? (start, end, pct) => end + ((start - end) / 2) * (Math.cos(Math.PI * pct) + 1)
        : (start, end, pct) => (end - start) * pct + start;
    const n = this.totalSteps;
    this.phases = options.threePhase
      ? [
          { endStep: pctStart * n - 1, lr: ['initial', 'max'], momentum: ['max', 'base'] },
          { endStep: 2 * pctStart * n - 2, lr: ['max', 'initial'], momentum: ['base', 'max'] },
          { endStep: n - 1, lr: ['initial', 'min'], momentum: ['max', 'max'] },
        ]
      : [
          { endStep: pctStart * n - 1, lr: ['initial', 'max'], momentum: ['max', 'base'] },
          { endStep: n - 1, lr: ['max', 'min'], momentum: ['base', 'max'] },
        ];
    this.cycleMomentum = options.cycleMomentum ?? true;
    this.momenta = {
      base: c.number(options.baseMomentum ?? 0.85, 'options.baseMomentum', { min: 0, max: 1 }),
      max: c.number(options.maxMomentum ?? 0.95, 'options.maxMomentum', { min: 0, max: 1 }),
    };
    if (this.cycleMomentum) {
      for (const g of groups)
        if (!Array.isArray(g.betas) && typeof g.momentum !== 'number')
          throw new RangeError(
            'OneCycleLR: cycleMomentum needs an optimizer with momentum (SGD) or betas (Adam, AdamW); set cycleMomentum: false',
          );
      groups.forEach((g) => this.setMomentum(g, this.momenta.max));
    }
    groups.forEach((g, i) => {
      g.lr = this.rates[i]!.initial;
      setInitialLr(g, g.lr);
    });
    this.baseLrs = this.rates.map((r) => r.initial);
    this.initialStep();
  }

  private setMomentum(g: Group, m: number): void {
    if (Array.isArray(g.betas)) g.betas = [m, ...g.betas.slice(1)];
    else g.momentum = m;
  }

  protected computeLrs(): number[] {
    const step = this.lastEpoch;
    if (step > this.totalSteps)
      throw new RangeError(
        `OneCycleLR: stepped ${step} times, past its ${this.totalSteps} total steps (one step per batch)`,
      );
    const groups = this.optimizer.paramGroups as Group[];
    return groups.map((g, i) => {
      let start = 0;
      for (let p = 0; p < this.phases.length; p++) {
        const phase = this.phases[p]!;
        if (step <= phase.endStep || p === this.phases.length - 1) {
          const pct = (step - start) / (phase.endStep - start);
          const rate = this.rates[i]!;
          if (this.cycleMomentum)
            this.setMomentum(
              g,
              this.anneal(this.momenta[phase.momentum[0]], this.momenta[phase.momentum[1]], pct),
            );
          return this.anneal(rate[phase.lr[0]], rate[phase.lr[1]], pct);
        }
        start = phase.endStep;
      }
      return g.lr;
    });
  }
}

/** Options of ReduceLROnPlateau (PyTorch's names and defaults, camelCase). */
export interface ReduceLROnPlateauOptions {
  /** 'min' (default: the metric should fall, a loss) or 'max' (an accuracy). */
  mode?: 'min' | 'max';
  /** lr *= factor on a plateau (default 0.1). */
  factor?: number;
  /** Epochs without improvement tolerated before reducing (default 10). */
  patience?: number;
  /** What counts as an improvement (default 1e-4), relative ('rel', default) or absolute ('abs'). */
  threshold?: number;
  thresholdMode?: 'rel' | 'abs';
  /** Epochs to wait after a reduction before counting again (default 0). */
  cooldown?: number;
  /** Lower bound of the rate: one number or one per group (default 0). */
  minLr?: number | number[];
  /** A reduction smaller than this is not applied (default 1e-8). */
  eps?: number;
}

/** What ReduceLROnPlateau saves in a checkpoint. */
export interface PlateauState {
  best: number;
  numBadEpochs: number;
  cooldownCounter: number;
  lastEpoch: number;
}

/**
 * torch.optim.lr_scheduler.ReduceLROnPlateau: multiplies the rate by `factor` when the metric
 * given to `step(metric)` has not improved for `patience` epochs.
 */
export class ReduceLROnPlateau {
  readonly optimizer: HasParamGroups;
  private readonly o: Required<Omit<ReduceLROnPlateauOptions, 'minLr'>>;
  private readonly minLrs: number[];
  best: number;
  numBadEpochs = 0;
  cooldownCounter = 0;
  lastEpoch = 0;

  constructor(optimizer: HasParamGroups, options: ReduceLROnPlateauOptions = {}) {
    const c = checksOf('ReduceLROnPlateau');
    if (!optimizer || !Array.isArray(optimizer.paramGroups) || optimizer.paramGroups.length === 0)
      c.fail('optimizer', 'an optimizer with parameter groups', optimizer);
    c.object(options, 'options');
    this.optimizer = optimizer;
    const mode = options.mode ?? 'min';
    if (mode !== 'min' && mode !== 'max') c.fail('options.mode', "'min' or 'max'", mode);
    const thresholdMode = options.thresholdMode ?? 'rel';
    if (thresholdMode !== 'rel' && thresholdMode !== 'abs')
      c.fail('options.thresholdMode', "'rel' or 'abs'", thresholdMode);
    const factor = c.number(options.factor ?? 0.1, 'options.factor', { min: 0 });
    if (factor >= 1) c.fail('options.factor', 'a number < 1', factor);
    this.o = {
      mode,
      thresholdMode,
      factor,
      patience: c.integer(options.patience ?? 10, 'options.patience', { min: 0 }),
      threshold: c.number(options.threshold ?? 1e-4, 'options.threshold', { min: 0 }),
      cooldown: c.integer(options.cooldown ?? 0, 'options.cooldown', { min: 0 }),
      eps: c.number(options.eps ?? 1e-8, 'options.eps', { min: 0 }),
    };
    const n = optimizer.paramGroups.length;
    const minLr = options.minLr ?? 0;
    this.minLrs = Array.isArray(minLr) ? [...minLr] : new Array<number>(n).fill(minLr);
    if (this.minLrs.length !== n)
      c.fail('options.minLr', `one rate or ${n} (one per parameter group)`, minLr);
    this.minLrs.forEach((v, i) => c.number(v, `options.minLr[${i}]`, { min: 0 }));
    this.best = mode === 'min' ? Infinity : -Infinity;
  }

  private isBetter(a: number): boolean {
    const { mode, thresholdMode, threshold } = this.o;
    const best = this.best;
    if (mode === 'min') return thresholdMode === 'rel' ? a < best * (1 - threshold) : a < best - threshold;
    return thresholdMode === 'rel' ? a > best * (threshold + 1) : a > best + threshold;
  }

  /** One epoch's metric (a validation loss, or an accuracy with mode 'max'); reduces the rates on a plateau. */
  step(metric: number): void {
    if (typeof metric !== 'number' || Number.isNaN(metric))
      checksOf('ReduceLROnPlateau.step').fail('metric', 'a number', metric);
    this.lastEpoch += 1;
    if (this.isBetter(metric)) {
      this.best = metric;
      this.numBadEpochs = 0;
    } else this.numBadEpochs += 1;
    if (this.cooldownCounter > 0) {
      this.cooldownCounter -= 1;
      this.numBadEpochs = 0;
    }
    if (this.numBadEpochs > this.o.patience) {
      this.optimizer.paramGroups.forEach((g, i) => {
        const next = Math.max(g.lr * this.o.factor, this.minLrs[i]!);
        if (g.lr - next > this.o.eps) g.lr = next;
      });
      this.cooldownCounter = this.o.cooldown;
      this.numBadEpochs = 0;
    }
  }

  /** The rates now, one per group. */
  getLastLr(): number[] {
    return this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** The state to save. */
  stateDict(): PlateauState {
    const { best, numBadEpochs, cooldownCounter, lastEpoch } = this;
    return { best, numBadEpochs, cooldownCounter, lastEpoch };
  }

  /** Restores a saved state. */
  loadStateDict(state: PlateauState): void {
    const c = checksOf('ReduceLROnPlateau.loadStateDict');
    c.object(state, 'state');
    if (typeof state.best !== 'number') c.fail('state.best', 'a number', state.best);
    this.best = state.best;
    this.numBadEpochs = c.integer(state.numBadEpochs, 'state.numBadEpochs', { min: 0 });
    this.cooldownCounter = c.integer(state.cooldownCounter, 'state.cooldownCounter', { min: 0 });
    this.lastEpoch = c.integer(state.lastEpoch, 'state.lastEpoch', { min: 0 });
  }
}
