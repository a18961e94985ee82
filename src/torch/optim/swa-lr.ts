// torch.optim.swa_utils.SWALR of PyTorch 1.13: anneals each group's rate from where it is to its
// SWA rate over annealEpochs steps, then holds it there. Its rates follow the number of step()
// calls (PyTorch's _step_count), not lastEpoch, and each step first works out which rate the
// group had before the annealing began from its current one (PyTorch's _get_initial_lr), so the
// rates it writes match PyTorch's to the last bit whatever another scheduler did before.
import { LRScheduler, type HasParamGroups, type SchedulerState } from './lr-scheduler.js';
import { hasInitialLr } from './initial-lr.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';

/** Options of SWALR (PyTorch's `swa_lr, anneal_epochs=10, anneal_strategy='cos', last_epoch=-1`). */
export interface SWALROptions {
  /** The rate the groups anneal to: one for every group, or one per group. */
  swaLr: number | readonly number[];
  /** Steps the annealing takes (an integer >= 0; default 10; 0 sets the SWA rates at once). */
  annealEpochs?: number;
  /** The shape of the annealing: `'cos'` (default) or `'linear'`. */
  annealStrategy?: 'cos' | 'linear';
  /**
   * The epoch to resume at (default -1, a new schedule); another value needs the groups' initial
   * rates, which the optimizer's first scheduler records, as in PyTorch.
   */
  lastEpoch?: number;
}

/** What SWALR saves: the common scheduler state and its step count. */
export interface SWALRState extends SchedulerState {
  /** Calls of step(), the constructor's initial one included (PyTorch's `_step_count`). */
  stepCount: number;
}

/**
 * SWALR's options checked, before the base class records any group's initial rate (so a refused
 * schedule leaves the optimizer as it was, as PyTorch checks them first too).
 */
function checked(
  optimizer: HasParamGroups,
  options: SWALROptions,
): { swaLrs: number[]; annealEpochs: number; annealStrategy: 'cos' | 'linear'; lastEpoch: number } {
  const c = checksOf('SWALR');
  c.object(options, 'options');
  const groups = optimizer?.paramGroups;
  if (!Array.isArray(groups) || groups.length === 0)
    c.fail('optimizer', 'an optimizer with parameter groups', optimizer);
  const n = groups.length;
  const swaLr: unknown = options.swaLr;
  let swaLrs: number[];
  if (Array.isArray(swaLr)) {
    if (swaLr.length !== n)
      c.fail('options.swaLr', `a number, or ${n} of them (one per parameter group)`, swaLr);
    swaLrs = swaLr.map((lr, i) => c.number(lr, `options.swaLr[${i}]`, { min: 0 }));
  } else {
    swaLrs = new Array<number>(n).fill(c.number(swaLr, 'options.swaLr', { min: 0 }));
  }
  const annealEpochs = c.integer(options.annealEpochs ?? 10, 'options.annealEpochs', { min: 0 });
  const annealStrategy = options.annealStrategy ?? 'cos';
  if (annealStrategy !== 'cos' && annealStrategy !== 'linear')
    c.fail('options.annealStrategy', "'cos' or 'linear'", annealStrategy);
  const lastEpoch = c.integer(options.lastEpoch ?? -1, 'options.lastEpoch', { min: -1 });
  const missing = groups.findIndex((g) => !hasInitialLr(g));
  if (lastEpoch !== -1 && missing >= 0) {
    throw new ArgumentError(
      `SWALR: options.lastEpoch ${lastEpoch} resumes a schedule, but parameter group ${missing} has no initial rate; build the optimizer's first scheduler with the default lastEpoch (-1), or leave lastEpoch out`,
    );
  }
  return { swaLrs, annealEpochs, annealStrategy, lastEpoch };
}

/**
 * torch.optim.swa_utils.SWALR (PyTorch 1.13): each step moves every group's rate towards its SWA
 * rate, with a cosine or linear annealing over `annealEpochs` steps, and then keeps it there.
 * Step it after the optimizer's step, usually once per epoch of the SWA phase.
 *
 * @example
 * ```ts
 * import { nn, optim } from 'tailor/torch';
 * const model = new nn.Linear(4, 2);
 * const opt = new optim.SGD(model.parameters(), { lr: 0.1, momentum: 0.9 });
 * const swaScheduler = new optim.swaUtils.SWALR(opt, { swaLr: 0.05, annealEpochs: 5 });
 * // per epoch of the SWA phase, after training it:
 * swaScheduler.step();
 * model.dispose();
 * ```
 */
export class SWALR extends LRScheduler {
  /** The SWA rate of each group (PyTorch keeps it as the group's `swa_lr`). */
  readonly swaLrs: number[];
  /** Steps the annealing takes. */
  readonly annealEpochs: number;
  /** The shape of the annealing. */
  readonly annealStrategy: 'cos' | 'linear';
  /** Calls of step(), the constructor's initial one included (PyTorch's `_step_count`). */
  stepCount = 0;

  constructor(optimizer: HasParamGroups, options: SWALROptions) {
    const { swaLrs, annealEpochs, annealStrategy, lastEpoch } = checked(optimizer, options);
    super(optimizer);
    this.swaLrs = swaLrs;
    this.annealEpochs = annealEpochs;
    this.annealStrategy = annealStrategy;
    this.lastEpoch = lastEpoch;
    this.initialStep();
  }

  /** Moves one step on (or to `epoch`: the rates still follow the step count, as in PyTorch). */
  override step(epoch?: number): void {
    this.stepCount += 1;
    super.step(epoch);
  }

  /** The annealing's weight of the SWA rate at progress t in [0, 1]. */
  private anneal(t: number): number {
    return this.annealStrategy === 'linear' ? t : (1 - Math.cos(Math.PI * t)) / 2;
  }

  protected computeLrs(): number[] {
    let step = this.stepCount - 1;
    if (this.annealEpochs === 0) step = Math.max(1, step);
    const span = Math.max(1, this.annealEpochs);
    const prevAlpha = this.anneal(Math.max(0, Math.min(1, (step - 1) / span)));
    const alpha = this.anneal(Math.max(0, Math.min(1, step / span)));
    return this.optimizer.paramGroups.map((group, i) => {
      const swaLr = this.swaLrs[i]!;
      // the rate before the annealing began, worked back from the current one
      const before = prevAlpha === 1 ? swaLr : (group.lr - prevAlpha * swaLr) / (1 - prevAlpha);
      return swaLr * alpha + before * (1 - alpha);
    });
  }

  /** The state to save (see SWALRState). */
  override stateDict(): SWALRState {
    return { ...super.stateDict(), stepCount: this.stepCount };
  }

  /** Restores a saved position (see SWALRState) and writes its rates into the groups. */
  override loadStateDict(state: SWALRState): void {
    // checked first, so a bad state leaves the scheduler as it was
    const stepCount = checksOf('SWALR.loadStateDict').integer(state?.stepCount, 'state.stepCount', {
      min: 0,
    });
    super.loadStateDict(state);
    this.stepCount = stepCount;
  }
}
