// Training checkpoints: model weights in a safetensors file (loadable by PyTorch users), the
// optimizer's state tensors in a second safetensors file, and everything else (optimizer
// hyperparameters, scheduler position, epoch, RNG states, user data) in a JSON sidecar.
import { createHash } from 'node:crypto';
import { checksOf } from '../util/arguments.js';
import { basename, dirname } from 'node:path';
import { Tensor } from './tensor.js';
import { getRngState, setRngState } from './creation.js';
import { dispose } from './scope.js';
import { writeFileAtomic, writeJsonAtomic } from '../util/fs.js';
import { decodeSafetensors, encodeSafetensors } from './safetensors.js';
import { CheckpointError, SafetensorsError } from '../util/errors.js';
import { elsewhere, readSidecar, verifiedFile, type Sidecar } from './checkpoint-sidecar.js';
import type { RngState } from '../util/rng.js';
import { checkDevice, cuda, type Device, type DeviceLike } from './device.js';
import type { OptimizerStateDict, ParamState } from './optim/optimizer.js';
import type { SchedulerState } from './optim/lr-scheduler.js';

export * from './safetensors.js';

/** What saveCheckpoint writes: model weights, optimizer and scheduler state, RNG state, and JSON-able extra data. */
export interface CheckpointContent {
  /** Model weights (a named state dict); written to `<base>.safetensors`, loadable by PyTorch users. */
  weights: Record<string, Tensor>;
  /** String metadata stored in the weights file's __metadata__. */
  metadata?: Record<string, string>;
  /** An optimizer state dict (optimizer.stateDict()); its tensors go to `<base>.optim.safetensors`. */
  optimizer?: OptimizerStateDict;
  scheduler?: SchedulerState;
  epoch?: number;
  step?: number;
  /** Store libtorch's generator state (default true). */
  torchRng?: boolean;
  /** States of tailor's own generators (Rng.state()), by name. */
  rng?: Record<string, RngState>;
  /** Any other JSON-able data (config, metrics, history). */
  extra?: unknown;
}

/** Options of loadCheckpoint. */
export interface LoadCheckpointOptions {
  /** Where the tensors go (torch.load's map_location): 'cpu' (default), 'cuda', 'cuda:N'. */
  mapLocation?: DeviceLike;
}

/** What loadCheckpoint returns: the weights and, when saved, the optimizer state, RNG state and extra data. */
export interface LoadedCheckpoint {
  weights: Record<string, Tensor>;
  metadata: Record<string, string>;
  /** With tensors owned by the caller: pass to optimizer.loadStateDict (which copies), then dispose. */
  optimizer?: OptimizerStateDict;
  scheduler?: SchedulerState;
  epoch?: number;
  step?: number;
  torchRngState?: Uint8Array;
  cudaRngStates?: Record<string, Uint8Array>;
  rng?: Record<string, RngState>;
  extra?: unknown;
  /** The sidecar it was read from, for messages. */
  sidecar?: string;
}

