// The vectorized Jacobian of torch.autograd.functional (`vectorize: true`), as PyTorch 1.13
// computes it: one backward pass through vmap, whose batched gradient outputs are the standard
// basis of all outputs' elements split across the outputs; the batch of input gradients is then
// split back per output. An input that no output depends on gets zeros, as in the loop form.
// The forward-mode strategy pushes the standard basis of the inputs through forward-mode AD
// instead, in one vmapped call.
import type { Tensor } from './tensor.js';
import { zeros, zerosLike } from './creation.js';
import { diagonal, split } from './tensor-shape.js';
import { autogradGrad, callFunc, gradPostprocess, type TensorFunction } from './autograd-functional-parts.js';
import * as forwardAd from './forward-ad.js';
import { vmapInternal } from './vmap.js';
import type { ArgumentChecks } from '../util/arguments.js';

/**
 * The rows of the identity of size sum(numels), split by columns into one [total, numel_i] block
 * per tensor (PyTorch's _construct_standard_basis_for).
 */
export function standardBasis(tensors: Tensor[], numels: number[]): Tensor[] {
  const total = numels.reduce((a, b) => a + b, 0);
  let start = 0;
  return tensors.map((t, i) => {
    const chunk = zeros([total, numels[i]!], t.dtype, t.device);
    diagonal(chunk, -start).fill_(1);
    start += numels[i]!;
    return chunk;
  });
}

/**
 * The Jacobian [output i][input j] of `outputs` (computed from `inputs` with a graph) in one
 * batched backward pass; detached unless `createGraph`.
 */
export function vectorizedJacobian(outputs: Tensor[], inputs: Tensor[], createGraph: boolean): Tensor[][] {
  const numels = outputs.map((o) => o.numel);
  const total = numels.reduce((a, b) => a + b, 0);
  const basis = standardBasis(outputs, numels);
  const flat = outputs.map((o) => o.reshape(-1));
  const perInput = autogradGrad(flat, inputs, basis, createGraph, undefined, true).map(
    (g, k) => g ?? zerosLike(inputs[k]!).expand(total, ...inputs[k]!.shape),
  );
  const rows = outputs.map((out, i) =>
    perInput.map((jac, k) => split(jac, numels, 0)[i]!.view(...out.shape, ...inputs[k]!.shape)),
  );
  return rows.map((row) => gradPostprocess(row, createGraph));
}

/**
 * The Jacobian [output i][input j] of `func` at `inputs` by forward-mode AD (PyTorch's _jacfwd):
 * the standard basis of all inputs' elements goes in as a batch of tangents through one vmapped
 * call, and each output's batch of tangents is split back per input. Detached unless
 * `createGraph`.
 */
export function forwardJacobian(
  c: ArgumentChecks,
  func: TensorFunction,
  inputs: Tensor[],
  createGraph: boolean,
): [boolean, Tensor[][]] {
  const numels = inputs.map((t) => t.numel);
  const tangents = standardBasis(inputs, numels);
  const info: { isTuple: boolean; shapes: number[][] } = { isTuple: false, shapes: [] };
  const jvp = (...batch: Tensor[]): Tensor[] =>
    forwardAd.dualLevel(() => {
      const duals = inputs.map((t, k) => forwardAd.makeDual(t, batch[k]!.view(...t.shape)));
      const [isTuple, outs] = callFunc(c, func, duals);
      info.isTuple = isTuple;
      return outs.map((o) => {
        const { primal, tangent } = forwardAd.unpackDual(o);
        info.shapes.push(primal.shape);
        return tangent ?? zerosLike(primal);
      });
    });
  const perOutput = vmapInternal(jvp, 0, 0)(...tangents) as Tensor[];
  const rows = perOutput.map((jac, i) =>
    split(jac, numels, 0).map((part, k) => {
      const order = [...Array(part.ndim).keys()].slice(1);
      return part.permute(...order, 0).reshape(...info.shapes[i]!, ...inputs[k]!.shape);
    }),
  );
  return [info.isTuple, rows.map((row) => gradPostprocess(row, createGraph))];
}
