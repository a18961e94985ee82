// Batching rules of tailor's own, for the operators that libtorch's batched tensors (PyTorch
// 1.13's torch.vmap) have none for: linear, matmul, convolutions, pooling, the losses, softmax,
// most reductions and several activations. Without a rule libtorch runs the operator once per
// example and stacks the results (and refuses view operators such as flatten outright), which
// makes per-example gradients (`vmap(func.grad(loss))`) no faster than a loop. A rule does what
// functorch's do: it takes the physical tensors (the mapped dimension first, an unmapped tensor
// expanded or used as it is), runs the operator once over the whole batch, and maps the result
// again. Only the innermost vmap level is handled here; outer levels are batched as before. A rule
// that does not apply (an unusual argument, a shape the operator would refuse) returns undefined
// and the operator runs as without it, so errors and edge cases keep libtorch's behaviour.
import { Tensor } from './tensor.js';
import { native } from './native.js';
import * as aten from './generated/aten.js';
import { tidy } from './scope.js';
import type { BATCHING_RULE_OPS } from './generated/batching-rule-ops.js';
import { batchingRules, vmapLevels, type BatchingRule, type VmapLevel } from './vmap-levels.js';

type Dims = number | number[] | null | undefined;

/** The innermost vmap level, when `t` is a tensor mapped by it. */
function mappedLevel(t: unknown): VmapLevel | null {
  const v = vmapLevels[vmapLevels.length - 1];
  if (v === undefined || !(t instanceof Tensor)) return null;
  return native.vmapBatchDim(t.handle, v.level) >= 0 ? v : null;
}

/** The innermost level when any of `tensors` is mapped by it. */
function anyMapped(...tensors: unknown[]): VmapLevel | null {
  for (const t of tensors) {
    const v = mappedLevel(t);
    if (v !== null) return v;
  }
  return null;
}

/** `t` with the mapped dimension first (an unmapped tensor expanded to the batch size: a view). */
function physical(t: Tensor, v: VmapLevel): Tensor {
  return aten._remove_batch_dim(t, v.level, v.batchSize, 0);
}

/** A physical [batch, ...] result mapped again. */
function batched(p: Tensor, v: VmapLevel): Tensor {
  return aten._add_batch_dim(p, 0, v.level);
}

/**
 * Runs a rule in a scope of its own (its intermediate views freed at once). An error means the
 * rule met arguments it does not cover: the operator then runs without it, so the error the
 * caller sees (if any) is libtorch's own.
 */
function attempt<T>(fn: () => T): T | undefined {
  try {
    return tidy(fn);
  } catch {
    return undefined;
  }
}

/** The logical dimensions `dims` (all when null or empty) as physical ones, or null when out of range. */
function physicalDims(dims: Dims, rank: number): number[] | null {
  const list = dims === null || dims === undefined ? [] : typeof dims === 'number' ? [dims] : dims;
  if (list.length === 0) return Array.from({ length: rank }, (_, i) => i + 1);
  const out: number[] = [];
  for (const d of list) {
    if (!Number.isInteger(d) || d < -rank || d >= rank) return null;
    out.push((d < 0 ? d + rank : d) + 1);
  }
  return out;
}

/**
 * Mapped tensors made physical with size-1 dimensions after the batch up to `rank`, so that the
 * physical tensors broadcast as the logical ones do; unmapped ones as they are (they broadcast
 * from the right).
 */
function aligned(v: VmapLevel, rank: number, ...tensors: Tensor[]): Tensor[] {
  return tensors.map((t) => {
    if (mappedLevel(t) === null) return t;
    const p = physical(t, v);
    const pad = rank - t.ndim;
    return pad > 0 ? p.reshape(...[v.batchSize, ...new Array<number>(pad).fill(1), ...t.shape]) : p;
  });
}

