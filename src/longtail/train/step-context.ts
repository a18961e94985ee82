// What the steps of a run share (StepContext): the DDP wrapper of a data-parallel run, autocast
// and fp16's gradient scaler, the device-resident training set, the device-side figures, and
// graph mode's stepper, each chosen from the run's options once, before the first epoch.
import * as torch from '../../torch/index.js';
import {
  DeviceBatchSource,
  DevicePipelineUnsupportedError,
  deviceAugmentOf,
} from '../data/device-batches.js';
import { isLazy } from '../data/source.js';
import type { ImageDataset } from '../data/types.js';
import { GraphModeUnavailableError } from './graph.js';
import { GraphedSteps, cudaGraphBackend, graphBlocker } from './graph-step.js';
import { StepFigures } from './step-figures.js';
import { systemParameters } from '../systems/system.js';
import type { StepContext } from './step.js';
import type { ParallelRun, TrainOptions } from './train-options.js';

/** The part of a run's layout the context needs: its job, log and per-rank batch. */
export interface ContextRun {
  par: ParallelRun | null;
  log: (line: string) => void;
  world: number;
  rankBatch: number;
}

/** The steps' shared context for a run (dispose its figures, source and graphed steps after). */
export function stepContext(o: TrainOptions, run: ContextRun): StepContext {
  const { par } = run;
  const modules = Object.values(o.system.modules);
  const ddp = par
    ? new torch.distributed.DistributedDataParallel(
        {
          // The trained parameters only: a frozen module (RIDE-EA's backbone) has no gradients to share.
          parameters: () => systemParameters(o.system),
          buffers: () => modules.flatMap((m) => m.buffers()),
        },
        par.group,
      )
    : null;
  if (par)
    run.log(`data-parallel: ${run.world} ranks x batch ${run.rankBatch} = effective batch ${o.batchSize}`);
  const amp = o.amp ?? null;
  const base = {
    ddp,
    amp,
    scaler: amp === 'fp16' ? new torch.GradScaler() : null,
    source: deviceSource(o),
    figures: new StepFigures(o.system.device),
  };
  try {
    return { ...base, graphed: graphedSteps(o, run, base) };
  } catch (e) {
    base.figures.dispose();
    base.source?.dispose();
    throw e;
  }
}

/**
 * The device-resident training set where batches are drawn on the device (see TrainOptions.onDevice).
 * The host pipeline stays the default on the CPU (its results are the reference, bit for bit),
 * for image lists (decoded on the host) and for augmentations only the host draws (rotation,
 * RandomResizedCrop, color jitter).
 */
function deviceSource(o: TrainOptions): DeviceBatchSource | null {
  const mode = o.onDevice ?? 'auto';
  if (mode === false || (mode === 'auto' && o.system.device.type !== 'cuda')) return null;
  const augment = isLazy(o.train)
    ? 'an image list is decoded on the host'
    : deviceAugmentOf(o.trainTransform);
  if (typeof augment === 'string') {
    if (mode === 'auto') return null;
    throw new DevicePipelineUnsupportedError(
      `data_loader.args.on_device is true, but this training set cannot be drawn on the device: ${augment}; set on_device to "auto" or false`,
    );
  }
  return new DeviceBatchSource(o.train as ImageDataset, augment, o.system.device, {
    ...(o.deviceDataMaxBytes !== undefined ? { maxBytes: o.deviceDataMaxBytes } : {}),
  });
}

/** The run's graph-mode stepper, or null (eager; one line says why when graph mode was asked for). */
function graphedSteps(
  o: TrainOptions,
  run: ContextRun,
  ctx: Omit<StepContext, 'graphed'>,
): GraphedSteps | null {
  if (o.graph !== 'graph') return null;
  const eager: StepContext = { ...ctx, graphed: null };
  const blocker = graphBlocker(o, eager);
  if (blocker) {
    if (o.graphRequired)
      throw new GraphModeUnavailableError(`--graph on: ${blocker}; use --graph auto or off`);
    run.log(`graph mode: ${blocker}; training eagerly`);
    return null;
  }
  return new GraphedSteps(o, eager, o.graphBackend ?? cudaGraphBackend, run.log);
}
