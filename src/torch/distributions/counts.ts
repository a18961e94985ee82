// Geometric and Multinomial (PyTorch 1.13's formulas), sampled as PyTorch samples them: the
// Geometric by inverting uniform_ draws, the Multinomial by counting totalCount Categorical
// draws (libtorch's multinomial on the global generator).
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import { arange, empty, full, onesLike, where, zeros } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Distribution, broadcastAll, finfoTiny, type Constraint } from './distribution.js';
import * as c from './constraints.js';
import { describeValue } from '../../util/arguments.js';
import { Binomial, Categorical, givenKind, pick, probsToLogits, type ProbsOrLogits } from './discrete.js';

/**
 * The number of failures before the first success of Bernoulli(probs) trials
 * (torch.distributions.Geometric): `{ probs }` (in (0, 1]) or `{ logits }`.
 */
export class Geometric extends Distribution {
  readonly probs: Tensor;
  readonly logits: Tensor;
  readonly #given: 'probs' | 'logits';
  constructor(options: ProbsOrLogits) {
    const [kind, value] = pick('Geometric', options);
    const [p] = broadcastAll('Geometric', value);
    super(p.shape, [], options);
    this.#given = kind;
    if (kind === 'probs') {
      this.probs = this.own(p);
      this.checkParam('probs', p, c.unitInterval);
      this.checkParam('probs', p, c.positive);
      this.logits = this.own(probsToLogits(p, true));
    } else {
      this.logits = this.own(p);
      this.checkParam('logits', p, c.real);
      this.probs = this.own(p.sigmoid());
    }
  }
  protected override expanded(batchShape: number[]): Distribution {
    const given = this.#given === 'probs' ? this.probs : this.logits;
    return new Geometric({ [this.#given]: this.expandParam(given, batchShape) });
  }
  get support(): Constraint {
    return c.nonnegativeInteger;
  }
  get mean(): Tensor {
    return tidy(() => this.probs.reciprocal().sub(1));
  }
  get variance(): Tensor {
    return tidy(() => this.probs.reciprocal().sub(1).div(this.probs));
  }
  /** floor(log u / log(1 - p)) for u uniform on [tiny, 1). */
  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() =>
      tidy(() => {
        const shape = this.extendedShape(sampleShape);
        const u = aten.uniform_(empty(shape, this.probs.dtype, this.probs.device), finfoTiny(this.probs), 1);
        return u.log().div(this.probs.neg().log1p()).floor();
      }),
    );
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const [v, p] = aten.broadcast_tensors([value, this.probs]);
      // 0 failures at probs 1 has mass 1: PyTorch zeroes probs there so that 0 * log(0) is 0.
      const safe = where(aten.logical_and(p.eq(1), v.eq(0)), full([], 0, p.dtype, p.device), p);
      return v.mul(safe.neg().log1p()).add(this.probs.log());
    });
  }
  override entropy(): Tensor {
    return tidy(() =>
      aten.binary_cross_entropy_with_logits(this.logits, this.probs, null, null, 0).div(this.probs),
    );
  }
}

/**
 * The counts of K categories in totalCount Categorical draws (torch.distributions.Multinomial):
 * totalCount a non-negative integer (the same for the whole batch, as in PyTorch), then
 * `{ probs }` or `{ logits }` of the categories last.
 */
export class Multinomial extends Distribution {
  readonly totalCount: number;
  /** The Categorical of one draw. */
  readonly categorical: Categorical;
  constructor(totalCount: number, options: ProbsOrLogits) {
    if (!Number.isInteger(totalCount) || totalCount < 0) {
      throw new Error(
        `tailor: Multinomial: totalCount must be a non-negative integer number (PyTorch has no inhomogeneous totalCount), got ${describeValue(totalCount)}`,
      );
    }
    const cat = new Categorical(options);
    super(cat.batchShape, [cat.numEvents], options);
    this.totalCount = totalCount;
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
    return new Multinomial(this.totalCount, {
      [kind]: this.expandParam(this.categorical[kind], batchShape),
    });
  }
  get support(): Constraint {
    return c.multinomial(this.totalCount);
  }
  get mean(): Tensor {
    return this.probs.mul(this.totalCount);
  }
  get variance(): Tensor {
    return tidy(() => this.probs.mul(this.totalCount).mul(this.probs.neg().add(1)));
  }
  /** totalCount Categorical draws (drawn first), counted per category. */
  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() =>
      tidy(() => {
        const draws = this.categorical.sample([this.totalCount, ...sampleShape]);
        const order = Array.from({ length: draws.ndim }, (_, i) => (i + 1) % draws.ndim);
        const samples = draws.permute(...order);
        const counts = zeros(this.extendedShape(sampleShape), samples.dtype, samples.device);
        return aten.scatter_add(counts, -1, samples, onesLike(samples)).to(this.probs.dtype);
      }),
    );
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const [logits, v] = aten.broadcast_tensors([this.logits, value]);
      const logFactorialN = aten.lgamma(v.sum(-1).add(1));
      const logFactorialXs = aten.lgamma(v.add(1)).sum(-1);
      const zero = full([], 0, logits.dtype, logits.device);
      const safe = where(aten.logical_and(v.eq(0), logits.eq(-Infinity)), zero, logits);
      return logFactorialN.sub(logFactorialXs).add(safe.mul(v).sum(-1));
    });
  }
  /** n H(Categorical) - log n! + Σ_k E[log x_k!], the last over each category's Binomial. */
  override entropy(): Tensor {
    return tidy(() => {
      const n = this.totalCount;
      const p = this.probs;
      const term1 = this.categorical
        .entropy()
        .mul(n)
        .sub(aten.lgamma(full([], n + 1, p.dtype, p.device)));
      if (n === 0) return term1;
      const binomial = new Binomial({ totalCount: n, probs: p });
      const support = arange(1, n + 1, 1, p.dtype, p.device).reshape(-1, ...p.shape.map(() => 1));
      const weights = aten.lgamma(support.add(1));
      return term1.add(binomial.logProb(support).exp().mul(weights).sum([0, -1]));
    });
  }
  override dispose(): void {
    this.categorical.dispose();
    super.dispose();
  }
}
