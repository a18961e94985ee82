// torch.optim.swa_utils of PyTorch 1.13: AveragedModel (stochastic weight averaging, and with an
// EMA avgFn an exponential moving average of the weights), SWALR (swa-lr.ts) and updateBn, which
// recomputes BatchNorm's running statistics for the averaged weights in one pass over the data.
import { Tensor } from '../tensor.js';
import { getRngState, setRngState, zeros } from '../creation.js';
import { noGrad } from '../autograd.js';
import { tidy } from '../scope.js';
import { CPU, checkDevice, type DeviceLike } from '../device.js';
import { Module } from '../nn/module.js';
import { BatchNorm1d, BatchNorm2d, BatchNorm3d } from '../nn/layers.js';
import { ArgumentError, checksOf, describeValue } from '../../util/arguments.js';

export { SWALR, type SWALROptions, type SWALRState } from './swa-lr.js';

/**
 * How AveragedModel folds the model's current value into the average: returns the new average
 * from the average so far, the model's value (on the average's device) and the number of values
 * averaged so far (an int64 scalar tensor). It runs without autograd, inside a scope that frees
 * its temporaries; the result is copied into the average (cast to its dtype, as PyTorch's copy_).
 */
export type AvgFn = (averagedParam: Tensor, modelParam: Tensor, numAveraged: Tensor) => Tensor;

/** PyTorch's default avgFn: the running mean, avg + (value - avg) / (n + 1). */
function runningMean(averaged: Tensor, current: Tensor, numAveraged: Tensor): Tensor {
  return averaged.add(current.sub(averaged).div(numAveraged.add(1)));
}

/**
 * The exponential moving average as an avgFn: decay * average + (1 - decay) * value (PyTorch
 * 2.x's torch.optim.swa_utils.get_ema_avg_fn; 1.13 has none). `decay` in [0, 1], default 0.999.
 *
 * @example
 * ```ts
 * import { nn, optim } from 'tailor/torch';
 * const model = new nn.Linear(4, 2);
 * const ema = new optim.swaUtils.AveragedModel(model, {
 *   copy: () => new nn.Linear(4, 2),
 *   avgFn: optim.swaUtils.getEmaAvgFn(0.99),
 *   useBuffers: true,
 * });
 * // after each optimizer step:
 * ema.updateParameters(model);
 * ema.dispose();
 * model.dispose();
 * ```
 */
export function getEmaAvgFn(decay = 0.999): AvgFn {
  checksOf('getEmaAvgFn').number(decay, 'decay', { min: 0, max: 1 });
  return (ema, current) => ema.mul(decay).add(current.mul(1 - decay));
}

/** A module with a forward method (what AveragedModel copies and delegates to). */
export type ForwardModule = Module & {
  /** The module's computation (a layer's or model's forward). */
  forward(...args: never[]): unknown;
};

/** Options of AveragedModel (PyTorch's `device=None, avg_fn=None, use_buffers=False`, and how to copy). */
export interface AveragedModelOptions<M extends ForwardModule> {
  /**
   * Builds a new module of the model's class and configuration, for the copy (PyTorch deep-copies
   * the model; tailor's modules hold native tensors and have no generic deep copy): say
   * `() => new Net(config)`. It must have the model's parameter and buffer names and shapes;
   * AveragedModel then overwrites every parameter and buffer with a clone of the model's (dtype
   * and device included) and copies each submodule's training mode. The random generator is
   * restored after it, so building the copy draws nothing, as a deep copy. Default: the model's
   * own `clone()` where it has one (TransformerEncoderLayer, TransformerDecoderLayer).
   */
  copy?: (model: M) => M;
  /** Where the copy and `n_averaged` live (default: the copy stays where the model is, `n_averaged` on the CPU, as PyTorch's device=None). */
  device?: DeviceLike;
  /** How a value joins the average (default: the running mean; see getEmaAvgFn for an EMA). */
  avgFn?: AvgFn;
  /** Average the buffers too (BatchNorm's running statistics), not only the parameters (default false: use updateBn). */
  useBuffers?: boolean;
}

/** How the copy's tensors differ from the model's (names, shapes, sharing), or null where they mirror them. */
function mismatch(mine: [string, Tensor][], theirs: [string, Tensor][]): string | null {
  const own = new Set(mine.map(([, t]) => t));
  const remedy = "build it with the model's configuration";
  for (const [i, [name, t]] of mine.entries()) {
    const entry = theirs[i];
    if (entry === undefined) return `lacks '${name}': ${remedy}`;
    const [copyName, copy] = entry;
    if (own.has(copy)) return `shares '${copyName}' with the model: build a new module`;
    if (copyName !== name || copy.shape.join('x') !== t.shape.join('x'))
      return `has '${copyName}' [${copy.shape}] where the model has '${name}' [${t.shape}]: ${remedy}`;
  }
  if (theirs.length > mine.length)
    return `has '${theirs[mine.length]![0]}', which the model lacks: ${remedy}`;
  return null;
}