/** An operator on one tensor that treats every element (or trailing dimensions) alike. */
function unary(op: (self: Tensor, ...rest: never[]) => Tensor): BatchingRule {
  return (self: unknown, ...rest: unknown[]) => {
    const v = mappedLevel(self);
    if (v === null) return undefined;
    return attempt(() => batched(op(physical(self as Tensor, v), ...(rest as never[])), v));
  };
}

/** An elementwise operator on several tensors that broadcast. */
function elementwise(op: (...tensors: Tensor[]) => Tensor): BatchingRule {
  return (...tensors: unknown[]) => {
    if (!tensors.every((t) => t instanceof Tensor)) return undefined;
    const ts = tensors as Tensor[];
    const v = anyMapped(...ts);
    if (v === null) return undefined;
    const rank = Math.max(...ts.map((t) => t.ndim));
    return attempt(() => batched(op(...aligned(v, rank, ...ts)), v));
  };
}

/** A reduction over logical dimensions (all when none are given). */
function reduction(
  op: (p: Tensor, dims: number[], keepdim: boolean, dtype?: unknown) => Tensor,
): BatchingRule {
  return (self: unknown, dims: unknown, keepdim: unknown, dtype: unknown) => {
    const v = mappedLevel(self);
    if (v === null) return undefined;
    const x = self as Tensor;
    if (x.ndim === 0) return undefined;
    const pd = physicalDims(dims as Dims, x.ndim);
    if (pd === null) return undefined;
    return attempt(() => batched(op(physical(x, v), pd, keepdim === true, dtype), v));
  };
}

/** A reduction of all elements (`mean(x)`, `sum(x)`): over each example's elements. */
function whole(op: typeof aten.mean_dim): BatchingRule {
  const perExample = reduction((p, dims, _keep, dtype) => op(p, dims, false, dtype as never));
  return (self: unknown, dtype: unknown) => perExample(self, null, false, dtype);
}

/**
 * An operator on [N, C, ...spatial] (or unbatched [C, ...spatial]) that treats the N samples
 * alike: the batch and N merged into one sample dimension, split again after.
 */
function perSample(unbatchedRank: number, op: (x: Tensor, ...rest: never[]) => Tensor): BatchingRule {
  return (self: unknown, ...rest: unknown[]) => {
    const v = mappedLevel(self);
    if (v === null || rest.some((r) => mappedLevel(r) !== null)) return undefined;
    const x = self as Tensor;
    if (x.ndim !== unbatchedRank && x.ndim !== unbatchedRank + 1) return undefined;
    return attempt(() => {
      const p = physical(x, v);
      if (x.ndim === unbatchedRank) return batched(op(p, ...(rest as never[])), v);
      const y = op(p.flatten(0, 1), ...(rest as never[]));
      return batched(y.reshape(...[v.batchSize, x.shape[0]!, ...y.shape.slice(1)]), v);
    });
  };
}

function linear(input: Tensor, weight: Tensor, bias?: Tensor | null): Tensor | undefined {
  const v = anyMapped(input, weight, bias);
  if (v === null || weight.ndim !== 2 || input.ndim === 0) return undefined;
  if (input.shape[input.ndim - 1] !== weight.shape[1]) return undefined;
  const weightMapped = mappedLevel(weight) !== null;
  const biasMapped = mappedLevel(bias) !== null;
  return attempt(() => {
    const x = physical(input, v);
    let y: Tensor;
    if (!weightMapped) y = aten.linear(x, weight, biasMapped ? null : (bias ?? null));
    else {
      // One weight per example: a batched matrix product [B, M, in] x [B, in, out].
      const rows = x.reshape(...[v.batchSize, -1, weight.shape[1]!]);
      y = aten
        .matmul(rows, physical(weight, v).transpose(1, 2))
        .reshape(...[v.batchSize, ...input.shape.slice(0, -1), weight.shape[0]!]);
    }
    if (bias !== null && bias !== undefined && (weightMapped || biasMapped))
      y = y.add(aligned(v, y.ndim - 1, bias)[0]!);
    return batched(y, v);
  });
}

