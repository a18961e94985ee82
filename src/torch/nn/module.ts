// Module: the base of every layer and model, in the shape of torch.nn.Module (parameters,
// buffers, submodules, train/eval, named state dict, apply, dtype conversion, hooks).
import { Tensor } from '../tensor.js';
import { keep } from '../scope.js';
import { CPU, type Device, type DeviceLike } from '../device.js';
import { isDType, type DType } from '../dtype.js';
import type { MemoryFormat } from '../memory-format.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
import {
  addForwardHook,
  type ForwardHook,
  type ForwardHookOptions,
  type ForwardPreHook,
  type ModuleHookOptions,
  type RemovableHandle,
} from './module-hooks.js';
import type { FullBackwardHook, FullBackwardPreHook } from './module-backward-hooks.js';
import { noteModuleClass } from './module-global-hooks.js';
import {
  addStateHook,
  haveStateHooks,
  loadStateWithHooks,
  stateDictWithHooks,
  type LoadStateDictPostHook,
  type LoadStateDictPreHook,
  type StateDictPostHook,
  type StateDictPreHook,
  type StateTree,
} from './module-state-hooks.js';
import { moduleRepr } from './module-repr.js';
import { convertDtype, convertFormat, moveToDevice } from './module-convert.js';
import { loadState, lookUpTensor, resolvePath } from './module-state.js';

/**
 * The base of every layer and model (torch.nn.Module): a subclass registers its parameters,
 * buffers and submodules in its constructor and defines `forward`. The module owns its tensors
 * (free them with `dispose()`); `stateDict`/`loadStateDict` save and restore them by dotted name.
 *
 * @example
 * ```ts
 * import { nn, type Tensor } from 'tailor/torch';
 * class Mlp extends nn.Module {
 *   readonly fc1 = this.registerModule('fc1', new nn.Linear(4, 16));
 *   readonly fc2 = this.registerModule('fc2', new nn.Linear(16, 3));
 *   forward(x: Tensor): Tensor {
 *     return this.fc2.forward(this.fc1.forward(x).relu());
 *   }
 * }
 * ```
 */
export abstract class Module {
  training = true;
  private readonly parametersByName = new Map<string, Tensor | null>();
  private readonly buffersByName = new Map<string, Tensor | null>();
  private readonly modulesByName = new Map<string, Module>();
  /** Buffers left out of the state dict (`registerBuffer(name, t, { persistent: false })`). */
  private readonly nonPersistent = new Set<string>();
  /** The tree as the hooked state-dict walks see it (module-state-hooks.ts). */
  private static readonly stateTree: StateTree = {
    own: (m) =>
      [...m.parametersByName, ...[...m.buffersByName].filter(([name]) => !m.nonPersistent.has(name))].filter(
        (entry): entry is [string, Tensor] => entry[1] !== null,
      ),
    children: (m) => m.modulesByName,
  };

  /** Notes the module's class, whose forward the global module hooks reach (module-global-hooks.ts). */
  constructor() {
    noteModuleClass(new.target);
  }

  /** Registers a trainable tensor (requires_grad is switched on); the module owns it. */
  protected registerParameter(name: string, value: Tensor | null): Tensor {
    if (value) keep(value.requiresGrad_(true));
    this.parametersByName.set(name, value);
    return value as Tensor;
  }

  /**
   * Registers state that is not trained (running statistics); the module owns it. A buffer is
   * saved in the state dict unless `persistent` is false (torch's register_buffer): then `to`,
   * `double()`... still convert it, and `buffers()` lists it.
   */
  protected registerBuffer(
    name: string,
    value: Tensor | null,
    options: { persistent?: boolean } = {},
  ): Tensor {
    if (value) keep(value);
    this.buffersByName.set(name, value);
    if (options.persistent === false) this.nonPersistent.add(name);
    else this.nonPersistent.delete(name);
    return value as Tensor;
  }

  protected registerModule<M extends Module>(name: string, module: M): M {
    if (!(module instanceof Module))
      checksOf(this.constructor.name).fail(`submodule '${name}'`, 'a Module', module);
    this.modulesByName.set(name, module);
    return module;
  }

  /** Replaces a registered parameter or buffer tensor (disposing the old one). */
  protected replaceTensor(name: string, value: Tensor): void {
    const map = this.parametersByName.has(name) ? this.parametersByName : this.buffersByName;
    const old = map.get(name);
    if (old && old !== value) old.dispose();
    map.set(name, keep(value));
  }

