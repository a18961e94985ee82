// Finding and loading a training run's checkpoint and rebuilding its session.
import { InputError } from '../../util/errors.js';
import { dirname, resolve } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import * as torch from '../../torch/index.js';
import { loadCheckpoint } from '../../torch/checkpoint.js';
import { loadSystemState } from '../systems/system.js';
import type { EpochRecord } from '../train/trainer.js';
import {
  sessionFromConfigFile,
  sessionFromRecord,
  type Session,
  type SessionRecord,
} from '../config/session.js';
import { checksOf } from '../../util/arguments.js';
import {
  LAYOUT_DESCRIPTIONS,
  loadModelWeights,
  type ModelWeightsReport,
} from '../models/checkpoint-layout.js';
import { readWeightsFile } from './weights-file.js';
import { referenceRouterState, type ExpertRouter } from '../models/expert-assignment.js';

/** A user-facing problem with a run or checkpoint path. */
export class RunError extends InputError {}

/**
 * What {@link loadRun} returns: the rebuilt session with the trained weights, the checkpoint and run directory, the training history.
 */
export interface LoadedRun {
  session: Session;
  checkpoint: string;
  runDir: string;
  history?: EpochRecord[];
  epoch?: number;
  /** For a weights file of another trainer (loaded with a config): the name layout recognised. */
  layout?: ModelWeightsReport;
}

/**
 * Whether `path` is a weights file rather than a tailor checkpoint: a PyTorch file (.pth, .pt,
 * .bin, .tar, .ckpt), as the SADE / RIDE / BalPoE trainers save, or a .safetensors file with no
 * tailor checkpoint .json beside it. Such a file holds no config: {@link loadRun} needs one.
 */
export function isWeightsFile(path: string): boolean {
  if (/\.(pth|pt|bin|tar|ckpt)$/i.test(path)) return true;
  return /\.safetensors$/i.test(path) && !existsSync(path.replace(/\.safetensors$/i, '.json'));
}

/** The one-line description of a recognised layout, for the commands' log. */
export function describeLayout(file: string, report: ModelWeightsReport): string {
  const prefix = report.prefix ? ` under '${report.prefix}'` : '';
  const ignored =
    report.ignored.length > 0
      ? `; ${report.ignored.length} tensors of RIDE's expert router ignored (every expert is evaluated)`
      : '';
  return `${file}: ${LAYOUT_DESCRIPTIONS[report.layout]}${prefix}, ${report.loaded} tensors loaded${ignored}`;
}

/**
 * The checkpoint file of a run directory (its checkpoint-last.json), or a checkpoint path given as .json, .safetensors or without suffix.
 * @throws {@link RunError} when there is none, or the path is a weights file of another trainer.
 */
export function resolveCheckpoint(path: string): string {
  // A run directory wins over a same-named file beside it (runs/prl next to runs/prl.json, its config).
  const isDirectory = statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
  if (!isDirectory && isWeightsFile(path) && existsSync(path)) {
    throw new RunError(
      `${path} is a weights file, not a tailor run: evaluate it with its training config (test -c CONFIG -r FILE), ` +
        'or start a training run from it with arch.args.pretrained',
    );
  }
  const candidates = isDirectory
    ? [`${path}/checkpoint-last.json`]
    : [path, `${path}.json`, path.replace(/\.safetensors$/, '.json')];
  for (const c of candidates) if (c.endsWith('.json') && existsSync(c)) return resolve(c);
  throw new RunError(
    `no checkpoint at '${path}' (give a run directory or a checkpoint .json/.safetensors written by 'tailor train', ` +
      'or a SADE/RIDE/BalPoE .pth with the training config that builds its model)',
  );
}

/**
 * Loads a trained run: its checkpoint, the config stored with it, the data and model rebuilt
 * and the trained weights restored. A weights file of another trainer ({@link isWeightsFile}: a
 * SADE / RIDE / BalPoE checkpoint .pth) loads with `options.config`, the training config that
 * builds its model; its name layout is recognised ({@link LoadedRun.layout}). Needs libtorch.
 * @param path A run directory, a checkpoint (`.json` or its base name) or a weights file.
 * @param options.root Where the data set files are, when not where the config says.
 * @param options.config The training config of a weights file (refused for a tailor checkpoint).
 * @throws {@link RunError}, `CheckpointError` (from `tailor`) or `CheckpointLayoutError` for a
 *   path that is not a usable run.
 *
 * @example
 * ```ts
 * import { loadRun, evaluateSession } from 'tailor/longtail';
 * const run = loadRun('runs/fmnist-prl');
 * const results = await evaluateSession(run.session, run.checkpoint);
 * console.log(results.uniform);
 * ```
 */
