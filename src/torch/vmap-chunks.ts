// vmap's chunkSize: the batch mapped a chunk at a time (each chunk one vmap call), the chunks'
// outputs concatenated along their out dims. With randomness 'same' every chunk starts from the
// same generator state, so that all examples share one draw as without chunks.
import { Tensor } from './tensor.js';
import { cat, getRngState, setRngState } from './creation.js';
import { isPlainObject } from './pytree.js';
import { tidy } from './scope.js';
import type { OutDims } from './vmap.js';

/** The chunks' outputs (same structure) joined along `dim` per tensor. */
function join(parts: unknown[], dim: number): unknown {
  const first = parts[0];
  if (first instanceof Tensor) {
    const rank = first.ndim;
    return cat(parts as Tensor[], dim < 0 ? dim + rank : dim);
  }
  if (first === null) return null;
  if (Array.isArray(first))
    return first.map((_, i) =>
      join(
        parts.map((p) => (p as unknown[])[i]),
        dim,
      ),
    );
  if (isPlainObject(first))
    return Object.fromEntries(
      Object.keys(first).map((k) => [
        k,
        join(
          parts.map((p) => (p as Record<string, unknown>)[k]),
          dim,
        ),
      ]),
    );
  return first;
}

/**
 * Calls `run(start, length)` over consecutive chunks of at most `chunkSize` of `batchSize`
 * examples and joins the outputs along `outDims` (one per output when an array).
 */
export function chunkedCall(
  batchSize: number,
  chunkSize: number,
  outDims: OutDims,
  sameRandomness: boolean,
  run: (start: number, length: number) => unknown,
): unknown {
  // The chunks' own outputs are freed once joined.
  return tidy(() => {
    const state = sameRandomness ? getRngState() : null;
    const parts: unknown[] = [];
    for (let start = 0; start < batchSize; start += chunkSize) {
      if (state !== null) setRngState(state);
      parts.push(run(start, Math.min(chunkSize, batchSize - start)));
    }
    const first = parts[0];
    if (Array.isArray(outDims) && Array.isArray(first))
      return first.map((_, i) =>
        join(
          parts.map((p) => (p as unknown[])[i]),
          outDims[i]!,
        ),
      );
    return join(parts, outDims as number);
  });
}
