// The relaxed (Concrete / Gumbel-softmax) distributions of PyTorch 1.13: LogitRelaxedBernoulli
// and ExpRelaxedCategorical, and the TransformedDistributions PyTorch builds of them,
// RelaxedBernoulli (a Sigmoid) and RelaxedOneHotCategorical (an Exp). Draws run uniform_ on
// the global generator in PyTorch's order, so seeded draws are PyTorch's.
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { empty, full } from '../creation.js';
import * as aten from '../generated/aten.js';
import { describeValue } from '../../util/arguments.js';
import { Distribution, broadcastAll, finfoEps, type Constraint, type Param } from './distribution.js';
import * as c from './constraints.js';
import { Categorical, pick, probsToLogits, type ProbsOrLogits } from './discrete.js';
import { ExpTransform, SigmoidTransform, TransformedDistribution } from './transforms.js';

/** PyTorch's clamp_probs: into [eps, 1 - eps]. */
function clampProbs(p: Tensor): Tensor {
  const eps = finfoEps(p);
  return p.clamp(eps, 1 - eps);
}

/** The temperature as a tensor of like's dtype and device (a number is made one), or a named error. */
function temperatureOf(who: string, temperature: Param, like: Tensor | null): Tensor {
  if (temperature instanceof Tensor) return temperature;
  if (typeof temperature !== 'number' || like === null) {
    throw new Error(
      `tailor: ${who}: temperature must be a Tensor or a number, got ${describeValue(temperature)}`,
    );
  }
  return full([], temperature, like.dtype, like.device);
}

/**
 * The logit of a relaxed Bernoulli variable (torch.distributions.LogitRelaxedBernoulli):
 * `new LogitRelaxedBernoulli(temperature, { probs })` or `{ logits }`, support the reals.
 */
export class LogitRelaxedBernoulli extends Distribution {
  override readonly hasRsample = true;
  readonly temperature: Tensor;
  readonly probs: Tensor;
  readonly logits: Tensor;
  constructor(temperature: Param, options: ProbsOrLogits) {
    const [kind, value] = pick('LogitRelaxedBernoulli', options);
    const [p] = broadcastAll('LogitRelaxedBernoulli', value);
    super(p.shape, [], options);
    const t = temperatureOf('LogitRelaxedBernoulli', temperature, p);
    this.temperature = t === temperature ? t : this.own(t);
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
  get support(): Constraint {
    return c.real;
  }
  /** PyTorch 1.13 has none: a named error. */
  get mean(): Tensor {
    throw new Error(`tailor: ${this.name} has no mean, as in PyTorch 1.13`);
  }
  /** PyTorch 1.13 has none: a named error. */
  get variance(): Tensor {
    throw new Error(`tailor: ${this.name} has no variance, as in PyTorch 1.13`);
  }
  /** (logit(u) + logit(probs)) / temperature for u uniform, both clamped to [eps, 1 - eps]. */
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const shape = this.extendedShape(sampleShape);
      const probs = clampProbs(this.probs.expand(...shape));
      const u = clampProbs(aten.uniform_(empty(shape, probs.dtype, probs.device)));
      return u.log().sub(u.neg().log1p()).add(probs.log()).sub(probs.neg().log1p()).div(this.temperature);
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const diff = this.logits.sub(value.mul(this.temperature));
      return this.temperature.log().add(diff).sub(diff.exp().log1p().mul(2));
    });
  }
}

/**
 * The law of σ(X) for X LogitRelaxedBernoulli (torch.distributions.RelaxedBernoulli), support
 * [0, 1]: `new RelaxedBernoulli(temperature, { probs })` or `{ logits }`.
 */
