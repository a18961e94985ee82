// Types every layer of the long-tail system shares: what a multi-expert model returns.
import type { Tensor } from '../../torch/index.js';

/** A multi-expert model's result: the combined output and each expert's logits. */
export interface MultiExpertOutput {
  /** The model output [N, C] (the mean of the expert logits, or a preference-weighted sum). */
  output: Tensor;
  /** Per-expert logits, [E, N, C]. */
  logits: Tensor;
  /** Per-expert pooled features [E, N, D], where the loss reads them (RIDE-EA's routers). */
  features?: Tensor;
  /** Experts consulted per image [N] (float32), where a router chose them (RIDE-EA). */
  expertsPerImage?: Tensor;
}
