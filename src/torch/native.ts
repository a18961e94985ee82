// The native addon (native/build/Release/tailor_native.node) and its typed surface. The addon,
// and with it libtorch (about 0.9 s), loads on the first use of `native`, not at import: commands
// and library entry points that never touch a tensor (mixture models, NMR file reading, reports,
// --help) start as fast as Node itself.
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkOpSchemasAtStartup, refuseMismatchedOp, setSchemaSource } from './schema-check.js';
import { InputError } from '../util/errors.js';

/** The libtorch addon cannot be loaded (not built, built against another libtorch, or disabled). */
export class EngineUnavailableError extends InputError {}

export interface BuildInfo {
  torchVersion: string;
  cxx11Abi: boolean;
  gloo: boolean;
  nccl: boolean;
  cudaHeaders: boolean;
}

/** What the engine reports about CUDA: built with it, a GPU visible, versions and devices. */
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
  /** A CPU tensor holding a copy of data (in page-locked memory when pinned: CUDA only). */
  fromArray(data: ArrayBufferView, shape: number[], dtype?: number, pinned?: boolean): number;
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
  isSparse(handle: number): boolean;
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
  /** Sets the function the engine calls for JavaScript hooks and Function backwards (autograd-hooks.ts). */
  setAutogradDispatcher(
    dispatch: (
      isFunction: boolean,
      id: number,
      handles: (number | null)[],
      saved: number,
    ) => (number | null)[],
  ): void;
  registerTensorHook(handle: number, id: number): number;
  removeTensorHook(handle: number, position: number): void;
  functionApply(
    inputs: number[],
    outputs: number[],
    saved: (number | null)[],
    dirty: number[],
    nonDifferentiable: number[],
    materializeGrads: boolean,
    id: number,
    name: string,
  ): number[];
  releasedAutogradIds(): number[];
  jsAutogradLive(): number;
  enterDualLevel(): number;
  exitDualLevel(level: number): void;
  /** Enters one more torch.vmap level; returns it. */
  vmapIncrementNesting(): number;
  /** Leaves the innermost vmap level; returns the level left in. */
  vmapDecrementNesting(): number;
  /** The physical dimension vmap level `level` maps in the tensor, or -1 when it is not batched there. */
  vmapBatchDim(handle: number, level: number): number;
  /** Runs fn with libtorch's VmapMode key excluded (random operators run as outside vmap). */
  outsideVmapMode<T>(fn: () => T): T;
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
  /** The JPEG decoder (jpeg.cc): whether the addon has one. */
  jpegInfo?(): { available: boolean; reason?: string; libjpeg?: number };
  /** Present when jpegInfo().available: RGB bytes of the box resized, or null for CMYK. */
  jpegDecodeBox?(
    bytes: Uint8Array,
    left: number,
    top: number,
    width: number,
    height: number,
    outWidth: number,
    outHeight: number,
    maxPixels: number,
  ): Uint8Array | null;
  /** cuDNN's process-wide flags: sets those given, returns all of them as they were. */
  cudnnFlags(set?: { benchmark?: boolean; deterministic?: boolean }): {
    benchmark: boolean;
    deterministic: boolean;
  };
  /** Operator counting (opcount.cc): start installs the counter, stop removes it and returns name -> [calls, outermost, inForeach, redispatched]. */
  opCountStart(): void;
  opCountStop(): Record<string, [number, number, number, number]>;
  /** CUDA graphs (graphs.cc): whether a capture can run here, and why not. */
  cudaGraphsInfo(): { compiled: boolean; available: boolean; reason?: string };
  cudaGraphNew(): number;
  cudaGraphCall(graph: number, what: 'begin' | 'end' | 'replay' | 'reset'): void;
  cudaGraphDispose(graph: number): void;
  cudaSideStreamEnter(device?: string): void;
  cudaSideStreamExit(): void;
  /** Branch streams (graphs.cc): fork n from the current stream, make branch i current, join them back. */
  cudaBranchStreamsFork(device: string, n: number): void;
  cudaBranchStreamUse(branch: number): void;
  cudaBranchStreamsJoin(outputs: number[]): void;
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
const installStatusPath = fileURLToPath(new URL('../../../native/build/install-status.txt', import.meta.url));
// A repository checkout has its TypeScript sources beside dist/; an installed package does not.
const inCheckout = existsSync(fileURLToPath(new URL('../../../src/torch/native.ts', import.meta.url)));

/** How to build the addon, for the load errors: the checkout's setup script, or the installed package's rebuild. */
export function buildAdvice(): string {
  if (inCheckout) return 'run ./scripts/setup.sh';
  return (
    "install libtorch and a C++ toolchain (Debian: 'apt install libtorch-dev g++ make python3', or set " +
    "TAILOR_LIBTORCH to a PyTorch or libtorch directory), then run 'npm rebuild tailor'"
  );
}

