// Bernoulli, Categorical, OneHotCategorical, Poisson and Binomial (PyTorch 1.13's formulas),
// sampled by libtorch's bernoulli, multinomial, poisson and binomial on the global generator.
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import { arange, eye, full, oneHot } from '../creation.js';
import * as aten from '../generated/aten.js';
import {
  Distribution,
  broadcastAll,
  finfoEps,
  type Param,
  type Constraint,
  type DistributionOptions,
} from './distribution.js';
import * as c from './constraints.js';

/** Probabilities or logits: exactly one of the two (and the options every distribution takes). */
export interface ProbsOrLogits extends DistributionOptions {
  probs?: Param;
  logits?: Param;
}

/** Which of probs or logits the options give, and its value; a named error unless exactly one. */
export function pick(who: string, options: ProbsOrLogits): ['probs' | 'logits', Param] {
  const { probs, logits } = options ?? {};
  if ((probs === undefined) === (logits === undefined)) {
    throw new Error(`tailor: ${who}: give exactly one of probs or logits (as { probs } or { logits })`);
  }
  return probs !== undefined ? ['probs', probs] : ['logits', logits as Param];
}

/** PyTorch's clamp_probs then log-odds (binary) or log (categorical). */
export function probsToLogits(p: Tensor, binary: boolean): Tensor {
  const eps = finfoEps(p);
  // In a scope of its own: a constructor calls it outside any, and keeps only the result.
  return tidy(() => {
    const q = p.clamp(eps, 1 - eps);
    return binary ? q.log().sub(q.neg().log1p()) : q.log();
  });
}

/**
 * Which of probs or logits each distribution was built with: expand() hands the same one on, as
 * PyTorch 1.13 (which keeps whichever its instance holds in __dict__).
 */
export const givenKind = new WeakMap<Distribution, 'probs' | 'logits'>();

/** log(1 + exp(x)) as -log σ(-x): no overflow, and the exact gradient σ(x) everywhere. */
function softplus(x: Tensor): Tensor {
  return aten.log_sigmoid(x.neg()).neg();
}

/** PyTorch's _clamp_by_zero: max(x, 0) with the gradient 1/2 at 0. */
function clampByZero(x: Tensor): Tensor {
  return x.clamp(0).add(x).sub(x.clamp(null, 0)).div(2);
}

/**
 * PyTorch's enumerate_support of the n values makeValues makes (along dim 0): viewed as [n, 1, ...] over the
 * batch dims, expanded to [n, ...batchShape] where expand is true.
 */
export function enumerateValues(
  makeValues: () => Tensor,
  batchShape: number[],
  eventShape: number[],
  expand: boolean,
): Tensor {
  if (typeof expand !== 'boolean') {
    throw new Error('tailor: enumerateSupport: expand must be a boolean (true: expanded to the batch shape)');
  }
  return tidy(() => {
    const values = makeValues();
    const n = values.size(0);
    const viewed = values.reshape(n, ...batchShape.map(() => 1), ...eventShape);
    return expand ? viewed.expand(n, ...batchShape, ...eventShape) : viewed;
  });
}

/** Bernoulli draws of 0 or 1 (torch.distributions.Bernoulli): `{ probs }` or `{ logits }`. */
export class Bernoulli extends Distribution {
  readonly probs: Tensor;
  readonly logits: Tensor;
  constructor(options: ProbsOrLogits) {
    const [kind, value] = pick('Bernoulli', options);
    const [p] = broadcastAll('Bernoulli', value);
    super(p.shape, [], options);
    givenKind.set(this, kind);
    if (kind === 'probs') {
      this.probs = this.own(p);
      this.checkParam('probs', p, c.unitInterval);
      this.logits = this.own(probsToLogits(p, true));
    } else {
      this.logits = this.own(p);
      this.checkParam('logits', p, c.real);
      this.probs = this.own(p.sigmoid());
    }
  }
  protected override expanded(batchShape: number[]): Distribution {
    const kind = givenKind.get(this) ?? 'probs';
    return new Bernoulli({ [kind]: this.expandParam(this[kind], batchShape) });
  }
  get support(): Constraint {
    return c.boolean;
  }
  override readonly hasEnumerateSupport = true;
  /** [0, 1] of the probabilities' dtype, over the batch. */
  override enumerateSupport(expand = true): Tensor {
    return enumerateValues(
      () => arange(0, 2, 1, this.probs.dtype, this.probs.device),
      this.batchShape,
      [],
      expand,
    );
  }
  get mean(): Tensor {
    return this.probs.clone();
  }
  get variance(): Tensor {
    return tidy(() => this.probs.mul(this.probs.neg().add(1)));
  }
  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() => aten.bernoulli(this.probs.expand(...this.extendedShape(sampleShape))));
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => value.mul(this.logits).sub(softplus(this.logits)));
  }
  override entropy(): Tensor {
    return tidy(() => softplus(this.logits).sub(this.logits.mul(this.probs)));
  }
}

