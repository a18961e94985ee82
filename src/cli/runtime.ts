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
 * The run's device, resolved once per command: the flag, else the config's "device", else n_gpu
 * (0: cpu, >= 1: cuda), parsed by torch.parseDevice. Under `tailor launch` (or torchrun), 'cuda'
 * means this rank's GPU, cuda:LOCAL_RANK. It becomes the default device of tensor creation, so the
 * model built next, its batches and its optimizer state live there; the library then asks the
 * model (`model.device`) where it runs. A device that is not here is a DeviceUnavailableError
 * (named, with the remedy).
 */
export function useDevice(flag: string | undefined, config: DeviceConfig = {}): Device {
  let spec = flag ?? config.device;
  if (spec === undefined && config.n_gpu !== undefined) {
    if (!Number.isInteger(config.n_gpu) || config.n_gpu < 0)
      throw new CliError(`config: n_gpu must be a non-negative integer, got ${String(config.n_gpu)}`);
    spec = config.n_gpu === 0 ? 'cpu' : 'cuda';
  }
  let device: Device;
  try {
    device = torch.parseDevice(spec ?? 'cpu');
  } catch (error) {
    if (!(error instanceof torch.DeviceUnavailableError)) throw error;
    // Named by where it came from instead of by the error class.
    throw new CliError(`${flag !== undefined ? '--device' : 'config device'}: ${error.detail}`);
  }
  if (device.type === 'cuda' && device.index === null && torch.distributed.isDistributedEnv())
    device = torch.Device.of('cuda', torch.distributed.readDistEnv().localRank);
  try {
    torch.setDefaultDevice(device);
  } catch (error) {
    // A GPU the config asks for (the official configs say n_gpu: 1) on a machine without one: the
    // user did not choose it here, so say where it came from and how to run on the CPU instead.
    if (!(error instanceof torch.DeviceUnavailableError) || flag !== undefined) throw error;
    const source = config.device !== undefined ? `"device": "${config.device}"` : `"n_gpu": ${config.n_gpu}`;
    throw new torch.DeviceUnavailableError(
      `${error.detail} (the config's ${source} asks for it; --device cpu runs on the CPU)`,
    );
  }
  return device;
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
    backend: backend ?? (device.type === 'cuda' && native.buildInfo().nccl ? 'nccl' : 'gloo'),
  });
  return { group, rank: env.rank, worldSize: env.worldSize, isMain: env.rank === 0 };
}