  /** The direct submodules with their registered names; one registered under two names comes once (its first). */
  *namedChildren(): Generator<[string, Module]> {
    const seen = new Set<Module>();
    for (const [name, child] of this.modulesByName) {
      if (seen.has(child)) continue;
      seen.add(child);
      yield [name, child];
    }
  }

  /** The direct submodules (torch's children()), each once. */
  children(): Module[] {
    return [...this.namedChildren()].map(([, m]) => m);
  }

  /**
   * This module (name `prefix`) and every submodule, depth first, with dotted names. A module
   * registered twice (shared) comes once, under its first name, as torch's named_modules.
   */
  *namedModules(prefix = ''): Generator<[string, Module]> {
    yield* this.walkModules(prefix, new Set());
  }

  private *walkModules(prefix: string, seen: Set<Module>): Generator<[string, Module]> {
    if (seen.has(this)) return;
    seen.add(this);
    yield [prefix, this];
    for (const [name, child] of this.modulesByName)
      yield* child.walkModules(prefix ? `${prefix}.${name}` : name, seen);
  }

  /**
   * The submodule at a dotted path (`'layer1.0.conv1'`; `''` is this module), as torch's
   * get_submodule; a missing step is a named error.
   */
  getSubmodule(target: string): Module {
    return this.resolve('getSubmodule', target, typeof target === 'string' ? target.split('.') : []);
  }

  /** The parameter at a dotted path (`'layer1.0.conv1.weight'`), as torch's get_parameter. */
  getParameter(target: string): Tensor {
    return this.lookUp('getParameter', target, 'parameter', (m) => m.parametersByName);
  }

  /** The buffer at a dotted path (`'bn1.running_mean'`), persistent or not, as torch's get_buffer. */
  getBuffer(target: string): Tensor {
    return this.lookUp('getBuffer', target, 'buffer', (m) => m.buffersByName);
  }

  private resolve(method: string, target: string, path: string[]): Module {
    return resolvePath(this, (m) => m.modulesByName, method, target, path);
  }

  private lookUp(
    method: string,
    target: string,
    what: string,
    table: (m: Module) => Map<string, Tensor | null>,
  ): Tensor {
    return lookUpTensor(this, (m) => m.modulesByName, method, target, what, table);
  }

  /** This module and every submodule, depth first, each once (torch's modules()). */
  modules(): Module[] {
    return [...this.namedModules()].map(([, m]) => m);
  }

  /** Own and descendant tensors of one kind by dotted name, shared modules and tensors under every name (the state dict's walk). */
  private *walkTensors(
    kind: 'parameters' | 'buffers',
    prefix: string,
    persistentOnly: boolean,
  ): Generator<[string, Tensor]> {
    const own = kind === 'parameters' ? this.parametersByName : this.buffersByName;
    for (const [name, t] of own)
      if (t && !(persistentOnly && kind === 'buffers' && this.nonPersistent.has(name)))
        yield [prefix ? `${prefix}.${name}` : name, t];
    for (const [name, child] of this.modulesByName)
      yield* child.walkTensors(kind, prefix ? `${prefix}.${name}` : name, persistentOnly);
  }

  /** Each tensor of one kind once, under its first name (torch's _named_members). */
  private *uniqueTensors(kind: 'parameters' | 'buffers', prefix: string): Generator<[string, Tensor]> {
    const seen = new Set<Tensor>();
    for (const entry of this.walkTensors(kind, prefix, false)) {
      if (seen.has(entry[1])) continue;
      seen.add(entry[1]);
      yield entry;
    }
  }

  /**
   * Every trainable tensor of this module and its submodules, with dotted names
   * (`layer1.0.weight`); a tensor shared by two modules comes once, as in torch.
   */
  *namedParameters(prefix = ''): Generator<[string, Tensor]> {
    yield* this.uniqueTensors('parameters', prefix);
  }

  /** Every buffer (running statistics) of this module and its submodules, with dotted names, each once. */
  *namedBuffers(prefix = ''): Generator<[string, Tensor]> {
    yield* this.uniqueTensors('buffers', prefix);
  }

  /**
   * Switches requires_grad on every parameter (torch's requires_grad_): `false` freezes the
   * module (no gradients, so an optimizer leaves it as it is), `true` unfreezes it; returns it.
   */
  requiresGrad_(requiresGrad = true): this {
    if (typeof requiresGrad !== 'boolean')
      throw new ArgumentError(
        `tailor: requiresGrad_: requiresGrad must be a boolean, got ${typeof requiresGrad}`,
      );
    for (const p of this.parameters()) p.requiresGrad_(requiresGrad);
    return this;
  }

