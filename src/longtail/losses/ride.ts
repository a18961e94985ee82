// RIDE's loss (Wang et al., "Long-tailed Recognition by Routing Diverse Distribution-Aware
// Experts", ICLR 2021; frank-xwang/RIDE-LongTailRecognition model/loss.py RIDELoss): every expert
// gets LDAM with deferred re-weighting, plus a diversity term, the KL divergence from the
// ensemble's softened prediction to the expert's. A negative diversity factor (the published
// -0.2 to -0.45) rewards experts that disagree with the ensemble. When DRW switches on, the
// diversity temperature becomes per class, larger for frequent classes.
import { nn, noGrad, tidy, type Tensor } from '../../torch/index.js';
import { checkCounts, classBalancedWeights, classPrior, constant, ldamMargins } from './priors.js';
import { ClassWeighting, ldamLogits } from './single.js';
import {
  expertLogits,
  floatDtype,
  requireClassIndices,
  type Loss,
  type LossExtra,
  type ModelOutput,
} from './types.js';

const F = nn.functional;

export interface RideOptions {
  /** LDAM's largest margin (the reference's max_m, default 0.5). */
  maxMargin?: number;
  /** The cosine classifier's scale the margin is multiplied by (default 30). */
  s?: number;
  /** false: never re-weight, whatever reweightEpoch says (default true). */
  reweight?: boolean;
  /** DRW: class-balanced CE weights and per-class diversity temperatures for epochs > reweightEpoch; -1 never. */
  reweightEpoch?: number;
  /** Weight of each expert's LDAM term (base_loss_factor, default 1). */
  baseLossFactor?: number;
  /** Weight of each expert's diversity term (additional_diversity_factor, default -0.2). */
  diversityFactor?: number;
  /** Temperature of the diversity term (base_diversity_temperature, default 1). */
  diversityTemperature?: number;
  /** How much the class prior shapes the per-class temperatures under DRW (reweight_factor, default 0.05). */
  reweightFactor?: number;
}

/**
 * The per-class diversity temperatures' factors RIDE uses once DRW is on: C * pi_c * r + 1 - r,
 * divided by their maximum (so the most frequent class keeps the base temperature).
 */
export function rideTemperatureFactors(classCounts: number[], reweightFactor: number): number[] {
  const prior = classPrior(classCounts);
  const C = prior.length;
  const raw = prior.map((p) => C * p * reweightFactor + 1 - reweightFactor);
  const max = Math.max(...raw);
  const factors = raw.map((w) => w / max);
  if (!factors.every((w) => w > 0) || !(max > 0)) {
    throw new Error(
      `RIDELoss: reweight_factor ${reweightFactor} is too large: it makes a class temperature <= 0 (use a value in [0, 1])`,
    );
  }
  return factors;
}

/**
 * RIDELoss: sum over experts e of
 * `base_loss_factor * LDAM(z_e, y) + diversity_factor * T^2 * KL(softmax(z / T) || softmax(z_e / T))`,
 * z the ensemble output (the mean of the experts' logits, not differentiated through in the KL),
 * T the diversity temperature (per class once DRW is on; T^2 uses its mean). With a diversity
 * factor of 0 the reference trains every expert's LDAM term on the ensemble output; so does this.
 * Without per-expert logits it is plain cross-entropy on the output, as in the reference.
 */
export class RIDELoss implements Loss {
  readonly type = 'RIDELoss';
  readonly margins: number[];
  readonly s: number;
  readonly baseLossFactor: number;
  readonly diversityFactor: number;
  readonly diversityTemperature: number;
  /** The per-class temperature factors used while DRW is on. */
  readonly temperatureFactors: number[];
  /** The DRW class weights of the LDAM terms, and whether they are on. */
  readonly weighting: ClassWeighting;

  constructor(
    classCounts: number[],
    readonly experts: number,
    options: RideOptions = {},
  ) {
    checkCounts(classCounts);
    if (!(Number.isInteger(experts) && experts >= 1)) {
      throw new Error(`RIDELoss: needs at least one expert, got ${experts}`);
    }
    this.s = options.s ?? 30;
    if (!(this.s > 0)) throw new Error(`RIDELoss: s must be > 0, got ${this.s}`);
    this.margins = ldamMargins(classCounts, options.maxMargin ?? 0.5);
    this.baseLossFactor = options.baseLossFactor ?? 1;
    this.diversityFactor = options.diversityFactor ?? -0.2;
    this.diversityTemperature = options.diversityTemperature ?? 1;
    if (!(this.diversityTemperature > 0)) {
      throw new Error(`RIDELoss: the diversity temperature must be > 0, got ${this.diversityTemperature}`);
    }
    this.temperatureFactors = rideTemperatureFactors(classCounts, options.reweightFactor ?? 0.05);
    const reweightEpoch = options.reweight === false ? -1 : (options.reweightEpoch ?? -1);
    this.weighting = new ClassWeighting(
      reweightEpoch === -1 ? null : classBalancedWeights(classCounts),
      reweightEpoch,
    );
  }

