// The state torch.vmap shares with the generated operator wrappers: the vmap calls running now and
// tailor's own batching rules. It imports nothing, so that the wrappers (generated/aten.ts) can
// read it without an import cycle; vmap.ts pushes and pops the levels, vmap-rules.ts registers
// the rules.

/** How random operators behave inside a vmap call (PyTorch 2.x's `randomness`). */
export type VmapRandomness = 'error' | 'different' | 'same';

/** One vmap call running now: its libtorch vmap level, batch size and randomness. */
export interface VmapLevel {
  level: number;
  batchSize: number;
  randomness: VmapRandomness;
}

/** The vmap calls running now, innermost last. */
export const vmapLevels: VmapLevel[] = [];

/**
 * A batching rule of tailor's own: the operator's result for arguments of which some are mapped
 * by the innermost vmap level, computed on the physical [batch, ...] tensors in one call, or
 * undefined where the rule does not apply (libtorch's own rule or its per-example fallback runs).
 */
export type BatchingRule = (...args: unknown[]) => unknown;

/** The rules by generated wrapper name (`linear`, `mean_dim`...). */
export const batchingRules: Record<string, BatchingRule | undefined> = {};