/** The libtorch the addon was built against, as native/resolve-libtorch.mjs resolved it. */
export interface LibtorchSelection {
  selection: string;
  kind: 'system' | 'python' | 'directory';
  root: string;
  libDir: string;
  version: string;
  cuda: string | null;
}

/**
 * The libtorch the addon was built against (read from the build's record, without loading
 * libtorch), or null when the addon is not built.
 */
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
  const version = loaded?.torchVersion ?? s?.version ?? '?';
  return `${where}, version ${version}`;
}

function load(): NativeAddon {
  // TAILOR_NO_ENGINE=1: run without libtorch; anything that needs a tensor fails with this message
  // (the mixture models, NMR file reading and processing, reports and --help work without it).
  if (process.env.TAILOR_NO_ENGINE && process.env.TAILOR_NO_ENGINE !== '0') {
    throw new EngineUnavailableError(
      'this needs the libtorch engine, which TAILOR_NO_ENGINE disables (unset it)',
    );
  }
  if (!existsSync(addonPath)) {
    // The package's install script (native/install.mjs) leaves the reason it could not build.
    let why = '';
    try {
      why = readFileSync(installStatusPath, 'utf8').trim();
    } catch {
      // no install-time record (a checkout, or an install that never ran)
    }
    throw new EngineUnavailableError(
      why
        ? `${why} (${addonPath} is missing)`
        : `the libtorch addon is not built (${addonPath} is missing); ${buildAdvice()}`,
    );
  }
  const require = createRequire(import.meta.url);
  let addon: NativeAddon;
  try {
    addon = require(addonPath) as NativeAddon;
  } catch (error) {
    const s = libtorchSelection();
    throw new EngineUnavailableError(
      `cannot load the libtorch addon${s ? ` built against ${s.selection} (${s.libDir})` : ''}: ${(error as Error).message.split('\n')[0]}; ` +
        (inCheckout
          ? 'rebuild it with ./scripts/setup.sh (and the same TAILOR_LIBTORCH)'
          : "rebuild it with 'npm rebuild tailor' (and the same TAILOR_LIBTORCH)"),
      { cause: error },
    );
  }
  const threads = Number(process.env.TAILOR_THREADS ?? '');
  if (Number.isInteger(threads) && threads > 0) addon.setNumThreads(threads);
  return addon;
}

let loaded: NativeAddon | null = null;

/** True once the addon (and libtorch) is loaded in this process. */
export function isNativeLoaded(): boolean {
  return loaded !== null;
}

/**
 * The addon. Until first use its properties come from a prototype that loads the addon and then
 * copies the addon's functions onto this object, so that every later call is a plain own-property
 * access (no proxy on the per-operator path).
 */
export const native: NativeAddon = Object.create(
  new Proxy(
    {},
    {
      get(_target, key) {
        if (loaded !== null) return undefined; // an optional entry point this build lacks
        ensureNativeLoaded();
        return (native as unknown as Record<string | symbol, unknown>)[key];
      },
      has(_target, key) {
        if (loaded === null) ensureNativeLoaded();
        return key in (loaded as object);
      },
    },
  ),
) as NativeAddon;

setSchemaSource(() => ensureNativeLoaded());

/** Loads the addon now (idempotent); throws the load error, naming the remedy, when it cannot. */
export function ensureNativeLoaded(): NativeAddon {
  if (loaded !== null) return loaded;
  const addon = load();
  Object.assign(native, addon);
  // The wrappers resolve their operators through native.resolve: an operator the start-up check
  // found changed in this libtorch is refused there, by name, before any call.
  native.resolve = (name, overload, boxedOnly) => {
    refuseMismatchedOp(name, overload);
    return addon.resolve(name, overload, boxedOnly);
  };
  loaded = addon;
  checkOpSchemasAtStartup();
  return addon;
}

/**
 * Whether the libtorch engine can be used here: loads it (about a second) and returns true, or
 * returns false when it cannot be loaded (not built, TAILOR_NO_ENGINE set, a mismatched libtorch);
 * the EngineUnavailableError of that case is what a tensor operation would throw.
 */
export function engineAvailable(): boolean {
  try {
    ensureNativeLoaded();
    return true;
  } catch (error) {
    if (error instanceof EngineUnavailableError) return false;
    throw error;
  }
}

/** The libtorch version and the number of CPU threads of the loaded engine; throws EngineUnavailableError without a built addon. */
export function engineInfo(): { torchVersion: string; threads: number } {
  return { torchVersion: native.torchVersion, threads: native.getNumThreads() };
}