function checkpointPaths(base: string): { weights: string; optim: string; sidecar: string } {
  const stem = base.endsWith('.safetensors') ? base.slice(0, -'.safetensors'.length) : base;
  return { weights: `${stem}.safetensors`, optim: `${stem}.optim.safetensors`, sidecar: `${stem}.json` };
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Reads a weights file the sidecar vouched for; a parse failure is a checkpoint error. */
function loadSafetensorsChecked(
  sidecar: string,
  file: { path: string; bytes: Uint8Array },
): ReturnType<typeof decodeSafetensors> {
  try {
    return decodeSafetensors(file.bytes, file.path);
  } catch (error) {
    if (error instanceof SafetensorsError)
      throw new CheckpointError(`${error.message}${elsewhere(sidecar)}`, { cause: error });
    throw error;
  }
}

/**
 * Saves a training checkpoint as `<base>.safetensors` (weights), `<base>.optim.safetensors`
 * (optimizer state tensors, if any) and `<base>.json` (everything else). Each file is written
 * atomically and the sidecar last, recording the size and SHA-256 of the others, so a crash
 * mid-save leaves either the previous checkpoint or a mismatch that loadCheckpoint reports, and
 * weights corrupted later (even at the same size) are caught on load.
 */
export function saveCheckpoint(
  base: string,
  content: CheckpointContent,
): { weights: string; sidecar: string; optimizer?: string } {
  const paths = checkpointPaths(base);
  const weightBytes = encodeSafetensors(content.weights, content.metadata ?? {});
  writeFileAtomic(paths.weights, weightBytes);
  const sidecar: Sidecar = {
    format: 'tailor-checkpoint',
    version: 1,
    weights: { file: basename(paths.weights), bytes: weightBytes.length, sha256: sha256(weightBytes) },
  };
  let optimPath: string | undefined;
  if (content.optimizer) {
    const optimTensors: Record<string, Tensor> = {};
    const state: Record<string, Record<string, number | { tensor: string }>> = {};
    for (const [index, s] of Object.entries(content.optimizer.state)) {
      state[index] = {};
      for (const [key, value] of Object.entries(s)) {
        if (value instanceof Tensor) {
          const name = `state.${index}.${key}`;
          optimTensors[name] = value;
          state[index]![key] = { tensor: name };
        } else {
          state[index]![key] = value;
        }
      }
    }
    sidecar.optimizer = { paramGroups: content.optimizer.paramGroups, state };
    if (Object.keys(optimTensors).length > 0) {
      const bytes = encodeSafetensors(optimTensors, { format: 'tailor-optimizer-state' });
      writeFileAtomic(paths.optim, bytes);
      sidecar.optimizerTensors = { file: basename(paths.optim), bytes: bytes.length, sha256: sha256(bytes) };
      optimPath = paths.optim;
    }
  }
  if (content.scheduler) sidecar.scheduler = content.scheduler;
  if (content.epoch !== undefined) sidecar.epoch = content.epoch;
  if (content.step !== undefined) sidecar.step = content.step;
  if (content.torchRng ?? true) {
    sidecar.torchRngState = Buffer.from(getRngState()).toString('base64');
    const states = cuda.getRngStates();
    if (Object.keys(states).length > 0) {
      sidecar.cudaRngStates = Object.fromEntries(
        Object.entries(states).map(([name, st]) => [name, Buffer.from(st).toString('base64')]),
      );
    }
  }
  if (content.rng) sidecar.rng = content.rng;
  if (content.extra !== undefined) sidecar.extra = content.extra;
  writeJsonAtomic(paths.sidecar, sidecar);
  return { weights: paths.weights, sidecar: paths.sidecar, ...(optimPath ? { optimizer: optimPath } : {}) };
}

/**
 * Loads what saveCheckpoint wrote (`base` with or without `.safetensors`), its tensors on
 * options.mapLocation (a checkpoint written on one device resumes on another). The tensors are
 * the caller's.
 */
export function loadCheckpoint(base: string, options: LoadCheckpointOptions = {}): LoadedCheckpoint {
  const location = checkDevice(options.mapLocation ?? 'cpu');
  const paths = checkpointPaths(base);
  const sidecar = readSidecar(paths.sidecar);
  const dir = dirname(paths.sidecar);
  const weightsFile = loadSafetensorsChecked(
    paths.sidecar,
    verifiedFile(paths.sidecar, dir, sidecar.weights),
  );
  const loaded: LoadedCheckpoint = {
    weights: weightsFile.tensors,
    metadata: weightsFile.metadata,
    sidecar: paths.sidecar,
  };
  let tensors: Record<string, Tensor> = {};
  try {
    if (sidecar.optimizer) {
      if (sidecar.optimizerTensors) {
        tensors = loadSafetensorsChecked(
          paths.sidecar,
          verifiedFile(paths.sidecar, dir, sidecar.optimizerTensors),
        ).tensors;
      }
      const used = new Set<string>();
      const state: Record<string, ParamState> = {};
      for (const [index, s] of Object.entries(sidecar.optimizer.state)) {
        state[index] = {};
        for (const [key, value] of Object.entries(s)) {
          if (typeof value === 'number') {
            state[index]![key] = value;
          } else {
            const t = Object.hasOwn(tensors, value.tensor) ? tensors[value.tensor] : undefined;
            if (!t)
              throw new CheckpointError(
                `${paths.sidecar}: optimizer state ${index}.${key} names tensor '${value.tensor}', which is missing${elsewhere(paths.sidecar)}`,
              );
            state[index]![key] = t;
            used.add(value.tensor);
          }
        }
      }
      loaded.optimizer = { paramGroups: sidecar.optimizer.paramGroups, state };
      for (const [name, t] of Object.entries(tensors)) if (!used.has(name)) t.dispose();
    }
  } catch (error) {
    dispose([loaded.weights, tensors]);
    throw error;
  }
  if (location.type !== 'cpu') {
    loaded.weights = moveAll(loaded.weights, location);
    if (loaded.optimizer) {
      for (const s of Object.values(loaded.optimizer.state)) Object.assign(s, moveAll(s, location));
    }
  }
  if (sidecar.scheduler) loaded.scheduler = sidecar.scheduler;
  if (sidecar.epoch !== undefined) loaded.epoch = sidecar.epoch;
  if (sidecar.step !== undefined) loaded.step = sidecar.step;
  if (sidecar.torchRngState !== undefined)
    loaded.torchRngState = new Uint8Array(Buffer.from(sidecar.torchRngState, 'base64'));
  if (sidecar.cudaRngStates) {
    loaded.cudaRngStates = Object.fromEntries(
      Object.entries(sidecar.cudaRngStates).map(([name, st]) => [
        name,
        new Uint8Array(Buffer.from(st, 'base64')),
      ]),
    );
  }
  if (sidecar.rng) loaded.rng = sidecar.rng;
  if (sidecar.extra !== undefined) loaded.extra = sidecar.extra;
  return loaded;
}

/**
 * Replaces the extra data of a saved checkpoint (`update` gets the stored value and returns the
 * new one), for facts learned after training (a calibration, say). Only the sidecar is rewritten,
 * atomically, and the weights file is checked first: a crash leaves the old or the new sidecar,
 * both matching the untouched weights, and corrupt weights are never annotated.
 * @throws CheckpointError when the sidecar or the weights file it names is missing or corrupt.
 */
export function updateCheckpointExtra(base: string, update: (extra: unknown) => unknown): void {
  const c = checksOf('tailor: updateCheckpointExtra');
  c.string(base, 'base');
  if (typeof update !== 'function') c.fail('update', 'a function (extra) => new extra', update);
  const paths = checkpointPaths(base);
  const sidecar = readSidecar(paths.sidecar);
  verifiedFile(paths.sidecar, dirname(paths.sidecar), sidecar.weights);
  writeJsonAtomic(paths.sidecar, { ...sidecar, extra: update(sidecar.extra) });
}

/** Moves the tensors of a record to a device, disposing the originals; other values pass through. */
function moveAll<T extends Record<string, unknown>>(record: T, device: Device): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (value instanceof Tensor) {
      out[key] = value.toDevice(device, { copy: true });
      value.dispose();
    } else {
      out[key] = value;
    }
  }
  return out as T;
}