function matmul(self: Tensor, other: Tensor): Tensor | undefined {
  const v = anyMapped(self, other);
  if (v === null || self.ndim === 0 || other.ndim === 0) return undefined;
  return attempt(() => {
    // Vectors as matrices (a row on the left, a column on the right), squeezed again after.
    const left = self.ndim === 1 ? self.unsqueeze(0) : self;
    const right = other.ndim === 1 ? other.unsqueeze(1) : other;
    const [a, b] = aligned(v, Math.max(left.ndim, right.ndim), left, right);
    let y = aten.matmul(a!, b!);
    if (self.ndim === 1) y = y.squeeze(-2);
    if (other.ndim === 1) y = y.squeeze(-1);
    return batched(y, v);
  });
}

/**
 * A convolution with per-example weights is one grouped convolution: the examples' channels side
 * by side ([N, B*C, ...]) and their weights stacked ([B*C', C/g, ...]), groups B*g.
 */
function convolution(spatial: number, op: typeof aten.conv2d): BatchingRule {
  const sampled = perSample(spatial + 1, op as never);
  return (
    input: unknown,
    weight: unknown,
    bias: unknown,
    stride: unknown,
    padding: unknown,
    dilation: unknown,
    groups: unknown,
  ) => {
    if (!(input instanceof Tensor) || !(weight instanceof Tensor)) return undefined;
    if (!(bias === null || bias === undefined || bias instanceof Tensor)) return undefined;
    if (mappedLevel(weight) === null && mappedLevel(bias) === null)
      return sampled(input, weight, bias, stride, padding, dilation, groups);
    const v = anyMapped(weight, bias)!;
    const g = groups === undefined ? 1 : (groups as number);
    if (weight.ndim !== spatial + 2 || (input.ndim !== spatial + 1 && input.ndim !== spatial + 2))
      return undefined;
    return attempt(() => {
      const B = v.batchSize;
      const unbatchedInput = input.ndim === spatial + 1;
      const x = physical(input, v); // [B, (N,) C, ...]
      const n = unbatchedInput ? 1 : input.shape[0]!;
      const c = input.shape[unbatchedInput ? 0 : 1]!;
      const sizes = input.shape.slice(unbatchedInput ? 1 : 2);
      const side = (unbatchedInput ? x.unsqueeze(1) : x).transpose(0, 1).reshape(...[n, B * c, ...sizes]);
      const w = physical(weight, v);
      const outC = weight.shape[0]!;
      const wStacked = w.reshape(...[B * outC, ...weight.shape.slice(1)]);
      const b = bias instanceof Tensor ? physical(bias, v).reshape(...[B * outC]) : null;
      const y = op(side, wStacked, b, stride as never, padding as never, dilation as never, B * g);
      const out = y.reshape(...[n, B, outC, ...y.shape.slice(2)]).transpose(0, 1);
      return batched(unbatchedInput ? out.squeeze(1) : out, v);
    });
  };
}

/** Mean over each example's elements (the logical dimensions of `loss`), or their sum. */
function reducePerExample(loss: Tensor, reduction: number, v: VmapLevel): Tensor {
  if (reduction === 0) return loss;
  const flat = loss.reshape(...[v.batchSize, -1]);
  return reduction === 1 ? flat.mean(1) : flat.sum(1);
}

/**
 * The classification losses: computed unreduced over the physical samples (the batch and N
 * merged), then reduced per example; 'mean' with class indices divides by the example's total
 * target weight, as nll_loss does (ignored targets weigh 0), with class probabilities by the
 * number of samples.
 */
