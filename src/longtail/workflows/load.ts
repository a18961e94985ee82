// Finding and loading a training run's checkpoint and rebuilding its session.
import { InputError } from '../../util/errors.js';
import { dirname, resolve } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import * as torch from '../../torch/index.js';
import { loadCheckpoint } from '../../torch/checkpoint.js';
import { loadSystemState } from '../systems/system.js';
import type { EpochRecord } from '../train/trainer.js';
import { sessionFromRecord, type Session, type SessionRecord } from '../config/session.js';
import { checksOf } from '../../util/arguments.js';

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
}

/**
 * The checkpoint file of a run directory (its checkpoint-last.json), or a checkpoint path given as .json, .safetensors or without suffix.
 * @throws {@link RunError} when there is none.
 */
export function resolveCheckpoint(path: string): string {
  // A run directory wins over a same-named file beside it (runs/prl next to runs/prl.json, its config).
  const isDirectory = statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
  const candidates = isDirectory
    ? [`${path}/checkpoint-last.json`]
    : [path, `${path}.json`, path.replace(/\.safetensors$/, '.json')];
  for (const c of candidates) if (c.endsWith('.json') && existsSync(c)) return resolve(c);
  throw new RunError(
    `no checkpoint at '${path}' (give a run directory or a checkpoint .json/.safetensors written by 'tailor train')`,
  );
}

/**
 * Loads a trained run: its checkpoint, the config stored with it, the data and model rebuilt
 * and the trained weights restored. Needs libtorch.
 * @param path A run directory or a checkpoint (`.json` or its base name).
 * @param options.root Where the data set files are, when not where the config says.
 * @throws {@link RunError} or `CheckpointError` (from `tailor`) for a path that is not a usable run.
 *
 * @example
 * ```ts
 * import { loadRun, evaluateSession } from 'tailor/longtail';
 * const run = loadRun('runs/fmnist-prl');
 * const results = await evaluateSession(run.session, run.checkpoint);
 * console.log(results.uniform);
 * ```
 */
export function loadRun(path: string, options: { root?: string } = {}): LoadedRun {
  const c = checksOf('loadRun');
  c.string(path, 'path');
  const o = c.object(options, 'options');
  if (o.root !== undefined) c.string(o.root, 'options.root');
  const checkpoint = resolveCheckpoint(path);
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

/** The session record a checkpoint stores (to resume training from it). */
export function readSessionRecord(checkpoint: string): SessionRecord {
  const ck = loadCheckpoint(checkpoint.replace(/\.json$/, ''));
  torch.dispose([ck.weights, ck.optimizer?.state]);
  const extra = (ck.extra !== null && typeof ck.extra === 'object' ? ck.extra : {}) as Partial<SessionRecord>;
  if (extra.config === null || typeof extra.config !== 'object')
    throw new RunError(`${checkpoint} has no stored config; it was not written by 'tailor train'`);
  return extra as SessionRecord;
}
