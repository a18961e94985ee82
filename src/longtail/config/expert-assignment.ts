// RIDE-EA's config parts: the router arguments of its `*EAModel` archs and the checks of a config
// that trains the routers over a stage-1 model.
import { ConfigError, bool, int, num } from './schema.js';
import type { TrainConfig } from './config.js';

/** RIDE-EA's router arguments, beside the backbone's in an `*EAModel` arch. */
export const EA_ARGS = {
  top_choices_num: int("how many of the largest running-mean logits each router sees (RIDE's default 5)", 1),
  pos_weight: num('BCE weight of "consult more experts" (default 20)', { min: 0 }),
  share_expert_help_pred_fc: bool(
    'one final router layer shared by the routers (default true), or one per router',
  ),
  force_all: bool(
    'consult every expert at test time (default false); tailor keeps the backbone frozen with it too',
  ),
};

/** The backbone arch of RIDE-EA's `*EAModel` types (the type itself for the others). */
export function baseArchType(type: string): string {
  return type.replace(/EAModel$/, 'Model');
}

/** Whether a config trains RIDE-EA's routers (an `*EAModel` arch). */
export function isExpertAssignment(config: { arch: { type: string } }): boolean {
  return /EAModel$/.test(config.arch.type);
}

/**
 * RIDE-EA starts from a trained model (stage1_checkpoint, RIDE's `-r` with
 * resume_state_dict_only) and trains only the routers: it needs the weights, several experts and
 * neither mixup nor distillation; stage1_checkpoint belongs to an `*EAModel` arch only.
 */
export function checkExpertAssignment(config: TrainConfig, file: string): void {
  if (!isExpertAssignment(config)) {
    if (config.stage1_checkpoint !== undefined)
      throw new ConfigError(
        file,
        'stage1_checkpoint',
        `applies to RIDE-EA (an *EAModel arch), not ${config.arch.type}`,
      );
    return;
  }
  const base = baseArchType(config.arch.type);
  if (!config.stage1_checkpoint)
    throw new ConfigError(
      file,
      'stage1_checkpoint',
      `${config.arch.type} trains routers over a trained ${base}: give its weights (a tailor run directory, its checkpoint, or a state dict), e.g. --set stage1_checkpoint=runs/my-ride-run`,
    );
  if (config.resume_state_dict_only === false)
    throw new ConfigError(
      file,
      'resume_state_dict_only',
      'RIDE-EA starts from the stage-1 weights only: leave it true',
    );
  if ((config.arch.args.num_experts ?? 1) < 2)
    throw new ConfigError(
      file,
      'arch.args.num_experts',
      `${config.arch.type} routes between experts: at least 2`,
    );
  const top = (config.arch.args as { top_choices_num?: number }).top_choices_num ?? 5;
  if (top > config.arch.args.num_classes)
    throw new ConfigError(
      file,
      'arch.args.top_choices_num',
      `${top} exceeds the ${config.arch.args.num_classes} classes: the routers see the top ${top} logits`,
    );
  if (config.mixup)
    throw new ConfigError(file, 'mixup', "RIDE-EA's routers train on plain batches; remove mixup");
  if (config.distill)
    throw new ConfigError(file, 'distill', 'RIDE-EA trains routers, not a student; remove distill');
  if (config.prl)
    throw new ConfigError(file, 'prl', 'RIDE-EA routes the experts of a plain multi-expert model, not PRL');
}
