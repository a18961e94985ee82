// Grad mode scopes and functional gradients.
import { native } from './native.js';
import { Tensor, wrap } from './tensor.js';
import { engineRun } from './autograd-hooks.js';
import { checksOf } from '../util/arguments.js';
import { vmapInternal } from './vmap.js';

/** Runs fn with gradient tracking off (torch.no_grad); restores the previous mode even on throw. */
export function noGrad<T>(fn: () => T): T {
  const previous = native.isGradEnabled();
  native.setGradEnabled(false);
  try {
    return fn();
  } finally {
    native.setGradEnabled(previous);
  }
}

/** Runs fn with gradient tracking on (torch.enable_grad), inside a noGrad for example; restores the previous mode even on throw. */
export function enableGrad<T>(fn: () => T): T {
  const previous = native.isGradEnabled();
  native.setGradEnabled(true);
  try {
    return fn();
  } finally {
    native.setGradEnabled(previous);
  }
}

/** Whether operations record gradients now (torch.is_grad_enabled). */
export function isGradEnabled(): boolean {
  return native.isGradEnabled();
}

/**
 * torch.autograd.grad: gradients of outputs with respect to inputs (null where unused).
 *
 * With `isGradsBatched`, the first dimension of each of `gradOutputs` is a batch: the result is
 * the batch of vector-Jacobian products, one per row, computed in one backward pass through
 * vmap (the gradients have the batch as their first dimension), as PyTorch's
 * `is_grads_batched=True`.
 */
export function grad(
  outputs: Tensor[],
  inputs: Tensor[],
  options: {
    gradOutputs?: Tensor[];
    retainGraph?: boolean;
    createGraph?: boolean;
    allowUnused?: boolean;
    isGradsBatched?: boolean;
  } = {},
): (Tensor | null)[] {
  const c = checksOf('autograd.grad');
  const tensors = (value: unknown, name: string): Tensor[] => {
    if (!Array.isArray(value)) c.fail(name, 'an array of Tensors', value);
    (value as unknown[]).forEach((t, i) => t instanceof Tensor || c.fail(`${name}[${i}]`, 'a Tensor', t));
    return value as Tensor[];
  };
  tensors(outputs, 'outputs');
  tensors(inputs, 'inputs');
  if (options === null || typeof options !== 'object') c.fail('options', 'an object', options);
  if (options.gradOutputs !== undefined) tensors(options.gradOutputs, 'options.gradOutputs');
  const run = (gradOutputs: Tensor[] | null) =>
    engineRun('grad', () =>
      native.autogradGrad(
        outputs.map((t) => t.handle),
        inputs.map((t) => t.handle),
        gradOutputs ? gradOutputs.map((t) => t.handle) : null,
        options.retainGraph ?? null,
        options.createGraph ?? false,
        options.allowUnused ?? false,
      ),
    ).map((h) => (h === null ? null : wrap(h)));
  if (options.isGradsBatched === undefined || options.isGradsBatched === false)
    return run(options.gradOutputs ?? null);
  if (options.isGradsBatched !== true) c.fail('options.isGradsBatched', 'a boolean', options.isGradsBatched);
  const given = options.gradOutputs;
  if (given === undefined || given.length !== outputs.length)
    c.fail(
      'options.gradOutputs',
      `one batch of gradients per output (${outputs.length}) with isGradsBatched`,
      given === undefined ? undefined : `${given.length} tensor(s)`,
    );
  const gradOutputs = given as Tensor[];
  gradOutputs.forEach((g, i) => {
    const want = outputs[i].shape;
    const got = g.shape;
    if (got.length !== want.length + 1 || want.some((s, k) => s !== got[k + 1]))
      c.fail(
        `options.gradOutputs[${i}]`,
        `a batch of gradients of shape [batch, ${want.join(', ')}] (isGradsBatched reads the first dimension as the batch)`,
        `shape [${got.join(', ')}]`,
      );
  });
  const batchedVjp = vmapInternal((...gs: Tensor[]) => run(gs), 0, 0, { allowNonePassThrough: true });
  return batchedVjp(...gradOutputs) as (Tensor | null)[];
}
