/**
 * The package root: the version, the errors every entry point throws, devices, and whether the
 * libtorch engine is available. Importing it never loads libtorch.
 * @module
 */
import { readFileSync } from 'node:fs';

/** The installed tailor's version, from its package.json (for example `'0.1.0'`). */
export const version: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export {
  UserError,
  InputError,
  OutputError,
  CheckpointError,
  SafetensorsError,
  PytorchFileError,
} from './util/errors.js';
export { ArgumentError } from './util/arguments.js';
export {
  EngineUnavailableError,
  engineAvailable,
  isNativeLoaded as isEngineLoaded,
  libtorchSelection,
} from './torch/native.js';
export type { LibtorchSelection } from './torch/native.js';
export { Device, CPU, DeviceUnavailableError, parseDevice, type DeviceLike } from './torch/device.js';
