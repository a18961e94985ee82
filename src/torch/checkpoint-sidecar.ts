// The JSON sidecar of a checkpoint: its shape, and the reader that checks every field by type and
// range before anything uses it, verifies the files it names (size and SHA-256) and, when
// something is wrong, names the field and the other checkpoints of the directory to use instead.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CheckpointError } from '../util/errors.js';
import type { RngState } from '../util/rng.js';
import type { OptimizerStateDict } from './optim/optimizer.js';
import type { SchedulerState } from './optim/lr-scheduler.js';

export interface FileRecord {
  file: string;
  bytes: number;
  /** Hex SHA-256 of the file (absent in sidecars written before checksums). */
  sha256?: string;
}

export interface Sidecar {
  format: 'tailor-checkpoint';
  version: 1;
  weights: FileRecord;
  optimizerTensors?: FileRecord;
  optimizer?: {
    paramGroups: OptimizerStateDict['paramGroups'];
    state: Record<string, Record<string, number | { tensor: string }>>;
  };
  scheduler?: SchedulerState;
  epoch?: number;
  step?: number;
  torchRngState?: string;
  /** CUDA generator states by device name ('cuda:0', ...), when the run had GPUs. */
  cudaRngStates?: Record<string, string>;
  rng?: Record<string, RngState>;
  extra?: unknown;
}

/** Sidecars are kilobytes (the config and history included); this bounds a corrupt one. */
const MAX_SIDECAR_BYTES = 64 * 1024 * 1024;
/** Sizes of libtorch's CPU generator state (CPUGeneratorImplState, and the legacy layout). */
const TORCH_RNG_STATE_BYTES = [5056, 5048];

/** ", or use another checkpoint of the directory: a.json, b.json" (the newest first), or ''. */
export function elsewhere(sidecar: string): string {
  const dir = dirname(sidecar);
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.json') && join(dir, f) !== sidecar);
  } catch {
    return '';
  }
  const others: { name: string; mtime: number }[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      const head = Buffer.alloc(256);
      const fd = openSync(path, 'r');
      const n = readSync(fd, head, 0, head.length, 0);
      closeSync(fd);
      if (head.subarray(0, n).toString('utf8').includes('"tailor-checkpoint"'))
        others.push({ name, mtime: statSync(path).mtimeMs });
    } catch {
      // unreadable: not a candidate
    }
  }
  if (others.length === 0) return '';
  others.sort((a, b) => b.mtime - a.mtime);
  return `; use another checkpoint of ${dir} instead: ${others
    .slice(0, 4)
    .map((o) => o.name)
    .join(', ')}`;
}

function fail(sidecar: string, field: string, problem: string): never {
  throw new CheckpointError(
    `${sidecar}: ${field}: ${problem} (the sidecar is corrupt or was edited${elsewhere(sidecar) || '; re-run the training to write a new checkpoint'})`,
  );
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function fileRecord(sidecar: string, field: string, v: unknown): FileRecord {
  if (!isObject(v)) fail(sidecar, field, 'missing or not an object');
  const { file, bytes, sha256 } = v;
  // A bare file name beside the sidecar: never a path that leads elsewhere.
  if (
    typeof file !== 'string' ||
    file === '' ||
    file !== basename(file) ||
    file === '..' ||
    file.includes('\0')
  )
    fail(sidecar, `${field}.file`, 'not a file name beside the sidecar');
  if (!isCount(bytes)) fail(sidecar, `${field}.bytes`, 'not a byte count');
  if (sha256 !== undefined && !(typeof sha256 === 'string' && /^[0-9a-f]{64}$/.test(sha256)))
    fail(sidecar, `${field}.sha256`, 'not a hex SHA-256');
  return { file, bytes, ...(sha256 !== undefined ? { sha256 } : {}) } as FileRecord;
}

function finiteArray(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'number' && Number.isFinite(x));
}

function optimizer(sidecar: string, v: unknown): NonNullable<Sidecar['optimizer']> {
  if (!isObject(v)) fail(sidecar, 'optimizer', 'not an object');
  const { paramGroups, state } = v;
  if (!Array.isArray(paramGroups)) fail(sidecar, 'optimizer.paramGroups', 'not an array');
  paramGroups.forEach((g: unknown, i) => {
    if (!isObject(g)) fail(sidecar, `optimizer.paramGroups[${i}]`, 'not an object');
    if (!Array.isArray(g.params) || !g.params.every(isCount))
      fail(sidecar, `optimizer.paramGroups[${i}].params`, 'not a list of parameter indices');
    for (const [key, value] of Object.entries(g)) {
      if (key === 'params') continue;
      const ok =
        (typeof value === 'number' && Number.isFinite(value)) ||
        typeof value === 'boolean' ||
        typeof value === 'string' ||
        value === null ||
        finiteArray(value);
      if (!ok) fail(sidecar, `optimizer.paramGroups[${i}].${key}`, 'not a number, flag or list of numbers');
    }
  });
  if (!isObject(state)) fail(sidecar, 'optimizer.state', 'not an object');
  for (const [index, s] of Object.entries(state)) {
    if (!/^\d{1,9}$/.test(index)) fail(sidecar, `optimizer.state.${index}`, 'not a parameter index');
    if (!isObject(s)) fail(sidecar, `optimizer.state.${index}`, 'not an object');
    for (const [key, value] of Object.entries(s)) {
      const ok =
        (typeof value === 'number' && Number.isFinite(value)) ||
        (isObject(value) && typeof value.tensor === 'string' && Object.keys(value).length === 1);
      if (!ok) fail(sidecar, `optimizer.state.${index}.${key}`, 'not a number or { tensor: name }');
    }
  }
  return v as NonNullable<Sidecar['optimizer']>;
}