/**
 * Runs `restore` (copying a checkpoint's weights into a model, its state into an optimizer or a
 * schedule); a failure (missing keys, other shapes, other parameter groups) becomes a
 * CheckpointError naming the sidecar and what did not fit.
 */
export function restoreFrom<T>(
  checkpoint: Pick<LoadedCheckpoint, 'sidecar'>,
  what: string,
  restore: () => T,
): T {
  const c = checksOf('tailor: restoreFrom');
  c.object(checkpoint, 'checkpoint');
  c.string(what, 'what');
  if (typeof restore !== 'function') c.fail('restore', 'a function', restore);
  try {
    return restore();
  } catch (error) {
    if (error instanceof CheckpointError) throw error;
    const where = checkpoint.sidecar ?? 'checkpoint';
    throw new CheckpointError(
      `${where}: ${what} does not fit (${(error as Error).message}); is this checkpoint from another model or config?`,
      { cause: error },
    );
  }
}

/**
 * Restores libtorch's generators from a loaded checkpoint (no-op if it stored none): the CPU's and
 * those of the GPUs present here (a resume on the same devices continues the same random streams).
 */
export function restoreTorchRng(
  checkpoint: Pick<LoadedCheckpoint, 'torchRngState' | 'cudaRngStates' | 'sidecar'>,
): void {
  checksOf('tailor: restoreTorchRng').object(checkpoint, 'checkpoint');
  if (checkpoint.cudaRngStates) cuda.setRngStates(checkpoint.cudaRngStates);
  if (!checkpoint.torchRngState) return;
  try {
    setRngState(checkpoint.torchRngState);
  } catch (error) {
    // libtorch checks the Mersenne Twister state itself ("Invalid mt19937 state")
    throw new CheckpointError(
      `${checkpoint.sidecar ?? 'checkpoint'}: torchRngState is not a valid libtorch generator state (${(error as Error).message.replace(/^setRngState: /, '')})${checkpoint.sidecar ? elsewhere(checkpoint.sidecar) : ''}`,
      { cause: error },
    );
  }
}