  /** The trainable tensors of this module and its submodules (for an optimizer); the module owns them. */
  parameters(): Tensor[] {
    return [...this.namedParameters()].map(([, p]) => p);
  }

  /** The buffers of this module and its submodules; the module owns them. */
  buffers(): Tensor[] {
    return [...this.namedBuffers()].map(([, b]) => b);
  }

  /** The number of trainable scalars (the sum of the parameters' element counts). */
  numParameters(): number {
    return this.parameters().reduce((n, p) => n + p.numel, 0);
  }

  /**
   * Parameters and persistent buffers by dotted name (a shared module under each of its names,
   * as torch's state_dict). The tensors are the module's own: do not dispose them.
   */
  stateDict(): Record<string, Tensor> {
    const flat = (): Record<string, Tensor> => {
      const out: Record<string, Tensor> = {};
      for (const [name, p] of this.walkTensors('parameters', '', true)) out[name] = p;
      for (const [name, b] of this.walkTensors('buffers', '', true)) out[name] = b;
      return out;
    };
    if (!haveStateHooks(this.modules(), ['save', 'saved'])) return flat();
    return stateDictWithHooks(this, Module.stateTree, () => Object.keys(flat()));
  }

  /**
   * Copies values into the module's tensors. strict: every key must match both ways, with the
   * same shape; errors name the offending keys (and nothing is copied, unless a module has load
   * hooks: then, as in PyTorch, the matching tensors are copied first).
   */
  loadStateDict(state: Record<string, Tensor>, strict = true): { missing: string[]; unexpected: string[] } {
    if (haveStateHooks(this.modules(), ['load', 'loaded']))
      return loadStateWithHooks(this, Module.stateTree, state, strict);
    return loadState(this.stateDict(), state, strict);
  }

  /** Adds a hook run before this module's part of the state dict is collected (PyTorch 2.x's register_state_dict_pre_hook). */
  registerStateDictPreHook(hook: StateDictPreHook<this>): RemovableHandle {
    return addStateHook(this, 'save', hook as StateDictPreHook);
  }

  /**
   * Adds a hook run after this module's part of the state dict is collected, which may change
   * the dict in place (PyTorch 2.x's register_state_dict_post_hook, 1.13's _register_state_dict_hook).
   */
  registerStateDictPostHook(hook: StateDictPostHook<this>): RemovableHandle {
    return addStateHook(this, 'saved', hook as StateDictPostHook);
  }

  /** Adds a hook run before this module's tensors are loaded, which may change the entries in place (PyTorch's register_load_state_dict_pre_hook). */
  registerLoadStateDictPreHook(hook: LoadStateDictPreHook<this>): RemovableHandle {
    return addStateHook(this, 'load', hook as LoadStateDictPreHook);
  }

  /** Adds a hook run after this module and its submodules are loaded, with the incompatible keys (PyTorch's register_load_state_dict_post_hook). */
  registerLoadStateDictPostHook(hook: LoadStateDictPostHook<this>): RemovableHandle {
    return addStateHook(this, 'loaded', hook as LoadStateDictPostHook);
  }

  /** Sets training mode (dropout active, batch norm updating its statistics) on this module and its submodules; returns it. */
  train(mode = true): this {
    for (const [, m] of this.namedModules()) m.training = mode;
    return this;
  }

  /** Sets evaluation mode on this module and its submodules (`train(false)`); returns it. */
  eval(): this {
    return this.train(false);
  }

  /** Calls `fn` on every submodule (children first) and then on this module; returns it. */
  apply(fn: (module: Module) => void): this {
    if (typeof fn !== 'function') checksOf('Module.apply').fail('fn', 'a function of a module', fn);
    for (const [, child] of this.modulesByName) child.apply(fn);
    fn(this);
    return this;
  }

  /**
   * Moves every parameter, gradient and buffer to `device` in place (as torch's module.to), or,
   * given a floating-point dtype, converts the floating-point ones to it ({@link toDtype}): the
   * Tensor objects stay the same, so an optimizer built on them keeps working.
   */
  to(target: DeviceLike | DType): this {
    if (typeof target === 'string' && isDType(target)) return this.toDtype(target);
    return this.toDeviceInPlace(target);
  }

  /**
   * Converts every floating-point parameter, gradient and buffer to `dtype` in place (torch's
   * `module.to(dtype)`): integer and bool tensors (BatchNorm's num_batches_tracked) stay as they
   * are, parameters stay trainable, and the Tensor objects stay the same, so fields such as
   * `linear.weight` and an optimizer built on them see the new values.
   */
  toDtype(dtype: DType): this {
    convertDtype([...this.parameters(), ...this.buffers()], dtype);
    return this;
  }

