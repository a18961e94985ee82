// More of torch.optim.lr_scheduler 1.13: ConstantLR, MultiplicativeLR and PolynomialLR in their
// chainable forms (with PyTorch's closed forms for a step to a given epoch), and
// CosineAnnealingWarmRestarts (SGDR), whose step(epoch) takes fractional epochs.
import { LRScheduler, type HasParamGroups, type SchedulerState } from './lr-scheduler.js';
import { checksOf } from '../../util/arguments.js';

/** Options of ConstantLR: the factor (in [0, 1], default 1/3) applied until totalIters (default 5) steps have passed. */
export interface ConstantLROptions {
  factor?: number;
  totalIters?: number;
}

/** torch.optim.lr_scheduler.ConstantLR: the rate times `factor` for the first totalIters steps, then the base rate. */
export class ConstantLR extends LRScheduler {
  private readonly factor: number;
  private readonly total: number;

  constructor(optimizer: HasParamGroups, options: ConstantLROptions = {}) {
    super(optimizer);
    const c = checksOf('ConstantLR');
    c.object(options, 'options');
    this.factor = c.number(options.factor ?? 1 / 3, 'options.factor', { min: 0, max: 1 });
    this.total = c.integer(options.totalIters ?? 5, 'options.totalIters', { min: 0 });
    this.initialStep();
  }

  protected override closedFormLrs(): number[] {
    const { factor, total } = this;
    return this.baseLrs.map((base) => base * (factor + (this.lastEpoch >= total ? 1 : 0) * (1 - factor)));
  }

  protected computeLrs(): number[] {
    const groups = this.optimizer.paramGroups;
    if (this.lastEpoch === 0) return groups.map((g) => g.lr * this.factor);
    if (this.lastEpoch !== this.total) return groups.map((g) => g.lr);
    return groups.map((g) => g.lr * (1 / this.factor));
  }
}

/** A factor function of the epoch: one for every group, or one per group. */
export type EpochFactor = ((epoch: number) => number) | ((epoch: number) => number)[];

function factorsFor(fn: string, optimizer: HasParamGroups, lrLambda: unknown): ((epoch: number) => number)[] {
  const c = checksOf(fn);
  const n = optimizer?.paramGroups?.length ?? 0;
  if (typeof lrLambda === 'function') return new Array<(epoch: number) => number>(n).fill(lrLambda as never);
  if (!Array.isArray(lrLambda) || lrLambda.length !== n || lrLambda.some((f) => typeof f !== 'function'))
    c.fail('lrLambda', `a function, or ${n} of them (one per parameter group)`, lrLambda);
  return [...(lrLambda as ((epoch: number) => number)[])];
}

/** torch.optim.lr_scheduler.MultiplicativeLR: each step multiplies the rate by lrLambda(epoch). */
export class MultiplicativeLR extends LRScheduler {
  private readonly factors: ((epoch: number) => number)[];

  constructor(optimizer: HasParamGroups, lrLambda: EpochFactor) {
    super(optimizer);
    this.factors = factorsFor('MultiplicativeLR', optimizer, lrLambda);
    this.initialStep();
  }

  protected computeLrs(): number[] {
    const groups = this.optimizer.paramGroups;
    if (this.lastEpoch <= 0) return groups.map((g) => g.lr);
    return groups.map((g, i) => g.lr * this.factors[i]!(this.lastEpoch));
  }
}

/** Options of PolynomialLR: the decay lasts totalIters steps (default 5), with the power (default 1). */
export interface PolynomialLROptions {
  totalIters?: number;
  power?: number;
}

/** torch.optim.lr_scheduler.PolynomialLR: the rate falls as (1 - t / totalIters) ** power, to 0 at totalIters. */
export class PolynomialLR extends LRScheduler {
  private readonly total: number;
  private readonly power: number;

  constructor(optimizer: HasParamGroups, options: PolynomialLROptions = {}) {
    super(optimizer);
    const c = checksOf('PolynomialLR');
    c.object(options, 'options');
    this.total = c.integer(options.totalIters ?? 5, 'options.totalIters', { min: 1 });
    this.power = c.number(options.power ?? 1, 'options.power');
    this.initialStep();
  }

  protected override closedFormLrs(): number[] {
    const { total, power } = this;
    return this.baseLrs.map((base) => base * (1 - Math.min(total, this.lastEpoch) / total) ** power);
  }

