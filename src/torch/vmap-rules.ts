// Batching rules of tailor's own, for the operators that libtorch's batched tensors (PyTorch
// 1.13's torch.vmap) have none for: linear, matmul, convolutions, pooling, the losses, softmax,
// most reductions and several activations. Without a rule libtorch runs the operator once per
// example and stacks the results (and refuses view operators such as flatten outright), which
// makes per-example gradients (`vmap(func.grad(loss))`) no faster than a loop. A rule does what
// functorch's do: it takes the physical tensors (the mapped dimension first, an unmapped tensor
// expanded or used as it is), runs the operator once over the whole batch, and maps the result
// again. Only the innermost vmap level is handled here; outer levels are batched as before. A rule
// that does not apply (an unusual argument, a shape the operator would refuse) returns undefined
// and the operator runs as without it, so errors and edge cases keep libtorch's behaviour. The
// tools and rule makers are in vmap-rule-kit.ts, the rules of tensor functions (shapes, indexing,
// einsum, sorting) in vmap-rules-tensor.ts; this module holds the layers' and losses' rules and
// registers them all.
import { Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import type { BATCHING_RULE_OPS } from './generated/batching-rule-ops.js';
import { batchingRules, type BatchingRule, type VmapLevel } from './vmap-levels.js';
import { tensorRules } from './vmap-rules-tensor.js';
import { randomRules } from './vmap-random.js';
import {
  aligned,
  alongDim,
  anyMapped,
  attempt,
  batched,
  elementwise,
  mappedLevel,
  perSample,
  physical,
  overDims,
  unary,
  whole,
} from './vmap-rule-kit.js';

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
      const after = args.slice(reductionAt + 1);
      const none = op(...([physical(input, v), physical(target, v), ...weights, 0, ...after] as never[]));
      return batched(reducePerExample(none, code, v), v);
    });
  };
}

/** Group norm treats the samples alike (each one's groups have their own statistics). */
function groupNorm(
  input: Tensor,
  groups: number,
  weight?: Tensor | null,
  bias?: Tensor | null,
  eps?: number,
  cudnn?: boolean,
): Tensor | undefined {
  const v = mappedLevel(input);
  if (v === null || input.ndim < 2 || mappedLevel(weight) !== null || mappedLevel(bias) !== null)
    return undefined;
  return attempt(() => {
    const y = aten.group_norm(physical(input, v).flatten(0, 1), groups, weight, bias, eps, cudnn);
    return batched(y.reshape(...[v.batchSize, ...input.shape]), v);
  });
}

/**
 * Padding of the trailing dimensions (pad: left, right of the last, then of the one before...):
 * the physical tensor has the same ones; more of them than an example has is libtorch's error.
 */
function padding(op: (self: Tensor, pad: number[], ...rest: never[]) => Tensor): BatchingRule {
  return (self: unknown, pad: unknown, ...rest: unknown[]) => {
    const v = mappedLevel(self);
    const sides = typeof pad === 'number' ? [pad] : pad;
    if (v === null || !Array.isArray(sides) || sides.length > 2 * (self as Tensor).ndim) return undefined;
    return attempt(() =>
      batched(op(physical(self as Tensor, v), sides as number[], ...(rest as never[])), v),
    );
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
  log_softmax_int: alongDim(aten.log_softmax_int as never, 1),
  softmax_int: alongDim(aten.softmax_int as never, 1),
  cross_entropy_loss: classification('cross_entropy'),
  nll_loss_nd: classification('nll'),
  mse_loss: pointwiseLoss(aten.mse_loss as never, 2),
  l1_loss: pointwiseLoss(aten.l1_loss as never, 2),
  binary_cross_entropy_with_logits: pointwiseLoss(aten.binary_cross_entropy_with_logits as never, 4),
  kl_div: pointwiseLoss(aten.kl_div as never, 2),
  huber_loss: pointwiseLoss(aten.huber_loss as never, 2),
  smooth_l1_loss: pointwiseLoss(aten.smooth_l1_loss as never, 2),
  group_norm: groupNorm as BatchingRule,
  constant_pad_nd: padding(aten.constant_pad_nd as never),
  pad: padding(aten.pad as never),
  mean: whole(aten.mean_dim),
  sum: whole(aten.sum_dim_IntList),
  mean_dim: overDims(aten.mean_dim, 1),
  amax: overDims(aten.amax, 1),
  amin: overDims(aten.amin, 1),
  logsumexp: overDims(aten.logsumexp, 1),
  gelu: unary(aten.gelu as never),
  softplus: unary(aten.softplus as never),
  silu: unary(aten.silu),
  elu: unary(aten.elu as never),
  leaky_relu: unary(aten.leaky_relu as never),
  hardtanh: unary(aten.hardtanh as never),
  hardswish: unary(aten.hardswish),
  mish: unary(aten.mish),
  where_self: elementwise(aten.where_self, 3),
  maximum: elementwise(aten.maximum),
  minimum: elementwise(aten.minimum),
  ...tensorRules,
  ...randomRules,
};
// A rule that fails while inspecting unusual arguments (junk in a dims list, say) leaves the call
// to the operator, whose own check then names the problem.
for (const [name, rule] of Object.entries(rules))
  batchingRules[name] = (...args: unknown[]) => {
    try {
      return rule(...args);
    } catch {
      return undefined;
    }
  };