function scheduler(sidecar: string, v: unknown): SchedulerState {
  if (!isObject(v)) fail(sidecar, 'scheduler', 'not an object');
  if (!Number.isSafeInteger(v.lastEpoch) || (v.lastEpoch as number) < -1)
    fail(sidecar, 'scheduler.lastEpoch', 'not an epoch number');
  if (!finiteArray(v.baseLrs)) fail(sidecar, 'scheduler.baseLrs', 'not a list of numbers');
  if (v.lastLrs !== undefined && !finiteArray(v.lastLrs))
    fail(sidecar, 'scheduler.lastLrs', 'not a list of numbers');
  return v as unknown as SchedulerState;
}

/** A tailor Rng state: four 32-bit words, not all zero (that state never leaves zero). */
export function isRngState(v: unknown): v is RngState {
  return (
    Array.isArray(v) &&
    v.length === 4 &&
    v.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffffffff) &&
    v.some((w) => w !== 0)
  );
}

/** Reads and checks a sidecar; every problem is a CheckpointError naming the field. */
export function readSidecar(path: string): Sidecar {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CheckpointError(
      `cannot read checkpoint sidecar ${path}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}${elsewhere(path)}`,
      { cause: error },
    );
  }
  if (bytes.length > MAX_SIDECAR_BYTES)
    fail(path, 'size', `${bytes.length} bytes is far too large for a sidecar`);
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    fail(path, 'JSON', `not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(value) || value.format !== 'tailor-checkpoint' || value.version !== 1)
    fail(path, 'format', 'not a tailor checkpoint sidecar (format/version fields missing or unknown)');
  const v = value;
  const out: Sidecar = {
    format: 'tailor-checkpoint',
    version: 1,
    weights: fileRecord(path, 'weights', v.weights),
  };
  if (v.optimizerTensors !== undefined)
    out.optimizerTensors = fileRecord(path, 'optimizerTensors', v.optimizerTensors);
  if (v.optimizer !== undefined) out.optimizer = optimizer(path, v.optimizer);
  if (v.scheduler !== undefined) out.scheduler = scheduler(path, v.scheduler);
  for (const key of ['epoch', 'step'] as const) {
    if (v[key] === undefined) continue;
    if (!isCount(v[key])) fail(path, key, 'not a non-negative integer');
    out[key] = v[key];
  }
  if (v.torchRngState !== undefined) {
    const s = v.torchRngState;
    if (typeof s !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(s))
      fail(path, 'torchRngState', 'not base64 text');
    const n = Buffer.from(s, 'base64').length;
    if (!TORCH_RNG_STATE_BYTES.includes(n))
      fail(path, 'torchRngState', `${n} bytes, a libtorch generator state has ${TORCH_RNG_STATE_BYTES[0]}`);
    out.torchRngState = s;
  }
  if (v.cudaRngStates !== undefined) {
    if (!isObject(v.cudaRngStates)) fail(path, 'cudaRngStates', 'not an object');
    const states: Record<string, string> = {};
    for (const [name, st] of Object.entries(v.cudaRngStates)) {
      if (
        !/^cuda:\d{1,3}$/.test(name) ||
        typeof st !== 'string' ||
        !/^[A-Za-z0-9+/]*={0,2}$/.test(st) ||
        st.length > 1 << 20
      )
        fail(path, `cudaRngStates.${name}`, 'not a base64 CUDA generator state under a cuda:N name');
      states[name] = st;
    }
    out.cudaRngStates = states;
  }
  if (v.rng !== undefined) {
    if (!isObject(v.rng)) fail(path, 'rng', 'not an object');
    const rng: Record<string, RngState> = {};
    for (const [name, state] of Object.entries(v.rng)) {
      if (!isRngState(state)) fail(path, `rng.${name}`, 'not four 32-bit words (not all zero)');
      rng[name] = state;
    }
    out.rng = rng;
  }
  if (v.extra !== undefined) out.extra = v.extra;
  return out;
}

/** The path and bytes of a file the sidecar names, after checking its size and checksum. */
export function verifiedFile(
  sidecar: string,
  dir: string,
  record: FileRecord,
): { path: string; bytes: Uint8Array } {
  const path = join(dir, record.file);
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    throw new CheckpointError(`${sidecar} refers to ${path}, which is missing${elsewhere(sidecar)}`);
  }
  // The size first: a file of another size is not read at all.
  if (size !== record.bytes) {
    throw new CheckpointError(
      `${path} is ${size} bytes but ${sidecar} recorded ${record.bytes} (interrupted save or mixed checkpoints)${elsewhere(sidecar)}`,
    );
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new CheckpointError(`${path}: cannot read (${(error as Error).message})${elsewhere(sidecar)}`);
  }
  if (bytes.length !== record.bytes)
    throw new CheckpointError(`${path} changed while it was read${elsewhere(sidecar)}`);
  if (record.sha256 !== undefined && createHash('sha256').update(bytes).digest('hex') !== record.sha256) {
    throw new CheckpointError(
      `${path} does not match the SHA-256 recorded in ${sidecar}: the file was corrupted or replaced after the checkpoint was written${elsewhere(sidecar) || '; re-run the training from an earlier checkpoint'}`,
    );
  }
  return { path, bytes };
}
