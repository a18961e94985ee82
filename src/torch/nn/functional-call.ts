// torch.func.functional_call: a module's forward run with some of its parameters and buffers
// replaced by given tensors for that one call (PyTorch's reparametrisation: the module's own
// tensors come back afterwards, even when forward throws). The replacements are the tensors
// themselves, not copies, so gradients flow to them: the way to differentiate a model with respect
// to a dictionary of weights (func.grad over functionalCall), to run weights a hypernetwork made,
// or to evaluate one architecture under many weight sets.
import { Tensor } from '../tensor.js';
import { Module } from './module.js';
import { moduleRegistries } from './module-registries.js';
import { ArgumentError } from '../../util/arguments.js';
import { isPlainObject } from '../pytree.js';
import { stack } from '../creation.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';

/** Options of functionalCall. */
export interface FunctionalCallOptions {
  /**
   * A tensor the module holds under several names (tied weights) is replaced under all of them
   * when one is given (default true, as PyTorch 2.x); giving them different tensors is an error.
   * With false, only the names given are replaced.
   */
  tieWeights?: boolean;
  /** Every parameter and buffer of the module must be given (default false). */
  strict?: boolean;
}

interface Slot {
  owner: Module;
  attr: string;
  table: Map<string, Tensor | null>;
  original: Tensor;
}

/** Every parameter and buffer under every name it has (shared modules and tied tensors included). */
function slotsOf(module: Module): Map<string, Slot> {
  const slots = new Map<string, Slot>();
  const walk = (m: Module, prefix: string, seen: Set<Module>): void => {
    if (seen.has(m)) return;
    const inner = new Set(seen).add(m);
    const r = moduleRegistries(m);
    for (const table of [r.parametersByName, r.buffersByName])
      for (const [attr, t] of table) if (t) slots.set(prefix + attr, { owner: m, attr, table, original: t });
    for (const [name, child] of r.modulesByName) walk(child, `${prefix}${name}.`, inner);
  };
  walk(module, '', new Set());
  return slots;
}

/** The replacements by name: one record, or several whose names must not overlap. */
function replacementsOf(given: unknown): Map<string, Tensor> {
  const dicts = Array.isArray(given) ? given : [given];
  const out = new Map<string, Tensor>();
  dicts.forEach((d, i) => {
    const where = Array.isArray(given) ? `parametersAndBuffers[${i}]` : 'parametersAndBuffers';
    const entries =
      d instanceof Map ? [...(d as Map<unknown, unknown>)] : isPlainObject(d) ? Object.entries(d) : null;
    if (entries === null)
      throw new ArgumentError(
        `functionalCall: ${where} must be an object (or Map) from dotted names to tensors, or an array of them`,
      );
    for (const [name, t] of entries) {
      if (typeof name !== 'string')
        throw new ArgumentError(`functionalCall: ${where} has a key that is not a string`);
      if (!(t instanceof Tensor))
        throw new ArgumentError(`functionalCall: ${where}['${name}'] must be a Tensor`);
      if (out.has(name))
        throw new ArgumentError(`functionalCall: '${name}' is given in more than one of the records`);
      out.set(name, t);
    }
  });
  return out;
}

/**
 * Runs `module.forward(...args)` with the parameters and buffers named in `parametersAndBuffers`
 * (dotted names as in `namedParameters()` and the state dict) replaced by the given tensors for
 * this call only (torch.func.functional_call). The module's own tensors are back when it returns
 * or throws. Gradients flow to the given tensors, not to the module's parameters. A name that is
 * no parameter or buffer of the module is an error (PyTorch would set it as an attribute).
 *
 * @param module The module to run.
 * @param parametersAndBuffers Tensors by dotted name: an object, a Map, or an array of them
 *   (names must not repeat across them).
 * @param args The arguments of forward.
 * @example
 * ```ts
 * import { func, nn, randn, type Tensor } from 'tailor/torch';
 *
 * const model = new nn.Linear(3, 2);
 * const weights = { weight: randn([2, 3]), bias: randn([2]) };
 * const x = randn([4, 3]);
 * const y = func.functionalCall(model, weights, [x]) as Tensor; // x @ weights.weight^T + weights.bias
 * // The gradients of a loss with respect to the weights, as a record of the same names:
 * const grads = func.grad((w: Record<string, Tensor>) => (func.functionalCall(model, w, [x]) as Tensor).pow(2).sum())(weights);
 * console.log(y.shape, grads.weight.shape);
 * ```
 */
