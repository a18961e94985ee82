// Graph mode of `tailor train --graph auto|on|off`: whether the whole training step (forward,
// loss, backward, optimizer step) is captured once in a CUDA graph and replayed per batch
// (graph-step.ts), or run eagerly, kernel by kernel. `off` trains eagerly; `auto` captures on a
// CUDA device whose libtorch and addon can capture graphs, and otherwise trains eagerly; `on`
// where graphs cannot run is a named error. A run whose step cannot be captured (graphBlocker)
// or whose capture fails trains eagerly with one line naming why (under `on`, a blocker is an
// error). The mode used is recorded in results.json ("graph": "graph" | "eager"). See docs/gpus.md.
import { cudaGraphsInfo, describeLibtorch, type Device } from '../../torch/index.js';
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
  if (device.type !== 'cuda') {
    if (mode === 'auto') return 'eager';
    throw new GraphModeUnavailableError(
      `--graph on needs a CUDA device and a CUDA libtorch, but this run is on ${device.name} with ${describeLibtorch()}; ` +
        'use --graph auto or off here, or train with --device cuda on a CUDA libtorch',
    );
  }
  const graphs = cudaGraphsInfo();
  if (graphs.available) return 'graph';
  if (mode === 'auto') return 'eager';
  throw new GraphModeUnavailableError(
    `--graph on: CUDA graphs cannot be captured here (${graphs.reason}); use --graph auto or off`,
  );
}
