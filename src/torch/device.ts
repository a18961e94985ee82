// Devices, as PyTorch has them: a device name ('cpu', 'cuda', 'cuda:N') is parsed once into a
// Device value (parseDevice, the one parser); tensors and modules report theirs (`tensor.device`,
// `module.device`); the default device of tensor creation (setDefaultDevice, as
// torch.set_default_device); and the CUDA runtime services (availability, seeds, generator states,
// synchronisation, cached memory). Parsing only reads the name, as torch.device does; a device is
// checked to exist here when it is used (checkDevice: tensor creation, moves, the default device,
// checkpoint map locations). Both failures are a DeviceUnavailableError that says what to do: the
// accepted names, or the libtorch in use and how to select a CUDA one.
import { UserError } from '../util/errors.js';
import { native, describeLibtorch, type CudaInfo } from './native.js';
import { describeValue } from '../util/arguments.js';

let cudaInfoCache: CudaInfo | undefined;
/** What CUDA the libtorch has and sees (asked once per process: it does not change). */
export function cudaInfo(): CudaInfo {
  cudaInfoCache ??= native.cudaInfo();
  return cudaInfoCache;
}

/** A device name that is not valid, or a device that does not exist here (no CUDA, no such GPU). */
export class DeviceUnavailableError extends UserError {
  /** The problem and its remedy without the class name the message starts with. */
  readonly detail: string;

  constructor(detail: string) {
    super(`DeviceUnavailableError: ${detail}`);
    this.detail = detail;
  }
}

/** The remedy the device errors name when the libtorch in use has no CUDA. */
export const SELECT_CUDA_HINT =
  'select a CUDA libtorch at build time: TAILOR_LIBTORCH=python:/path/to/python3 (a CUDA PyTorch) or ' +
  'TAILOR_LIBTORCH=/path/to/libtorch (an unpacked CUDA libtorch), then ./scripts/setup.sh';

const DEVICE_RE = /^(cpu|cuda)(?::(\d+))?$/;

/**
 * A device, as torch.device: its type and index (null: the current device of that type). Made by
 * parseDevice (or Device.of), one object per device, so devices compare with ===; it prints and
 * serialises (JSON) as its name: 'cpu', 'cuda' or 'cuda:N'.
 */
export class Device {
  static readonly #byName = new Map<string, Device>();
  readonly name: string;

  private constructor(
    readonly type: 'cpu' | 'cuda',
    readonly index: number | null,
  ) {
    this.name = index === null ? type : `${type}:${index}`;
  }

  /** The one object for a type and index (the CPU has no index). */
  static of(type: 'cpu' | 'cuda', index: number | null): Device {
    const key = type === 'cpu' ? 'cpu' : index === null ? 'cuda' : `cuda:${index}`;
    let d = Device.#byName.get(key);
    if (!d) {
      d = new Device(type, type === 'cpu' ? null : index);
      Device.#byName.set(key, d);
    }
    return d;
  }

  /** The device's name: 'cpu', 'cuda' or 'cuda:N'. */
  toString(): string {
    return this.name;
  }

  /** The device's name, so that JSON.stringify writes devices as names. */
  toJSON(): string {
    return this.name;
  }
}

/** A device or its name, as the tensor library's functions accept it (like PyTorch's str or torch.device). */
export type DeviceLike = Device | string;

/** The CPU. */
export const CPU = Device.of('cpu', null);

/**
 * Parses a device name ('cpu', 'cuda', 'cuda:N'; a Device is returned as it is). An invalid name
 * is a DeviceUnavailableError naming the accepted forms. Whether the device exists here is
 * checkDevice's question.
 */
export function parseDevice(spec: DeviceLike): Device {
  if (spec instanceof Device) return spec;
  if (typeof spec !== 'string')
    throw new DeviceUnavailableError(`invalid device ${describeValue(spec)} (expected cpu, cuda or cuda:N)`);
  const m = DEVICE_RE.exec(spec.trim());
  if (!m || (m[1] === 'cpu' && m[2] !== undefined && m[2] !== '0'))
    throw new DeviceUnavailableError(`invalid device '${String(spec)}' (expected cpu, cuda or cuda:N)`);
  return Device.of(m[1] as 'cpu' | 'cuda', m[2] === undefined ? null : Number(m[2]));
}

/** CUDA queries: whether a GPU can be used, how many, and synchronisation (torch.cuda). */
export const cuda = {
  /** The libtorch has CUDA and at least one GPU is visible. */
  isAvailable(): boolean {
    return cudaInfo().available;
  },
  /** The number of visible GPUs (0 without CUDA). */
  deviceCount(): number {
    return cudaInfo().devices.length;
  },
  /** Waits for the device's queued work (for timing); a no-op without CUDA. */
  synchronize(device?: DeviceLike): void {
    native.synchronize(device === undefined ? undefined : parseDevice(device).name);
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
 * The device, parsed, once it is known to exist here (the one check, made where a device is
 * used). A CUDA device with a CPU libtorch or no visible GPU is a DeviceUnavailableError naming
 * the libtorch in use and how to select a CUDA one.
 */
export function checkDevice(spec: DeviceLike): Device {
  const d = parseDevice(spec);
  if (d.type === 'cpu') return d;
  const info = cudaInfo();
  if (!info.compiled) {
    throw new DeviceUnavailableError(
      `'${d.name}' was requested, but ${describeLibtorch()} is a CPU-only build; ${SELECT_CUDA_HINT}`,
    );
  }
  if (!info.available) {
    const visible = process.env.CUDA_VISIBLE_DEVICES;
    throw new DeviceUnavailableError(
      `'${d.name}' was requested, but no GPU is visible to ${describeLibtorch()} (CUDA ${info.version}` +
        `${visible !== undefined ? `, CUDA_VISIBLE_DEVICES=${visible}` : ''}); check the driver (nvidia-smi) or run on a machine with a GPU`,
    );
  }
  if (d.index !== null && d.index >= info.devices.length) {
    throw new DeviceUnavailableError(
      `'${d.name}' does not exist: ${info.devices.length} CUDA device(s) are visible`,
    );
  }
  return d;
}

let defaultDevice: Device = CPU;

/**
 * The device tensor creation uses when none is given (like torch.set_default_device). The CLI
 * sets it once per command, to the run's device (src/cli/runtime.ts useDevice), so that the model
 * built next and the tensors the library creates for it live there.
 */
export function setDefaultDevice(device: DeviceLike): void {
  defaultDevice = checkDevice(device);
}

/** The device creation functions use when given none (initially the CPU). */
export function getDefaultDevice(): Device {
  return defaultDevice;
}

/** The device name to pass to a creation operator: undefined keeps libtorch's default (CPU). */
export function creationDevice(device?: DeviceLike): string | undefined {
  const d = device === undefined ? defaultDevice : checkDevice(device);
  return d === CPU ? undefined : d.name;
}
