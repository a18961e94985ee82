// Tensors from the raw bytes files hold (safetensors, PyTorch checkpoints): element data in the
// host's byte order becomes the typed array the engine takes for each dtype.
import { endianness } from 'node:os';
import type { DType, NumericArray } from './dtype.js';
import { bf16BitsToFloat32, halfBitsToFloat32 } from './half-bits.js';

/** Whether this machine stores numbers least significant byte first (as every file format here does). */
export const littleEndianHost = endianness() === 'LE';

/** Bytes per element of the dtypes files hold. */
export const ELEMENT_BYTES: Partial<Record<DType, number>> = {
  float64: 8,
  float32: 4,
  float16: 2,
  bfloat16: 2,
  int64: 8,
  int32: 4,
  int16: 2,
  int8: 1,
  uint8: 1,
  bool: 1,
};

/** Reverses the byte order of each `size`-byte element in place. */
export function swapBytes(bytes: Uint8Array, size: number): void {
  if (size === 1) return;
  for (let i = 0; i < bytes.length; i += size) bytes.subarray(i, i + size).reverse();
}

/**
 * The array tensor() takes for `dtype` over `raw`, which must start its own (aligned) buffer and
 * hold the elements in the host's byte order: float16 and bfloat16 come back as float32 values,
 * bool and uint8 as the bytes themselves.
 */
export function typedArrayFromBytes(raw: Uint8Array, dtype: DType): NumericArray {
  const n = raw.length / (ELEMENT_BYTES[dtype] ?? 1);
  switch (dtype) {
    case 'float64':
      return new Float64Array(raw.buffer, raw.byteOffset, n);
    case 'float32':
      return new Float32Array(raw.buffer, raw.byteOffset, n);
    case 'int64':
      return new BigInt64Array(raw.buffer, raw.byteOffset, n);
    case 'int32':
      return new Int32Array(raw.buffer, raw.byteOffset, n);
    case 'int16':
      return new Int16Array(raw.buffer, raw.byteOffset, n);
    case 'int8':
      return new Int8Array(raw.buffer, raw.byteOffset, n);
    case 'uint8':
    case 'bool':
      return raw;
    case 'float16':
    case 'bfloat16': {
      const bits = new Uint16Array(raw.buffer, raw.byteOffset, n);
      return Float32Array.from(bits, dtype === 'float16' ? halfBitsToFloat32 : bf16BitsToFloat32);
    }
    default:
      throw new TypeError(`no byte layout for dtype ${dtype}`);
  }
}
