// Shared by the long-tail commands: loading a checkpoint's session, tables, preference parsing.
import * as torch from '../../torch/index.js';
import {
  describeLayout,
  loadRun,
  type ControllabilityGrid,
  type GroupResult,
  type LoadedRun,
  type System,
  Preference,
  PreferenceError,
  PreferenceTextError,
  parsePreferenceText,
} from '../../longtail/index.js';
import { CliError } from '../errors.js';
import { RUNTIME_OPTIONS } from '../command.js';
import { useDevice, resolveThreads } from '../runtime.js';

/**
 * The options loadRunForEvaluation reads: -r CHECKPOINT (or --checkpoint), --train-config FILE
 * (the training config of another trainer's weights file), --root DIR, --threads N, --device D.
 */
export const CHECKPOINT_OPTIONS = {
  resume: { type: 'string', short: 'r' },
  checkpoint: { type: 'string' },
  'train-config': { type: 'string' },
  root: { type: 'string' },
  ...RUNTIME_OPTIONS,
} as const;

/**
 * The shared start of the evaluation commands: thread count, the run, and an optional PRL
 * preference: the run's session then holds its system at that preference (an error for runs
 * without a hypernetwork).
 */
export function loadRunForEvaluation(
  values: {
    resume?: string | undefined;
    checkpoint?: string | undefined;
    'train-config'?: string | undefined;
    root?: string | undefined;
    threads?: string | undefined;
    preference?: string | undefined;
    device?: string | undefined;
  },
  help: string,
  /** Checks of the command's own inputs, run once the flags are read and before the run loads. */
  checkInputs?: () => void,
): { loaded: LoadedRun; system: System } {
  if (values.resume !== undefined && values.checkpoint !== undefined)
    throw new CliError('give the checkpoint once: -r and --checkpoint name the same thing');
  const path = values.resume ?? values.checkpoint;
  if (!path) throw new CliError(`give the checkpoint with -r CHECKPOINT\n\n${help}`);
  torch.setNumThreads(resolveThreads(values.threads, 2));
  // The model is rebuilt on the device; the checkpoint's tensors are copied into it.
  useDevice(values.device);
  checkInputs?.();
  const config = values['train-config'];
  const loaded = loadRun(path, {
    ...(values.root ? { root: values.root } : {}),
    ...(config !== undefined ? { config } : {}),
  });
  // Another trainer's weights file: say which name layout was recognised.
  if (loaded.layout) console.error(`tailor: ${describeLayout(loaded.checkpoint, loaded.layout)}`);
  const system = loaded.session.system;
  const preference = preferenceArg('--preference', values.preference, system.experts);
  if (!preference) return { loaded, system };
  if (system.kind !== 'prl')
    throw new CliError('--preference applies to PRL checkpoints only (this run has no hypernetwork)');
  const session = { ...loaded.session, system: system.at(preference) };
  return { loaded: { ...loaded, session }, system: session.system };
}

const pct = (v: number | null | undefined) =>
  v === null || v === undefined ? 'absent' : (100 * v).toFixed(2);

export function distributionTable(
  distributions: Record<string, GroupResult & { n: number }>,
  meanTop1: number,
): string {
  const lines = [
    `${'distribution'.padEnd(12)} ${'n'.padStart(6)} ${'top1'.padStart(7)} ${'many'.padStart(7)} ${'medium'.padStart(7)} ${'few'.padStart(7)}`,
  ];
  for (const [name, r] of Object.entries(distributions)) {
    lines.push(
      `${name.padEnd(12)} ${String(r.n).padStart(6)} ${pct(r.top1).padStart(7)} ${pct(r.many).padStart(7)} ${pct(r.medium).padStart(7)} ${pct(r.few).padStart(7)}`,
    );
  }
  lines.push(`${'mean'.padEnd(12)} ${''.padStart(6)} ${pct(meanTop1).padStart(7)}`);
  return lines.join('\n');
}

export function groupsLine(r: GroupResult): string {
  return `top1 ${pct(r.top1)}  many ${pct(r.many)}  medium ${pct(r.medium)}  few ${pct(r.few)}`;
}

export function jsonGroup(r: GroupResult): {
  top1: number | null;
  many: number | null;
  medium: number | null;
  few: number | null;
} {
  return { top1: r.top1, many: r.many, medium: r.medium, few: r.few };
}

export function controllabilityTable(grid: Pick<ControllabilityGrid, 'points'>): string {
  const lines = [
    `${'preference'.padEnd(20)} ${'top1'.padStart(7)} ${'many'.padStart(7)} ${'medium'.padStart(7)} ${'few'.padStart(7)} ${'fwd50'.padStart(7)} ${'bwd50'.padStart(7)}`,
  ];
  for (const p of grid.points) {
    lines.push(
      `${p.preference
        .map((v) => v.toFixed(2))
        .join('/')
        .padEnd(
          20,
        )} ${pct(p.top1).padStart(7)} ${pct(p.many).padStart(7)} ${pct(p.medium).padStart(7)} ${pct(p.few).padStart(7)} ${pct(p.distributions.forward50).padStart(7)} ${pct(p.distributions.backward50).padStart(7)}`,
    );
  }
  return lines.join('\n');
}

/** A preference over `experts` experts (`a,b,c`), normalised to sum to 1; undefined when absent. */
export function preferenceArg(
  flag: string,
  text: string | undefined,
  experts: number,
): Preference | undefined {
  if (text === undefined) return undefined;
  try {
    return Preference.of(parsePreferenceText(text), experts);
  } catch (error) {
    if (error instanceof PreferenceTextError || error instanceof PreferenceError)
      throw new CliError(`${flag} ${error.message}`);
    throw error;
  }
}