/** One of K categories, as an index (torch.distributions.Categorical); probs need not sum to 1. */
export class Categorical extends Distribution {
  /** Normalised probabilities, categories last. */
  readonly probs: Tensor;
  /** Normalised log probabilities (logits minus their logsumexp). */
  readonly logits: Tensor;
  /** The number of categories K. */
  readonly numEvents: number;
  constructor(options: ProbsOrLogits) {
    const [kind, value] = pick('Categorical', options);
    if (!(value instanceof Tensor) || value.ndim < 1) {
      throw new Error(
        `tailor: Categorical: parameter ${kind} must be a tensor of at least one dimension (the categories last)`,
      );
    }
    super(value.shape.slice(0, -1), [], options);
    givenKind.set(this, kind);
    this.numEvents = value.size(-1);
    if (kind === 'probs') {
      const p = this.own(tidy(() => value.div(value.sum(-1, true))));
      this.checkParam('probs', p, c.simplex);
      this.probs = p;
      this.logits = this.own(probsToLogits(p, false));
    } else {
      this.checkParam('logits', value, c.realVector);
      this.logits = this.own(tidy(() => value.sub(value.logsumexp(-1, true))));
      this.probs = this.own(this.logits.softmax(-1));
    }
  }
  protected override expanded(batchShape: number[]): Distribution {
    const kind = givenKind.get(this) ?? 'probs';
    return new Categorical({ [kind]: this.expandParam(this[kind], batchShape) });
  }
  get support(): Constraint {
    return c.integerInterval(0, this.numEvents - 1);
  }
  override readonly hasEnumerateSupport = true;
  /** The category indices 0..K-1 (int64), over the batch. */
  override enumerateSupport(expand = true): Tensor {
    return enumerateValues(
      () => arange(0, this.numEvents, 1, 'int64', this.probs.device),
      this.batchShape,
      [],
      expand,
    );
  }
  /** NaN, as in PyTorch (a category index has no mean). */
  get mean(): Tensor {
    return full(this.extendedShape(), NaN, this.probs.dtype, this.probs.device);
  }
  /** NaN, as in PyTorch. */
  get variance(): Tensor {
    return full(this.extendedShape(), NaN, this.probs.dtype, this.probs.device);
  }
  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() =>
      tidy(() => {
        const n = sampleShape.reduce((a, b) => a * b, 1);
        const probs2d = this.probs.reshape(-1, this.numEvents);
        return aten
          .multinomial(probs2d, n, true)
          .t()
          .reshape(...this.extendedShape(sampleShape));
      }),
    );
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const v = value.long().unsqueeze(-1);
      const [vb, lb] = aten.broadcast_tensors([v, this.logits]);
      return lb.gather(-1, vb.narrow(-1, 0, 1)).squeeze(-1);
    });
  }
  override entropy(): Tensor {
    return tidy(() => {
      const min = this.logits.dtype === 'float64' ? -1.7976931348623157e308 : -3.4028234663852886e38;
      return this.logits.clamp(min).mul(this.probs).sum(-1).neg();
    });
  }
}

/** A one-hot vector of K categories (torch.distributions.OneHotCategorical). */
export class OneHotCategorical extends Distribution {
  /** The Categorical of the same probabilities. */
  readonly categorical: Categorical;
  constructor(options: ProbsOrLogits) {
    const cat = new Categorical(options);
    super(cat.batchShape, [cat.numEvents], options);
    this.categorical = cat;
  }
  get probs(): Tensor {
    return this.categorical.probs;
  }
  get logits(): Tensor {
    return this.categorical.logits;
  }
  protected override expanded(batchShape: number[]): Distribution {
    const kind = givenKind.get(this.categorical) ?? 'probs';
    return new OneHotCategorical({ [kind]: this.expandParam(this.categorical[kind], batchShape) });
  }
  get support(): Constraint {
    return c.oneHot;
  }
  override readonly hasEnumerateSupport = true;
  /** The K one-hot vectors (the rows of eye(K)), over the batch. */
  override enumerateSupport(expand = true): Tensor {
    const k = this.categorical.numEvents;
    return enumerateValues(() => eye(k, this.probs.dtype, this.probs.device), this.batchShape, [k], expand);
  }
  get mean(): Tensor {
    return this.probs.clone();
  }
  get variance(): Tensor {
    return tidy(() => this.probs.mul(this.probs.neg().add(1)));
  }
  override sample(sampleShape: number[] = []): Tensor {
    return tidy(() =>
      oneHot(this.categorical.sample(sampleShape), this.categorical.numEvents).to(this.probs.dtype),
    );
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => this.categorical.logProb(value.argmax(-1)));
  }
  override entropy(): Tensor {
    return this.categorical.entropy();
  }
  override dispose(): void {
    this.categorical.dispose();
    super.dispose();
  }
}