export class RelaxedBernoulli extends TransformedDistribution {
  constructor(temperature: Param, options: ProbsOrLogits) {
    super(new LogitRelaxedBernoulli(temperature, options), new SigmoidTransform(), options);
  }
  /** The LogitRelaxedBernoulli underneath. */
  get logitRelaxed(): LogitRelaxedBernoulli {
    return this.baseDist as LogitRelaxedBernoulli;
  }
  get temperature(): Tensor {
    return this.logitRelaxed.temperature;
  }
  get probs(): Tensor {
    return this.logitRelaxed.probs;
  }
  get logits(): Tensor {
    return this.logitRelaxed.logits;
  }
  override get support(): Constraint {
    return c.unitInterval;
  }
  /** Frees the base it made, and what that derived. */
  override dispose(): void {
    this.baseDist.dispose();
    super.dispose();
  }
}

/**
 * The log of a relaxed one-hot categorical vector (torch.distributions.ExpRelaxedCategorical):
 * `new ExpRelaxedCategorical(temperature, { probs })` or `{ logits }` (categories last);
 * support real vectors (in truth the log-simplex).
 */
export class ExpRelaxedCategorical extends Distribution {
  override readonly hasRsample = true;
  readonly temperature: Tensor;
  /** The Categorical of the same probabilities. */
  readonly categorical: Categorical;
  constructor(temperature: Param, options: ProbsOrLogits) {
    // Checked before the Categorical exists, so that a bad temperature leaves nothing behind.
    if (!(temperature instanceof Tensor) && typeof temperature !== 'number')
      temperatureOf('ExpRelaxedCategorical', temperature, null);
    const cat = new Categorical(options);
    super(cat.batchShape, [cat.numEvents], options);
    this.categorical = cat;
    const t = temperatureOf('ExpRelaxedCategorical', temperature, cat.logits);
    this.temperature = t === temperature ? t : this.own(t);
  }
  get probs(): Tensor {
    return this.categorical.probs;
  }
  get logits(): Tensor {
    return this.categorical.logits;
  }
  get support(): Constraint {
    return c.realVector;
  }
  /** PyTorch 1.13 has none: a named error. */
  get mean(): Tensor {
    throw new Error(`tailor: ${this.name} has no mean, as in PyTorch 1.13`);
  }
  /** PyTorch 1.13 has none: a named error. */
  get variance(): Tensor {
    throw new Error(`tailor: ${this.name} has no variance, as in PyTorch 1.13`);
  }
  /** Gumbel-perturbed logits over the temperature, log-normalised. */
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const shape = this.extendedShape(sampleShape);
      const u = clampProbs(aten.uniform_(empty(shape, this.logits.dtype, this.logits.device)));
      const gumbels = u.log().neg().log().neg();
      const scores = this.logits.add(gumbels).div(this.temperature);
      return scores.sub(scores.logsumexp(-1, true));
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const k = this.categorical.numEvents;
      const t = this.temperature;
      const logScale = aten.lgamma(aten.full_like(t, k)).sub(t.log().mul(-(k - 1)));
      const score = this.logits.sub(value.mul(t));
      return score.sub(score.logsumexp(-1, true)).sum(-1).add(logScale);
    });
  }
  override dispose(): void {
    this.categorical.dispose();
    super.dispose();
  }
}

/**
 * The law of exp(X) for X ExpRelaxedCategorical (torch.distributions.RelaxedOneHotCategorical),
 * support the simplex: `new RelaxedOneHotCategorical(temperature, { probs })` or `{ logits }`.
 */
export class RelaxedOneHotCategorical extends TransformedDistribution {
  constructor(temperature: Param, options: ProbsOrLogits) {
    super(new ExpRelaxedCategorical(temperature, options), new ExpTransform(), options);
  }
  /** The ExpRelaxedCategorical underneath. */
  get expRelaxed(): ExpRelaxedCategorical {
    return this.baseDist as ExpRelaxedCategorical;
  }
  get temperature(): Tensor {
    return this.expRelaxed.temperature;
  }
  get probs(): Tensor {
    return this.expRelaxed.probs;
  }
  get logits(): Tensor {
    return this.expRelaxed.logits;
  }
  override get support(): Constraint {
    return c.simplex;
  }
  /** Frees the base it made, and what that derived. */
  override dispose(): void {
    this.baseDist.dispose();
    super.dispose();
  }
}