function classification(kind: 'cross_entropy' | 'nll'): BatchingRule {
  return (
    input: unknown,
    target: unknown,
    weight: unknown,
    reduction: unknown,
    ignoreIndex: unknown,
    smoothing: unknown,
  ) => {
    if (!(input instanceof Tensor) || !(target instanceof Tensor)) return undefined;
    if (!(weight === null || weight === undefined || weight instanceof Tensor)) return undefined;
    const v = anyMapped(input, target);
    if (v === null || mappedLevel(weight) !== null || input.ndim === 0) return undefined;
    const code = reduction === undefined ? 1 : (reduction as number);
    const ignore = ignoreIndex === undefined ? -100 : (ignoreIndex as number);
    const w = weight ?? null;
    const B = v.batchSize;
    return attempt(() => {
      // [B, C] for one sample per example, else [B * N, C, ...]; the targets alike.
      const samples = (t: Tensor) => (input.ndim === 1 ? physical(t, v) : physical(t, v).flatten(0, 1));
      const x = samples(input);
      const t = samples(target);
      const none =
        kind === 'cross_entropy'
          ? aten.cross_entropy_loss(x, t, w, 0, ignore, (smoothing as number | undefined) ?? 0)
          : aten.nll_loss_nd(x, t, w, 0, ignore);
      if (code === 0)
        return batched(
          input.ndim === 1 ? none : none.reshape(...[B, input.shape[0]!, ...none.shape.slice(1)]),
          v,
        );
      const total = none.reshape(...[B, -1]).sum(1);
      if (code === 2) return batched(total, v);
      if (target.dtype !== 'int64') return batched(total.div(none.numel / B), v);
      const valid = t.ne(ignore);
      const weights =
        w === null
          ? valid.to(none.dtype)
          : aten
              .index_select(w, 0, t.mul(valid).flatten())
              .reshape(...t.shape)
              .mul(valid);
      return batched(total.div(weights.reshape(...[B, -1]).sum(1)), v);
    });
  };
}

/**
 * Losses of input against a target of its shape (optional weights, unmapped, broadcast from the
 * right): unreduced on the physical tensors, then reduced per example.
 */
function pointwiseLoss(op: (...args: never[]) => Tensor, reductionAt: number): BatchingRule {
  return (...args: unknown[]) => {
    const [input, target] = args;
    if (!(input instanceof Tensor) || !(target instanceof Tensor) || !sameShape(input, target))
      return undefined;
    const weights = args.slice(2, reductionAt);
    if (
      weights.some((t) => !(t === null || t === undefined || t instanceof Tensor) || mappedLevel(t) !== null)
    )
      return undefined;
    const v = anyMapped(input, target);
    if (v === null) return undefined;
    const code = args[reductionAt] === undefined ? 1 : (args[reductionAt] as number);
    return attempt(() => {
      const none = op(...([physical(input, v), physical(target, v), ...weights, 0] as never[]));
      return batched(reducePerExample(none, code, v), v);
    });
  };
}

function sameShape(a: Tensor, b: Tensor): boolean {
  return a.ndim === b.ndim && a.shape.every((s, i) => s === b.shape[i]);
}

function layerNorm(
  input: Tensor,
  shape: number | number[],
  weight?: Tensor | null,
  bias?: Tensor | null,
  eps?: number,
  cudnn?: boolean,
): Tensor | undefined {
  const v = mappedLevel(input);
  if (v === null || mappedLevel(weight) !== null || mappedLevel(bias) !== null) return undefined;
  const n = typeof shape === 'number' ? 1 : shape.length;
  if (n > input.ndim) return undefined;
  // The normalized dimensions are the trailing ones: the physical tensor has the same.
  return attempt(() => batched(aten.layer_norm(physical(input, v), shape, weight, bias, eps, cudnn), v));
}

function batchNorm(
  input: Tensor,
  weight?: Tensor | null,
  bias?: Tensor | null,
  mean?: Tensor | null,
  variance?: Tensor | null,
  training?: boolean,
  momentum?: number,
  eps?: number,
  cudnn?: boolean,
): Tensor | undefined {
  // In training the statistics are each example's own: only evaluation (running statistics)
  // treats the samples alike.
  if (
    training !== false ||
    mean === null ||
    mean === undefined ||
    variance === null ||
    variance === undefined
  )
    return undefined;
  if ([weight, bias, mean, variance].some((t) => mappedLevel(t) !== null)) return undefined;
  const v = mappedLevel(input);
  if (v === null || input.ndim < 2) return undefined;
  return attempt(() => {
    const p = physical(input, v).flatten(0, 1);
    const y = aten.batch_norm(p, weight, bias, mean, variance, false, momentum, eps, cudnn);
    return batched(y.reshape(...[v.batchSize, ...input.shape]), v);
  });
}

