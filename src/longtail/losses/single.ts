// Losses on the model's combined output [N, C]: cross-entropy (optionally class-balanced),
// balanced softmax, logit adjustment, focal loss and LDAM with deferred re-weighting (DRW).
// Formulas follow the SADE / BalPoE model/loss.py and kaidic/LDAM-DRW losses.py.
import { tidy, nn, type Tensor } from '../../torch/index.js';
import { classBalancedWeights, constant, ldamMargins, logPrior, PRIOR_EPS } from './priors.js';
import { floatDtype, requireClassIndices, type Loss, type ModelOutput } from './types.js';

const F = nn.functional;
type Reduction = nn.functional.Reduction;

/**
 * Cross-entropy of logits + bias (bias [C] broadcast over the batch), with optional class weights;
 * the mean over the batch unless another reduction is asked for.
 */
export function adjustedCrossEntropy(
  logits: Tensor,
  target: Tensor,
  bias?: readonly number[] | null,
  weight?: readonly number[] | null,
  reduction: Reduction = 'mean',
): Tensor {
  return tidy(() => {
    const dtype = floatDtype(logits);
    const adjusted = bias ? logits.add(constant(bias, dtype)) : logits;
    return F.crossEntropy(adjusted, target, { weight: weight ? constant(weight, dtype) : null, reduction });
  });
}

/**
 * The focal loss of LDAM-DRW: (1 - p)^gamma * ce per sample, ce the (weighted) cross-entropy and
 * p = exp(-ce); 'mean' averages over the batch (not over the weights, as the reference does).
 */
export function focalCrossEntropy(
  logits: Tensor,
  target: Tensor,
  gamma: number,
  weight: readonly number[] | null,
  reduction: Reduction = 'mean',
): Tensor {
  return tidy(() => {
    const w = weight ? constant(weight, floatDtype(logits)) : null;
    const ce = F.crossEntropy(logits, target, { weight: w, reduction: 'none' });
    const p = ce.neg().exp();
    const terms = p.neg().add(1).pow(gamma).mul(ce);
    return reduction === 'none' ? terms : reduction === 'sum' ? terms.sum() : terms.mean();
  });
}

/**
 * Class weights that are always on, or switched on by setEpoch after `fromEpoch` (deferred
 * re-weighting, DRW: on for epochs > fromEpoch, 1-based, as the reference's _hook_before_epoch).
 */
export class ClassWeighting {
  #active: number[] | null;
  constructor(
    readonly weights: number[] | null,
    readonly fromEpoch = -1,
  ) {
    this.#active = fromEpoch === -1 ? weights : null;
  }
  setEpoch(epoch: number): void {
    if (this.fromEpoch !== -1) this.#active = epoch > this.fromEpoch ? this.weights : null;
  }
  /** The weights in use now (null: unweighted). */
  get current(): number[] | null {
    return this.#active;
  }
  /** Changes exactly when the weights in use do (for graph mode's captures). */
  captureKey(): string {
    return this.#active ? 'weighted' : 'unweighted';
  }
}

export interface ReweightOptions {
  /** Class-balanced weights from the start (the reference's `reweight_CE`). */
  reweight?: boolean;
  /** DRW: class-balanced weights for epochs > reweightEpoch; -1 (default) never. */
  reweightEpoch?: number;
  /** Class-balanced beta (default 0.9999). */
  beta?: number;
}

function classWeighting(lossName: string, classCounts: number[], options: ReweightOptions): ClassWeighting {
  const deferred = options.reweightEpoch !== undefined && options.reweightEpoch !== -1;
  if (deferred && options.reweight) {
    throw new Error(`${lossName}: give either always-on re-weighting or a DRW reweight_epoch, not both`);
  }
  const weights =
    deferred || options.reweight ? classBalancedWeights(classCounts, options.beta ?? 0.9999) : null;
  return new ClassWeighting(weights, deferred ? options.reweightEpoch : -1);
}

/** CrossEntropyLoss: plain CE, with class-balanced weights (reweight_CE), or CE-DRW (reweight_epoch). */
export class CrossEntropyLoss implements Loss {
  readonly type = 'CrossEntropyLoss';
  readonly weighting: ClassWeighting;
  constructor(classCounts: number[], options: ReweightOptions = {}) {
    this.weighting = classWeighting(this.type, classCounts, options);
  }
  get logitBiases(): readonly null[] | undefined {
    return this.weighting.weights ? undefined : [null];
  }
  setEpoch(epoch: number): void {
    this.weighting.setEpoch(epoch);
  }
  captureKey(): string {
    return this.weighting.captureKey();
  }
  forward(out: ModelOutput, target: Tensor): Tensor {
    return adjustedCrossEntropy(out.output, target, null, this.weighting.current);
  }
}

/** Balanced softmax (Ren et al.): CE(z + log pi). */
export class BalancedSoftmaxLoss implements Loss {
  readonly type = 'BalancedSoftmaxLoss';
  readonly bias: number[];
  constructor(classCounts: number[], eps = PRIOR_EPS) {
    this.bias = logPrior(classCounts, 1, eps);
  }
  get logitBiases(): readonly number[][] {
    return [this.bias];
  }
  forward(out: ModelOutput, target: Tensor): Tensor {
    return adjustedCrossEntropy(out.output, target, this.bias);
  }
}

