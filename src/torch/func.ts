// torch.func (PyTorch 2.x; functorch in 1.13): function transforms. grad and gradAndValue take a
// function to its gradient function, vjp and jvp give the products with the Jacobian, jacrev,
// jacfwd and hessian (func-jacobians.ts) the Jacobians, and vmap and functionalCall complete the
// toolbox (a model's loss as a function of a record of its weights: per-example gradients are
// `vmap(grad(loss), [null, 0, 0])(weights, x, y)`). How they are built on libtorch's autograd:
// func-common.ts.
import { Tensor } from './tensor.js';
import { zerosLike } from './creation.js';
import { tidy } from './scope.js';
import { enableGrad, grad as autogradGrad } from './autograd.js';
import * as forwardAd from './forward-ad.js';
import { flattenTree } from './pytree.js';
import { currentVmap } from './vmap.js';
import {
  callWithBatchedStandIns,
  callWithStandIns,
  detachTree,
  differentiated,
  outputLeaves,
  perArgument,
  refuseInsideForward,
  replaceArgs,
  splitAux,
  transformLevel,
  type Argnums,
  type TensorTree,
} from './func-common.js';
import { ArgumentError } from '../util/arguments.js';

export { vmap } from './vmap.js';
export { functionalCall, stackModuleState, type FunctionalCallOptions } from './nn/functional-call.js';
export { jacrev, jacfwd, hessian } from './func-jacobians.js';
export type { Argnums, TensorTree } from './func-common.js';

/** Options of the transforms whose function may return auxiliary values. */
export interface AuxOptions {
  /** func returns `[output, aux]`: aux is passed through (not differentiated) and returned too. */
  hasAux?: boolean;
}

/** A function of tensors (and other values) as the transforms take it. */
export type TransformedFunction = (...args: never[]) => unknown;

function checkFunc(fn: string, func: unknown): void {
  if (typeof func !== 'function') throw new ArgumentError(`${fn}: func must be a function`);
}

function hasAuxOf(fn: string, options: unknown): boolean {
  if (options === null || typeof options !== 'object')
    throw new ArgumentError(`${fn}: options must be an object`);
  const h = (options as AuxOptions).hasAux;
  if (h !== undefined && typeof h !== 'boolean')
    throw new ArgumentError(`${fn}: options.hasAux must be a boolean`);
  return h ?? false;
}

/** func's output must be one value: the thing grad differentiates. */
function checkScalar(fn: string, output: unknown): asserts output is Tensor {
  if (!(output instanceof Tensor) || output.numel !== 1)
    throw new ArgumentError(
      `${fn}: func must return a single-element Tensor (the value to differentiate), got ${output instanceof Tensor ? `shape [${output.shape.join(', ')}]` : typeof output}; use vjp or jacrev for other outputs`,
    );
}

/** The gradient of the scalar output with respect to argnums, and the value and aux. */
function gradient(
  fn: string,
  func: TransformedFunction,
  argnums: Argnums,
  hasAux: boolean,
  args: unknown[],
): unknown {
  refuseInsideForward(fn);
  const v = currentVmap();
  if (v !== null) return batchedGradient(fn, func, argnums, hasAux, args, v);
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
        checkScalar(fn, output);
        const all = leaves.flat();
        const grads = output.requiresGrad
          ? autogradGrad([output], all, { createGraph: keepGraph, allowUnused: true })
          : all.map(() => null);
        const perArg = perArgument(flats, all, grads);
        const g = typeof argnums === 'number' ? perArg[0] : perArg;
        return [g, keepGraph ? output : output.detach(), detachTree(aux, keepGraph)];
      }),
    ),
  );
}

/**
 * The gradient inside vmap, for every example in one backward pass: each differentiated input
 * becomes a physical [batch, ...] stand-in (an expanded view for an input the vmap does not map),
 * batched again for func, whose output (one value per example) is summed over the batch on the
 * physical side and differentiated: the gradient with respect to each example's slice of the
 * stand-ins is that example's gradient (functorch's per-example gradients, vectorized).
 */