  setEpoch(epoch: number): void {
    this.weighting.setEpoch(epoch);
  }

  captureKey(): string {
    return this.weighting.captureKey();
  }

  forward(out: ModelOutput, target: Tensor): Tensor {
    requireClassIndices(this.type, target);
    if (!out.logits) return F.crossEntropy(out.output, target);
    const logits = expertLogits(out, this.experts, this.type);
    return tidy(() => {
      const output = out.output;
      const dtype = floatDtype(output);
      const classWeights = this.weighting.current;
      const weight = classWeights ? constant(classWeights, dtype) : null;
      // Once DRW is on, frequent classes get the larger temperatures (factors up to 1).
      const temperatures = classWeights
        ? this.temperatureFactors.map((w) => this.diversityTemperature * w)
        : null;
      const meanTemperature = temperatures
        ? temperatures.reduce((a, b) => a + b, 0) / temperatures.length
        : this.diversityTemperature;
      const soften = (z: Tensor): Tensor =>
        temperatures ? z.div(constant(temperatures, dtype)) : z.div(this.diversityTemperature);
      const ensembleLogProb = noGrad(() => F.logSoftmax(soften(output.detach()), 1));
      const ensembleProb = ensembleLogProb.exp();
      const batch = output.size(0);
      const terms: Tensor[] = [];
      for (let e = 0; e < this.experts; e++) {
        const expert = logits.select(0, e);
        const ldamInput = this.diversityFactor === 0 ? output : expert;
        const ldam = F.crossEntropy(ldamLogits(this.type, ldamInput, target, this.margins, this.s), target, {
          weight,
        });
        let term = ldam.mul(this.baseLossFactor);
        if (this.diversityFactor !== 0) {
          // KL(p || q) summed over classes, averaged over the batch (kl_div's 'batchmean').
          const expertLogProb = F.logSoftmax(soften(expert), 1);
          const kl = ensembleProb.mul(ensembleLogProb.sub(expertLogProb)).sum().div(batch);
          term = term.add(kl.mul(this.diversityFactor * meanTemperature * meanTemperature));
        }
        terms.push(term);
      }
      return terms.reduce((a, b) => a.add(b));
    });
  }
}

export interface RideDistillOptions extends RideOptions {
  /** Weight of the distillation term (additional_distill_loss_factor, default 1). */
  distillFactor?: number;
  /** Temperature of the distillation (distill_temperature, default 1). */
  distillTemperature?: number;
  /** Weight of the RIDE loss (ride_loss_factor, default 1). */
  rideFactor?: number;
}

/**
 * RIDELossWithDistill: RIDE's loss plus knowledge distillation from a teacher (a RIDE model with
 * more experts), `KL(softmax(t / T) || softmax(z / T)) * T^2` between the teacher's and the
 * student's combined outputs. As in the reference, both terms are added once per student expert
 * (E times in all), which scales the whole loss by E.
 */
export class RIDELossWithDistill implements Loss {
  readonly type = 'RIDELossWithDistill';
  readonly ride: RIDELoss;
  readonly distillFactor: number;
  readonly distillTemperature: number;
  readonly rideFactor: number;

  constructor(classCounts: number[], experts: number, options: RideDistillOptions = {}) {
    this.ride = new RIDELoss(classCounts, experts, options);
    this.distillFactor = options.distillFactor ?? 1;
    this.distillTemperature = options.distillTemperature ?? 1;
    this.rideFactor = options.rideFactor ?? 1;
    if (!(this.distillTemperature > 0)) {
      throw new Error(`RIDELossWithDistill: distill_temperature must be > 0, got ${this.distillTemperature}`);
    }
  }

  setEpoch(epoch: number): void {
    this.ride.setEpoch(epoch);
  }

  captureKey(): string {
    return this.ride.captureKey();
  }

  forward(out: ModelOutput, target: Tensor, extra?: LossExtra): Tensor {
    if (!out.logits) return this.ride.forward(out, target);
    const teacher = extra?.teacher;
    if (!teacher) {
      throw new Error(
        'RIDELossWithDistill needs the teacher\'s output: set "distill": true with "distill_arch" and "distill_checkpoint" in the config',
      );
    }
    return tidy(() => {
      const T = this.distillTemperature;
      const studentLogProb = F.logSoftmax(out.output.div(T), 1);
      const teacherLogProb = noGrad(() => F.logSoftmax(teacher.detach().div(T), 1));
      const kl = teacherLogProb.exp().mul(teacherLogProb.sub(studentLogProb)).sum().div(out.output.size(0));
      const once = this.ride
        .forward(out, target)
        .mul(this.rideFactor)
        .add(kl.mul(this.distillFactor * T * T));
      return once.mul(this.ride.experts);
    });
  }
}