/** Logit-adjusted loss (Menon et al.): CE(z + tau * log pi); tau = 1 is balanced softmax. */
export class LogitAdjustLoss implements Loss {
  readonly type = 'LogitAdjustLoss';
  readonly bias: number[];
  constructor(
    classCounts: number[],
    readonly tau = 1,
    eps = PRIOR_EPS,
  ) {
    this.bias = logPrior(classCounts, tau, eps);
  }
  get logitBiases(): readonly number[][] {
    return [this.bias];
  }
  forward(out: ModelOutput, target: Tensor): Tensor {
    return adjustedCrossEntropy(out.output, target, this.bias);
  }
}

/**
 * Focal loss as LDAM-DRW writes it: mean((1 - p)^gamma * ce) with ce the per-sample (weighted) CE,
 * p = exp(-ce). Weights: explicit, class-balanced, or class-balanced after a DRW epoch.
 */
export class FocalLoss implements Loss {
  readonly type = 'FocalLoss';
  readonly weighting: ClassWeighting;
  constructor(
    readonly gamma = 0,
    weighting: ClassWeighting | number[] | null = null,
  ) {
    if (!(gamma >= 0)) throw new Error(`FocalLoss: gamma must be >= 0, got ${gamma}`);
    this.weighting = weighting instanceof ClassWeighting ? weighting : new ClassWeighting(weighting);
  }
  static withReweighting(classCounts: number[], gamma: number, options: ReweightOptions): FocalLoss {
    return new FocalLoss(gamma, classWeighting('FocalLoss', classCounts, options));
  }
  setEpoch(epoch: number): void {
    this.weighting.setEpoch(epoch);
  }
  captureKey(): string {
    return this.weighting.captureKey();
  }
  forward(out: ModelOutput, target: Tensor): Tensor {
    return focalCrossEntropy(out.output, target, this.gamma, this.weighting.current);
  }
}

export interface LdamOptions {
  maxMargin?: number;
  s?: number;
  /** DRW: class-balanced weights are used for epochs > reweightEpoch; -1 never (the reference's convention). */
  reweightEpoch?: number;
  beta?: number;
  /**
   * false (SADE / BalPoE, default): the logits come from a cosine classifier already scaled by s,
   * so s * m is subtracted from the target logit. true (kaidic/LDAM-DRW): the logits are raw cosines,
   * the loss is CE(s * (z - m onehot)).
   */
  scaleLogits?: boolean;
}

/**
 * LDAM (Cao et al.): the target logit loses a margin m_y proportional to n_y^(-1/4); with DRW the
 * class-balanced weights switch on after `reweightEpoch` (setEpoch is called before each epoch).
 */
export class LDAMLoss implements Loss {
  readonly type = 'LDAMLoss';
  readonly margins: number[];
  readonly s: number;
  readonly reweightEpoch: number;
  readonly scaleLogits: boolean;
  /** The DRW weights (null without DRW) and whether they are on. */
  readonly weighting: ClassWeighting;

  constructor(classCounts: number[], options: LdamOptions = {}) {
    this.s = options.s ?? 30;
    if (!(this.s > 0)) throw new Error(`LDAMLoss: s must be > 0, got ${this.s}`);
    this.margins = ldamMargins(classCounts, options.maxMargin ?? 0.5);
    this.reweightEpoch = options.reweightEpoch ?? -1;
    this.scaleLogits = options.scaleLogits ?? false;
    this.weighting = classWeighting(this.type, classCounts, {
      reweightEpoch: this.reweightEpoch,
      beta: options.beta,
    });
  }

  /** Whether the DRW weights are in use for the current epoch. */
  get reweighting(): boolean {
    return this.weighting.current !== null;
  }

  setEpoch(epoch: number): void {
    this.weighting.setEpoch(epoch);
  }
  captureKey(): string {
    return this.weighting.captureKey();
  }

  forward(out: ModelOutput, target: Tensor): Tensor {
    requireClassIndices(this.type, target);
    const { margins, s, scaleLogits } = this;
    return ldamCrossEntropy(
      this.type,
      out.output,
      target,
      { margins, s, scaleLogits },
      this.weighting.current,
    );
  }
}

/** The cross-entropy of ldamLogits, with optional class weights (LDAM-DRW's CE(s * (x - m onehot), weight)). */
export function ldamCrossEntropy(
  lossName: string,
  x: Tensor,
  target: Tensor,
  ldam: { margins: number[]; s: number; scaleLogits: boolean },
  weight: readonly number[] | null,
  reduction: Reduction = 'mean',
): Tensor {
  return tidy(() => {
    const final = ldamLogits(lossName, x, target, ldam.margins, ldam.s, ldam.scaleLogits);
    const w = weight ? constant(weight, floatDtype(x)) : null;
    return F.crossEntropy(final, target, { weight: w, reduction });
  });
}

/**
 * The logits LDAM takes its cross-entropy of: x [N, C] with the target class's logit lowered by
 * s * m_y (a cosine classifier already scaled by s), or s * (x - m_y onehot) when scaleLogits
 * (raw cosines, kaidic/LDAM-DRW). target: class indices [N].
 */
export function ldamLogits(
  lossName: string,
  x: Tensor,
  target: Tensor,
  margins: number[],
  s: number,
  scaleLogits = false,
): Tensor {
  return tidy(() => {
    const dtype = floatDtype(x);
    const C = x.size(1);
    if (C !== margins.length)
      throw new Error(`${lossName}: the logits have ${C} classes, the class counts ${margins.length}`);
    const onehot = F.oneHot(target, C).to(dtype);
    const batchMargin = constant(margins, dtype).indexSelect(0, target).unsqueeze(1);
    // Subtracting onehot * m_y is torch.where(onehot, x - m_y, x) with the same gradient.
    return scaleLogits ? x.sub(onehot.mul(batchMargin)).mul(s) : x.sub(onehot.mul(batchMargin).mul(s));
  });
}