function batchedGradient(
  fn: string,
  func: TransformedFunction,
  argnums: Argnums,
  hasAux: boolean,
  args: unknown[],
  v: { level: number; batchSize: number },
): unknown {
  return tidy(() =>
    transformLevel((nested) =>
      enableGrad(() => {
        const call = callWithBatchedStandIns(fn, func, args, argnums, hasAux, nested, v);
        const { flats, stands, keepGraph, output, detached } = call;
        checkScalar(fn, output);
        const outputs = call.unbatch(output);
        const grads = outputs.requiresGrad
          ? autogradGrad([outputs.sum()], stands, { createGraph: keepGraph, allowUnused: true })
          : stands.map(() => null);
        const perArg = perArgument(flats, stands, grads, call.batch);
        const auxFlat = flattenTree(call.aux, `${fn}: aux`);
        const g = typeof argnums === 'number' ? perArg[0] : perArg;
        return [g, detached(output), auxFlat.rebuild(auxFlat.leaves.map(detached))];
      }),
    ),
  );
}

/**
 * torch.func.grad: the function that returns the gradient of `func` (which returns a
 * single-element tensor) with respect to its argument `argnums` (several: an array of gradients),
 * shaped as that argument (a tensor, or arrays and records of tensors). Transforms compose
 * (`grad(grad(f))` is the second derivative) and run inside vmap (per-example gradients).
 *
 * @param func The function to differentiate.
 * @param argnums The positional argument(s) to differentiate with respect to (default 0).
 * @param options `hasAux`: func returns `[output, aux]`, and the gradient function `[grad, aux]`.
 * @example
 * ```ts
 * import { func, tensor, type Tensor } from 'tailor/torch';
 *
 * const f = (x: Tensor) => x.sin().sum();
 * const x = tensor([0, 1, 2]);
 * console.log(func.grad(f)(x).toArray()); // cos(x)
 * console.log(func.grad((x: Tensor) => func.grad(f)(x).sum())(x).toArray()); // -sin(x)
 * ```
 */
export function grad(
  func: TransformedFunction,
  argnums: Argnums = 0,
  options: AuxOptions = {},
): (...args: unknown[]) => TensorTree {
  checkFunc('func.grad', func);
  const hasAux = hasAuxOf('func.grad', options);
  return (...args: unknown[]) => {
    const [g, , aux] = gradient('func.grad', func, argnums, hasAux, args) as unknown[];
    return hasAux ? [g, aux] : g;
  };
}

/**
 * torch.func.grad_and_value: as {@link grad}, the function that returns `[gradient, value]`
 * (with hasAux `[gradient, [value, aux]]`).
 */
export function gradAndValue(
  func: TransformedFunction,
  argnums: Argnums = 0,
  options: AuxOptions = {},
): (...args: unknown[]) => TensorTree {
  checkFunc('func.gradAndValue', func);
  const hasAux = hasAuxOf('func.gradAndValue', options);
  return (...args: unknown[]) => {
    const [g, value, aux] = gradient('func.gradAndValue', func, argnums, hasAux, args) as unknown[];
    return hasAux ? [g, [value, aux]] : [g, value];
  };
}

function shapeMatches(a: Tensor, b: Tensor): boolean {
  return a.shape.length === b.shape.length && a.shape.every((s, i) => s === b.shape[i]);
}

/**
 * torch.func.vjp: `[output, vjpFn]` (with hasAux `[output, vjpFn, aux]`): func's output at
 * `primals`, and the function that takes cotangents shaped as the output and returns the
 * vector-Jacobian products, one per primal (an array, shaped as each primal). vjpFn may be called
 * several times while the tensors of this call are alive (the caller's scope).
 *
 * @example
 * ```ts
 * import { func, tensor, ones, type Tensor } from 'tailor/torch';
 *
 * const [y, vjpFn] = func.vjp((x: Tensor) => x.pow(2), [tensor([1, 2, 3])]);
 * const [dx] = vjpFn(ones([3])) as Tensor[];
 * console.log(y.toArray(), dx.toArray()); // [1, 4, 9] [2, 4, 6]
 * ```
 */
