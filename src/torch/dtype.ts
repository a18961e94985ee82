// Data types: names users write, and the c10::ScalarType codes the engine uses.
import { ArgumentError, describeValue } from '../util/arguments.js';

/** The element types of a tensor, by PyTorch's names. */
export type DType =
  | 'uint8'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'float16'
  | 'float32'
  | 'float64'
  | 'bool'
  | 'bfloat16'
  | 'complex64'
  | 'complex128';

const codes: Record<DType, number> = {
  uint8: 0,
  int8: 1,
  int16: 2,
  int32: 3,
  int64: 4,
  float16: 5,
  float32: 6,
  float64: 7,
  complex64: 9,
  complex128: 10,
  bool: 11,
  bfloat16: 15,
};
const names = new Map<number, DType>(Object.entries(codes).map(([name, code]) => [code, name as DType]));

export function dtypeCode(dtype: DType): number {
  // a non-string key would be converted first (a deeply nested array overflows the stack)
  const code = typeof dtype === 'string' ? codes[dtype] : undefined;
  if (code === undefined) {
    throw new ArgumentError(
      `dtype: unknown dtype ${describeValue(dtype)}; use one of ${Object.keys(codes).join(', ')}`,
    );
  }
  return code;
}

/** True for a dtype name ('float32', ...). */
export function isDType(name: string): name is DType {
  return Object.hasOwn(codes, name);
}

export function dtypeName(code: number): DType {
  const name = names.get(code);
  if (name === undefined) throw new TypeError(`unsupported scalar type code ${code}`);
  return name;
}

export function isFloatingPoint(dtype: DType): boolean {
  return dtype === 'float16' || dtype === 'float32' || dtype === 'float64' || dtype === 'bfloat16';
}

export type TypedArrayOf<D extends DType> = D extends 'float32'
  ? Float32Array
  : D extends 'float64'
    ? Float64Array
    : D extends 'int32'
      ? Int32Array
      : D extends 'int64'
        ? BigInt64Array
        : D extends 'uint8' | 'bool'
          ? Uint8Array
          : ArrayLike<number | bigint>;

/** The typed arrays the engine can read from and write to. */
export type NumericArray =
  Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array | Int8Array | Int16Array;

/**
 * The typed arrays a tensor is made from without a copy through numbers (their dtype follows the
 * array's type); also what defaultCollate stacks.
 */
export const TYPED_ARRAYS = [
  Float32Array,
  Float64Array,
  Int32Array,
  BigInt64Array,
  Uint8Array,
  Int8Array,
  Int16Array,
] as const;