/** The Poisson distribution of the given rate (torch.distributions.Poisson). */
export class Poisson extends Distribution {
  readonly rate: Tensor;
  constructor(rate: Param, options?: DistributionOptions) {
    const [r] = broadcastAll('Poisson', rate);
    super(r.shape, [], options);
    this.rate = this.own(r);
    this.checkParam('rate', this.rate, c.nonnegative);
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new Poisson(e(this.rate));
  }
  get support(): Constraint {
    return c.nonnegativeInteger;
  }
  get mean(): Tensor {
    return this.rate.clone();
  }
  get variance(): Tensor {
    return this.rate.clone();
  }
  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() => aten.poisson(this.rate.expand(...this.extendedShape(sampleShape))));
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() =>
      aten
        .xlogy_Tensor(value, this.rate)
        .sub(this.rate)
        .sub(aten.lgamma(value.add(1))),
    );
  }
}

/** The number of successes in totalCount Bernoulli trials (torch.distributions.Binomial). */
export class Binomial extends Distribution {
  readonly totalCount: Tensor;
  readonly probs: Tensor;
  readonly logits: Tensor;
  constructor(options: ProbsOrLogits & { totalCount?: Param }) {
    const [kind, value] = pick('Binomial', options);
    const [n, p] = broadcastAll('Binomial', options.totalCount ?? 1, value);
    super(p.shape, [], options);
    givenKind.set(this, kind);
    this.own(n);
    this.own(p);
    this.totalCount = n.dtype === p.dtype ? n : this.own(n.to(p.dtype));
    this.checkParam('totalCount', this.totalCount, c.nonnegativeInteger);
    if (kind === 'probs') {
      this.probs = p;
      this.checkParam('probs', p, c.unitInterval);
      this.logits = this.own(probsToLogits(p, true));
    } else {
      this.logits = p;
      this.checkParam('logits', p, c.real);
      this.probs = this.own(p.sigmoid());
    }
  }
  protected override expanded(batchShape: number[]): Distribution {
    const kind = givenKind.get(this) ?? 'probs';
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new Binomial({ totalCount: e(this.totalCount), [kind]: e(this[kind]) });
  }
  get support(): Constraint {
    return c.integerInterval(0, this.totalCount, 'totalCount');
  }
  override readonly hasEnumerateSupport = true;
  /** 0..totalCount, which must be the same everywhere (as in PyTorch), over the batch. */
  override enumerateSupport(expand = true): Tensor {
    const max = tidy(() => this.totalCount.max().item());
    if (tidy(() => this.totalCount.min().item()) !== max) {
      throw new Error(
        'tailor: Binomial.enumerateSupport needs the same totalCount everywhere (PyTorch has no inhomogeneous enumerate_support)',
      );
    }
    return enumerateValues(
      () => arange(0, max + 1, 1, this.probs.dtype, this.probs.device),
      this.batchShape,
      [],
      expand,
    );
  }
  get mean(): Tensor {
    return this.totalCount.mul(this.probs);
  }
  get variance(): Tensor {
    return tidy(() => this.totalCount.mul(this.probs).mul(this.probs.neg().add(1)));
  }
  override sample(sampleShape: number[] = []): Tensor {
    const shape = this.extendedShape(sampleShape);
    return noGrad(() =>
      tidy(() => aten.binomial(this.totalCount.expand(...shape), this.probs.expand(...shape))),
    );
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const n = this.totalCount;
      const l = this.logits;
      const normalize = n
        .mul(clampByZero(l))
        .add(n.mul(l.abs().neg().exp().log1p()))
        .sub(aten.lgamma(n.add(1)));
      return value
        .mul(l)
        .sub(normalize)
        .sub(aten.lgamma(value.add(1)))
        .sub(aten.lgamma(n.sub(value).add(1)));
    });
  }
  /** Over the support 0..totalCount, which must be the same everywhere (as in PyTorch). */
  override entropy(): Tensor {
    return tidy(() => {
      const max = this.totalCount.max().item();
      if (this.totalCount.min().item() !== max) {
        throw new Error(
          'tailor: Binomial.entropy needs the same totalCount everywhere (PyTorch has no inhomogeneous entropy)',
        );
      }
      const k = arange(0, max + 1, 1, this.probs.dtype, this.probs.device).reshape(
        -1,
        ...this.batchShape.map(() => 1),
      );
      const lp = this.logProb(k);
      return lp.exp().mul(lp).sum(0).neg();
    });
  }
}
