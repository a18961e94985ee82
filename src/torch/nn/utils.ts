// torch.nn.utils: gradient clipping (clip_grad_norm_ / clip_grad_value_, in PyTorch 1.13's order
// of operations), parameters as one vector, and (from their own modules) the packing of
// variable-length batches and the weight reparametrisations. The total norm stays a device tensor and the scale is applied as one, so clipping
// needs no wait for the device (and can sit inside a captured CUDA graph); only
// errorIfNonfinite reads the norm back.
import { Tensor } from '../tensor.js';
import { scalarTensor } from '../creation.js';
import { noGrad } from '../autograd.js';
import { tidy } from '../scope.js';
import * as aten from '../generated/aten.js';
import { isSparseHandle } from '../sparse-layout.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';

/** Packed variable-length batches for LSTM and GRU (torch.nn.utils.rnn). */
export * as rnn from './rnn-packing.js';
/** Parameters computed by modules from unconstrained ones (torch.nn.utils.parametrize). */
export * as parametrize from './parametrize.js';
/** Orthogonal and spectral-norm parametrizations (torch.nn.utils.parametrizations). */
export * as parametrizations from './parametrizations.js';
export {
  weightNorm,
  removeWeightNorm,
  spectralNorm,
  removeSpectralNorm,
  type SpectralNormOptions,
} from './weight-norms.js';

/** Options of clipGradNorm_: the norm's order and whether a non-finite total norm is an error. */
export interface ClipGradNormOptions {
  /** The order of the norm: 2 (default), any number > 0, or Infinity for the largest absolute value. */
  normType?: number;
  /** Throw when the total norm is NaN or infinite, rather than scale the gradients by it (default false; reads the norm back, a wait for the device). */
  errorIfNonfinite?: boolean;
}

function parametersOf(c: ArgumentChecks, parameters: Tensor | Tensor[]): Tensor[] {
  const list = parameters instanceof Tensor ? [parameters] : parameters;
  if (!Array.isArray(list) || list.some((p) => !(p instanceof Tensor)))
    c.fail('parameters', 'a Tensor or an array of Tensors', parameters);
  return list;
}

/**
 * Scales the gradients of `parameters` in place so that their total norm (the norm of the
 * per-parameter norms, all gradients seen as one vector) is at most `maxNorm`
 * (torch.nn.utils.clip_grad_norm_). Parameters without a gradient are skipped. A `maxNorm` of
 * Infinity only measures the norm.
 *
 * @returns the total norm before clipping: a 0-dim float tensor on the gradients' device, owned
 *   by the caller (0 when no parameter has a gradient).
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const w = torch.keep(torch.ones([4]).requiresGrad_());
 * torch.tidy(() => w.mul(10).sum().backward()); // gradient 10 in each entry: norm 20
 * const norm = torch.nn.utils.clipGradNorm_([w], 1);
 * console.log(norm.item()); // 20; w.grad now has norm 1
 * norm.dispose();
 * ```
 */
export function clipGradNorm_(
  parameters: Tensor | Tensor[],
  maxNorm: number,
  options: ClipGradNormOptions = {},
): Tensor {
  const c = checksOf('clipGradNorm_');
  const params = parametersOf(c, parameters);
  if (typeof maxNorm !== 'number' || !(maxNorm >= 0)) c.fail('maxNorm', 'a number >= 0', maxNorm);
  const o = c.object(options, 'options');
  const normType = (o.normType as number | undefined) ?? 2;
  if (typeof normType !== 'number' || !(normType > 0))
    c.fail('options.normType', 'a number > 0 or Infinity', normType);
  return noGrad(() =>
    tidy(() => {
      const grads = params.map((p) => p.grad).filter((g): g is Tensor => g !== null);
      if (grads.length === 0) return scalarTensor(0);
      const device = grads[0]!.device;
      // a sparse gradient's norm is its coalesced values' (duplicate indices add up first)
      const entries = grads.map((g) => (isSparseHandle(g.handle) ? aten._values(g.coalesce()) : g));
      let total: Tensor;
      if (normType === Infinity) {
        const norms = entries.map((g) =>
          (g.numel === 0 ? scalarTensor(0, g.dtype, g.device) : aten.max(g.abs())).to(device),
        );
        total = norms.length === 1 ? norms[0]! : aten.max(aten.stack(norms));
      } else {
        const norms = entries.map((g) => aten.linalg_vector_norm(g, normType).to(device));
        total = aten.linalg_vector_norm(aten.stack(norms), normType);
      }
      if (o.errorIfNonfinite === true && !Number.isFinite(total.item()))
        throw new RangeError(
          `clipGradNorm_: the total norm of order ${normType} of the gradients of ${grads.length} ` +
            `parameters is non-finite, so they cannot be clipped; set errorIfNonfinite to false to ` +
            `scale them anyway (they become NaN)`,
        );
      // maxNorm Infinity (only the norm is wanted) would scale by 1: skip those kernels
      if (maxNorm !== Infinity) {
        const scale = total.add(1e-6).reciprocal().mul(maxNorm).clamp(null, 1);
        for (const g of grads) g.mul_(scale.to(g.device));
      }
      return total;
    }),
  );
}

