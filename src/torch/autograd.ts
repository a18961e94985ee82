// Grad mode scopes and functional gradients.
import { native } from './native.js';
import { Tensor, wrap } from './tensor.js';
import { engineRun } from './autograd-hooks.js';
import { checksOf } from '../util/arguments.js';

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

/** torch.autograd.grad: gradients of outputs with respect to inputs (null where unused). */
export function grad(
  outputs: Tensor[],
  inputs: Tensor[],
  options: {
    gradOutputs?: Tensor[];
    retainGraph?: boolean;
    createGraph?: boolean;
    allowUnused?: boolean;
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
  const result = engineRun('grad', () =>
    native.autogradGrad(
      outputs.map((t) => t.handle),
      inputs.map((t) => t.handle),
      options.gradOutputs ? options.gradOutputs.map((t) => t.handle) : null,
      options.retainGraph ?? null,
      options.createGraph ?? false,
      options.allowUnused ?? false,
    ),
  );
  return result.map((h) => (h === null ? null : wrap(h)));
}
