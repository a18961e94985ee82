// Builds a loss from a config's `loss` section ({type, args}) with the type and argument names of
// the SADE / BalPoE / LDAM-DRW / PRL reference code. cls_num_list is never an argument: like the
// reference trainers, we pass the training class counts in (ctx.classCounts).
import { z } from 'zod';
import { ConfigError, bool, int, num, obj, oneOf, oneOfValues, parseWith, suggestion } from './schema.js';
import {
  BalancedSoftmaxLoss,
  CrossEntropyLoss,
  FocalLoss,
  LDAMLoss,
  LogitAdjustLoss,
} from '../losses/single.js';
import { bsExpertLoss, diverseExpertLoss, type ExpertKind } from '../losses/experts.js';
import { PreferenceLoss } from '../losses/prl.js';
import { RIDELoss, RIDELossWithDistill } from '../losses/ride.js';
import type { Loss } from '../losses/types.js';

/** What a loss is built for. */
export interface LossContext {
  /** Training images per class (the reference code's cls_num_list). */
  classCounts: number[];
  /** Experts of the model (1 = a plain model). */
  experts: number;
  /** Total training epochs, if known. */
  epochs?: number;
  /** The config file, named in error messages. */
  file?: string;
}

const numbers = z.array(z.number()).optional();
const drwEpoch = int('DRW: class-balanced weights for epochs > this (1-based); -1 never', -1);
const expertTerms = z
  .array(obj({ type: z.enum(['forward', 'uniform', 'backward']), tau: num() }))
  .min(1)
  .optional();

/** The Tchebycheff ideal point, in `loss.args` and in the `prl` section alike. */
export const IDEAL_POINT = oneOf(
  [z.number(), z.array(z.number()), z.literal('running_min')],
  'a number, one number per expert, or "running_min"',
)
  .describe('ideal point of the Tchebycheff scalarization')
  .optional();

/** RIDELoss's arguments (RIDELossWithDistill takes them too). */
const RIDE_ARGS = {
  max_m: num('largest LDAM margin', { min: 0 }),
  s: num('cosine-classifier scale the margin is multiplied by', { min: 0 }),
  reweight: bool('false: never re-weight, whatever reweight_epoch says'),
  reweight_epoch: drwEpoch,
  base_loss_factor: num("weight of each expert's LDAM term"),
  additional_diversity_factor: num(
    "weight of each expert's diversity (KL) term; negative rewards disagreement",
  ),
  base_diversity_temperature: num('temperature of the diversity term', { min: 0 }),
  reweight_factor: num('how much the class prior shapes the per-class temperatures under DRW', {
    min: 0,
    max: 1,
  }),
  num_experts: int(undefined, 1),
};

/** The accepted `args` of every loss type (for the config schema too). */
export const LOSS_TYPES = {
  CrossEntropyLoss: obj({
    reweight_CE: bool('class-balanced weights (beta 0.9999) from the start'),
    reweight_epoch: drwEpoch,
    beta: num('class-balanced beta', { min: 0, max: 1 }),
  }),
  BalancedSoftmaxLoss: obj({ eps: num('added to the prior before the log', { min: 0 }) }),
  LogitAdjustLoss: obj({ tau: num('logit adjustment strength'), eps: num(undefined, { min: 0 }) }),
  FocalLoss: obj({
    gamma: num('focusing parameter', { min: 0 }),
    weight: numbers,
    reweight: bool('class-balanced weights (beta 0.9999) from the start'),
    reweight_epoch: drwEpoch,
    beta: num(undefined, { min: 0, max: 1 }),
  }),
  LDAMLoss: obj({
    max_m: num('largest margin', { min: 0 }),
    s: num('logit scale', { min: 0 }),
    reweight_epoch: drwEpoch,
    beta: num('DRW class-balanced beta', { min: 0, max: 1 }),
    scale_logits: bool('multiply raw cosine logits by s (kaidic/LDAM-DRW) instead of subtracting s * m'),
  }),
  DiverseExpertLoss: obj({
    tau: num('inverse-prior strength of the backward expert'),
    max_m: num('accepted for compatibility; unused by the reference'),
    s: num('accepted for compatibility; unused by the reference'),
    num_experts: int(undefined, 1),
  }),
  BSExpertLoss: obj({
    tau_list: numbers,
    eps: num(undefined, { min: 0 }),
    num_experts: int(undefined, 1),
  }),
  RIDELoss: obj(RIDE_ARGS),
  RIDELossWithDistill: obj({
    ...RIDE_ARGS,
    additional_distill_loss_factor: num('weight of the distillation term'),
    distill_temperature: num('temperature of the distillation', { min: 0 }),
    ride_loss_factor: num('weight of the RIDE loss'),
  }),
  PRLLoss: obj({
    variant: oneOfValues(['paper', 'released']),
    scalarization: oneOfValues(['stch', 'linear', 'ls', 'released_stch', 'sum']),
    mu: num('smoothing of the Tchebycheff scalarization', { min: 0 }),
    z: IDEAL_POINT,
    Z: IDEAL_POINT.describe('ideal point (the released Solvers spelling)'),
    expert_losses: expertTerms,
  }),
} as const;
export type LossType = keyof typeof LOSS_TYPES;

/** Loss type names: the official ones plus the aliases users of those projects write. */
const ALIASES: Record<string, string> = {
  BalancedSoftmaxCE: 'BalancedSoftmaxLoss',
  BalancedSoftmax: 'BalancedSoftmaxLoss',
  PRL: 'PRLLoss',
  RIDE: 'RIDELoss',
};

