// The safetensors format (https://github.com/huggingface/safetensors, the format PyTorch users
// exchange): 8-byte little-endian header length N, N bytes of JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {string: string}}, then the
// raw little-endian row-major data, every byte belonging to exactly one tensor.
import { readFileSync } from 'node:fs';
import { Tensor } from './tensor.js';
import { tensor } from './creation.js';
import { dispose } from './scope.js';
import { writeFileAtomic } from '../util/fs.js';
import { SafetensorsError } from '../util/errors.js';
import { ArgumentError, describeValue } from '../util/arguments.js';
import { float32ToBf16Bits, float32ToHalfBits } from './half-bits.js';
import { littleEndianHost, swapBytes, typedArrayFromBytes } from './tensor-bytes.js';
import type { DType } from './dtype.js';

type SafeDType = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL';

const toSafe: Partial<Record<DType, SafeDType>> = {
  float64: 'F64',
  float32: 'F32',
  float16: 'F16',
  bfloat16: 'BF16',
  int64: 'I64',
  int32: 'I32',
  int16: 'I16',
  int8: 'I8',
  uint8: 'U8',
  bool: 'BOOL',
};
const fromSafe: Record<SafeDType, { dtype: DType; bytes: number }> = {
  F64: { dtype: 'float64', bytes: 8 },
  F32: { dtype: 'float32', bytes: 4 },
  F16: { dtype: 'float16', bytes: 2 },
  BF16: { dtype: 'bfloat16', bytes: 2 },
  I64: { dtype: 'int64', bytes: 8 },
  I32: { dtype: 'int32', bytes: 4 },
  I16: { dtype: 'int16', bytes: 2 },
  I8: { dtype: 'int8', bytes: 1 },
  U8: { dtype: 'uint8', bytes: 1 },
  BOOL: { dtype: 'bool', bytes: 1 },
};

/** Position in the reference implementation's Dtype enum (safetensors/src/tensor.rs), which orders tensors in a file. */
const dtypeRank: Record<SafeDType, number> = {
  BOOL: 0,
  U8: 1,
  I8: 2,
  I16: 5,
  F16: 7,
  BF16: 8,
  I32: 9,
  F32: 11,
  F64: 12,
  I64: 13,
};

/** The reference implementation refuses headers above 100 MB; so do we (a corrupt length otherwise allocates wildly). */
const MAX_HEADER_BYTES = 100_000_000;
/** More dimensions than any model uses; libtorch itself stops at 64 in several kernels. */
const MAX_DIMS = 32;

/** One tensor of a safetensors file: its dtype, shape and bytes. */
export interface SafetensorsEntry {
  dtype: SafeDType;
  shape: number[];
  data_offsets: [number, number];
}

// ---- encoding ----

function tensorBytes(t: Tensor, safe: SafeDType): Uint8Array {
  const data = t.toArray();
  let out: Uint8Array;
  if (safe === 'F16' || safe === 'BF16') {
    const src = data as Float32Array;
    const bits = new Uint16Array(src.length);
    for (let i = 0; i < src.length; i++)
      bits[i] = safe === 'F16' ? float32ToHalfBits(src[i]!) : float32ToBf16Bits(src[i]!);
    out = new Uint8Array(bits.buffer);
  } else {
    out = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }
  if (!littleEndianHost) {
    out = new Uint8Array(out);
    swapBytes(out, fromSafe[safe].bytes);
  }
  return out;
}

