// KL(p ‖ q) for the pairs PyTorch 1.13 registers beyond kl.ts's same-family ones: the newer
// families with themselves and the cross-family pairs among tailor's families, with 1.13's
// formulas and its infinities (q giving zero density where p gives some).
import type { Tensor } from '../tensor.js';
import { full, where } from '../creation.js';
import * as aten from '../generated/aten.js';
import type { Distribution } from './distribution.js';
import { Normal, Laplace, Uniform, Exponential } from './continuous.js';
import { Gamma, Beta } from './gamma.js';
import { Bernoulli, Binomial, OneHotCategorical, Poisson } from './discrete.js';
import { Gumbel, Pareto } from './transformed-families.js';
import { MultivariateNormal } from './multivariate-normal.js';
import { ContinuousBernoulli } from './families-more.js';
import { LowRankMultivariateNormal } from './low-rank-mvn.js';
import { klFullLowRank, klLowRankFull, klLowRankLowRank } from './kl-low-rank.js';

const EULER = 0.5772156649015329;
const LOG_2PI = Math.log(2 * Math.PI);

type Ctor<T> = abstract new (...args: never[]) => T;
/** A registered pair: the classes of p and q and KL(p ‖ q). */
export type KlPairRule = [Ctor<Distribution>, Ctor<Distribution>, (p: never, q: never) => Tensor];

function pair<P extends Distribution, Q extends Distribution>(
  p: Ctor<P>,
  q: Ctor<Q>,
  fn: (p: P, q: Q) => Tensor,
): KlPairRule {
  return [p, q, fn as (p: never, q: never) => Tensor];
}

/** Pairs (P, Q) for each Q whose KL is +inf of the shape of P's parameter param (PyTorch's _infinite_like). */
function infinite<P extends Distribution>(
  p: Ctor<P>,
  qs: Ctor<Distribution>[],
  param: (p: P) => Tensor,
): KlPairRule[] {
  return qs.map((q) => pair(p, q, (x: P) => infLike(param(x))));
}

/** +inf of x's shape (PyTorch's _infinite_like). */
const infLike = (x: Tensor): Tensor => full(x.shape, Infinity, x.dtype, x.device);
/** result, +inf where mask. */
const infWhere = (mask: Tensor, result: Tensor): Tensor => where(mask, Infinity, result);
/** x log x (PyTorch's _x_log_x, NaN at 0 as there). */
const xLogX = (x: Tensor): Tensor => x.mul(x.log());
/** The normal's expected negative log density at a variable of the given mean and E[x²]. */
function betaLikeNormal(negEntropy: Tensor, mean: Tensor, secondMoment: Tensor, q: Normal): Tensor {
  const varNormal = q.scale.square();
  const t2 = varNormal
    .mul(2 * Math.PI)
    .log()
    .mul(0.5);
  const t3 = secondMoment.mul(0.5);
  const t4 = q.loc.mul(mean);
  const t5 = q.loc.square().mul(0.5);
  return negEntropy.add(t2).add(t3.sub(t4).add(t5).div(varNormal));
}

const sameFamily: KlPairRule[] = [
  pair(Binomial, Binomial, (p, q) => {
    if (aten.any(p.totalCount.lt(q.totalCount)).item() !== 0) {
      throw new Error(
        'tailor: klDivergence(Binomial, Binomial) needs p.totalCount >= q.totalCount everywhere (PyTorch 1.13 has no formula otherwise)',
      );
    }
    const kl = p.totalCount.mul(
      p.probs.mul(p.logits.sub(q.logits)).add(p.probs.neg().log1p()).sub(q.probs.neg().log1p()),
    );
    return infWhere(p.totalCount.gt(q.totalCount), kl);
  }),
  pair(OneHotCategorical, OneHotCategorical, (p, q) => {
    const pc = p.categorical;
    const qc = q.categorical;
    let t = pc.probs.mul(pc.logits.sub(qc.logits));
    t = where(qc.probs.eq(0).expandAs(t), Infinity, t);
    t = where(pc.probs.eq(0).expandAs(t), 0, t);
    return t.sum(-1);
  }),
  pair(ContinuousBernoulli, ContinuousBernoulli, (p, q) => {
    const t1 = p.mean.mul(p.logits.sub(q.logits));
    const t2 = p.logNorm().add(p.probs.neg().log1p());
    const t3 = q.logNorm().neg().sub(q.probs.neg().log1p());
    return t1.add(t2).add(t3);
  }),
  pair(LowRankMultivariateNormal, LowRankMultivariateNormal, klLowRankLowRank),
  pair(MultivariateNormal, LowRankMultivariateNormal, klFullLowRank),
  pair(LowRankMultivariateNormal, MultivariateNormal, klLowRankFull),
];

