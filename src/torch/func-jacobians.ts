// torch.func's Jacobians: jacrev (one batched backward pass over the standard basis of the
// outputs, through vmap; inside vmap, for all examples at once), jacfwd (one vmapped forward-mode pass over the standard basis of the
// inputs) and hessian (jacfwd of jacrev). For output leaf i and input leaf k the block has shape
// [...output_i.shape, ...input_k.shape]; blocks are arranged as the output and then as the
// differentiated arguments (an array of them when argnums is an array), as functorch's.
import type { Tensor } from './tensor.js';
import { zeros, zerosLike } from './creation.js';
import { tidy } from './scope.js';
import { enableGrad } from './autograd.js';
import * as forwardAd from './forward-ad.js';
import { split } from './tensor-shape.js';
import { flattenTree, type Flattened } from './pytree.js';
import { currentVmap, vmapInternal } from './vmap.js';
import * as aten from './generated/aten.js';
import { standardBasis, vectorizedJacobian } from './autograd-functional-vectorized.js';
import { autogradGrad, gradPostprocess } from './autograd-functional-parts.js';
import {
  argnumsOf,
  callWithBatchedStandIns,
  callWithStandIns,
  detachTree,
  differentiated,
  forwardPass,
  outputLeaves,
  refuseInsideForward,
  replaceArgs,
  splitAux,
  transformLevel,
  type Argnums,
  type TensorTree,
} from './func-common.js';
import { ArgumentError } from '../util/arguments.js';
import type { AuxOptions, TransformedFunction } from './func.js';

function check(fn: string, func: unknown, options: unknown): boolean {
  if (typeof func !== 'function') throw new ArgumentError(`${fn}: func must be a function`);
  if (options === null || typeof options !== 'object')
    throw new ArgumentError(`${fn}: options must be an object`);
  const h = (options as AuxOptions).hasAux;
  if (h !== undefined && typeof h !== 'boolean')
    throw new ArgumentError(`${fn}: options.hasAux must be a boolean`);
  return h ?? false;
}

/** The blocks rows[i][k] arranged as the output (i) and the differentiated arguments (k). */
function arrange(outFlat: Flattened, flats: Flattened[], rows: Tensor[][], argnums: Argnums): unknown {
  return outFlat.rebuild(
    rows.map((row) => {
      let k = 0;
      const perArg = flats.map((f) => f.rebuild(f.leaves.map(() => row[k++]!)));
      return typeof argnums === 'number' ? perArg[0] : perArg;
    }),
  );
}

/**
 * torch.func.jacrev: the function that returns the Jacobian of `func` with respect to argument
 * `argnums` by reverse mode (one backward pass, vectorized over the outputs' elements).
 *
 * @example
 * ```ts
 * import { func, tensor, type Tensor } from 'tailor/torch';
 *
 * const J = func.jacrev((x: Tensor) => x.sin())(tensor([0, 1])); // diag(cos(x)), shape [2, 2]
 * console.log(J.shape);
 * ```
 */
export function jacrev(
  func: TransformedFunction,
  argnums: Argnums = 0,
  options: AuxOptions = {},
): (...args: unknown[]) => TensorTree {
  const fn = 'func.jacrev';
  const hasAux = check(fn, func, options);
  return (...args: unknown[]) => {
    refuseInsideForward(fn);
    const v = currentVmap();
    if (v !== null) return batchedJacrev(fn, func, argnums, hasAux, args, v);
    return tidy(() =>
      transformLevel((nested) =>
        enableGrad(() => {
          const { flats, leaves, keepGraph, output, aux } = callWithStandIns(
            fn,
            func,
            args,
            argnums,
            hasAux,
            nested,
          );
          const outFlat = outputLeaves(fn, output);
          const rows = vectorizedJacobian(outFlat.leaves, leaves.flat(), keepGraph);
          const jac = arrange(outFlat, flats, rows, argnums);
          return hasAux ? [jac, detachTree(aux, keepGraph)] : jac;
        }),
      ),
    );
  };
}