/** Builds the copy with the RNG left as it was, and checks that it mirrors the model. */
function copyOf<M extends ForwardModule>(model: M, copy: ((model: M) => M) | undefined): M {
  const c = checksOf('AveragedModel');
  const build = copy ?? (model as unknown as { clone?: () => M }).clone?.bind(model);
  if (typeof build !== 'function') {
    return c.fail(
      'options.copy',
      `a function that builds a new ${model.constructor.name} of the model's configuration, such as () => new ${model.constructor.name}(...)${copy === undefined ? ' (the model has no clone())' : ''}`,
      copy,
    );
  }
  const rng = getRngState();
  let fresh: M;
  try {
    fresh = build(model);
  } finally {
    setRngState(rng);
  }
  if (!(fresh instanceof Module) || fresh === model) {
    throw new ArgumentError(
      `AveragedModel: options.copy must return a new module (not the model itself), got ${describeValue(fresh)}`,
    );
  }
  const mine = [...model.namedParameters(), ...model.namedBuffers()];
  const theirs = [...fresh.namedParameters(), ...fresh.namedBuffers()];
  const problem = mismatch(mine, theirs);
  if (problem !== null) {
    // free what the copy made, never a tensor it shares with the model
    const own = new Set(mine.map(([, t]) => t));
    for (const [, t] of theirs) if (!own.has(t)) t.dispose();
    throw new ArgumentError(`AveragedModel: the module from options.copy ${problem}`);
  }
  noGrad(() =>
    mine.forEach(([, t], i) => {
      const target = theirs[i]![1];
      const clone = t.clone();
      target.setData(clone);
      clone.dispose();
      if (target.requiresGrad !== t.requiresGrad) target.requiresGrad_(t.requiresGrad);
    }),
  );
  const modules = [...model.namedModules()];
  [...fresh.namedModules()].forEach(([, m], i) => (m.training = modules[i]?.[1].training ?? model.training));
  return fresh;
}

/**
 * torch.optim.swa_utils.AveragedModel (PyTorch 1.13): a copy of a model whose parameters (and,
 * with useBuffers, buffers) are the average of the model's values passed to updateParameters
 * (stochastic weight averaging), or with getEmaAvgFn their exponential moving average.
 * `forward` runs the copy. Its state dict holds the copy under `module.` and the int64 count
 * `n_averaged`, as PyTorch's. The copy's tensors belong to the AveragedModel: `dispose()` frees them.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * import { nn, optim } from 'tailor/torch';
 * const makeNet = () => new nn.Sequential(new nn.Linear(4, 8), new nn.BatchNorm1d(8), new nn.Linear(8, 2));
 * const model = makeNet();
 * const swaModel = new optim.swaUtils.AveragedModel(model, { copy: makeNet });
 * // at the end of each epoch of the SWA phase:
 * swaModel.updateParameters(model);
 * // at the end of training, BatchNorm's statistics for the averaged weights:
 * const batches = [torch.randn([16, 4]), torch.randn([16, 4])];
 * optim.swaUtils.updateBn(batches, swaModel);
 * torch.dispose(batches);
 * swaModel.dispose();
 * model.dispose();
 * ```
 */
export class AveragedModel<M extends ForwardModule = ForwardModule> extends Module {
  /** The averaged copy of the model (registered as `module`). */
  readonly module: M;
  /** How many values have been averaged (an int64 scalar buffer, `n_averaged`). */
  readonly nAveraged: Tensor;
  /** How a value joins the average. */
  readonly avgFn: AvgFn;
  /** Whether buffers are averaged too. */
  readonly useBuffers: boolean;

  constructor(model: M, options: AveragedModelOptions<M> = {}) {
    super();
    const c = checksOf('AveragedModel');
    if (!(model instanceof Module) || typeof (model as { forward?: unknown }).forward !== 'function')
      c.fail('model', 'an nn.Module with a forward method', model);
    c.object(options, 'options');
    if (options.avgFn !== undefined && typeof options.avgFn !== 'function')
      c.fail('options.avgFn', 'a function (averaged, current, numAveraged) => Tensor', options.avgFn);
    if (options.useBuffers !== undefined && typeof options.useBuffers !== 'boolean')
      c.fail('options.useBuffers', 'true or false', options.useBuffers);
    const device = options.device === undefined ? undefined : checkDevice(options.device);
    const fresh = copyOf(model, options.copy);
    if (device) fresh.to(device);
    this.module = this.registerModule('module', fresh);
    this.nAveraged = this.registerBuffer('n_averaged', zeros([], 'int64', device ?? CPU));
    this.avgFn = options.avgFn ?? runningMean;
    this.useBuffers = options.useBuffers ?? false;
  }

  /** Runs the averaged copy (its forward, with these arguments). */
  forward(...args: Parameters<M['forward']>): ReturnType<M['forward']> {
    const module = this.module as unknown as { forward(...a: unknown[]): ReturnType<M['forward']> };
    return module.forward(...args);
  }

