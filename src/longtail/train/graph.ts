// Graph mode of `tailor train --graph auto|on|off`: whether the whole training step (forward,
// loss, backward, optimizer step) is captured once in a CUDA graph and replayed per batch, or
// run eagerly, kernel by kernel. The capture (libtorch's at::cuda::CUDAGraph) is not yet bound
// in native/, so every run trains eagerly today: `off` and `auto` train eagerly (auto will
// capture on CUDA once the binding exists, and fall back to eager with one line naming the
// reason when a capture fails), and `on`, which cannot be honoured, is a named error. The mode
// used is recorded in results.json ("graph": "eager"). See docs/gpus.md.
import { cudaInfo, describeLibtorch, type Device } from '../../torch/index.js';
import { UserError } from '../../util/errors.js';

/** What --graph asks for. */
export type GraphMode = 'auto' | 'on' | 'off';
/** How the run trains: eagerly, or replaying a captured CUDA graph. */
export type ExecutionMode = 'eager' | 'graph';

export const GRAPH_MODES: readonly GraphMode[] = ['auto', 'on', 'off'];

/** --graph on where graph mode cannot run (the message says why and what to use instead). */
export class GraphModeUnavailableError extends UserError {}

/** The --graph value (default auto); anything else is a named error listing the choices. */
export function parseGraphMode(flag: string | undefined): GraphMode {
  if (flag === undefined) return 'auto';
  if ((GRAPH_MODES as readonly string[]).includes(flag)) return flag as GraphMode;
  throw new GraphModeUnavailableError(`--graph must be auto, on or off, got '${flag}'`);
}

/** How a run on `device` trains under `mode`. */
export function resolveGraphMode(mode: GraphMode, device: Device): ExecutionMode {
  if (mode === 'off') return 'eager';
  // auto: eager on the CPU, and on CUDA too until the capture is bound
  if (mode === 'auto') return 'eager';
  if (device.type !== 'cuda' || !cudaInfo().compiled) {
    throw new GraphModeUnavailableError(
      `--graph on needs a CUDA device and a CUDA libtorch, but this run is on ${device.name} with ${describeLibtorch()}; ` +
        'use --graph auto or off here, or train with --device cuda on a CUDA libtorch',
    );
  }
  throw new GraphModeUnavailableError(
    '--graph on: capturing the training step in a CUDA graph is not yet available in this version of tailor (see docs/gpus.md); use --graph auto or off',
  );
}