/**
 * Each example's Jacobian blocks [output i][input k] of physical outputs [B, ...out_i] with
 * respect to physical inputs [B, ...in_k], as [B, ...out_i, ...in_k], in one backward pass: the
 * batched gradient outputs are the standard basis of one example's output elements, repeated for
 * every example (an example's outputs depend on its own inputs only).
 */
function perExampleJacobian(
  outputs: Tensor[],
  inputs: Tensor[],
  batch: number,
  createGraph: boolean,
): Tensor[][] {
  const shapes = outputs.map((o) => o.shape.slice(1));
  const numels = shapes.map((s) => s.reduce((a, b) => a * b, 1));
  const total = numels.reduce((a, b) => a + b, 0);
  const basis = standardBasis(outputs, numels).map((b, i) =>
    b.reshape(total, 1, ...shapes[i]!).expand(total, batch, ...shapes[i]!),
  );
  const perInput = autogradGrad(outputs, inputs, basis, createGraph, undefined, true);
  return outputs.map((_, i) =>
    gradPostprocess(
      inputs.map((input, k) => {
        const inShape = input.shape.slice(1);
        const g = perInput[k];
        if (g === null || g === undefined)
          return zeros([batch, ...shapes[i]!, ...inShape], input.dtype, input.device);
        const block = split(g, numels, 0)[i]!;
        return block.movedim(0, 1).reshape(batch, ...shapes[i]!, ...inShape);
      }),
      createGraph,
    ),
  );
}

/**
 * jacrev inside vmap, for every example at once: the differentiated inputs become physical
 * [batch, ...] stand-ins (batched again for func), and each example's Jacobian comes from one
 * backward pass over the physical outputs (see perExampleJacobian), as the gradient does in
 * func.ts. Nested, it differentiates again (hessian is jacrev of jacrev).
 */
function batchedJacrev(
  fn: string,
  func: TransformedFunction,
  argnums: Argnums,
  hasAux: boolean,
  args: unknown[],
  v: { level: number; batchSize: number },
): TensorTree {
  return tidy(() =>
    transformLevel((nested) =>
      enableGrad(() => {
        const call = callWithBatchedStandIns(fn, func, args, argnums, hasAux, nested, v);
        const outFlat = outputLeaves(fn, call.output);
        const physicalOutputs = outFlat.leaves.map(call.unbatch);
        const rows = perExampleJacobian(physicalOutputs, call.stands, v.batchSize, call.keepGraph);
        const jac = arrange(
          outFlat,
          call.flats,
          rows.map((row) => row.map(call.batch)),
          argnums,
        );
        if (!hasAux) return jac;
        const auxFlat = flattenTree(call.aux, `${fn}: aux`);
        return [jac, auxFlat.rebuild(auxFlat.leaves.map(call.detached))];
      }),
    ),
  );
}

/**
 * The forward-mode Jacobian: the standard basis of the inputs' elements goes in as tangents
 * through one vmapped pass, and each output's tangents are its Jacobian columns. Inside vmap `v`
 * the inputs are the physical [batch, ...] ones and the basis is one example's, repeated for
 * every example (an example's outputs depend on its own inputs only); duals are made and
 * unpacked on the physical side, since batched tensors have neither of their own.
 */
