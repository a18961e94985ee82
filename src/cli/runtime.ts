// Where a command runs: the device (--device, a config's "device", or the official configs'
// n_gpu, where 0 means the CPU), mixed precision (--amp), the libtorch threads (--threads, else
// TAILOR_THREADS as `tailor launch` sets it), and, when started as one rank of a job (torchrun's
// variables), the process group of the data-parallel run.
import { CliError } from './errors.js';
import { numberOr } from './args.js';
import * as torch from '../torch/index.js';
import type { AmpMode, Device } from '../torch/index.js';
import { native } from '../torch/native.js';

export interface DeviceConfig {
  device?: string;
  n_gpu?: number;
}

/**
 * The device a run uses: the flag, else the config's "device", else n_gpu (0: cpu, >= 1: cuda).
 * Under `tailor launch`, 'cuda' means this rank's GPU (cuda:LOCAL_RANK).
 */
export function resolveDevice(flag: string | undefined, config: DeviceConfig = {}): Device {
  let spec = flag ?? config.device;
  if (spec === undefined && config.n_gpu !== undefined) {
    if (!Number.isInteger(config.n_gpu) || config.n_gpu < 0)
      throw new CliError(`config: n_gpu must be a non-negative integer, got ${String(config.n_gpu)}`);
    spec = config.n_gpu === 0 ? 'cpu' : 'cuda';
  }
  spec ??= 'cpu';
  try {
    torch.parseDevice(spec);
  } catch (error) {
    throw new CliError(`${flag !== undefined ? '--device' : 'config device'}: ${(error as Error).message}`);
  }
  if (spec === 'cuda' && torch.distributed.isDistributedEnv()) spec = `cuda:${process.env.LOCAL_RANK ?? '0'}`;
  // DeviceUnavailableError (named, with the remedy) when the libtorch or the machine has no GPU.
  return torch.checkDevice(spec);
}

export function resolveAmp(flag: string | undefined, device: Device): AmpMode | null {
  if (flag === undefined || flag === 'off' || flag === 'none') return null;
  return torch.checkAmp(flag, device);
}

/** --threads, else TAILOR_THREADS (set per rank by `tailor launch`), else the fallback. */
export function resolveThreads(flag: string | undefined, fallback: number): number {
  const name = flag !== undefined ? '--threads' : 'TAILOR_THREADS';
  return numberOr(name, flag ?? process.env.TAILOR_THREADS, fallback, { integer: true, min: 1 });
}

export interface DistributedRun {
  group: torch.distributed.ProcessGroup;
  rank: number;
  worldSize: number;
  /** Rank 0 writes checkpoints, metrics, reports and progress. */
  isMain: boolean;
}

/** Joins the job when started as one rank of it (WORLD_SIZE > 1); null for a single process. */
export function joinJob(device: Device, backend?: 'gloo' | 'nccl'): DistributedRun | null {
  if (!torch.distributed.isDistributedEnv()) return null;
  const env = torch.distributed.readDistEnv();
  if (env.worldSize === 1) return null;
  const group = torch.distributed.ProcessGroup.init({
    env,
    backend: backend ?? (device.startsWith('cuda') && native.buildInfo().nccl ? 'nccl' : 'gloo'),
  });
  return { group, rank: env.rank, worldSize: env.worldSize, isMain: env.rank === 0 };
}