  /**
   * Folds the model's current values into the average: the first call copies them, each later
   * one applies avgFn; then `n_averaged` counts one more. Pass the model the AveragedModel was
   * built from (the values are paired in order; their number and shapes must agree).
   */
  updateParameters(model: Module): void {
    const c = checksOf('AveragedModel.updateParameters');
    if (!(model instanceof Module)) c.fail('model', 'an nn.Module (the model being trained)', model);
    const what = this.useBuffers ? 'parameters and buffers' : 'parameters';
    const own = this.useBuffers
      ? [...this.module.parameters(), ...this.module.buffers()]
      : this.module.parameters();
    const theirs = this.useBuffers ? [...model.parameters(), ...model.buffers()] : model.parameters();
    if (theirs.length !== own.length) {
      throw new ArgumentError(
        `AveragedModel.updateParameters: the model has ${theirs.length} ${what}, the average ${own.length}: pass the model the AveragedModel was built from`,
      );
    }
    own.forEach((t, i) => {
      if (t.shape.join('x') !== theirs[i]!.shape.join('x'))
        throw new ArgumentError(
          `AveragedModel.updateParameters: ${what} ${i} has shape [${theirs[i]!.shape}] in the model, [${t.shape}] in the average: pass the model the AveragedModel was built from`,
        );
    });
    noGrad(() =>
      tidy(() => {
        const first = this.nAveraged.item() === 0;
        own.forEach((averaged, i) => {
          const device = averaged.device;
          const current = theirs[i]!.toDevice(device);
          if (first) {
            averaged.copy_(current);
            return;
          }
          const next = this.avgFn(averaged, current, this.nAveraged.toDevice(device));
          if (!(next instanceof Tensor))
            throw new ArgumentError(
              `AveragedModel.updateParameters: avgFn must return a Tensor, got ${describeValue(next)}`,
            );
          averaged.copy_(next);
        });
        this.nAveraged.add_(1);
      }),
    );
  }
}

/** What updateBn reads: tensors, or arrays (tuples) whose first element is the input, as PyTorch's. */
export type BnLoader = Iterable<Tensor | readonly unknown[]>;

type BatchNorm = BatchNorm1d | BatchNorm2d | BatchNorm3d;

/** The input of one item of updateBn's loader. */
function inputOf(item: unknown, index: number): Tensor {
  const input = Array.isArray(item) ? (item as unknown[])[0] : item;
  if (!(input instanceof Tensor)) {
    throw new ArgumentError(
      `updateBn: loader item ${index} must be a Tensor or an array whose first element is the input Tensor, got ${describeValue(item)}`,
    );
  }
  return input;
}

/**
 * torch.optim.swa_utils.update_bn (PyTorch 1.13): resets the running statistics of every
 * BatchNorm layer of `model` (those that keep them) and recomputes them in one pass over
 * `loader`, as the plain average over its batches (momentum null), in training mode; then puts
 * the momenta and the training mode back. Each item of the loader is the input tensor or an
 * array whose first element is (a DataLoader's `[input, target]` batch); with `device` the input
 * moves there first. Runs without autograd; the outputs and the tensors the loader creates for
 * an item are freed after it. A model without BatchNorm is left as it is.
 */
export function updateBn(loader: BnLoader, model: Module, options: { device?: DeviceLike } = {}): void {
  const c = checksOf('updateBn');
  if (!(model instanceof Module) || typeof (model as { forward?: unknown }).forward !== 'function')
    c.fail('model', 'an nn.Module with a forward method', model);
  const iterate = (loader as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator];
  if (typeof iterate !== 'function') {
    c.fail(
      'loader',
      'an iterable of tensors or of [input, ...] arrays (a DataLoader, or an array of batches; an async-only iterable: collect its batches into an array first)',
      loader,
    );
  }
  c.object(options, 'options');
  const device = options.device === undefined ? undefined : checkDevice(options.device);
  const norms = model
    .modules()
    .filter(
      (m): m is BatchNorm =>
        (m instanceof BatchNorm1d || m instanceof BatchNorm2d || m instanceof BatchNorm3d) &&
        m.runningMean !== null,
    );
  if (norms.length === 0) return;
  const momenta = norms.map((m) => m.momentum);
  const wasTraining = model.training;
  model.train();
  for (const m of norms) {
    m.resetRunningStats();
    m.momentum = null;
  }
  const items = (iterate as () => Iterator<unknown>).call(loader);
  let finished = false;
  try {
    for (let index = 0; !finished; index++) {
      // the item is fetched inside the scope, so the tensors the loader makes for it are freed with it
      finished = noGrad(() =>
        tidy(() => {
          const next = items.next();
          if (next.done) return true;
          const input = inputOf(next.value, index);
          const forward = (model as unknown as { forward(x: Tensor): unknown }).forward.bind(model);
          forward(device ? input.toDevice(device) : input);
          return false;
        }),
      );
    }
  } finally {
    if (!finished) items.return?.();
    norms.forEach((m, i) => (m.momentum = momenta[i]!));
    model.train(wasTraining);
  }
}