/** The cross-family pairs; +inf where q's support misses part of p's, as 1.13. */
const crossFamily: KlPairRule[] = [
  pair(Bernoulli, Poisson, (p, q) => p.entropy().neg().sub(p.probs.mul(q.rate.log()).sub(q.rate))),
  pair(Beta, ContinuousBernoulli, (p, q) =>
    p.entropy().neg().sub(p.mean.mul(q.logits)).sub(q.probs.neg().log1p()).sub(q.logNorm()),
  ),
  pair(Beta, Pareto, (p) => infLike(p.concentration1)),
  pair(Beta, Exponential, (p, q) =>
    p
      .entropy()
      .neg()
      .sub(q.rate.log())
      .add(q.rate.mul(p.concentration1.div(p.concentration1.add(p.concentration0)))),
  ),
  pair(Beta, Gamma, (p, q) => {
    const total = p.concentration1.add(p.concentration0);
    const t1 = p.entropy().neg();
    const t2 = aten.lgamma(q.concentration).sub(q.concentration.mul(q.rate.log()));
    const t3 = q.concentration.sub(1).mul(aten.digamma(p.concentration1).sub(aten.digamma(total)));
    const t4 = q.rate.mul(p.concentration1).div(total);
    return t1.add(t2).sub(t3).add(t4);
  }),
  pair(Beta, Normal, (p, q) => {
    const total = p.concentration1.add(p.concentration0);
    const mean = p.concentration1.div(total);
    const second = mean.mul(mean.neg().add(1)).div(total.add(1)).add(mean.square());
    return betaLikeNormal(p.entropy().neg(), mean, second, q);
  }),
  pair(Beta, Uniform, (p, q) => {
    const result = p.entropy().neg().add(q.high.sub(q.low).log());
    return infWhere(aten.logical_or(q.low.gt(0), q.high.lt(1)), result);
  }),
  pair(ContinuousBernoulli, Pareto, (p) => infLike(p.probs)),
  pair(ContinuousBernoulli, Exponential, (p, q) =>
    p.entropy().neg().sub(q.rate.log()).add(q.rate.mul(p.mean)),
  ),
  pair(ContinuousBernoulli, Normal, (p, q) => {
    const t1 = p.entropy().neg();
    const t2 = q.loc.div(q.scale).square().add(LOG_2PI).mul(0.5).add(q.scale.log());
    const t3 = p.variance.add(p.mean.square()).sub(q.loc.mul(p.mean).mul(2)).div(q.scale.square().mul(2));
    return t1.add(t2).add(t3);
  }),
  pair(ContinuousBernoulli, Uniform, (p, q) => {
    const result = p.entropy().neg().add(q.high.sub(q.low).log());
    return infWhere(aten.logical_or(q.low.ge(0), q.high.le(1)), result);
  }),
  ...infinite(Exponential, [Beta, ContinuousBernoulli, Pareto, Uniform], (p) => p.rate),
  pair(Exponential, Gamma, (p, q) => {
    const ratio = q.rate.div(p.rate);
    const t1 = q.concentration.neg().mul(ratio.log());
    return t1
      .add(ratio)
      .add(aten.lgamma(q.concentration))
      .add(q.concentration.mul(EULER))
      .sub(1 + EULER);
  }),
  pair(Exponential, Gumbel, (p, q) => {
    const scaleRateProd = p.rate.mul(q.scale);
    const locScaleRatio = q.loc.div(q.scale);
    const t1 = scaleRateProd.log().sub(1);
    const t2 = locScaleRatio.exp().mul(scaleRateProd).div(scaleRateProd.add(1));
    const t3 = scaleRateProd.reciprocal();
    return t1.sub(locScaleRatio).add(t2).add(t3);
  }),
  pair(Exponential, Normal, (p, q) => {
    const varNormal = q.scale.square();
    const rateSqr = p.rate.square();
    const t1 = rateSqr
      .mul(varNormal)
      .mul(2 * Math.PI)
      .log()
      .mul(0.5);
    const t2 = rateSqr.reciprocal();
    const t3 = q.loc.div(p.rate);
    const t4 = q.loc.square().mul(0.5);
    return t1.sub(1).add(t2.sub(t3).add(t4).div(varNormal));
  }),
  ...infinite(Gamma, [Beta, ContinuousBernoulli, Pareto, Uniform], (p) => p.concentration),
  pair(Gamma, Exponential, (p, q) =>
    p.entropy().neg().sub(q.rate.log()).add(q.rate.mul(p.concentration).div(p.rate)),
  ),
  pair(Gamma, Gumbel, (p, q) => {
    const a = p.concentration;
    const betaScaleProd = p.rate.mul(q.scale);
    const locScaleRatio = q.loc.div(q.scale);
    const t1 = a.sub(1).mul(aten.digamma(a)).sub(aten.lgamma(a)).sub(a);
    const t2 = betaScaleProd.log().add(a.div(betaScaleProd));
    const t3 = locScaleRatio.exp().mul(betaScaleProd.reciprocal().add(1).pow(a.neg())).sub(locScaleRatio);
    return t1.add(t2).add(t3);
  }),
  pair(Gamma, Normal, (p, q) => {
    const a = p.concentration;
    const varNormal = q.scale.square();
    const betaSqr = p.rate.square();
    const t1 = betaSqr
      .mul(varNormal)
      .mul(2 * Math.PI)
      .log()
      .mul(0.5)
      .sub(a)
      .sub(aten.lgamma(a));
    const t2 = a.square().add(a).mul(0.5).div(betaSqr);
    const t3 = q.loc.mul(a).div(p.rate);
    const t4 = q.loc.square().mul(0.5);
    return t1.add(a.sub(1).mul(aten.digamma(a))).add(t2.sub(t3).add(t4).div(varNormal));
  }),
  ...infinite(Gumbel, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform], (p) => p.loc),
  pair(Gumbel, Normal, (p, q) => {
    const paramRatio = p.scale.div(q.scale);
    const t1 = paramRatio.div(Math.sqrt(2 * Math.PI)).log();
    const t2 = paramRatio
      .mul(Math.PI * 0.5)
      .square()
      .div(3);
    const t3 = p.loc.add(p.scale.mul(EULER)).sub(q.loc).div(q.scale).square().mul(0.5);
    return t1
      .neg()
      .add(t2)
      .add(t3)
      .sub(EULER + 1);
  }),
  ...infinite(Laplace, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform], (p) => p.loc),
  pair(Laplace, Normal, (p, q) => {
    const varNormal = q.scale.square();
    const ratio = p.scale.square().div(varNormal);
    const t1 = ratio
      .mul(2 / Math.PI)
      .log()
      .mul(0.5);
    const t2 = p.loc.square().mul(0.5);
    const t3 = p.loc.mul(q.loc);
    const t4 = q.loc.square().mul(0.5);
    return t1.neg().add(ratio).add(t2.sub(t3).add(t4).div(varNormal)).sub(1);
  }),
  ...infinite(Normal, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform], (p) => p.loc),
  pair(Normal, Gumbel, (p, q) => {
    const meanScaleRatio = p.loc.div(q.scale);
    const varScaleSqrRatio = p.scale.div(q.scale).square();
    const locScaleRatio = q.loc.div(q.scale);
    const t1 = varScaleSqrRatio.log().mul(0.5);
    const t2 = meanScaleRatio.sub(locScaleRatio);
    const t3 = meanScaleRatio.neg().add(varScaleSqrRatio.mul(0.5)).add(locScaleRatio).exp();
    return t1
      .neg()
      .add(t2)
      .add(t3)
      .sub(0.5 * (1 + LOG_2PI));
  }),
  pair(Normal, Laplace, (p, q) => {
    const locDiff = p.loc.sub(q.loc);
    const scaleRatio = p.scale.div(q.scale);
    const locDiffScaleRatio = locDiff.div(p.scale);
    const t1 = scaleRatio.log();
    const t2 = p.scale.mul(Math.sqrt(2 / Math.PI)).mul(locDiffScaleRatio.square().mul(-0.5).exp());
    const t3 = locDiff.mul(aten.erf(locDiffScaleRatio.mul(Math.SQRT1_2)));
    return t1
      .neg()
      .add(t2.add(t3).div(q.scale))
      .sub(0.5 * (1 + Math.log(0.5 * Math.PI)));
  }),
  ...infinite(Pareto, [Beta, ContinuousBernoulli, Uniform], (p) => p.scale),
  pair(Pareto, Exponential, (p, q) => {
    const scaleRateProd = p.scale.mul(q.rate);
    const t1 = p.alpha.div(scaleRateProd).log();
    const t2 = p.alpha.reciprocal();
    const t3 = p.alpha.mul(scaleRateProd).div(p.alpha.sub(1));
    return infWhere(p.alpha.le(1), t1.sub(t2).add(t3).sub(1));
  }),
  pair(Pareto, Gamma, (p, q) => {
    const common = p.scale.log().add(p.alpha.reciprocal());
    const t1 = p.alpha.log().sub(common);
    const t2 = aten.lgamma(q.concentration).sub(q.concentration.mul(q.rate.log()));
    const t3 = q.concentration.neg().add(1).mul(common);
    const t4 = q.rate.mul(p.alpha).mul(p.scale).div(p.alpha.sub(1));
    return infWhere(p.alpha.le(1), t1.add(t2).add(t3).add(t4).sub(1));
  }),
  pair(Pareto, Normal, (p, q) => {
    const varNormal = q.scale.square().mul(2);
    const common = p.scale.div(p.alpha.sub(1));
    const t1 = q.scale
      .mul(Math.sqrt(2 * Math.PI))
      .mul(p.alpha)
      .div(p.scale)
      .log();
    const t2 = p.alpha.reciprocal();
    const t3 = p.alpha.mul(common.square()).div(p.alpha.sub(2));
    const t4 = p.alpha.mul(common).sub(q.loc).square();
    return infWhere(p.alpha.le(2), t1.sub(t2).add(t3.add(t4).div(varNormal)).sub(1));
  }),
  pair(Poisson, Bernoulli, (p) => infLike(p.rate)),
  pair(Poisson, Binomial, (p) => infLike(p.rate)),
  pair(Uniform, Beta, (p, q) => {
    const common = p.high.sub(p.low);
    const t1 = common.log();
    const t2 = q.concentration1
      .sub(1)
      .mul(xLogX(p.high).sub(xLogX(p.low)).sub(common))
      .div(common);
    const t3 = q.concentration0
      .sub(1)
      .mul(
        xLogX(p.high.neg().add(1))
          .sub(xLogX(p.low.neg().add(1)))
          .add(common),
      )
      .div(common);
    const t4 = aten
      .lgamma(q.concentration1)
      .add(aten.lgamma(q.concentration0))
      .sub(aten.lgamma(q.concentration1.add(q.concentration0)));
    const result = t3.add(t4).sub(t1).sub(t2);
    return infWhere(aten.logical_or(p.high.gt(1), p.low.lt(0)), result);
  }),
  pair(Uniform, ContinuousBernoulli, (p, q) => {
    const result = p.entropy().neg().sub(p.mean.mul(q.logits)).sub(q.probs.neg().log1p()).sub(q.logNorm());
    return infWhere(aten.logical_or(p.high.ge(1), p.low.le(0)), result);
  }),
  pair(Uniform, Exponential, (p, q) => {
    const result = q.rate.mul(p.high.add(p.low)).div(2).sub(p.high.sub(p.low).mul(q.rate).log());
    return infWhere(p.low.lt(0), result);
  }),
  pair(Uniform, Gamma, (p, q) => {
    const common = p.high.sub(p.low);
    const t1 = common.log();
    const t2 = aten.lgamma(q.concentration).sub(q.concentration.mul(q.rate.log()));
    const t3 = q.concentration
      .neg()
      .add(1)
      .mul(xLogX(p.high).sub(xLogX(p.low)).sub(common))
      .div(common);
    const t4 = q.rate.mul(p.high.add(p.low)).div(2);
    return infWhere(p.low.lt(0), t1.neg().add(t2).add(t3).add(t4));
  }),
  pair(Uniform, Gumbel, (p, q) => {
    const common = q.scale.div(p.high.sub(p.low));
    const highLocDiff = p.high.sub(q.loc).div(q.scale);
    const lowLocDiff = p.low.sub(q.loc).div(q.scale);
    const t1 = common.log().add(highLocDiff.add(lowLocDiff).mul(0.5));
    const t2 = common.mul(highLocDiff.neg().exp().sub(lowLocDiff.neg().exp()));
    return t1.sub(t2);
  }),
  pair(Uniform, Normal, (p, q) => {
    const common = p.high.sub(p.low);
    const t1 = q.scale
      .mul(Math.sqrt(2 * Math.PI))
      .div(common)
      .log();
    const t2 = common.square().div(12);
    const t3 = p.high.add(p.low).sub(q.loc.mul(2)).div(2).square();
    return t1.add(t2.add(t3).mul(0.5).div(q.scale.square()));
  }),
  pair(Uniform, Pareto, (p, q) => {
    const width = p.high.sub(p.low);
    const t1 = q.alpha.mul(q.scale.pow(q.alpha)).mul(width).log();
    const t2 = xLogX(p.high).sub(xLogX(p.low)).sub(width).div(width);
    return infWhere(p.low.lt(q.scale), t2.mul(q.alpha.add(1)).sub(t1));
  }),
];

/**
 * The pairs klDivergence looks up after kl.ts's same-family ones, first match wins: the newer
 * families with themselves, the two multivariate normals with each other, then the cross-family
 * pairs of PyTorch 1.13's kl.py (those with a family tailor lacks left out).
 */
export const klPairRules: readonly KlPairRule[] = [...sameFamily, ...crossFamily];