  protected computeLrs(): number[] {
    const { total, power, lastEpoch: t } = this;
    const groups = this.optimizer.paramGroups;
    if (t === 0 || t > total) return groups.map((g) => g.lr);
    const decay = ((1 - t / total) / (1 - (t - 1) / total)) ** power;
    return groups.map((g) => g.lr * decay);
  }
}

/** Options of CosineAnnealingWarmRestarts (PyTorch's T_0, T_mult, eta_min). */
export interface CosineAnnealingWarmRestartsOptions {
  /** Epochs of the first cycle (an integer >= 1). */
  t0: number;
  /** Each cycle is tMult times the one before (an integer >= 1, default 1). */
  tMult?: number;
  /** The lowest rate (default 0). */
  etaMin?: number;
}

/** What CosineAnnealingWarmRestarts saves: the base state, the position in the cycle and the cycle's length. */
export interface WarmRestartsState extends SchedulerState {
  tCur: number;
  tI: number;
}

/**
 * torch.optim.lr_scheduler.CosineAnnealingWarmRestarts (SGDR): cosine annealing from the base
 * rate to etaMin over t0 epochs, then a restart, each cycle tMult times longer. `step()` moves
 * one epoch; `step(epoch)` goes to an epoch that may be fractional (`epoch + i / iters` within
 * an epoch of `iters` batches), as PyTorch's.
 */
export class CosineAnnealingWarmRestarts extends LRScheduler {
  private readonly t0: number;
  private readonly tMult: number;
  private readonly etaMin: number;
  /** Epochs since the last restart (fractional after step(epoch)). */
  tCur = -1;
  /** The length of the current cycle. */
  tI: number;

  constructor(optimizer: HasParamGroups, options: CosineAnnealingWarmRestartsOptions) {
    super(optimizer);
    const c = checksOf('CosineAnnealingWarmRestarts');
    c.object(options, 'options');
    this.t0 = c.integer(options.t0, 'options.t0', { min: 1 });
    this.tMult = c.integer(options.tMult ?? 1, 'options.tMult', { min: 1 });
    this.etaMin = c.number(options.etaMin ?? 0, 'options.etaMin');
    this.tI = this.t0;
    this.initialStep();
  }

  protected computeLrs(): number[] {
    const { etaMin, tCur, tI } = this;
    return this.baseLrs.map((base) => etaMin + ((base - etaMin) * (1 + Math.cos((Math.PI * tCur) / tI))) / 2);
  }

  /** Moves one epoch on, or to `epoch` (>= 0, fractional allowed), and writes the rates. */
  override step(epoch?: number): void {
    const { t0, tMult } = this;
    if (epoch === undefined && this.lastEpoch < 0) epoch = 0;
    if (epoch === undefined) {
      epoch = this.lastEpoch + 1;
      this.tCur += 1;
      if (this.tCur >= this.tI) {
        this.tCur -= this.tI;
        this.tI *= tMult;
      }
    } else {
      checksOf('CosineAnnealingWarmRestarts.step').number(epoch, 'epoch', { min: 0 });
      if (epoch >= t0) {
        if (tMult === 1) this.tCur = epoch % t0;
        else {
          // Python's int(math.log(x, base)): log(x) / log(base), truncated
          const n = Math.trunc(Math.log((epoch / t0) * (tMult - 1) + 1) / Math.log(tMult));
          this.tCur = epoch - (t0 * (tMult ** n - 1)) / (tMult - 1);
          this.tI = t0 * tMult ** n;
        }
      } else {
        this.tI = t0;
        this.tCur = epoch;
      }
    }
    this.lastEpoch = Math.floor(epoch);
    const lrs = this.computeLrs();
    lrs.forEach((lr, i) => (this.optimizer.paramGroups[i]!.lr = lr));
    this.lastLrs = lrs;
  }

  /** The state to save (see WarmRestartsState). */
  override stateDict(): WarmRestartsState {
    return { ...super.stateDict(), tCur: this.tCur, tI: this.tI };
  }

  /** Restores a saved position (see WarmRestartsState) and writes its rates into the groups. */
  override loadStateDict(state: WarmRestartsState): void {
    super.loadStateDict(state);
    const c = checksOf('CosineAnnealingWarmRestarts.loadStateDict');
    this.tCur = c.number(state.tCur, 'state.tCur');
    this.tI = c.number(state.tI, 'state.tI', { above: 0 });
  }
}
