// Loads the native addon (native/build/Release/tailor_native.node) and types its surface.
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkOpSchemasAtStartup, setSchemaSource } from './schema-check.js';

export interface BuildInfo {
  torchVersion: string;
  cxx11Abi: boolean;
  gloo: boolean;
  nccl: boolean;
  cudaHeaders: boolean;
}

export interface CudaInfo {
  /** The libtorch was built with CUDA. */
  compiled: boolean;
  /** ... and a GPU is visible. */
  available: boolean;
  version: string | null;
  devices: string[];
  cudnn: number | null;
}

export interface StoreOptions {
  kind: 'tcp' | 'file';
  host?: string;
  port?: number;
  isServer?: boolean;
  path?: string;
  worldSize: number;
  timeoutMs: number;
}

export interface GroupOptions {
  backend: 'gloo' | 'nccl';
  rank: number;
  size: number;
  timeoutMs: number;
  iface?: string;
  hostname?: string;
  threads?: number;
}

export interface NativeAddon {
  torchVersion: string;
  /** boxedOnly keeps the operator off the native typed fast path (for tests). */
  resolve(name: string, overload: string, boxedOnly?: boolean): number;
  /** Runs an operator; missing trailing arguments take their schema defaults. */
  call(op: number, ...args: unknown[]): unknown;
  /** call() that drops the result (in-place operators, operators returning nothing). */
  callVoid(op: number, ...args: unknown[]): void;
  schema(op: number): string;
  listSchemas(prefix?: string): string[];
  setNumThreads(n: number): void;
  getNumThreads(): number;
  manualSeed(seed: number): void;
  getRngState(): Uint8Array;
  setRngState(state: Uint8Array): void;
  fromArray(data: ArrayBufferView, shape: number[], dtype?: number): number;
  toArray(
    handle: number,
  ): Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array | Int8Array | Int16Array;
  item(handle: number): number | boolean;
  shape(handle: number): number[];
  strides(handle: number): number[];
  dtype(handle: number): number;
  dim(handle: number): number;
  numel(handle: number): number;
  isContiguous(handle: number): boolean;
  dispose(handle: number | number[]): void;
  isAlive(handle: number): boolean;
  liveTensors(): number;
  share(handle: number): number;
  setData(dst: number, src: number): void;
  setRequiresGrad(handle: number, value: boolean): void;
  requiresGrad(handle: number): boolean;
  isLeaf(handle: number): boolean;
  gradFnName(handle: number): string | null;
  grad(handle: number): number | null;
  setGrad(handle: number, grad: number | null): void;
  backward(handle: number, grad: number | null, retainGraph: boolean, createGraph: boolean): void;
  autogradGrad(
    outputs: number[],
    inputs: number[],
    gradOutputs: number[] | null,
    retainGraph: boolean | null,
    createGraph: boolean,
    allowUnused: boolean,
  ): (number | null)[];
  setGradEnabled(enabled: boolean): void;
  isGradEnabled(): boolean;
  buildInfo(): BuildInfo;
  cudaInfo(): CudaInfo;
  manualSeedAll(seed: number): void;
  getDeviceRngState(device: string): Uint8Array;
  setDeviceRngState(device: string, state: Uint8Array): void;
  synchronize(device?: string): void;
  emptyCache(): boolean;
  /** nesting: +1 entering an autocast region, -1 leaving one (the cast cache is cleared at 0). */
  setAutocast(
    deviceType: 'cpu' | 'cuda',
    enabled: boolean,
    dtype: number,
    nesting: 1 | -1,
  ): { enabled: boolean; dtype: number };
  deviceOf(handle: number): string;
  isPinned(handle: number): boolean;
  // Present when the addon was built with Gloo (buildInfo().gloo).
  createStore?(options: StoreOptions): number;
  storeSet?(store: number, key: string, value: string): void;
  storeGet?(store: number, key: string): string;
  createProcessGroup?(store: number, options: GroupOptions): number;
  allreduce?(group: number, tensors: number[], op?: 'sum' | 'max' | 'min' | 'product'): void;
  broadcast?(group: number, tensors: number[], root: number): void;
  allgather?(group: number, input: number, outputs: number[]): void;
  barrier?(group: number): void;
  destroyProcessGroup?(group: number): void;
}

const addonPath = fileURLToPath(new URL('../../../native/build/Release/tailor_native.node', import.meta.url));
const selectionPath = fileURLToPath(new URL('../../../native/build/libtorch.json', import.meta.url));

/** The libtorch the addon was built against, as native/resolve-libtorch.mjs resolved it. */
export interface LibtorchSelection {
  selection: string;
  kind: 'system' | 'python' | 'directory';
  root: string;
  libDir: string;
  version: string;
  cuda: string | null;
}

export function libtorchSelection(): LibtorchSelection | null {
  try {
    return JSON.parse(readFileSync(selectionPath, 'utf8')) as LibtorchSelection;
  } catch {
    return null;
  }
}

/** One line naming the libtorch in use, for error messages. */
export function describeLibtorch(): string {
  const s = libtorchSelection();
  const where = s
    ? `${s.kind === 'system' ? "Debian's libtorch" : `TAILOR_LIBTORCH=${s.selection}`} (${s.libDir})`
    : 'the libtorch the addon was built with';
  let version = s?.version ?? '?';
  try {
    version = native.torchVersion;
  } catch {
    // not loaded yet
  }
  return `${where}, version ${version}`;
}

function load(): NativeAddon {
  if (!existsSync(addonPath)) {
    throw new Error(`the libtorch addon is not built (${addonPath} is missing); run ./scripts/setup.sh`);
  }
  const require = createRequire(import.meta.url);
  let addon: NativeAddon;
  try {
    addon = require(addonPath) as NativeAddon;
  } catch (error) {
    const s = libtorchSelection();
    throw new Error(
      `cannot load the libtorch addon${s ? ` built against ${s.selection} (${s.libDir})` : ''}: ${(error as Error).message.split('\n')[0]}; ` +
        'rebuild it with ./scripts/setup.sh (and the same TAILOR_LIBTORCH)',
      { cause: error },
    );
  }
  const threads = Number(process.env.TAILOR_THREADS ?? '');
  if (Number.isInteger(threads) && threads > 0) addon.setNumThreads(threads);
  return addon;
}

export const native: NativeAddon = load();
setSchemaSource(native);
checkOpSchemasAtStartup();

export function engineInfo(): { torchVersion: string; threads: number } {
  return { torchVersion: native.torchVersion, threads: native.getNumThreads() };
}