export function functionalCall(
  module: Module,
  parametersAndBuffers:
    Record<string, Tensor> | Map<string, Tensor> | (Record<string, Tensor> | Map<string, Tensor>)[],
  args: unknown[] = [],
  options: FunctionalCallOptions = {},
): unknown {
  if (!(module instanceof Module)) throw new ArgumentError('functionalCall: module must be an nn.Module');
  if (!Array.isArray(args))
    throw new ArgumentError('functionalCall: args must be an array of the arguments of forward');
  if (options === null || typeof options !== 'object')
    throw new ArgumentError('functionalCall: options must be an object');
  for (const key of ['tieWeights', 'strict'] as const)
    if (options[key] !== undefined && typeof options[key] !== 'boolean')
      throw new ArgumentError(`functionalCall: options.${key} must be a boolean`);
  const forward = (module as unknown as { forward?: unknown }).forward;
  if (typeof forward !== 'function')
    throw new ArgumentError(`functionalCall: ${module.constructor.name} has no forward`);
  const slots = slotsOf(module);
  const given = replacementsOf(parametersAndBuffers);
  const unknown = [...given.keys()].filter((n) => !slots.has(n));
  if (unknown.length > 0)
    throw new ArgumentError(
      `functionalCall: ${unknown.map((n) => `'${n}'`).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} no parameter or buffer of ${module.constructor.name} (see namedParameters() and namedBuffers())`,
    );
  // Tied weights: every name of a replaced tensor takes the replacement.
  const byOriginal = new Map<Tensor, { name: string; tensor: Tensor }>();
  for (const [name, t] of given) {
    const original = slots.get(name)!.original;
    const other = byOriginal.get(original);
    if (other && other.tensor !== t && options.tieWeights !== false)
      throw new ArgumentError(
        `functionalCall: '${other.name}' and '${name}' are one tied tensor of the module but are given different tensors; give one of them, or pass { tieWeights: false }`,
      );
    byOriginal.set(original, { name, tensor: t });
  }
  const plan = new Map<string, Tensor>(given);
  if (options.tieWeights !== false)
    for (const [name, slot] of slots)
      if (!plan.has(name) && byOriginal.has(slot.original))
        plan.set(name, byOriginal.get(slot.original)!.tensor);
  if (options.strict === true) {
    const missing = [...slots.keys()].filter((n) => !plan.has(n));
    if (missing.length > 0)
      throw new ArgumentError(
        `functionalCall: with strict, every parameter and buffer must be given; missing ${missing.map((n) => `'${n}'`).join(', ')}`,
      );
  }
  const restore: (() => void)[] = [];
  try {
    for (const [name, t] of plan) {
      const { owner, attr, table, original } = slots.get(name)!;
      // Layers read their tensors from fields as well as from the registry, under the registered
      // name or another (`this.weight`, BatchNorm's `this.runningMean` for running_mean): every
      // own field that holds the tensor takes the replacement.
      const fields = Object.getOwnPropertyNames(owner)
        .map((key) => [key, Object.getOwnPropertyDescriptor(owner, key)!] as const)
        .filter(([, d]) => 'value' in d && d.value === original);
      table.set(attr, t);
      for (const [key, d] of fields) Object.defineProperty(owner, key, { ...d, value: t });
      restore.push(() => {
        table.set(attr, original);
        for (const [key, d] of fields) Object.defineProperty(owner, key, d);
      });
    }
    return (forward as (...a: unknown[]) => unknown).apply(module, args);
  } finally {
    for (const undo of restore.reverse()) undo();
  }
}

/**
 * torch.func.stack_module_state: the parameters and buffers of several models of one
 * architecture stacked along a new first dimension, as `[parameters, buffers]` records by dotted
 * name, for an ensemble run in one call (`vmap((p, b, x) => functionalCall(base, [p, b], [x]),
 * [0, 0, null])(parameters, buffers, x)`). The stacked parameters are new leaves that require grad
 * (the models' own are not linked to them); the records' tensors belong to the caller's scope.
 */
export function stackModuleState(models: Module[]): [Record<string, Tensor>, Record<string, Tensor>] {
  const fn = 'stackModuleState';
  if (!Array.isArray(models) || models.length === 0)
    throw new ArgumentError(`${fn}: models must be a non-empty array of nn.Modules`);
  models.forEach((m, i) => {
    if (!(m instanceof Module)) throw new ArgumentError(`${fn}: models[${i}] is not an nn.Module`);
    if (m.training !== models[0]!.training)
      throw new ArgumentError(
        `${fn}: models[${i}] is in ${m.training ? 'training' : 'eval'} mode and models[0] is not; put them in one mode`,
      );
  });
  const stackAll = (entries: (m: Module) => [string, Tensor][], kind: string, asLeaf: boolean) => {
    const names = entries(models[0]!).map(([n]) => n);
    const per = models.map((m, i) => {
      const own = new Map(entries(m));
      if (own.size !== names.length || names.some((n) => !own.has(n)))
        throw new ArgumentError(
          `${fn}: models[${i}] has other ${kind} than models[0]; stack models of one architecture`,
        );
      return own;
    });
    return Object.fromEntries(
      names.map((n) => {
        const parts = per.map((own) => own.get(n)!);
        if (parts.some((t) => t.shape.join() !== parts[0]!.shape.join() || t.dtype !== parts[0]!.dtype))
          throw new ArgumentError(
            `${fn}: the ${kind.slice(0, -1)} '${n}' differs in shape or dtype across the models`,
          );
        const stacked = noGrad(() => stack(parts, 0));
        return [n, asLeaf ? stacked.requiresGrad_(true) : stacked];
      }),
    );
  };
  return tidy(() => [
    stackAll((m) => [...m.namedParameters()], 'parameters', true),
    stackAll((m) => [...m.namedBuffers()], 'buffers', false),
  ]);
}
