// Channels-last training: the system's 4-D parameters and buffers (convolution weights) are
// laid out NHWC once, before the first step, and every batch is laid out NHWC before its
// forward, so that GPU convolutions run in the layout cuDNN's tensor-core kernels want without
// a transpose per layer (the gain is largest under bf16 autocast). The values computed are the
// same up to float reassociation; on the CPU the eager default stays row-major.
import type { Tensor } from '../../torch/index.js';
import { UserError } from '../../util/errors.js';
import type { TrainableSystem } from '../systems/system.js';

/** --channels-last (trainer.channels_last) asked of a system it cannot apply to. */
export class ChannelsLastUnsupportedError extends UserError {
  constructor(message: string) {
    super(`ChannelsLastUnsupportedError: ${message}`);
  }
}

/**
 * Lays out the system's 4-D parameters and buffers channels-last, in place (optimizer state
 * built afterwards follows their layout). A system without any 4-D tensor has no convolution the
 * layout could speed up; that is an error rather than a silent no-op, because the run would
 * otherwise record channels_last while training exactly as without it.
 * @throws ChannelsLastUnsupportedError when no module has a 4-D tensor.
 */
export function channelsLastSystem(system: TrainableSystem): void {
  let fourD = 0;
  for (const m of Object.values(system.modules)) fourD += m.toMemoryFormat('channelsLast');
  if (fourD === 0) {
    throw new ChannelsLastUnsupportedError(
      'channels-last applies to models with 2-D convolutions (4-D weights), and this one has none; drop --channels-last (or trainer.channels_last)',
    );
  }
}

/** The batch laid out channels-last when `on` and it is 4-D (N, C, H, W); else the batch itself. */
export function batchLayout(x: Tensor, on: boolean | undefined): Tensor {
  return on && x.ndim === 4 ? x.contiguous('channelsLast') : x;
}
