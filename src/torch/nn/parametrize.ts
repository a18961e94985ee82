// torch.nn.utils.parametrize: a parameter computed by modules from an unconstrained one. As in
// PyTorch the module gets a `parametrizations` submodule whose entry per parameter name holds
// `original` (the trained tensor) and the parametrizations ('0', '1'... in order), so the state
// dict has PyTorch's keys (`parametrizations.weight.original`). PyTorch recomputes the tensor
// on every attribute read; tailor's layers read plain fields, so the tensor is recomputed by a
// forward pre-hook of the module (as weight-norms.ts does) and once at registration, and the
// module's field holds the latest value.
import { Tensor } from '../tensor.js';
import { keep, tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import { Module } from './module.js';
import { disposeAlso, moduleRegistries } from './module-registries.js';
import type { RemovableHandle } from '../hook-handle.js';
import { ArgumentError } from '../../util/arguments.js';

/** A parametrization: a module mapping the original tensor to the parameter (rightInverse optional). */
export interface Parametrization extends Module {
  /** The parameter's value computed from `x` (the original, or the previous parametrization's result). */
  forward(x: Tensor): Tensor;
  /** Maps a value of the parameter back to an original, used once at registration. */
  rightInverse?(x: Tensor): Tensor;
}

const registries = moduleRegistries;

/** The parametrizations of one parameter (PyTorch's ParametrizationList): `original` and '0', '1'... */
export class ParametrizationList extends Module {
  /** The tensor the optimizer trains. */
  readonly original: Tensor;
  /** @internal */
  constructor(original: Tensor) {
    super();
    this.original = this.registerParameter('original', original);
  }
  /** @internal */
  append(p: Parametrization): void {
    this.registerModule(String(this.children().length), p);
  }
  /** The parameter's value: the parametrizations applied in order to `original`. */
  forward(): Tensor {
    let x = this.original;
    for (const p of this.children()) x = (p as Parametrization).forward(x);
    return x;
  }
}

/** A module's `parametrizations`: one {@link ParametrizationList} per parametrized name, as fields. */
export class ParametrizationDict extends Module {
  [name: string]: unknown;
  /** Not callable: the entries compute the parameters. */
  forward(): never {
    throw new ArgumentError('tailor: parametrizations: call forward() of an entry (parametrizations.weight)');
  }
}

interface State {
  readonly dict: ParametrizationDict;
  readonly computed: Map<string, Tensor>;
  /** The names computed inside the current parametrize.cached block. */
  readonly fresh: Set<string>;
  readonly hook: RemovableHandle;
  /** Gives the module its own dispose back. */
  readonly restoreDispose: () => void;
}
const states = new WeakMap<Module, State>();

/** Sets `module[name]` to `value` (kept), freeing the value it replaces. */
function assign(module: Module, state: State, name: string, value: Tensor): void {
  state.computed.get(name)?.dispose();
  state.computed.set(name, keep(value));
  (module as unknown as Record<string, unknown>)[name] = value;
}

function recompute(module: Module, state: State, name: string): void {
  const list = state.dict[name] as ParametrizationList;
  assign(
    module,
    state,
    name,
    tidy(() => list.forward()),
  );
}

// parametrize.cached: while cacheDepth > 0 a name computed once is not recomputed by the
// forward pre-hook; `fresh` remembers which, in the states listed in `cachedStates`
let cacheDepth = 0;
const cachedStates = new Set<State>();

function endCache(): void {
  cacheDepth--;
  if (cacheDepth > 0) return;
  for (const s of cachedStates) s.fresh.clear();
  cachedStates.clear();
}

/**
 * Runs `fn` with the parametrized tensors cached (torch.nn.utils.parametrize.cached): inside it
 * each parametrized tensor is computed once, by the first forward of its module, and the later
 * forwards reuse that value (with its gradient path), which saves the recomputation when a
 * module runs more than once (a recurrent step, weight sharing) and makes stateful
 * parametrizations such as spectralNorm's power iteration step once. The cache is cleared when
 * `fn` returns or throws, or, for a promise, when it settles; nested calls share the outermost
 * cache. Returns what `fn` returns.
 */
export function cached<T>(fn: () => T): T {
  if (typeof fn !== 'function')
    throw new ArgumentError(
      'tailor: parametrize.cached: fn must be a function (the block to run with the cache)',
    );
  cacheDepth++;
  let result: T;
  try {
    result = fn();
  } catch (e) {
    endCache();
    throw e;
  }
  if (result instanceof Promise) return result.finally(endCache) as T;
  endCache();
  return result;
}

function stateOf(module: Module): State {
  const existing = states.get(module);
  if (existing) return existing;
  const dict = new ParametrizationDict();
  registries(module).registerModule('parametrizations', dict);
  Object.defineProperty(module, 'parametrizations', { configurable: true, writable: true, value: dict });
  const hook = module.registerForwardPreHook(() => {
    for (const name of state.computed.keys()) {
      if (cacheDepth > 0 && state.fresh.has(name)) continue;
      recompute(module, state, name);
      if (cacheDepth === 0) continue;
      state.fresh.add(name);
      cachedStates.add(state);
    }
  });
  const computed = new Map<string, Tensor>();
  const state: State = {
    dict,
    computed,
    fresh: new Set(),
    hook,
    restoreDispose: disposeAlso(module, computed),
  };
  states.set(module, state);
  return state;
}

/**
 * Parametrizes `module[name]` (torch.nn.utils.parametrize.register_parametrization): from now on
 * the parameter is `parametrization.forward(original)`, with `original` (trained, in the state
 * dict as `parametrizations.<name>.original`) the tensor itself, or `rightInverse` of it when the
 * parametrization has one (the same Tensor object, its data replaced, so an optimizer built
 * before keeps training it). A second parametrization of the same name is applied after the
 * first. The parametrization is put in the module's training mode and runs once here, as in
 * PyTorch (with `original` after rightInverse), giving the first value of `module[name]`; unless
 * `unsafe`, that value must keep the parameter's shape and dtype.
 */
export function registerParametrization(
  module: Module,
  name: string,
  parametrization: Parametrization,
  options: { unsafe?: boolean } = {},
): void {
  const fn = 'tailor: registerParametrization';
  if (!(module instanceof Module)) throw new ArgumentError(`${fn}: module must be an nn.Module`);
  if (!(parametrization instanceof Module) || typeof parametrization.forward !== 'function')
    throw new ArgumentError(`${fn}: parametrization must be an nn.Module with forward(x)`);
  const r = registries(module);
  const existing = states.get(module)?.dict[name] as ParametrizationList | undefined;
  const tensor = existing ? existing.original : r.parametersByName.get(name);
  if (!tensor) {
    const own = [...r.parametersByName].filter(([, t]) => t).map(([n]) => `'${n}'`);
    throw new ArgumentError(
      `${fn}: ${module.constructor.name} has no parameter '${name}' (it has ${own.join(', ') || 'none'})`,
    );
  }
  const current = existing ? (module as unknown as Record<string, Tensor>)[name]! : tensor;
  const [shape, dtype] = [current.shape, current.dtype];
  parametrization.train(module.training);
  // As PyTorch, the parametrization runs once at registration (its check, which is also the
  // first value here): a stateful one (spectralNorm's power iteration) steps once, not twice.
  const check = (value: Tensor): void => {
    if (options.unsafe || (value.dtype === dtype && value.shape.join() === shape.join())) return;
    const message = `${fn}: the parametrization maps ${name} of shape [${shape}] (${dtype}) to shape [${value.shape}] (${value.dtype}); keep them, or pass { unsafe: true }`;
    value.dispose();
    throw new ArgumentError(message);
  };
  if (existing) {
    existing.append(parametrization);
    let value: Tensor;
    try {
      value = tidy(() => existing.forward());
      check(value);
    } catch (e) {
      registries(existing).modulesByName.delete(String(existing.children().length - 1));
      throw e;
    }
    assign(module, states.get(module)!, name, value);
    return;
  }
  if (parametrization.rightInverse)
    noGrad(() => tidy(() => tensor.setData(parametrization.rightInverse!(tensor))));
  const value = tidy(() => parametrization.forward(tensor));
  check(value);
  const state = stateOf(module);
  r.parametersByName.delete(name);
  const list = new ParametrizationList(tensor);
  list.append(parametrization);
  registries(state.dict).registerModule(name, list);
  state.dict[name] = list;
  assign(module, state, name, value);
}

/** Whether `module` has parametrizations (of `name`, when given) (torch's is_parametrized). */
export function isParametrized(module: Module, name?: string): boolean {
  const state = states.get(module);
  return state !== undefined && (name === undefined || state.computed.has(name));
}

/**
 * Takes the parametrizations of `module[name]` off (torch's remove_parametrizations): the
 * parameter becomes `original` again, holding the parametrized value when `leaveParametrized`
 * (the default) or its own value otherwise. The last one removed takes `parametrizations` off.
 */
export function removeParametrizations(module: Module, name: string, leaveParametrized = true): void {
  const state = states.get(module);
  const list = state?.dict[name] as ParametrizationList | undefined;
  if (!state || !list)
    throw new ArgumentError(
      `tailor: removeParametrizations: ${module.constructor.name} has no parametrization of '${name}'`,
    );
  const original = list.original;
  if (leaveParametrized) {
    const value = state.computed.get(name)!;
    if (value.shape.join() !== original.shape.join() || value.dtype !== original.dtype)
      throw new ArgumentError(
        `tailor: removeParametrizations: '${name}' is parametrized to another shape or dtype than original's; pass leaveParametrized false`,
      );
    tidy(() => original.setData(value.detach()));
  }
  state.computed.get(name)!.dispose();
  state.computed.delete(name);
  state.fresh.delete(name);
  registries(list).parametersByName.delete('original');
  registries(state.dict).modulesByName.delete(name);
  delete state.dict[name];
  registries(module).registerParameter(name, original);
  (module as unknown as Record<string, unknown>)[name] = original;
  if (state.computed.size > 0) return;
  state.hook.remove();
  registries(module).modulesByName.delete('parametrizations');
  delete (module as unknown as Record<string, unknown>).parametrizations;
  state.restoreDispose();
  states.delete(module);
}