/** The bytes of a safetensors file holding these tensors, laid out as the reference writer lays them out. */
export function encodeSafetensors(
  tensors: Record<string, Tensor>,
  metadata: Record<string, string> = {},
): Uint8Array {
  for (const [name, value] of [
    ['tensors', tensors],
    ['metadata', metadata],
  ] as const)
    if (value === null || typeof value !== 'object')
      throw new ArgumentError(`encodeSafetensors: ${name} must be an object, got ${describeValue(value)}`);
  for (const [k, v] of Object.entries(metadata)) {
    if (typeof v !== 'string')
      throw new ArgumentError(`encodeSafetensors: metadata '${k}' must be a string, got ${typeof v}`);
  }
  const entries = Object.entries(tensors).map(([name, t]) => {
    if (!(t instanceof Tensor)) throw new TypeError(`safetensors: '${name}' is not a Tensor`);
    if (name === '__metadata__')
      throw new TypeError(`safetensors: '__metadata__' is reserved and cannot name a tensor`);
    const safe = toSafe[t.dtype];
    if (!safe)
      throw new TypeError(`safetensors: tensor '${name}' has dtype ${t.dtype}, which the format cannot hold`);
    return { name, t, safe };
  });
  // The reference writer's order: dtype (its enum order, descending, so wider types come first
  // and every tensor stays aligned), then name.
  entries.sort(
    (a, b) => dtypeRank[b.safe] - dtypeRank[a.safe] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  const blobs: Uint8Array[] = [];
  let offset = 0;
  for (const { name, t, safe } of entries) {
    const bytes = tensorBytes(t, safe);
    header[name] = { dtype: safe, shape: t.shape, data_offsets: [offset, offset + bytes.length] };
    blobs.push(bytes);
    offset += bytes.length;
  }
  // Pad with spaces so the data starts 8-byte aligned, as the reference writer does.
  const jsonBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const padded = Buffer.alloc(Math.ceil(jsonBytes.length / 8) * 8, 0x20);
  jsonBytes.copy(padded);
  const out = new Uint8Array(8 + padded.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded.length), true);
  out.set(padded, 8);
  let pos = 8 + padded.length;
  for (const blob of blobs) {
    out.set(blob, pos);
    pos += blob.length;
  }
  return out;
}

/** Writes tensors to a .safetensors file atomically (temp file + rename). */
export function saveSafetensors(
  path: string,
  tensors: Record<string, Tensor>,
  metadata: Record<string, string> = {},
): void {
  writeFileAtomic(path, encodeSafetensors(tensors, metadata));
}

// ---- decoding ----

