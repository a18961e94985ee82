// Weight reparametrisations of PyTorch 1.13's hook API (torch.nn.utils.weight_norm and
// spectral_norm and their remove_ functions): the module's parameter is replaced by new
// parameters (and buffers) and the weight is recomputed from them before every forward.
// As in PyTorch, the recomputation is a forward pre-hook of the module (one per module, for all
// its norms, taken off when the last norm is removed), so it composes with the user's own hooks
// in registration order. The computed weight is owned by the module (freed by the next
// recomputation, by the removal, or by the module's dispose, which is wrapped for that).
import { Tensor } from '../tensor.js';
import { empty } from '../creation.js';
import { keep, tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { disposeAlso, moduleRegistries } from './module-registries.js';
import type { RemovableHandle } from './module-hooks.js';
import { ConvTranspose1d, ConvTranspose2d, ConvTranspose3d } from './conv.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';

const registries = moduleRegistries;

/** One reparametrised parameter: recomputes the weight; `remove` turns it back into a plain parameter. */
interface Norm {
  readonly kind: 'weightNorm' | 'spectralNorm';
  compute(training: boolean): Tensor;
  remove(): void;
}

interface Hooked {
  readonly norms: Map<string, Norm>;
  readonly computed: Map<string, Tensor>;
  /** The forward pre-hook that recomputes the weights. */
  readonly hook: RemovableHandle;
  /** Gives the module its own dispose back. */
  readonly restoreDispose: () => void;
}

const hooked = new WeakMap<Module, Hooked>();

/** Sets the module's attribute `name` to a freshly computed weight, freeing the previous one. */
function assign(module: Module, state: Hooked, name: string, weight: Tensor): void {
  state.computed.get(name)?.dispose();
  state.computed.set(name, keep(weight));
  (module as unknown as Record<string, unknown>)[name] = weight;
}

function install(module: Module, name: string, norm: Norm): Hooked {
  let state = hooked.get(module);
  if (!state) {
    const norms = new Map<string, Norm>();
    const computed = new Map<string, Tensor>();
    // every norm, in the order they were applied
    const hook = module.registerForwardPreHook(() => {
      for (const [n, norm] of norms)
        assign(
          module,
          s,
          n,
          tidy(() => norm.compute(module.training)),
        );
      return undefined;
    });
    const s: Hooked = {
      norms,
      computed,
      hook,
      restoreDispose: disposeAlso(module, computed),
    };
    hooked.set(module, s);
    state = s;
  }
  state.norms.set(name, norm);
  return state;
}

function uninstall(module: Module, name: string): void {
  const state = hooked.get(module)!;
  state.norms.delete(name);
  state.computed.get(name)?.dispose();
  state.computed.delete(name);
  if (state.norms.size > 0) return;
  state.hook.remove();
  state.restoreDispose();
  hooked.delete(module);
}

/** The module's own (not a submodule's) parameter `name`, checked to be reparametrisable. */
function parameterOf(c: ArgumentChecks, module: unknown, name: unknown): Tensor {
  if (!(module instanceof Module)) c.fail('module', 'an nn.Module', module);
  if (typeof name !== 'string' || name === '' || name.includes('.'))
    c.fail('name', "the name of one of the module's own parameters ('weight')", name);
  const m = module as Module;
  const kind = hooked.get(m)?.norms.get(name as string)?.kind;
  if (kind)
    throw new ArgumentError(
      `${c.fn}: '${name}' of ${m.constructor.name} already has a ${kind}; remove it (remove${kind[0]!.toUpperCase()}${kind.slice(1)}) first`,
    );
  const p = registries(m).parametersByName.get(name as string);
  if (!p) {
    const own = [...registries(m).parametersByName].filter(([, t]) => t).map(([n]) => n);
    throw new ArgumentError(
      `${c.fn}: ${m.constructor.name} has no parameter '${name}' (its own parameters: ${own.join(', ') || 'none'}); name one of them`,
    );
  }
  // the recomputed weight is assigned to module[name]: a getter without a setter (on the
  // instance or its class) or a frozen field would drop it silently
  let descriptor: PropertyDescriptor | undefined;
  for (let o: object | null = m; o && !descriptor; o = Object.getPrototypeOf(o) as object | null)
    descriptor = Object.getOwnPropertyDescriptor(o, name as string);
  if (descriptor && !descriptor.writable && !descriptor.set)
    throw new ArgumentError(
      `${c.fn}: ${m.constructor.name}.${name} is read-only, so the recomputed weight cannot be set on it`,
    );
  return p;
}

function normOf(c: ArgumentChecks, module: unknown, name: unknown, kind: Norm['kind']): Norm {
  if (!(module instanceof Module)) c.fail('module', 'an nn.Module', module);
  const norm = hooked.get(module as Module)?.norms.get(name as string);
  if (!norm || norm.kind !== kind)
    throw new ArgumentError(
      `${c.fn}: ${(module as Module).constructor.name} has no ${kind} on '${String(name)}'; nothing to remove`,
    );
  return norm;
}

/** Replaces parameter `name` by a new one at the end of the registry (as PyTorch's register_parameter after a delattr). */
function reregister(module: Module, name: string, weight: Tensor): void {
  const r = registries(module);
  r.parametersByName.delete(name);
  r.registerParameter(name, weight);
  (module as unknown as Record<string, unknown>)[name] = weight;
}

/**
 * Reparametrises `module`'s parameter `name` as `name_g * name_v / ||name_v||`
 * (torch.nn.utils.weight_norm, PyTorch 1.13's hook form): the parameter is replaced by the
 * parameters `${name}_g` (the norms over every dimension but `dim`) and `${name}_v` (the old
 * parameter tensor itself), and `module[name]` is recomputed from them before every forward.
 * `dim` null (or -1, as PyTorch) takes one norm over the whole tensor. Build the optimizer after
 * this call: the parameters changed. Returns `module`.
 */
export function weightNorm<M extends Module>(module: M, name = 'weight', dim: number | null = 0): M {
  const c = checksOf('weightNorm');
  const weight = parameterOf(c, module, name);
  const d = dim ?? -1;
  if (!Number.isSafeInteger(d) || d < -1 || d >= weight.ndim)
    c.fail(
      'dim',
      `an integer from 0 to ${weight.ndim - 1} (the dimensions of ${name} [${weight.shape.join(', ')}]) or null (-1) for one norm over the whole tensor`,
      dim,
    );
  const r = registries(module);
  const g = noGrad(() => aten.norm_except_dim(weight, 2, d));
  r.parametersByName.delete(name);
  const gParam = r.registerParameter(`${name}_g`, g);
  const vParam = r.registerParameter(`${name}_v`, weight);
  const state = install(module, name, {
    kind: 'weightNorm',
    compute: () => aten._weight_norm(vParam, gParam, d),
    remove: () => {
      const w = noGrad(() => aten._weight_norm(vParam, gParam, d));
      uninstall(module, name);
      r.parametersByName.delete(`${name}_g`);
      r.parametersByName.delete(`${name}_v`);
      gParam.dispose();
      vParam.dispose();
      reregister(module, name, w);
    },
  });
  // as PyTorch, the weight is there (with its gradient path) before the first forward
  assign(
    module,
    state,
    name,
    tidy(() => aten._weight_norm(vParam, gParam, d)),
  );
  return module;
}

/** Removes the weight norm of parameter `name` (torch.nn.utils.remove_weight_norm): `name` becomes a plain parameter again, with the current weight. Returns `module`. */
export function removeWeightNorm<M extends Module>(module: M, name = 'weight'): M {
  normOf(checksOf('removeWeightNorm'), module, name, 'weightNorm').remove();
  return module;
}

/** Options of spectralNorm (PyTorch's names and defaults, camelCase). */
export interface SpectralNormOptions {
  /** The parameter to normalise (default 'weight'). */
  name?: string;
  /** Power-iteration steps per training-mode forward (default 1). */
  nPowerIterations?: number;
  /** The floor of the norms the vectors are divided by (default 1e-12). */
  eps?: number;
  /** The dimension of the output units (default 0; 1 for ConvTranspose1d/2d/3d). */
  dim?: number;
}

/** `x / max(||x||, eps)` (torch.nn.functional.normalize of a vector). */
function normalize(x: Tensor, eps: number): Tensor {
  return x.div(aten.linalg_vector_norm(x, 2).clamp(eps, null));
}

/**
 * Divides `module`'s parameter `name` by its largest singular value, estimated by power iteration
 * (torch.nn.utils.spectral_norm, PyTorch 1.13's hook form): the parameter becomes
 * `${name}_orig`, the power iteration's vectors the buffers `${name}_u` and `${name}_v` (random
 * unit vectors at first, from the global generator), and `module[name]` is recomputed before every
 * forward. Each training-mode forward first runs `nPowerIterations` steps, updating u and v in
 * place; evaluation mode uses them as they are. The weight is viewed as a matrix with `dim`
 * first. Build the optimizer after this call. Returns `module`.
 */
export function spectralNorm<M extends Module>(module: M, options: SpectralNormOptions = {}): M {
  const c = checksOf('spectralNorm');
  const o = c.object(options, 'options');
  const name = (o.name as string | undefined) ?? 'weight';
  const weight = parameterOf(c, module, name);
  const n = c.integer(o.nPowerIterations ?? 1, 'options.nPowerIterations', { min: 1, max: 1e6 });
  const eps = c.number(o.eps ?? 1e-12, 'options.eps', { above: 0 });
  const transposed =
    module instanceof ConvTranspose1d ||
    module instanceof ConvTranspose2d ||
    module instanceof ConvTranspose3d;
  const dim = o.dim ?? (transposed ? 1 : 0);
  if (!Number.isSafeInteger(dim) || (dim as number) < 0 || (dim as number) >= weight.ndim)
    c.fail(
      'options.dim',
      `an integer from 0 to ${weight.ndim - 1} (the dimensions of ${name} [${weight.shape.join(', ')}])`,
      dim,
    );
  const d = dim as number;
  const matrix = (w: Tensor): Tensor => {
    const rows = w.shape[d]!;
    const order = [d, ...w.shape.map((_, i) => i).filter((i) => i !== d)];
    return (d === 0 ? w : w.permute(...order)).reshape(rows, -1);
  };
  const r = registries(module);
  const [u, v] = noGrad(() =>
    tidy(() => {
      const [rows, cols] = matrix(weight).shape as [number, number];
      const random = (size: number) =>
        normalize(aten.normal_(empty([size], weight.dtype, weight.device), 0, 1), eps);
      const first = random(rows);
      return [first, random(cols)];
    }),
  );
  r.parametersByName.delete(name);
  const orig = r.registerParameter(`${name}_orig`, weight);
  const uBuffer = r.registerBuffer(`${name}_u`, u!);
  const vBuffer = r.registerBuffer(`${name}_v`, v!);
  const compute = (training: boolean): Tensor => {
    const mat = matrix(orig);
    let uNow = uBuffer;
    let vNow = vBuffer;
    if (training) {
      noGrad(() => {
        for (let i = 0; i < n; i++) {
          vBuffer.copy_(normalize(aten.mv(mat.t(), uBuffer), eps));
          uBuffer.copy_(normalize(aten.mv(mat, vBuffer), eps));
        }
        // copies, so that the next forward's in-place update does not touch this graph
        uNow = uBuffer.clone();
        vNow = vBuffer.clone();
      });
    }
    const sigma = aten.dot(uNow, aten.mv(mat, vNow));
    return orig.div(sigma);
  };
  const state = install(module, name, {
    kind: 'spectralNorm',
    compute,
    remove: () => {
      const w = noGrad(() => tidy(() => compute(false)));
      uninstall(module, name);
      r.parametersByName.delete(`${name}_orig`);
      r.buffersByName.delete(`${name}_u`);
      r.buffersByName.delete(`${name}_v`);
      for (const t of [orig, uBuffer, vBuffer]) t.dispose();
      reregister(module, name, w);
    },
  });
  // as PyTorch, until the first forward the attribute is the original weight's values
  assign(module, state, name, orig.detach());
  return module;
}

/** Removes the spectral norm of parameter `name` (torch.nn.utils.remove_spectral_norm): `name` becomes a plain parameter with the current normalised weight (no power iteration). Returns `module`. */
export function removeSpectralNorm<M extends Module>(module: M, name = 'weight'): M {
  normOf(checksOf('removeSpectralNorm'), module, name, 'spectralNorm').remove();
  return module;
}
