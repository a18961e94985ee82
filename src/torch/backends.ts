// Process-wide backend switches, as torch.backends: cuDNN's autotuner and its deterministic
// algorithms. They only change which cuDNN algorithm a GPU convolution runs; CPU results are not
// touched.
import { native } from './native.js';

/**
 * cuDNN's flags (torch.backends.cudnn). `benchmark`: each new convolution shape times cuDNN's
 * algorithms once and keeps the fastest (PyTorch's default is off; the training CLI turns it on
 * for CUDA runs, trainer.cudnn_benchmark). `deterministic`: only deterministic algorithms.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * torch.backends.cudnn.benchmark = true; // as torch.backends.cudnn.benchmark = True
 * console.log(torch.backends.cudnn.deterministic); // false unless set
 * ```
 */
export const cudnn = {
  /** Whether cuDNN picks convolution algorithms by timing them (torch.backends.cudnn.benchmark). */
  get benchmark(): boolean {
    return native.cudnnFlags().benchmark;
  },
  set benchmark(on: boolean) {
    native.cudnnFlags({ benchmark: on });
  },
  /** Whether cuDNN uses deterministic algorithms only (torch.backends.cudnn.deterministic). */
  get deterministic(): boolean {
    return native.cudnnFlags().deterministic;
  },
  set deterministic(on: boolean) {
    native.cudnnFlags({ deterministic: on });
  },
};