function forwardJacobian(
  fn: string,
  func: TransformedFunction,
  argnums: Argnums,
  hasAux: boolean,
  args: unknown[],
  v: { level: number; batchSize: number } | null,
): TensorTree {
  const unbatch = (t: Tensor) => (v === null ? t : aten._remove_batch_dim(t, v.level, v.batchSize, 0));
  const batch = (t: Tensor) => (v === null ? t : aten._add_batch_dim(t, 0, v.level));
  const lead = v === null ? [] : [v.batchSize];
  return tidy(() =>
    transformLevel(() => {
      const nums = argnumsOf(fn, argnums, args.length);
      const flats = differentiated(fn, args, nums);
      const primals = flats.map((f) => f.leaves.map(unbatch));
      const inputs = primals.flat();
      const shapes = inputs.map((t) => t.shape.slice(lead.length));
      const numels = shapes.map((shape: number[]) => shape.reduce((x, y) => x * y, 1));
      const total = numels.reduce((x, y) => x + y, 0);
      const basis = standardBasis(inputs, numels).map((b, k) =>
        b.reshape(total, ...lead.map(() => 1), ...shapes[k]!).expand(total, ...lead, ...shapes[k]!),
      );
      let outFlat: Flattened | null = null;
      let auxFlat: Flattened | null = null;
      let outShapes: number[][] = [];
      const tangentsOf = (...tangents: Tensor[]): Tensor[] =>
        forwardAd.dualLevel(() => {
          let k = 0;
          const duals = primals.map((ps) => ps.map((p) => batch(forwardAd.makeDual(p, tangents[k++]!))));
          const [output, aux] = splitAux(
            fn,
            (func as (...a: unknown[]) => unknown)(...replaceArgs(args, nums, flats, duals)),
            hasAux,
          );
          outFlat = flattenTree(output, `${fn}: the output of func`);
          outShapes = outFlat.leaves.map((o) => o.shape);
          auxFlat = flattenTree(aux, `${fn}: aux`);
          const unpacked = (t: Tensor) => forwardAd.unpackDual(unbatch(t));
          return [
            ...outFlat.leaves.map((o) => {
              const { primal, tangent } = unpacked(o);
              return tangent ?? zerosLike(primal);
            }),
            ...auxFlat.leaves.map((t) => unpacked(t).primal),
          ];
        });
      const results = forwardPass(() => vmapInternal(tangentsOf, 0, 0)(...basis)) as Tensor[];
      const out = outFlat! as Flattened;
      if (out.leaves.length === 0)
        throw new ArgumentError(`${fn}: func must return a Tensor, or arrays and records of them`);
      const rows = results.slice(0, out.leaves.length).map((jac, i) =>
        split(jac, numels, 0).map((part, k) => {
          // [numel_k, (batch,) ...out_i] -> [(batch,) ...out_i, ...in_k]
          const order = [...Array(part.ndim).keys()].slice(1);
          return batch(part.permute(...order, 0).reshape(...lead, ...outShapes[i]!, ...shapes[k]!));
        }),
      );
      const jac = arrange(out, flats, rows, argnums);
      if (!hasAux) return jac;
      const aux = (auxFlat! as Flattened).rebuild(
        results.slice(out.leaves.length).map((t) => batch(t.select(0, 0))),
      );
      return [jac, aux];
    }),
  );
}

/**
 * torch.func.jacfwd: the function that returns the Jacobian of `func` with respect to argument
 * `argnums` by forward mode (one vmapped pass of forward-mode AD over the inputs' elements):
 * the cheaper form where inputs are fewer than outputs.
 */
export function jacfwd(
  func: TransformedFunction,
  argnums: Argnums = 0,
  options: AuxOptions = {},
): (...args: unknown[]) => TensorTree {
  const fn = 'func.jacfwd';
  const hasAux = check(fn, func, options);
  return (...args: unknown[]) => forwardJacobian(fn, func, argnums, hasAux, args, currentVmap());
}

/**
 * torch.func.hessian: the function that returns the Hessian of the scalar `func` with respect to
 * argument `argnums`: for an argument of shape s a tensor of shape [...s, ...s]. Computed as the
 * reverse-mode Jacobian of the reverse-mode Jacobian (functorch's jacfwd of jacrev gives the same
 * values; libtorch's batched tensors cannot carry the forward-mode tangents through the inner
 * backward pass).
 */
export function hessian(func: TransformedFunction, argnums: Argnums = 0): (...args: unknown[]) => TensorTree {
  check('func.hessian', func, {});
  return jacrev(jacrev(func, argnums), argnums);
}
