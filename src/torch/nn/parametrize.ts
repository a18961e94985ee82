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
import { moduleRegistries } from './module-registries.js';
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
  readonly hook: RemovableHandle;
  readonly ownDispose: PropertyDescriptor | undefined;
}
const states = new WeakMap<Module, State>();

function recompute(module: Module, state: State, name: string): void {
  const list = state.dict[name] as ParametrizationList;
  const value = keep(tidy(() => list.forward()));
  state.computed.get(name)?.dispose();
  state.computed.set(name, value);
  (module as unknown as Record<string, unknown>)[name] = value;
}

function stateOf(module: Module): State {
  const existing = states.get(module);
  if (existing) return existing;
  const dict = new ParametrizationDict();
  registries(module).registerModule('parametrizations', dict);
  Object.defineProperty(module, 'parametrizations', { configurable: true, writable: true, value: dict });
  const hook = module.registerForwardPreHook(() => {
    for (const name of state.computed.keys()) recompute(module, state, name);
  });
  const state: State = {
    dict,
    computed: new Map(),
    hook,
    ownDispose: Object.getOwnPropertyDescriptor(module, 'dispose'),
  };
  const dispose = module.dispose;
  Object.defineProperty(module, 'dispose', {
    configurable: true,
    writable: true,
    value: function (this: Module) {
      for (const t of state.computed.values()) t.dispose();
      state.computed.clear();
      dispose.call(this);
    },
  });
  states.set(module, state);
  return state;
}

/**
 * Parametrizes `module[name]` (torch.nn.utils.parametrize.register_parametrization): from now on
 * the parameter is `parametrization.forward(original)`, with `original` (trained, in the state
 * dict as `parametrizations.<name>.original`) the tensor itself, or `rightInverse` of it when the
 * parametrization has one (the same Tensor object, its data replaced, so an optimizer built
 * before keeps training it). A second parametrization of the same name is applied after the
 * first. Unless `unsafe`, the result must keep the parameter's shape and dtype.
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
  if (!options.unsafe)
    noGrad(() =>
      tidy(() => {
        const out = parametrization.forward(current);
        if (out.dtype !== current.dtype || out.shape.join() !== current.shape.join())
          throw new ArgumentError(
            `${fn}: the parametrization maps ${name} of shape [${current.shape}] (${current.dtype}) to shape [${out.shape}] (${out.dtype}); keep them, or pass { unsafe: true }`,
          );
      }),
    );
  const state = stateOf(module);
  if (existing) existing.append(parametrization);
  else {
    if (parametrization.rightInverse)
      noGrad(() => tidy(() => tensor.setData(parametrization.rightInverse!(tensor))));
    r.parametersByName.delete(name);
    const list = new ParametrizationList(tensor);
    list.append(parametrization);
    registries(state.dict).registerModule(name, list);
    state.dict[name] = list;
  }
  recompute(module, state, name);
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
  registries(list).parametersByName.delete('original');
  registries(state.dict).modulesByName.delete(name);
  delete state.dict[name];
  registries(module).registerParameter(name, original);
  (module as unknown as Record<string, unknown>)[name] = original;
  if (state.computed.size > 0) return;
  state.hook.remove();
  registries(module).modulesByName.delete('parametrizations');
  delete (module as unknown as Record<string, unknown>).parametrizations;
  if (state.ownDispose) Object.defineProperty(module, 'dispose', state.ownDispose);
  else delete (module as unknown as Record<string, unknown>).dispose;
  states.delete(module);
}
