// KL(p ‖ q) for the same-family pairs PyTorch 1.13 registers among these distributions, with its
// formulas (its infinities included: q giving zero mass where p gives some).
import type { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { full, where } from '../creation.js';
import * as aten from '../generated/aten.js';
import type { Distribution } from './distribution.js';
import { Normal, LogNormal, Laplace, Uniform, Exponential } from './continuous.js';
import { Gamma, Beta, Dirichlet } from './gamma.js';
import { Bernoulli, Categorical, Poisson } from './discrete.js';
import { MultivariateNormal, batchMahalanobis, halfLogDet } from './multivariate-normal.js';
import { broadcastShapes } from './distribution.js';
import { Cauchy, HalfNormal } from './more.js';
import { Gumbel, Pareto } from './transformed-families.js';
import { Geometric } from './counts.js';
import { Independent } from './mixture.js';
import { TransformedDistribution } from './transforms.js';
import { klPairRules } from './kl-more.js';

const EULER = 0.5772156649015329;

function klNormalNormal(p: Normal, q: Normal): Tensor {
  const varRatio = p.scale.div(q.scale).square();
  const t1 = p.loc.sub(q.loc).div(q.scale).square();
  return varRatio.add(t1).sub(1).sub(varRatio.log()).mul(0.5);
}

type Ctor<T> = abstract new (...args: never[]) => T;
type Rule = [Ctor<Distribution>, (p: never, q: never) => Tensor];

const inf = (like: Tensor): Tensor => full([], Infinity, like.dtype, like.device);
const zero = (like: Tensor): Tensor => full([], 0, like.dtype, like.device);
const softplus = (x: Tensor): Tensor => aten.softplus(x);

function rule<T extends Distribution>(ctor: Ctor<T>, fn: (p: T, q: T) => Tensor): Rule {
  return [ctor, fn as (p: never, q: never) => Tensor];
}

const rules: Rule[] = [
  rule(Normal, klNormalNormal),
  rule(Bernoulli, (p, q) => {
    let t1 = p.probs.mul(softplus(q.logits.neg()).sub(softplus(p.logits.neg())));
    t1 = where(p.probs.eq(0), zero(t1), where(q.probs.eq(0), inf(t1), t1));
    let t2 = p.probs
      .neg()
      .add(1)
      .mul(softplus(q.logits).sub(softplus(p.logits)));
    t2 = where(p.probs.eq(1), zero(t2), where(q.probs.eq(1), inf(t2), t2));
    return t1.add(t2);
  }),
  rule(Categorical, (p, q) => {
    let t = p.probs.mul(p.logits.sub(q.logits));
    t = where(p.probs.eq(0).expandAs(t), zero(t), where(q.probs.eq(0).expandAs(t), inf(t), t));
    return t.sum(-1);
  }),
  rule(Beta, (p, q) => {
    const sp = p.concentration1.add(p.concentration0);
    const sq = q.concentration1.add(q.concentration0);
    const lg = aten.lgamma;
    const t1 = lg(q.concentration1).add(lg(q.concentration0)).add(lg(sp));
    const t2 = lg(p.concentration1).add(lg(p.concentration0)).add(lg(sq));
    const t3 = p.concentration1.sub(q.concentration1).mul(aten.digamma(p.concentration1));
    const t4 = p.concentration0.sub(q.concentration0).mul(aten.digamma(p.concentration0));
    const t5 = sq.sub(sp).mul(aten.digamma(sp));
    return t1.sub(t2).add(t3).add(t4).add(t5);
  }),
  rule(Dirichlet, (p, q) => {
    const sp = p.concentration.sum(-1);
    const sq = q.concentration.sum(-1);
    const t1 = aten.lgamma(sp).sub(aten.lgamma(sq));
    const t2 = aten.lgamma(p.concentration).sub(aten.lgamma(q.concentration)).sum(-1);
    const t3 = p.concentration.sub(q.concentration);
    const t4 = aten.digamma(p.concentration).sub(aten.digamma(sp).unsqueeze(-1));
    return t1.sub(t2).add(t3.mul(t4).sum(-1));
  }),
  rule(Gamma, (p, q) => {
    const t1 = q.concentration.mul(p.rate.div(q.rate).log());
    const t2 = aten.lgamma(q.concentration).sub(aten.lgamma(p.concentration));
    const t3 = p.concentration.sub(q.concentration).mul(aten.digamma(p.concentration));
    const t4 = q.rate.sub(p.rate).mul(p.concentration.div(p.rate));
    return t1.add(t2).add(t3).add(t4);
  }),
  rule(Exponential, (p, q) => {
    const ratio = q.rate.div(p.rate);
    return ratio.log().neg().add(ratio).sub(1);
  }),
  rule(Laplace, (p, q) => {
    const scaleRatio = p.scale.div(q.scale);
    const diff = p.loc.sub(q.loc).abs();
    const t3 = scaleRatio.mul(diff.neg().div(p.scale).exp());
    return scaleRatio.log().neg().add(diff.div(q.scale)).add(t3).sub(1);
  }),
  rule(Poisson, (p, q) => p.rate.mul(p.rate.log().sub(q.rate.log())).sub(p.rate.sub(q.rate))),
  rule(MultivariateNormal, (p, q) => {
    if (p.eventShape[0] !== q.eventShape[0]) {
      throw new Error(
        `tailor: klDivergence(MultivariateNormal, MultivariateNormal): the event sizes differ (${p.eventShape[0]} and ${q.eventShape[0]})`,
      );
    }
    const n = p.eventShape[0];
    const batch = broadcastShapes('klDivergence', p.batchShape, q.batchShape);
    const qL = q.unbroadcastedScaleTril.expand(...batch, n, n);
    const pL = p.unbroadcastedScaleTril.expand(...batch, n, n);
    const halfTerm1 = halfLogDet(q.unbroadcastedScaleTril).sub(halfLogDet(p.unbroadcastedScaleTril));
    const term2 = aten.linalg_solve_triangular(qL, pL, false).square().sum([-2, -1]);
    const term3 = batchMahalanobis(q.unbroadcastedScaleTril, q.loc.sub(p.loc));
    return halfTerm1.add(term2.add(term3).sub(n).mul(0.5));
  }),
  rule(Uniform, (p, q) => {
    const result = q.high.sub(q.low).div(p.high.sub(p.low)).log();
    return where(aten.logical_or(q.low.gt(p.low), q.high.lt(p.high)), inf(result), result);
  }),
  rule(HalfNormal, (p, q) => klNormalNormal(p.baseDist, q.baseDist)),
  // A TransformedDistribution in PyTorch, whose pair rule compares the bases.
  rule(LogNormal, (p, q) => klNormalNormal(p.baseDist, q.baseDist)),
  rule(TransformedDistribution, (p, q) => {
    const same =
      p.transforms.length === q.transforms.length && p.transforms.every((t, i) => t.equals(q.transforms[i]));
    const events = p.eventShape.join(',') === q.eventShape.join(',');
    if (!same || !events) {
      throw new Error(
        'tailor: klDivergence(TransformedDistribution, TransformedDistribution) needs equal transforms and event shapes (PyTorch has no formula otherwise)',
      );
    }
    return klDivergence(p.baseDist, q.baseDist);
  }),
  rule(Cauchy, (p, q) => {
    const t1 = p.scale.add(q.scale).square().add(p.loc.sub(q.loc).square()).log();
    const t2 = p.scale.mul(4).mul(q.scale).log();
    return t1.sub(t2);
  }),
  rule(Gumbel, (p, q) => {
    const ct1 = p.scale.div(q.scale);
    const ct2 = q.loc.div(q.scale);
    const ct3 = p.loc.div(q.scale);
    const t1 = ct1.log().neg().sub(ct2).add(ct3);
    const t2 = ct1.mul(EULER);
    const t3 = ct2
      .add(aten.lgamma(ct1.add(1)))
      .sub(ct3)
      .exp();
    return t1
      .add(t2)
      .add(t3)
      .sub(1 + EULER);
  }),
  rule(Pareto, (p, q) => {
    const scaleRatio = p.scale.div(q.scale);
    const alphaRatio = q.alpha.div(p.alpha);
    const t1 = q.alpha.mul(scaleRatio.log());
    const result = t1.add(alphaRatio.log().neg()).add(alphaRatio).sub(1);
    return where(p.scale.lt(q.scale), inf(result), result);
  }),
  rule(Geometric, (p, q) => p.entropy().neg().sub(q.probs.neg().log1p().div(p.probs)).sub(q.logits)),
  rule(Independent, (p, q) => {
    if (p.reinterpretedBatchNdims !== q.reinterpretedBatchNdims) {
      throw new Error(
        `tailor: klDivergence(Independent, Independent): reinterpretedBatchNdims differ (${p.reinterpretedBatchNdims} and ${q.reinterpretedBatchNdims}); PyTorch has no formula then`,
      );
    }
    const r = p.reinterpretedBatchNdims;
    const kl = klDivergence(p.baseDist, q.baseDist);
    return r === 0 ? kl : kl.sum(Array.from({ length: r }, (_, i) => -1 - i));
  }),
];

/** The families klDivergence has a formula for, as `P-Q` pairs. */
export const registeredKlPairs: readonly string[] = [
  ...rules.map(([ctor]) => `${ctor.name}-${ctor.name}`),
  ...klPairRules.map(([p, q]) => `${p.name}-${q.name}`),
];

/**
 * KL(p ‖ q) (torch.distributions.kl_divergence), of shape of the broadcast batch. Only the
 * pairs PyTorch 1.13 registers are known (see registeredKlPairs): the same-family ones, then
 * those of kl-more.ts (newer families, cross-family pairs); a subclass takes its family's
 * formula, as in PyTorch (Chi2 is a Gamma); any other pair is a named error.
 */
export function klDivergence(p: Distribution, q: Distribution): Tensor {
  for (const [ctor, fn] of rules) {
    if (p instanceof ctor && q instanceof ctor) return tidy(() => fn(p as never, q as never));
  }
  for (const [pCtor, qCtor, fn] of klPairRules) {
    if (p instanceof pCtor && q instanceof qCtor) return tidy(() => fn(p as never, q as never));
  }
  throw new Error(
    `tailor: klDivergence has no formula for (${p.constructor.name}, ${q.constructor.name}); the registered pairs are ${registeredKlPairs.join(', ')}`,
  );
}