  /** The floating-point parameters and buffers in float64 (torch's double()); returns this. */
  double(): this {
    return this.toDtype('float64');
  }

  /** The floating-point parameters and buffers in float32 (torch's float()); returns this. */
  float(): this {
    return this.toDtype('float32');
  }

  /** The floating-point parameters and buffers in float16 (torch's half()); returns this. */
  half(): this {
    return this.toDtype('float16');
  }

  /** The floating-point parameters and buffers in bfloat16 (torch's bfloat16()); returns this. */
  bfloat16(): this {
    return this.toDtype('bfloat16');
  }

  private toDeviceInPlace(device: DeviceLike): this {
    moveToDevice([...this.parameters(), ...this.buffers()], device);
    return this;
  }

  /**
   * Lays out every 4-D parameter, gradient and buffer in `format` in place (torch's
   * `module.to(memory_format=...)`): the Tensor objects stay the same, so an optimizer built on
   * them keeps working; tensors of other ranks are left as they are. Returns how many tensors are
   * 4-D (0: the format changes nothing here, e.g. a model without 2-D convolutions).
   */
  toMemoryFormat(format: MemoryFormat): number {
    return convertFormat([...this.parameters(), ...this.buffers()], format);
  }

  /** The device of the first parameter (or buffer); the CPU for a module without tensors. */
  get device(): Device {
    const first = this.parameters()[0] ?? this.buffers()[0];
    return first ? first.device : CPU;
  }

  /** Clears every parameter's gradient (set to none, as PyTorch's default). */
  zeroGrad(): void {
    for (const p of this.parameters()) p.grad = null;
  }

  /**
   * Adds a hook run before every `forward` call of this module, with the arguments (torch's
   * register_forward_pre_hook); it may return replacement arguments. Hooks run in registration
   * order (`prepend` puts this one first), after the global ones; `remove()` on the handle takes it
   * off. The first hook puts a hooked `forward` on this instance, so callers of `m.forward(x)` (a
   * parent's forward too) see it; with the last one removed, the plain forward is back.
   */
  registerForwardPreHook(hook: ForwardPreHook<this>, options: ModuleHookOptions = {}): RemovableHandle {
    return addForwardHook(this, 'pre', hook as ForwardPreHook<Module>, options);
  }

  /**
   * Adds a hook run after every `forward` call of this module, with the arguments and the
   * output (torch's register_forward_hook); it may return a replacement output. `alwaysCall` runs
   * it when forward throws too. See {@link registerForwardPreHook} for the order and removal.
   */
  registerForwardHook(hook: ForwardHook<this>, options: ForwardHookOptions = {}): RemovableHandle {
    return addForwardHook(this, 'post', hook as ForwardHook<Module>, options);
  }

  /**
   * Adds a hook run in backward when the gradients with respect to this module's inputs are
   * computed (torch's register_full_backward_hook): `hook(module, gradInput, gradOutput)`, which
   * may return replacement `gradInput`. Calls of `forward` with grad enabled put identity nodes
   * on the module's inputs and outputs, whose backward hands the gradients to the hooks (see
   * docs/torch.md, Modules).
   */
  registerFullBackwardHook(hook: FullBackwardHook<this>, options: ModuleHookOptions = {}): RemovableHandle {
    return addForwardHook(this, 'backward', hook as FullBackwardHook<Module>, options);
  }

  /**
   * Adds a hook run in backward when the gradients with respect to this module's outputs are
   * computed, before they enter the module (PyTorch 2.x's register_full_backward_pre_hook):
   * `hook(module, gradOutput)`, which may return replacement `gradOutput`.
   */
  registerFullBackwardPreHook(
    hook: FullBackwardPreHook<this>,
    options: ModuleHookOptions = {},
  ): RemovableHandle {
    return addForwardHook(this, 'backwardPre', hook as FullBackwardPreHook<Module>, options);
  }

  /** The module's settings for its one-line description (torch's extra_repr): `''` here; layers override it. */
  extraRepr(): string {
    return '';
  }

  /** The module tree as PyTorch prints it: `Sequential(\n  (0): Linear(in_features=4, ...)\n)`. */
  toString(): string {
    const children = [...this.modulesByName].map(([name, m]): [string, string] => [name, m.toString()]);
    return moduleRepr(this.constructor.name, this.extraRepr(), children);
  }

  /** Frees every parameter and buffer of the module tree. */
  dispose(): void {
    for (const t of [...this.parameters(), ...this.buffers()]) t.dispose();
  }
}
