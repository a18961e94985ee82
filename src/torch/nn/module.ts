// Module: the base of every layer and model, in the shape of torch.nn.Module (parameters,
// buffers, submodules, train/eval, named state dict, apply).
import { Tensor } from '../tensor.js';
import { keep } from '../scope.js';
import { noGrad } from '../autograd.js';
import { CPU, checkDevice, parseDevice, type Device, type DeviceLike } from '../device.js';
import type { MemoryFormat } from '../memory-format.js';

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

  /** Registers a trainable tensor (requires_grad is switched on); the module owns it. */
  protected registerParameter(name: string, value: Tensor | null): Tensor {
    if (value) keep(value.requiresGrad_(true));
    this.parametersByName.set(name, value);
    return value as Tensor;
  }

  /** Registers state that is saved but not trained (running statistics). */
  protected registerBuffer(name: string, value: Tensor | null): Tensor {
    if (value) keep(value);
    this.buffersByName.set(name, value);
    return value as Tensor;
  }

  protected registerModule<M extends Module>(name: string, module: M): M {
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

  /** The direct submodules with their registered names. */
  *namedChildren(): Generator<[string, Module]> {
    yield* this.modulesByName.entries();
  }

  /** This module (name `prefix`) and every submodule, depth first, with dotted names. */
  *namedModules(prefix = ''): Generator<[string, Module]> {
    yield [prefix, this];
    for (const [name, child] of this.modulesByName)
      yield* child.namedModules(prefix ? `${prefix}.${name}` : name);
  }

  /** Every trainable tensor of this module and its submodules, with dotted names (`layer1.0.weight`). */
  *namedParameters(prefix = ''): Generator<[string, Tensor]> {
    for (const [name, p] of this.parametersByName) if (p) yield [prefix ? `${prefix}.${name}` : name, p];
    for (const [name, child] of this.modulesByName)
      yield* child.namedParameters(prefix ? `${prefix}.${name}` : name);
  }

  /** Every buffer (saved, not trained: running statistics) of this module and its submodules, with dotted names. */
  *namedBuffers(prefix = ''): Generator<[string, Tensor]> {
    for (const [name, b] of this.buffersByName) if (b) yield [prefix ? `${prefix}.${name}` : name, b];
    for (const [name, child] of this.modulesByName)
      yield* child.namedBuffers(prefix ? `${prefix}.${name}` : name);
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

  /** Parameters and buffers by dotted name. The tensors are the module's own: do not dispose them. */
  stateDict(): Record<string, Tensor> {
    const out: Record<string, Tensor> = {};
    for (const [name, p] of this.namedParameters()) out[name] = p;
    for (const [name, b] of this.namedBuffers()) out[name] = b;
    return out;
  }

  /**
   * Copies values into the module's tensors. strict: every key must match both ways, with the
   * same shape; errors name the offending keys.
   */
  loadStateDict(state: Record<string, Tensor>, strict = true): { missing: string[]; unexpected: string[] } {
    const own = this.stateDict();
    const missing = Object.keys(own).filter((k) => !(k in state));
    const unexpected = Object.keys(state).filter((k) => !(k in own));
    if (strict && (missing.length > 0 || unexpected.length > 0)) {
      throw new Error(
        `loadStateDict: ${missing.length ? `missing keys: ${missing.join(', ')}` : ''}${missing.length && unexpected.length ? '; ' : ''}${unexpected.length ? `unexpected keys: ${unexpected.join(', ')}` : ''}`,
      );
    }
    noGrad(() => {
      for (const [name, target] of Object.entries(own)) {
        const source = state[name];
        if (!source) continue;
        const a = target.shape.join('x');
        const b = source.shape.join('x');
        if (a !== b)
          throw new Error(
            `loadStateDict: '${name}' has shape [${b}] in the checkpoint but [${a}] in the model`,
          );
        target.copy_(source);
      }
    });
    return { missing, unexpected };
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
    for (const [, child] of this.modulesByName) child.apply(fn);
    fn(this);
    return this;
  }

  /**
   * Moves every parameter, gradient and buffer to `device` in place (as torch's module.to):
   * the Tensor objects stay the same, so an optimizer built on them keeps working.
   */
  to(device: DeviceLike): this {
    const target = checkDevice(device);
    const firstGpu = parseDevice('cuda:0');
    noGrad(() => {
      for (const t of [...this.parameters(), ...this.buffers()]) {
        const at = t.device;
        if (at === target || (target.type === 'cuda' && target.index === null && at === firstGpu)) continue;
        const moved = t.toDevice(target);
        t.setData(moved);
        moved.dispose();
        const g = t.grad;
        if (g) {
          const movedGrad = g.toDevice(target);
          t.grad = movedGrad;
          movedGrad.dispose();
          g.dispose();
        }
      }
    });
    return this;
  }

  /**
   * Lays out every 4-D parameter, gradient and buffer in `format` in place (torch's
   * `module.to(memory_format=...)`): the Tensor objects stay the same, so an optimizer built on
   * them keeps working; tensors of other ranks are left as they are. Returns how many tensors are
   * 4-D (0: the format changes nothing here, e.g. a model without 2-D convolutions).
   */
  toMemoryFormat(format: MemoryFormat): number {
    let fourD = 0;
    noGrad(() => {
      for (const t of [...this.parameters(), ...this.buffers()]) {
        if (t.ndim !== 4) continue;
        fourD++;
        if (!t.isContiguousIn(format)) {
          const laid = t.contiguous(format);
          t.setData(laid);
          laid.dispose();
        }
        const g = t.grad;
        if (g && !g.isContiguousIn(format)) {
          const laidGrad = g.contiguous(format);
          t.grad = laidGrad;
          laidGrad.dispose();
        }
        g?.dispose();
      }
    });
    return fourD;
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

  /** Frees every parameter and buffer of the module tree. */
  dispose(): void {
    for (const t of [...this.parameters(), ...this.buffers()]) t.dispose();
  }
}