function dropout(input: Tensor, p: number, train: boolean): Tensor | undefined {
  // Outside training (or with p 0) dropout is the identity; in training it draws random numbers,
  // which vmap refuses by name.
  const v = mappedLevel(input);
  if (v === null || (train && p !== 0)) return undefined;
  return attempt(() => batched(physical(input, v), v));
}

function flatten(self: Tensor, start = 0, end = -1): Tensor | undefined {
  const v = mappedLevel(self);
  const rank = self.ndim;
  if (v === null || rank === 0) return undefined;
  const s = start < 0 ? start + rank : start;
  const e = end < 0 ? end + rank : end;
  if (!(s >= 0 && s < rank && e >= 0 && e < rank && s <= e)) return undefined;
  return attempt(() => batched(physical(self, v).flatten(s + 1, e + 1), v));
}

function softmaxLike(op: typeof aten.softmax_int): BatchingRule {
  return (self: unknown, dim: unknown, dtype: unknown) => {
    const v = mappedLevel(self);
    if (v === null) return undefined;
    const x = self as Tensor;
    const pd = physicalDims(dim as number, x.ndim);
    if (pd === null || x.ndim === 0) return undefined;
    return attempt(() => batched(op(physical(x, v), pd[0]!, dtype as never), v));
  };
}

const rules: Record<(typeof BATCHING_RULE_OPS)[number], BatchingRule> = {
  linear: linear as BatchingRule,
  matmul: matmul as BatchingRule,
  conv1d: convolution(1, aten.conv1d),
  conv2d: convolution(2, aten.conv2d),
  max_pool1d: perSample(2, aten.max_pool1d as never),
  max_pool2d: perSample(3, aten.max_pool2d as never),
  avg_pool1d: perSample(2, aten.avg_pool1d as never),
  avg_pool2d: perSample(3, aten.avg_pool2d as never),
  adaptive_avg_pool2d: perSample(3, aten.adaptive_avg_pool2d as never),
  layer_norm: layerNorm as BatchingRule,
  batch_norm: batchNorm as BatchingRule,
  dropout: dropout as BatchingRule,
  flatten_using_ints: flatten as BatchingRule,
  log_softmax_int: softmaxLike(aten.log_softmax_int),
  softmax_int: softmaxLike(aten.softmax_int),
  cross_entropy_loss: classification('cross_entropy'),
  nll_loss_nd: classification('nll'),
  mse_loss: pointwiseLoss(aten.mse_loss as never, 2),
  l1_loss: pointwiseLoss(aten.l1_loss as never, 2),
  binary_cross_entropy_with_logits: pointwiseLoss(aten.binary_cross_entropy_with_logits as never, 4),
  mean: whole(aten.mean_dim),
  sum: whole(aten.sum_dim_IntList),
  mean_dim: reduction((p, dims, keep, dtype) => aten.mean_dim(p, dims, keep, dtype as never)),
  amax: reduction((p, dims, keep) => aten.amax(p, dims, keep)),
  amin: reduction((p, dims, keep) => aten.amin(p, dims, keep)),
  logsumexp: reduction((p, dims, keep) => aten.logsumexp(p, dims, keep)),
  gelu: unary(aten.gelu as never),
  softplus: unary(aten.softplus as never),
  silu: unary(aten.silu),
  elu: unary(aten.elu as never),
  leaky_relu: unary(aten.leaky_relu as never),
  hardtanh: unary(aten.hardtanh as never),
  hardswish: unary(aten.hardswish),
  mish: unary(aten.mish),
  where_self: elementwise(aten.where_self),
  maximum: elementwise(aten.maximum),
  minimum: elementwise(aten.minimum),
};
Object.assign(batchingRules, rules);