/**
 * Clamps the gradients of `parameters` in place to [-clipValue, clipValue]
 * (torch.nn.utils.clip_grad_value_). Parameters without a gradient are skipped.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const w = torch.keep(torch.ones([3]).requiresGrad_());
 * torch.tidy(() => w.mul(torch.tensor([-5, 0.5, 5])).sum().backward());
 * torch.nn.utils.clipGradValue_([w], 1);
 * torch.tidy(() => console.log(w.grad!.toArray())); // [-1, 0.5, 1]
 * ```
 */
export function clipGradValue_(parameters: Tensor | Tensor[], clipValue: number): void {
  const c = checksOf('clipGradValue_');
  const params = parametersOf(c, parameters);
  c.number(clipValue, 'clipValue', { min: 0 });
  noGrad(() =>
    tidy(() => {
      for (const p of params) {
        const g = p.grad;
        if (g) aten.clamp_(g, -clipValue, clipValue);
      }
    }),
  );
}

/** The parameters, checked to be Tensors on one device (PyTorch's _check_param_device). */
function sameDevice(c: ArgumentChecks, parameters: Iterable<Tensor>): Tensor[] {
  if (parameters === null || typeof parameters !== 'object' || !(Symbol.iterator in parameters))
    c.fail('parameters', 'an array (or iterable) of Tensors', parameters);
  const list = [...parameters];
  list.forEach((p, i) => {
    if (!(p instanceof Tensor)) c.fail(`parameters[${i}]`, 'a Tensor', p);
    if (p.device !== list[0]!.device)
      throw new ArgumentError(
        `${c.fn}: parameters[${i}] is on ${p.device.name} but parameters[0] on ${list[0]!.device.name}; move them to one device`,
      );
  });
  return list;
}

/**
 * The parameters flattened and concatenated into one 1-d tensor
 * (torch.nn.utils.parameters_to_vector), with its gradient path to each of them.
 */
export function parametersToVector(parameters: Iterable<Tensor>): Tensor {
  const c = checksOf('parametersToVector');
  const list = sameDevice(c, parameters);
  if (list.length === 0) c.fail('parameters', 'at least one Tensor', parameters);
  return tidy(() => aten.cat(list.map((p) => p.reshape(-1))));
}

/**
 * Copies consecutive slices of the 1-d `vec` into the parameters, in place and without a
 * gradient path (torch.nn.utils.vector_to_parameters); `vec` must hold exactly as many values
 * as the parameters together.
 */
export function vectorToParameters(vec: Tensor, parameters: Iterable<Tensor>): void {
  const c = checksOf('vectorToParameters');
  if (!(vec instanceof Tensor) || vec.ndim !== 1) c.fail('vec', 'a 1-d Tensor', vec);
  const list = sameDevice(c, parameters);
  const total = list.reduce((n, p) => n + p.numel, 0);
  if (vec.numel !== total)
    throw new ArgumentError(
      `vectorToParameters: vec has ${vec.numel} values but the ${list.length} parameters hold ${total}; pass the vector parametersToVector made of the same parameters`,
    );
  noGrad(() =>
    tidy(() => {
      let at = 0;
      for (const p of list) {
        p.copy_(vec.narrow(0, at, p.numel).reshape(...p.shape));
        at += p.numel;
      }
    }),
  );
}
