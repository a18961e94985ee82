// BalPoE's tau_list as its trainer reads it (utils/util.py parse_tau_list): besides a list of
// numbers, 'limits' (num_experts values evenly from loss.tau_min to loss.tau_max, ends included),
// 'uniform' (the midpoints of num_experts equal parts of that range) or 'a;b;c'. Its README's
// `--tau_list limits --num_experts 7` is `--set loss.args.tau_list=limits --set
// arch.args.num_experts=7` here. The config keeps the numbers it resolved to.
import { ConfigError } from './schema.js';

/** More experts than any multi-expert recipe trains: the list is bounded before it is built. */
const MAX_EXPERTS = 1024;

/** The per-expert taus a tau_list text names, for `experts` experts. */
export function tauListFromText(
  text: string,
  experts: number,
  range: { min?: number | undefined; max?: number | undefined },
  file: string,
): number[] {
  const field = 'loss.args.tau_list';
  if (text === 'limits' || text === 'uniform') {
    if (experts > MAX_EXPERTS)
      throw new ConfigError(
        file,
        field,
        `'${text}' spreads the taus over arch.args.num_experts (${experts}); give at most ${MAX_EXPERTS} experts`,
      );
    if (range.min === undefined || range.max === undefined)
      throw new ConfigError(
        file,
        field,
        `'${text}' spreads the taus over loss.tau_min..loss.tau_max; set both`,
      );
    const { min, max } = range;
    if (text === 'uniform')
      return Array.from({ length: experts }, (_, i) => min + ((max - min) * (i + 0.5)) / experts);
    // one expert takes the middle of the range, as BalPoE's limits_sequence
    if (experts === 1) return [(min + max) / 2];
    return Array.from({ length: experts }, (_, i) => min + ((max - min) * i) / (experts - 1));
  }
  const parts = text.split(';');
  const taus = parts.map((p) => (/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(p) ? Number(p) : NaN));
  const bad = taus.findIndex((t) => !Number.isFinite(t));
  if (bad >= 0)
    throw new ConfigError(
      file,
      field,
      `'${text.slice(0, 80)}' is neither 'limits', 'uniform' nor numbers separated by ';' (part ${bad + 1} is '${parts[bad]!.slice(0, 20)}')`,
    );
  return taus;
}

/**
 * Replaces a BSExpertLoss tau_list given as text by its numbers (the arch's num_experts, default
 * 1, sets their count) and checks that there is one tau per expert, as BalPoE asserts.
 */
export function resolveTauList(
  config: {
    arch: { args?: { num_experts?: number | undefined } | undefined };
    loss: {
      type: string;
      args: Record<string, unknown>;
      tau_min?: number | undefined;
      tau_max?: number | undefined;
    };
  },
  file: string,
): void {
  if (config.loss.type !== 'BSExpertLoss') return;
  const experts = config.arch.args?.num_experts ?? 1;
  const given = config.loss.args.tau_list;
  if (typeof given === 'string')
    config.loss.args.tau_list = tauListFromText(
      given,
      experts,
      { min: config.loss.tau_min, max: config.loss.tau_max },
      file,
    );
  const taus = config.loss.args.tau_list;
  if (taus === undefined && experts !== 3)
    throw new ConfigError(
      file,
      'loss.args.tau_list',
      `is not given (the default 0, 1, 2 is for three experts) but arch.args.num_experts is ${experts}; give one tau per expert, or 'limits' / 'uniform' to spread loss.tau_min..loss.tau_max over them`,
    );
  if (Array.isArray(taus) && taus.length !== experts)
    throw new ConfigError(
      file,
      'loss.args.tau_list',
      `has ${taus.length} values but arch.args.num_experts is ${experts}; give one tau per expert, or 'limits' / 'uniform' to spread loss.tau_min..loss.tau_max over them`,
    );
}
