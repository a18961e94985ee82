// Devices: names ('cpu', 'cuda', 'cuda:N'), the default device of tensor creation, and the CUDA
// runtime services (availability, seeds, generator states, synchronisation, cached memory).
// Asking for CUDA where the libtorch has none, or no GPU is visible, is a DeviceUnavailableError
// that names the libtorch in use and how to select a CUDA one.
import { UserError } from '../util/errors.js';
import { native, describeLibtorch, type CudaInfo } from './native.js';

let cudaInfoCache: CudaInfo | undefined;
/** What CUDA the libtorch has and sees (asked once per process: it does not change). */
export function cudaInfo(): CudaInfo {
  cudaInfoCache ??= native.cudaInfo();
  return cudaInfoCache;
}

/** 'cpu', 'cuda' (the current GPU) or 'cuda:N'. */
export type Device = string;

const DEVICE_RE = /^(cpu|cuda)(?::(\d+))?$/;

export class DeviceUnavailableError extends UserError {
  constructor(message: string) {
    super(`DeviceUnavailableError: ${message}`);
  }
}

export const SELECT_CUDA_HINT =
  'select a CUDA libtorch at build time: TAILOR_LIBTORCH=python:/path/to/python3 (a CUDA PyTorch) or ' +
  'TAILOR_LIBTORCH=/path/to/libtorch (an unpacked CUDA libtorch), then ./scripts/setup.sh';

export function isDeviceString(value: string): boolean {
  return DEVICE_RE.test(value);
}

/** Parses a device name; throws a TypeError naming the accepted forms. */
export function parseDevice(spec: string): { type: 'cpu' | 'cuda'; index: number | null } {
  const m = DEVICE_RE.exec(String(spec).trim());
  if (!m) throw new TypeError(`invalid device '${spec}' (expected cpu, cuda or cuda:N)`);
  if (m[1] === 'cpu' && m[2] !== undefined && m[2] !== '0') throw new TypeError(`invalid device '${spec}'`);
  return { type: m[1] as 'cpu' | 'cuda', index: m[2] === undefined ? null : Number(m[2]) };
}

export const cuda = {
  /** The libtorch has CUDA and at least one GPU is visible. */
  isAvailable(): boolean {
    return cudaInfo().available;
  },
  deviceCount(): number {
    return cudaInfo().devices.length;
  },
  /** Waits for the device's queued work (for timing); a no-op without CUDA. */
  synchronize(device?: Device): void {
    native.synchronize(device);
  },
  /** Returns cached, unused GPU memory to the driver; false when there is no CUDA. */
  emptyCache(): boolean {
    return native.emptyCache();
  },
  /** Every visible device's generator state, by device name (empty without CUDA). */
  getRngStates(): Record<string, Uint8Array> {
    const out: Record<string, Uint8Array> = {};
    const n = cuda.deviceCount();
    for (let i = 0; i < n; i++) out[`cuda:${i}`] = native.getDeviceRngState(`cuda:${i}`);
    return out;
  },
  /** Restores the states of the devices that exist here; returns the names it skipped. */
  setRngStates(states: Record<string, Uint8Array>): string[] {
    const n = cuda.deviceCount();
    const skipped: string[] = [];
    for (const [name, state] of Object.entries(states)) {
      const { index } = parseDevice(name);
      if ((index ?? 0) < n) native.setDeviceRngState(name, state);
      else skipped.push(name);
    }
    return skipped;
  },
};

/**
 * Checks that a device exists here and returns its canonical name. A CUDA device with a CPU
 * libtorch or no visible GPU is a DeviceUnavailableError naming the libtorch in use.
 */
export function checkDevice(spec: Device): Device {
  const { type, index } = parseDevice(spec);
  if (type === 'cpu') return 'cpu';
  const info = cudaInfo();
  if (!info.compiled) {
    throw new DeviceUnavailableError(
      `'${spec}' was requested, but ${describeLibtorch()} is a CPU-only build; ${SELECT_CUDA_HINT}`,
    );
  }
  if (!info.available) {
    const visible = process.env.CUDA_VISIBLE_DEVICES;
    throw new DeviceUnavailableError(
      `'${spec}' was requested, but no GPU is visible to ${describeLibtorch()} (CUDA ${info.version}` +
        `${visible !== undefined ? `, CUDA_VISIBLE_DEVICES=${visible}` : ''}); check the driver (nvidia-smi) or run on a machine with a GPU`,
    );
  }
  if (index !== null && index >= info.devices.length) {
    throw new DeviceUnavailableError(
      `'${spec}' does not exist: ${info.devices.length} CUDA device(s) are visible`,
    );
  }
  return index === null ? 'cuda' : `cuda:${index}`;
}

let defaultDevice: Device = 'cpu';

/** The device tensor creation uses when none is given (like torch.set_default_device). */
export function setDefaultDevice(device: Device): void {
  defaultDevice = checkDevice(device);
}

export function getDefaultDevice(): Device {
  return defaultDevice;
}

/** The device to pass to a creation operator: undefined keeps libtorch's default (CPU). */
export function creationDevice(device?: Device): string | undefined {
  const d = device === undefined ? defaultDevice : checkDevice(device);
  return d === 'cpu' ? undefined : d;
}