function checkExperts(numExperts: number | undefined, ctx: LossContext, file: string): void {
  if (numExperts !== undefined && numExperts !== ctx.experts) {
    throw new ConfigError(
      file,
      'loss.args.num_experts',
      `is ${numExperts} but the model has ${ctx.experts} experts`,
    );
  }
}

/** Creates a loss; errors name the config field and what to write instead. */
export function createLoss(type: string, args: unknown = {}, ctx: LossContext): Loss {
  const file = ctx.file ?? 'loss config';
  const name = Object.hasOwn(ALIASES, type) ? ALIASES[type]! : type;
  if (!Object.hasOwn(LOSS_TYPES, name))
    throw new ConfigError(
      file,
      'loss.type',
      `unknown loss '${type}'${suggestion(type, Object.keys(LOSS_TYPES))}`,
    );
  const parse = <T>(schema: z.ZodType<T>): T => parseWith(schema, args ?? {}, file, 'loss.args');
  const counts = ctx.classCounts;
  const wrap = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(file, 'loss', (error as Error).message);
    }
  };
  return wrap((): Loss => {
    switch (name as LossType) {
      case 'CrossEntropyLoss': {
        const a = parse(LOSS_TYPES.CrossEntropyLoss);
        return new CrossEntropyLoss(counts, {
          reweight: a.reweight_CE === true,
          reweightEpoch: a.reweight_epoch,
          beta: a.beta,
        });
      }
      case 'BalancedSoftmaxLoss':
        return new BalancedSoftmaxLoss(counts, parse(LOSS_TYPES.BalancedSoftmaxLoss).eps);
      case 'LogitAdjustLoss': {
        const a = parse(LOSS_TYPES.LogitAdjustLoss);
        return new LogitAdjustLoss(counts, a.tau ?? 1, a.eps);
      }
      case 'FocalLoss': {
        const a = parse(LOSS_TYPES.FocalLoss);
        if (a.weight === undefined) {
          return FocalLoss.withReweighting(counts, a.gamma ?? 0, {
            reweight: a.reweight === true,
            reweightEpoch: a.reweight_epoch,
            beta: a.beta,
          });
        }
        if (a.reweight === true || a.reweight_epoch !== undefined) {
          throw new ConfigError(
            file,
            'loss.args.weight',
            'give explicit "weight" or class-balanced re-weighting, not both',
          );
        }
        if (a.weight.length !== counts.length) {
          throw new ConfigError(
            file,
            'loss.args.weight',
            `has ${a.weight.length} values for ${counts.length} classes`,
          );
        }
        return new FocalLoss(a.gamma ?? 0, a.weight);
      }
      case 'LDAMLoss': {
        const a = parse(LOSS_TYPES.LDAMLoss);
        return new LDAMLoss(counts, {
          maxMargin: a.max_m,
          s: a.s,
          reweightEpoch: a.reweight_epoch,
          beta: a.beta,
          scaleLogits: a.scale_logits === true,
        });
      }
      case 'DiverseExpertLoss': {
        const a = parse(LOSS_TYPES.DiverseExpertLoss);
        checkExperts(a.num_experts, ctx, file);
        return diverseExpertLoss(counts, ctx.experts, a.tau ?? 2);
      }
      case 'BSExpertLoss': {
        const a = parse(LOSS_TYPES.BSExpertLoss);
        checkExperts(a.num_experts, ctx, file);
        return bsExpertLoss(counts, ctx.experts, a.tau_list ?? [0, 1, 2], a.eps);
      }
      case 'RIDELoss':
      case 'RIDELossWithDistill': {
        const a: z.output<typeof LOSS_TYPES.RIDELossWithDistill> =
          name === 'RIDELoss' ? parse(LOSS_TYPES.RIDELoss) : parse(LOSS_TYPES.RIDELossWithDistill);
        checkExperts(a.num_experts, ctx, file);
        const options = {
          maxMargin: a.max_m,
          s: a.s,
          reweight: a.reweight,
          reweightEpoch: a.reweight_epoch,
          baseLossFactor: a.base_loss_factor,
          diversityFactor: a.additional_diversity_factor,
          diversityTemperature: a.base_diversity_temperature,
          reweightFactor: a.reweight_factor,
        };
        if (name === 'RIDELoss') return new RIDELoss(counts, ctx.experts, options);
        return new RIDELossWithDistill(counts, ctx.experts, {
          ...options,
          distillFactor: a.additional_distill_loss_factor,
          distillTemperature: a.distill_temperature,
          rideFactor: a.ride_loss_factor,
        });
      }
      case 'PRLLoss': {
        const a = parse(LOSS_TYPES.PRLLoss);
        return new PreferenceLoss(counts, ctx.experts, {
          variant: a.variant,
          scalarization: a.scalarization,
          mu: a.mu,
          z: a.z ?? a.Z,
          expertLosses: a.expert_losses,
        });
      }
    }
  });
}

/** The config's `prl` section (see config.ts PrlSection) as a PRL loss. */
export function createPrlLoss(
  prl: {
    variant?: 'paper' | 'released';
    scalarization?: string;
    mu?: number;
    z?: number | number[] | 'running_min';
    expert_losses?: { type: ExpertKind; tau?: number }[];
  },
  ctx: LossContext,
): PreferenceLoss {
  try {
    return new PreferenceLoss(ctx.classCounts, ctx.experts, {
      variant: prl.variant,
      scalarization: prl.scalarization,
      mu: prl.mu,
      z: prl.z,
      expertLosses: prl.expert_losses,
    });
  } catch (error) {
    throw new ConfigError(ctx.file ?? 'config', 'prl', (error as Error).message);
  }
}
