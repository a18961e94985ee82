// Builds a loss from a config's `loss` section ({type, args}) with the type and argument names of
// the SADE / BalPoE / LDAM-DRW / PRL reference code. cls_num_list is never an argument: like the
// reference trainers, we pass the training class counts in (ctx.classCounts).
import { ConfigError, bool, num, obj, str, suggestion, validate, type Schema } from './schema.js';
import {
  BalancedSoftmaxLoss,
  CrossEntropyLoss,
  FocalLoss,
  LDAMLoss,
  LogitAdjustLoss,
} from '../losses/single.js';
import { bsExpertLoss, diverseExpertLoss, type ExpertKind, type ExpertTerm } from '../losses/experts.js';
import { PreferenceLoss } from '../losses/prl.js';
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

const numbers: Schema = { kind: 'array', items: { kind: 'number' }, optional: true };
const drwEpoch = num('DRW: class-balanced weights for epochs > this (1-based); -1 never', {
  integer: true,
  min: -1,
});
const expertTerms: Schema = {
  kind: 'array',
  optional: true,
  minLength: 1,
  items: obj({ type: { kind: 'string', values: ['forward', 'uniform', 'backward'] }, tau: num() }, false),
};

/** The Tchebycheff ideal point, in `loss.args` and in the `prl` section alike. */
export const IDEAL_POINT: Schema = {
  kind: 'oneOf',
  options: [num(), { kind: 'array', items: num() }, str(['running_min'] as const)],
  expected: 'a number, one number per expert, or "running_min"',
  optional: true,
  doc: 'ideal point of the Tchebycheff scalarization',
};

/** The accepted `args` of every loss type (for the config schema too). */
export const LOSS_TYPES: Record<string, Schema> = {
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
    num_experts: num(undefined, { integer: true, min: 1 }),
  }),
  BSExpertLoss: obj({
    tau_list: numbers,
    eps: num(undefined, { min: 0 }),
    num_experts: num(undefined, { integer: true, min: 1 }),
  }),
  PRLLoss: obj({
    variant: str(['paper', 'released'] as const),
    scalarization: str(['stch', 'linear', 'ls', 'released_stch', 'sum'] as const),
    mu: num('smoothing of the Tchebycheff scalarization', { min: 0 }),
    z: IDEAL_POINT,
    Z: { ...IDEAL_POINT, doc: 'ideal point (the released Solvers spelling)' },
    expert_losses: expertTerms,
  }),
};

/** Loss type names: the official ones plus the aliases users of those projects write. */
const ALIASES: Record<string, string> = {
  BalancedSoftmaxCE: 'BalancedSoftmaxLoss',
  BalancedSoftmax: 'BalancedSoftmaxLoss',
  PRL: 'PRLLoss',
};

function checkExperts(args: Record<string, unknown>, ctx: LossContext, file: string): void {
  if (args.num_experts !== undefined && args.num_experts !== ctx.experts) {
    throw new ConfigError(
      file,
      'loss.args.num_experts',
      `is ${String(args.num_experts)} but the model has ${ctx.experts} experts`,
    );
  }
}

/** Creates a loss; errors name the config field and what to write instead. */
export function createLoss(type: string, args: Record<string, unknown> = {}, ctx: LossContext): Loss {
  const file = ctx.file ?? 'loss config';
  const name = ALIASES[type] ?? type;
  const schema = LOSS_TYPES[name];
  if (!schema)
    throw new ConfigError(
      file,
      'loss.type',
      `unknown loss '${type}'${suggestion(type, Object.keys(LOSS_TYPES))}`,
    );
  validate(schema, args, file, 'loss.args');
  const counts = ctx.classCounts;
  const n = (key: string): number | undefined => args[key] as number | undefined;
  const wrap = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(file, 'loss', (error as Error).message);
    }
  };
  return wrap((): Loss => {
    switch (name) {
      case 'CrossEntropyLoss':
        return new CrossEntropyLoss(counts, {
          reweight: args.reweight_CE === true,
          reweightEpoch: n('reweight_epoch'),
          beta: n('beta'),
        });
      case 'BalancedSoftmaxLoss':
        return new BalancedSoftmaxLoss(counts, n('eps'));
      case 'LogitAdjustLoss':
        return new LogitAdjustLoss(counts, n('tau') ?? 1, n('eps'));
      case 'FocalLoss': {
        const weight = args.weight as number[] | undefined;
        if (weight === undefined) {
          return FocalLoss.withReweighting(counts, n('gamma') ?? 0, {
            reweight: args.reweight === true,
            reweightEpoch: n('reweight_epoch'),
            beta: n('beta'),
          });
        }
        if (args.reweight === true || args.reweight_epoch !== undefined) {
          throw new ConfigError(
            file,
            'loss.args.weight',
            'give explicit "weight" or class-balanced re-weighting, not both',
          );
        }
        if (weight.length !== counts.length) {
          throw new ConfigError(
            file,
            'loss.args.weight',
            `has ${weight.length} values for ${counts.length} classes`,
          );
        }
        return new FocalLoss(n('gamma') ?? 0, weight);
      }
      case 'LDAMLoss':
        return new LDAMLoss(counts, {
          maxMargin: n('max_m'),
          s: n('s'),
          reweightEpoch: n('reweight_epoch'),
          beta: n('beta'),
          scaleLogits: args.scale_logits === true,
        });
      case 'DiverseExpertLoss':
        checkExperts(args, ctx, file);
        return diverseExpertLoss(counts, ctx.experts, n('tau') ?? 2);
      case 'BSExpertLoss':
        checkExperts(args, ctx, file);
        return bsExpertLoss(
          counts,
          ctx.experts,
          (args.tau_list as number[] | undefined) ?? [0, 1, 2],
          n('eps'),
        );
      case 'PRLLoss':
        return new PreferenceLoss(counts, ctx.experts, {
          variant: args.variant as 'paper' | 'released' | undefined,
          scalarization: args.scalarization as string | undefined,
          mu: n('mu'),
          z: (args.z ?? args.Z) as number | number[] | 'running_min' | undefined,
          expertLosses: args.expert_losses as ExpertTerm[] | undefined,
        });
      default:
        // Unreachable: every LOSS_TYPES entry has a case above (the schema lookup rejected the rest).
        throw new Error(`internal error: loss '${name}' has a schema in LOSS_TYPES but no constructor`);
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