/** Parses and checks a safetensors header; `source` names the file in errors. */
function parseHeader(
  bytes: Uint8Array,
  source: string,
): { entries: Record<string, SafetensorsEntry>; metadata: Record<string, string>; dataStart: number } {
  const fail = (why: string): never => {
    throw new SafetensorsError(`${source}: not a valid safetensors file: ${why}`);
  };
  if (bytes.length < 8)
    fail(`it is ${bytes.length} bytes long, shorter than the 8-byte header length (truncated?)`);
  const n = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  if (n > BigInt(MAX_HEADER_BYTES)) fail(`header length ${n} is implausible (corrupt file?)`);
  if (Number(n) > bytes.length - 8)
    fail(`the header needs ${n} bytes but only ${bytes.length - 8} follow (truncated?)`);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset + 8, Number(n)).toString('utf8');
  if (!text.startsWith('{')) fail(`the header does not start with '{'`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    fail(`the header is not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    fail('the header is not a JSON object');
  const dataStart = 8 + Number(n);
  const dataLength = bytes.length - dataStart;
  // Maps, then Object.fromEntries (which defines own properties): a tensor named __proto__ or
  // constructor is just a name and never reaches an object's prototype.
  const metadata = new Map<string, string>();
  const entries = new Map<string, SafetensorsEntry>();
  const spans: [number, number, string][] = [];
  for (const [name, raw] of Object.entries(parsed as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
        fail(`__metadata__ is not an object`);
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        if (typeof v !== 'string') fail(`__metadata__.${k} is not a string`);
        metadata.set(k, v as string);
      }
      continue;
    }
    const e = raw as Partial<SafetensorsEntry>;
    if (typeof e !== 'object' || e === null) fail(`entry '${name}' is not an object`);
    if (typeof e.dtype !== 'string' || !(e.dtype in fromSafe))
      fail(`tensor '${name}' has unsupported dtype ${JSON.stringify(e.dtype)}`);
    if (
      !Array.isArray(e.shape) ||
      e.shape.length > MAX_DIMS ||
      e.shape.some((d) => !Number.isSafeInteger(d) || d < 0)
    )
      fail(`tensor '${name}' has a bad shape (expected at most ${MAX_DIMS} non-negative integers)`);
    const off = e.data_offsets;
    if (
      !Array.isArray(off) ||
      off.length !== 2 ||
      !off.every((o) => Number.isSafeInteger(o) && o >= 0) ||
      off[0] > off[1]
    ) {
      fail(`tensor '${name}' has bad data_offsets`);
    }
    // Even an empty tensor must have strides that fit in int64.
    if ((e.shape as number[]).reduce((a, d) => a * Math.max(d, 1), 1) > Number.MAX_SAFE_INTEGER)
      fail(`tensor '${name}' has an implausible shape [${e.shape}]`);
    const [begin, end] = off as [number, number];
    const count = (e.shape as number[]).reduce((a, b) => a * b, 1);
    if (end - begin !== count * fromSafe[e.dtype as SafeDType].bytes) {
      fail(
        `tensor '${name}': data_offsets [${begin}, ${end}] do not match dtype ${e.dtype} and shape [${e.shape}]`,
      );
    }
    if (end > dataLength)
      fail(`tensor '${name}' ends at byte ${end} of a ${dataLength}-byte data section (truncated?)`);
    entries.set(name, e as SafetensorsEntry);
    spans.push([begin, end, name]);
  }
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let pos = 0;
  for (const [begin, end, name] of spans) {
    if (begin !== pos)
      fail(`tensor '${name}' starts at byte ${begin}, expected ${pos} (a hole or an overlap in the data)`);
    pos = end;
  }
  if (pos !== dataLength) fail(`${dataLength - pos} bytes after the last tensor`);
  return { entries: Object.fromEntries(entries), metadata: Object.fromEntries(metadata), dataStart };
}

function entryTensor(bytes: Uint8Array, start: number, e: SafetensorsEntry): Tensor {
  const { dtype, bytes: size } = fromSafe[e.dtype];
  // Copy into a fresh (aligned) buffer: the data of one tensor need not be aligned in the file
  // (and Buffer.slice would share the file's memory rather than copy).
  const raw = new Uint8Array(bytes.subarray(start + e.data_offsets[0], start + e.data_offsets[1]));
  if (!littleEndianHost) swapBytes(raw, size);
  return tensor(typedArrayFromBytes(raw, dtype), { shape: e.shape, dtype });
}

/** Decodes safetensors bytes into new tensors (owned by the caller or the enclosing tidy scope). */
export function decodeSafetensors(
  bytes: Uint8Array,
  source = '<buffer>',
): { tensors: Record<string, Tensor>; metadata: Record<string, string> } {
  if (!(bytes instanceof Uint8Array))
    throw new ArgumentError(`decodeSafetensors: bytes must be a Uint8Array, got ${describeValue(bytes)}`);
  if (typeof source !== 'string')
    throw new ArgumentError(`decodeSafetensors: source must be a string, got ${describeValue(source)}`);
  const { entries, metadata, dataStart } = parseHeader(bytes, source);
  const tensors = new Map<string, Tensor>();
  try {
    for (const [name, e] of Object.entries(entries)) tensors.set(name, entryTensor(bytes, dataStart, e));
  } catch (error) {
    dispose([...tensors.values()]);
    throw new SafetensorsError(`${source}: reading the tensors failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return { tensors: Object.fromEntries(tensors), metadata };
}

/** Reads a .safetensors file. Errors name the file and what is wrong with it. */
export function loadSafetensors(path: string): {
  tensors: Record<string, Tensor>;
  metadata: Record<string, string>;
} {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new SafetensorsError(`cannot read safetensors file ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return decodeSafetensors(bytes, path);
}

/** The header of a .safetensors file (names, dtypes, shapes, metadata) without reading tensors into the engine. */
export function readSafetensorsHeader(path: string): {
  entries: Record<string, SafetensorsEntry>;
  metadata: Record<string, string>;
} {
  const { entries, metadata } = parseHeader(readFileSync(path), path);
  return { entries, metadata };
}
