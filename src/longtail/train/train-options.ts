// What a training run is given and gives back: TrainOptions, the data-parallel job (ParallelRun),
// an epoch's record and the run's result. Apart from trainer.ts (the loop itself) so that the
// step code (step.ts, step-context.ts, graph-step.ts) reads these types without importing the
// loop that calls it; trainer.ts re-exports them.
import type * as torch from '../../torch/index.js';
import type { optim } from '../../torch/index.js';
import type { ImageTransform } from '../data/augment.js';
import type { ImageSet } from '../data/source.js';
import type { ImageListPipeline } from '../data/imagelist-loader.js';
import type { TrainableSystem } from '../systems/system.js';
import type { GroupResult } from './evaluate.js';
import type { ExecutionMode } from './graph.js';
import type { GraphBackend } from './graph-step.js';
import type { PhaseClock } from './phases.js';

/**
 * One epoch of a training run as the history records it: learning rate, training loss and accuracy, validation results.
 */
export interface EpochRecord {
  epoch: number;
  lr: number;
  train_loss: number;
  train_acc: number;
  val: GroupResult | null;
  seconds: number;
}

/** The data-parallel job a trainer process is one rank of. */
export interface ParallelRun {
  group: torch.distributed.ProcessGroup;
  rank: number;
  worldSize: number;
}

export interface TrainOptions {
  system: TrainableSystem;
  optimizer: optim.SGD | optim.Adam | optim.AdamW;
  scheduler: optim.LRScheduler | null;
  train: ImageSet;
  /** Evaluated after every epoch: the validation split held out of the training pool, or an image list's val list. */
  test: ImageSet;
  trainCounts: number[];
  trainTransform: ImageTransform;
  /** An image list's training batches: decoded, augmented and prefetched on num_workers threads. */
  trainLoader?: ImageListPipeline;
  testTransform: ImageTransform;
  epochs: number;
  batchSize: number;
  balancedSampling?: boolean;
  mixupAlpha?: number;
  seed: number;
  runDir: string;
  evalPeriod?: number;
  savePeriod?: number;
  resumeFrom?: string;
  /** Stored in every checkpoint so test commands can rebuild the experiment. */
  checkpointExtra: Record<string, unknown>;
  log?: (line: string) => void;
  quiet?: boolean;
  /** Stop each epoch after this many batches (benchmarks on a busy machine; not for real runs). */
  maxBatches?: number;
  /** Accumulates the seconds spent per phase (bench/epoch.ts); timing is all it does. */
  phases?: PhaseClock;
  /** One rank of a data-parallel run (batchSize is then the effective batch over all ranks). */
  parallel?: ParallelRun | null;
  /** Mixed precision on the system's device (autocast; fp16 with a gradient scaler). */
  amp?: torch.AmpMode | null;
  /** Channels-last: the model's 4-D tensors are laid out NHWC before the first step, every batch before its forward. */
  channelsLast?: boolean;
  /**
   * cuDNN's autotuner while training on a GPU (torch.backends.cudnn.benchmark; default on, as the
   * PyTorch references that set it): the fastest convolution algorithm per shape, timed once in
   * the first steps. No effect on the CPU.
   */
  cudnnBenchmark?: boolean;
  /**
   * Where training batches are drawn (data_loader.args.on_device): true = on the model's device
   * (DeviceBatchSource; an error where the pipeline cannot be), false = on the host, 'auto'
   * (default) = on the device when it is a GPU and the pipeline can be, else on the host.
   */
  onDevice?: boolean | 'auto';
  /** Budget for the device-resident training set in bytes (default DEFAULT_DEVICE_DATA_BYTES). */
  deviceDataMaxBytes?: number;
  /**
   * How the steps run (resolveGraphMode of --graph): 'graph' captures the whole step in a CUDA
   * graph where graphBlocker allows (else one line names why, and the steps stay eager).
   */
  graph?: ExecutionMode;
  /** --graph on: a step that cannot be captured is an error instead of an eager fallback. */
  graphRequired?: boolean;
  /** Where graphs come from (default libtorch's CUDA graphs; tests pass a stand-in). */
  graphBackend?: GraphBackend;
  /**
   * In graph mode, the step's independent parts (each expert, each of PRL's preference draws) on
   * CUDA streams of their own, forward and so backward (torch.withBranchStreams;
   * trainer.branch_streams, default true): the captured graph runs them side by side. Eager
   * steps keep one stream.
   */
  branchStreams?: boolean;
}

/**
 * What a training run returns: the history, the best epoch, the checkpoints and how the steps ran.
 */
export interface TrainResult {
  history: EpochRecord[];
  best: { epoch: number; top1: number } | null;
  lastCheckpoint: string;
  bestCheckpoint: string | null;
  /** How the steps ran (results.json records it). */
  graph: ExecutionMode;
  /** In graph mode: whether the captured step ran its independent parts on streams of their own. */
  branchStreams: boolean;
}
