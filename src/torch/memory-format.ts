// Memory formats: how a 4-D (N, C, H, W) tensor lays out its elements. 'contiguous' is the
// row-major NCHW order every tensor gets by default; 'channelsLast' stores NHWC (channels
// innermost) under the same NCHW shape, the layout GPU convolutions (cuDNN, tensor cores) run
// fastest in, most of all under bf16/fp16 autocast. As torch.memory_format.
import { ArgumentError, describeValue } from '../util/arguments.js';

/** A tensor's memory layout: row-major NCHW ('contiguous') or NHWC under the NCHW shape ('channelsLast'). */
export type MemoryFormat = 'contiguous' | 'channelsLast';

/** c10::MemoryFormat's values (Contiguous = 0, Preserve = 1, ChannelsLast = 2, ChannelsLast3d = 3). */
const CODES: Record<MemoryFormat, number> = { contiguous: 0, channelsLast: 2 };

/** The libtorch code of a memory format (as the generated ATen wrappers take it). */
export function memoryFormatCode(format: MemoryFormat): number {
  const code = typeof format === 'string' ? (CODES[format] as number | undefined) : undefined;
  if (code === undefined)
    throw new ArgumentError(
      `memoryFormat: unknown memory format ${describeValue(format)} (expected contiguous or channelsLast)`,
    );
  return code;
}

/**
 * Whether sizes and strides are channels-last contiguous, by libtorch's rule (c10's
 * compute_channels_last_contiguous_2d): only 4-D tensors can be; strides must grow in the order
 * C, W, H, N, and dimensions of length 1 are skipped (any stride fits them). aten::is_contiguous
 * is not a dispatcher operator, so the check is done here from the strides.
 */
export function isChannelsLastContiguous(shape: readonly number[], strides: readonly number[]): boolean {
  for (const [name, value] of [
    ['shape', shape],
    ['strides', strides],
  ] as const)
    if (!Array.isArray(value))
      throw new ArgumentError(
        `tailor: isChannelsLastContiguous: ${name} must be an array of numbers (a tensor's shape and strides), got ${describeValue(value)}`,
      );
  if (shape.length !== 4) return false;
  if (shape.includes(0)) return true;
  let expected = 1;
  for (const d of [1, 3, 2, 0]) {
    const size = shape[d]!;
    if (size === 1) continue;
    if (strides[d] !== expected) return false;
    expected *= size;
  }
  return true;
}