export function vjp(func: TransformedFunction, primals: unknown[], options: AuxOptions = {}): TensorTree[] {
  const fn = 'func.vjp';
  checkFunc(fn, func);
  refuseInsideForward(fn);
  const hasAux = hasAuxOf(fn, options);
  if (!Array.isArray(primals) || primals.length === 0)
    throw new ArgumentError(`${fn}: primals must be a non-empty array of the arguments of func`);
  return transformLevel((nested) =>
    enableGrad(() => {
      const { flats, leaves, keepGraph, output, aux } = callWithStandIns(
        fn,
        func,
        primals,
        primals.map((_, i) => i),
        hasAux,
        nested,
      );
      const outFlat = outputLeaves(fn, output);
      const all = leaves.flat();
      const vjpFn = (cotangents: unknown): TensorTree[] => {
        const cot = flattenTree(cotangents, `${fn}: the cotangents`).leaves;
        if (cot.length !== outFlat.leaves.length)
          throw new ArgumentError(
            `${fn}: vjpFn takes cotangents shaped as the output (${outFlat.leaves.length} tensor(s)), got ${cot.length}`,
          );
        cot.forEach((c, i) => {
          if (!shapeMatches(c, outFlat.leaves[i]!))
            throw new ArgumentError(
              `${fn}: cotangent ${i} has shape [${c.shape.join(', ')}], the output [${outFlat.leaves[i]!.shape.join(', ')}]`,
            );
        });
        const used = outFlat.leaves.map((o) => o.requiresGrad);
        const grads = used.some(Boolean)
          ? autogradGrad(
              outFlat.leaves.filter((_, i) => used[i]),
              all,
              {
                gradOutputs: cot.filter((_, i) => used[i]),
                retainGraph: true,
                createGraph: keepGraph || cot.some((c) => c.requiresGrad),
                allowUnused: true,
              },
            )
          : all.map(() => null);
        return perArgument(flats, all, grads) as TensorTree[];
      };
      const result = [detachTree(output, keepGraph), vjpFn];
      return hasAux ? [...result, detachTree(aux, keepGraph)] : result;
    }),
  );
}

/**
 * torch.func.jvp: `[output, jvpOut]` (with hasAux `[output, jvpOut, aux]`): func's output at
 * `primals` and its Jacobian-vector product with `tangents` (shaped as the primals), by
 * forward-mode AD in one pass.
 *
 * @example
 * ```ts
 * import { func, tensor, ones, type Tensor } from 'tailor/torch';
 *
 * const [y, dy] = func.jvp((x: Tensor) => x.exp(), [tensor([0, 1])], [ones([2])]);
 * console.log(y.toArray(), dy.toArray()); // exp(x) twice
 * ```
 */
export function jvp(
  func: TransformedFunction,
  primals: unknown[],
  tangents: unknown[],
  options: AuxOptions = {},
): TensorTree[] {
  const fn = 'func.jvp';
  checkFunc(fn, func);
  const hasAux = hasAuxOf(fn, options);
  if (!Array.isArray(primals) || primals.length === 0)
    throw new ArgumentError(`${fn}: primals must be a non-empty array of the arguments of func`);
  if (!Array.isArray(tangents) || tangents.length !== primals.length)
    throw new ArgumentError(`${fn}: tangents must be an array with one entry per primal (${primals.length})`);
  return tidy(() =>
    transformLevel(() =>
      forwardAd.dualLevel(() => {
        const nums = primals.map((_, i) => i);
        const flats = differentiated(fn, primals, nums);
        const tans = flattenTree(tangents, `${fn}: the tangents`).leaves;
        const all = flats.flatMap((f) => f.leaves);
        if (tans.length !== all.length)
          throw new ArgumentError(
            `${fn}: tangents must be shaped as the primals (${all.length} tensor(s)), got ${tans.length}`,
          );
        tans.forEach((t, i) => {
          if (!shapeMatches(t, all[i]!))
            throw new ArgumentError(
              `${fn}: tangent ${i} has shape [${t.shape.join(', ')}], its primal [${all[i]!.shape.join(', ')}]`,
            );
        });
        let k = 0;
        const duals = flats.map((f) => f.leaves.map((p) => forwardAd.makeDual(p, tans[k++]!)));
        const [output, aux] = splitAux(
          fn,
          (func as (...a: unknown[]) => unknown)(...replaceArgs(primals, nums, flats, duals)),
          hasAux,
        );
        const outFlat = flattenTree(output, `${fn}: the output of func`);
        const unpacked = outFlat.leaves.map((o) => forwardAd.unpackDual(o));
        const primalOut = outFlat.rebuild(unpacked.map((u) => u.primal));
        const tangentOut = outFlat.rebuild(unpacked.map((u) => u.tangent ?? zerosLike(u.primal)));
        const auxFlat = flattenTree(aux, `${fn}: aux`);
        const auxOut = auxFlat.rebuild(auxFlat.leaves.map((t) => forwardAd.unpackDual(t).primal));
        return hasAux ? [primalOut, tangentOut, auxOut] : [primalOut, tangentOut];
      }),
    ),
  );
}
