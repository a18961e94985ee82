// The optimizer base: parameter groups with per-group hyperparameters, per-parameter state
// tensors owned by the optimizer (freed by dispose()), zeroGrad, and a state dict that is plain
// JSON-able data plus tensors, indexed like PyTorch's (parameters numbered across groups in order).
import { Tensor } from '../tensor.js';
import { scalarTensor } from '../creation.js';
import { keep, tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import { isFloatingPoint } from '../dtype.js';
import { ArgumentError, describeValue } from '../../util/arguments.js';
import { isSparseHandle } from '../sparse-layout.js';

/** A hyperparameter value: numbers, flags, tuples of numbers (AdamW's betas), or a name or null (LBFGS's lineSearchFn). */
export type HyperValue = number | boolean | number[] | string | null;
/** A parameter group's hyperparameters by name (lr, momentum, betas, ...). */
export type Hyperparameters = Record<string, HyperValue>;

/** A parameter group as users pass it: params plus any hyperparameters that override the defaults. */
export type ParamGroupInput<H> = { params: Tensor[] } & Partial<H>;
/** A parameter group inside an optimizer: every hyperparameter filled in. `lr` is what schedulers set. */
export type ParamGroup<H> = { params: Tensor[] } & H;

/** Per-parameter state: tensors (momentum buffers, moments) and numbers (step counts). */
export type ParamState = Record<string, Tensor | number>;

/** What stateDict() returns: `params` hold the global parameter indices, as in PyTorch. */
export interface OptimizerStateDict {
  state: Record<string, ParamState>;
  paramGroups: ({ params: number[] } & Hyperparameters)[];
}

/** The base of the optimizers (torch.optim.Optimizer): parameter groups with their hyperparameters, per-parameter state, `zeroGrad()`, `step()`, and `stateDict`/`loadStateDict` for checkpoints. */
export abstract class Optimizer<H extends { lr: number }> {
  readonly defaults: H;
  readonly paramGroups: ParamGroup<H>[] = [];
  /** State per parameter, created lazily by step(). */
  protected readonly state = new Map<Tensor, ParamState>();

  constructor(params: Tensor[] | ParamGroupInput<H>[], defaults: H) {
    this.defaults = defaults;
    if (!Array.isArray(params) || params.length === 0) {
      throw new TypeError(`${this.constructor.name}: got an empty parameter list (pass model.parameters())`);
    }
    const groups: ParamGroupInput<H>[] =
      params[0] instanceof Tensor
        ? [{ params: params as Tensor[] } as ParamGroupInput<H>]
        : (params as ParamGroupInput<H>[]);
    for (const group of groups) this.addParamGroup(group);
  }

  /** Adds a group; hyperparameters it lacks come from the defaults. A parameter may be in one group only. */
  addParamGroup(group: ParamGroupInput<H>): void {
    if (!group || !Array.isArray(group.params)) {
      throw new TypeError(`${this.constructor.name}: a parameter group needs a 'params' array of tensors`);
    }
    const seen = new Set<Tensor>(this.paramGroups.flatMap((g) => g.params));
    for (const [i, p] of group.params.entries()) {
      if (!(p instanceof Tensor))
        throw new TypeError(`${this.constructor.name}: params[${i}] is not a Tensor`);
      if (seen.has(p))
        throw new Error(`${this.constructor.name}: params[${i}] appears in more than one parameter group`);
      seen.add(p);
    }
    const filled = { ...this.defaults } as unknown as Hyperparameters;
    for (const [key, value] of Object.entries(group)) {
      if (key === 'params' || value === undefined) continue;
      if (!(key in (this.defaults as object))) {
        throw new TypeError(
          `${this.constructor.name}: unknown hyperparameter '${key}' in a parameter group (known: ${Object.keys(this.defaults).join(', ')})`,
        );
      }
      filled[key] = Array.isArray(value) ? [...(value as unknown as number[])] : (value as HyperValue);
    }
    this.validate(filled as unknown as H);
    this.paramGroups.push({ ...(filled as unknown as H), params: [...group.params] });
  }

  /**
   * Capturable mode (for CUDA graphs, as PyTorch's `capturable=True`): the step reads each
   * group's learning rate from a device tensor instead of baking the number into its kernels (and
   * an optimizer with step counts keeps them in device tensors), so a captured step follows the
   * schedule. Call syncLearningRates() before each replay; it writes a group's `lr` into its
   * tensor when it changed. The update then rounds differently from the eager form, so the two
   * agree to float rounding, not bit for bit: the eager form stays the default.
   */
  get capturable(): boolean {
    return this.rates !== null;
  }

  set capturable(on: boolean) {
    if (on === this.capturable) return;
    if (on && this.capturableRefused !== null) {
      throw new Error(
        `${this.constructor.name}: no capturable mode (CUDA graphs): ${this.capturableRefused}`,
      );
    }
    if (!on) {
      for (const r of this.rates!.values()) r.tensor.dispose();
      this.rates = null;
      return;
    }
    this.rates = new Map(
      this.paramGroups.map((g) => [
        g,
        { tensor: keep(scalarTensor(g.lr, 'float32', g.params[0]!.device)), written: g.lr },
      ]),
    );
  }

  /** Capturable mode: copies each group's current `lr` into its device tensor where it changed. */
  syncLearningRates(): void {
    for (const [group, rate] of this.rates ?? []) {
      if (rate.written !== group.lr) {
        rate.tensor.fill_(group.lr);
        rate.written = group.lr;
      }
    }
  }

  /** Capturable mode: the group's learning-rate tensor (undefined in the eager form). */
  protected rateOf(group: ParamGroup<H>): Tensor | undefined {
    return this.rates?.get(group)?.tensor;
  }

  /** Why this optimizer has no capturable mode (null where it has one), for the error that refuses it. */
  protected readonly capturableRefused: string | null = null;

  /** Capturable mode's learning rates: each group's device tensor and the value last written to it. */
  private rates: Map<ParamGroup<H>, { tensor: Tensor; written: number }> | null = null;

  /** Checks a group's hyperparameters; throws a message naming the bad field. */
  protected abstract validate(hyper: H): void;

  /** One update of every parameter that has a gradient (parameters without one are skipped). */
  abstract step(): void;

  /**
   * Whether step() takes sparse gradients (Embedding's `sparse: true`): as in PyTorch 1.13, SGD,
   * Adagrad and SparseAdam do; the others refuse one by name.
   */
  protected readonly takesSparseGradients: boolean = false;

  /** The error of a gradient of the wrong layout for this optimizer, naming the parameter and the remedy. */
  protected sparseGradientRefused(index: number): Error {
    return new ArgumentError(
      `${this.constructor.name}.step: parameter ${index} has a sparse gradient, which ${this.constructor.name} does not support ` +
        '(as in PyTorch): use SparseAdam, SGD or Adagrad for it, or make the gradient dense (an Embedding without sparse: true)',
    );
  }

  /**
   * The loop of step(): update(p, grad, group) for every parameter that has a gradient, without
   * recording autograd, the temporaries freed at the end. A sparse gradient reaches `update` only
   * where {@link takesSparseGradients} says so.
   */
  protected updateEach(update: (p: Tensor, grad: Tensor, group: ParamGroup<H>) => void): void {
    noGrad(() =>
      tidy(() => {
        let index = 0;
        for (const group of this.paramGroups) {
          for (const p of group.params) {
            const grad = p.grad;
            if (grad && !this.takesSparseGradients && isSparseHandle(grad.handle))
              throw this.sparseGradientRefused(index);
            if (grad) update(p, grad, group);
            index++;
          }
        }
      }),
    );
  }

  /** Clears gradients: by default sets them to none (PyTorch's set_to_none=True), else zeroes them in place. */
  zeroGrad(setToNone = true): void {
    for (const group of this.paramGroups) {
      for (const p of group.params) {
        if (setToNone) {
          p.grad = null;
        } else {
          const g = p.grad;
          if (g) {
            noGrad(() => g.zero_());
            g.dispose();
          }
        }
      }
    }
  }

  /** The state tensors and numbers for one parameter (created empty on first use). */
  protected stateOf(p: Tensor): ParamState {
    let s = this.state.get(p);
    if (!s) {
      s = {};
      this.state.set(p, s);
    }
    return s;
  }

  /** Stores a state tensor, taking ownership of it (kept out of any tidy scope; the old one is freed). */
  protected setStateTensor(state: ParamState, key: string, value: Tensor): Tensor {
    const old = state[key];
    if (old instanceof Tensor && old !== value) old.dispose();
    state[key] = keep(value);
    return value;
  }

  /**
   * The optimizer's state: hyperparameters per group and state per parameter index. The tensors
   * are the optimizer's own (not copies): read or save them, do not dispose them.
   */
  stateDict(): OptimizerStateDict {
    const index = new Map<Tensor, number>();
    const paramGroups = this.paramGroups.map((group) => {
      const { params, ...hyper } = group;
      const ids = params.map((p) => {
        index.set(p, index.size);
        return index.size - 1;
      });
      return { ...cloneHyper(hyper as unknown as Hyperparameters), params: ids };
    });
    const state: Record<string, ParamState> = {};
    for (const [p, s] of this.state) {
      const id = index.get(p);
      if (id !== undefined && Object.keys(s).length > 0) state[String(id)] = { ...s };
    }
    return { state, paramGroups };
  }

  /**
   * Restores hyperparameters and state saved by stateDict() (possibly from another optimizer over
   * parameters of the same shapes, in the same order). State tensors are copied, cast to the
   * parameter's dtype when floating point, as PyTorch does.
   */
  loadStateDict(dict: OptimizerStateDict): void {
    const name = this.constructor.name;
    if (!dict || !Array.isArray(dict.paramGroups) || typeof dict.state !== 'object' || dict.state === null) {
      throw new TypeError(`${name}.loadStateDict: expected { state, paramGroups }`);
    }
    if (dict.paramGroups.length !== this.paramGroups.length) {
      throw new Error(
        `${name}.loadStateDict: the saved state has ${dict.paramGroups.length} parameter groups, this optimizer has ${this.paramGroups.length}`,
      );
    }
    const byId = new Map<number, Tensor>();
    dict.paramGroups.forEach((saved, g) => {
      const group = this.paramGroups[g]!;
      if (!Array.isArray(saved.params) || saved.params.length !== group.params.length) {
        throw new Error(
          `${name}.loadStateDict: parameter group ${g} has ${saved.params?.length} parameters in the saved state, ${group.params.length} here`,
        );
      }
      saved.params.forEach((id, i) => byId.set(id, group.params[i]!));
    });
    // Validate everything before changing anything, so a bad dict leaves the optimizer intact.
    for (const [id, s] of Object.entries(dict.state)) {
      const p = byId.get(Number(id));
      if (!p)
        throw new Error(`${name}.loadStateDict: state for parameter ${id}, which no parameter group lists`);
      for (const [key, value] of Object.entries(s)) {
        if (value instanceof Tensor && key !== 'step' && value.numel !== p.numel) {
          throw new Error(
            `${name}.loadStateDict: state '${key}' of parameter ${id} has shape [${value.shape}], the parameter has [${p.shape}]`,
          );
        }
      }
    }
    dict.paramGroups.forEach((saved, g) => {
      const group = this.paramGroups[g] as unknown as Record<string, unknown>;
      for (const [key, value] of Object.entries(saved)) {
        if (key !== 'params') group[key] = Array.isArray(value) ? [...value] : value;
      }
    });
    this.disposeState();
    for (const [id, s] of Object.entries(dict.state)) {
      const p = byId.get(Number(id))!;
      const restored: ParamState = {};
      for (const [key, value] of Object.entries(s)) {
        if (value instanceof Tensor) {
          // On the parameter's device (a checkpoint saved on another device resumes here).
          const copy = noGrad(() =>
            value.toDevice(p.device, {
              dtype: isFloatingPoint(value.dtype) && value.dtype !== p.dtype ? p.dtype : value.dtype,
              copy: true,
            }),
          );
          // a sparse state tensor (SGD's momentum over sparse gradients) has no reshape: it has the parameter's shape already
          restored[key] = keep(isSparseHandle(copy.handle) ? copy : copy.reshape(...p.shape));
          if (restored[key] !== copy) copy.dispose();
        } else {
          restored[key] = value;
        }
      }
      this.state.set(p, restored);
    }
  }

  /** Frees the state tensors (the optimizer can still step; state starts over). */
  disposeState(): void {
    for (const s of this.state.values()) {
      for (const v of Object.values(s)) if (v instanceof Tensor) v.dispose();
    }
    this.state.clear();
  }

  /** Frees everything the optimizer owns. */
  dispose(): void {
    this.capturable = false;
    this.disposeState();
  }
}

function cloneHyper(hyper: Hyperparameters): Hyperparameters {
  const out: Hyperparameters = {};
  for (const [k, v] of Object.entries(hyper)) out[k] = Array.isArray(v) ? [...v] : v;
  return out;
}

/** Throws unless value is a finite number >= min (naming the field). */
export function checkNumber(owner: string, field: string, value: unknown, min = 0): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new RangeError(
      `${owner}: invalid ${field} ${describeValue(value)} (expected a finite number >= ${min})`,
    );
  }
}

/** `options` when it is an options object; an error naming the optimizer otherwise (null, a number). */
export function optionsOf<T>(owner: string, options: T): T {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new ArgumentError(`${owner}: options must be an object, got ${describeValue(options)}`);
  return options;
}