export function loadRun(path: string, options: { root?: string; config?: string } = {}): LoadedRun {
  const c = checksOf('loadRun');
  c.string(path, 'path');
  const o = c.object(options, 'options');
  if (o.root !== undefined) c.string(o.root, 'options.root');
  if (o.config !== undefined) c.string(o.config, 'options.config');
  if (isWeightsFile(path)) return loadWeightsFileRun(path, options);
  const checkpoint = resolveCheckpoint(path);
  if (options.config !== undefined) {
    throw new RunError(
      `${path}: a tailor checkpoint stores its config; the training config applies to weights files of other trainers (.pth)`,
    );
  }
  const ck = loadCheckpoint(checkpoint.replace(/\.json$/, ''));
  const extra = (
    ck.extra !== null && typeof ck.extra === 'object' ? ck.extra : {}
  ) as Partial<SessionRecord> & {
    history?: EpochRecord[];
  };
  if (extra.config === null || typeof extra.config !== 'object') {
    torch.dispose([ck.weights, ck.optimizer?.state]);
    throw new RunError(`${checkpoint} has no stored config; it was not written by 'tailor train'`);
  }
  const record = extra as SessionRecord;
  if (options.root) record.overrides = { ...record.overrides, root: options.root };
  const session = sessionFromRecord(record, checkpoint);
  try {
    torch.restoreFrom(ck, 'the weights', () => torch.tidy(() => loadSystemState(session.system, ck.weights)));
  } finally {
    torch.dispose([ck.weights, ck.optimizer?.state]);
  }
  return {
    session,
    checkpoint,
    runDir: dirname(checkpoint),
    ...(Array.isArray(extra.history) ? { history: extra.history } : {}),
    ...(ck.epoch !== undefined ? { epoch: ck.epoch } : {}),
  };
}

/** {@link loadRun} for a weights file: the session from the config, the weights mapped into its model. */
function loadWeightsFileRun(path: string, options: { root?: string; config?: string }): LoadedRun {
  if (!existsSync(path)) throw new RunError(`no checkpoint at '${path}'`);
  if (options.config === undefined) {
    throw new RunError(
      `${path} is a weights file without a tailor config (a SADE/RIDE/BalPoE checkpoint, say); ` +
        'give the training config that builds its model (-c CONFIG, or --train-config for test-time-train)',
    );
  }
  const session = sessionFromConfigFile(options.config, options.root ? { root: options.root } : {});
  if (session.system.kind === 'prl') {
    for (const m of Object.values(session.system.modules)) m.dispose();
    throw new RunError(
      `${options.config}: a PRL config needs its hypernetwork, which a weights file of another trainer lacks; ` +
        'give a config without the prl section',
    );
  }
  const source = readWeightsFile(path, 'the checkpoint');
  let layout: ModelWeightsReport;
  try {
    layout = loadModelWeights(session.model, source, path);
    if (session.system.kind === 'ea')
      loadReferenceRouters(session.system.router, source, layout.prefix, path, options.config);
  } catch (error) {
    for (const m of Object.values(session.system.modules)) m.dispose();
    throw error;
  } finally {
    torch.dispose(Object.values(source));
  }
  const checkpoint = resolve(path);
  return { session, checkpoint, runDir: dirname(checkpoint), layout };
}

/**
 * A RIDE-EA config evaluating a RIDE trainer's checkpoint: its routers (expert_help_pred*) are
 * needed too; a checkpoint without them (a stage-1 RIDE model) is named rather than evaluated
 * with untrained routers.
 */
function loadReferenceRouters(
  router: ExpertRouter,
  source: Record<string, torch.Tensor>,
  prefix: string,
  path: string,
  config: string,
): void {
  const state = referenceRouterState(source, prefix);
  if (!state)
    throw new RunError(
      `${path} holds no expert-assignment routers (expert_help_pred*): it is not a RIDE-EA checkpoint; evaluate it with a config of the stage-1 arch, or train the routers with ${config}`,
    );
  try {
    router.loadStateDict(state, true);
  } catch (error) {
    throw new RunError(
      `${path}: its routers do not fit ${config} (${(error as Error).message}); check arch.args.num_experts, top_choices_num and share_expert_help_pred_fc`,
    );
  }
}

/** The session record a checkpoint stores (to resume training from it). */
export function readSessionRecord(checkpoint: string): SessionRecord {
  const ck = loadCheckpoint(checkpoint.replace(/\.json$/, ''));
  torch.dispose([ck.weights, ck.optimizer?.state]);
  const extra = (ck.extra !== null && typeof ck.extra === 'object' ? ck.extra : {}) as Partial<SessionRecord>;
  if (extra.config === null || typeof extra.config !== 'object')
    throw new RunError(`${checkpoint} has no stored config; it was not written by 'tailor train'`);
  return extra as SessionRecord;
}
