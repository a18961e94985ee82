// Loads the native addon (native/build/Release/tailor_native.node) and types its surface.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
}

const addonPath = fileURLToPath(new URL('../../../native/build/Release/tailor_native.node', import.meta.url));

function load(): NativeAddon {
  if (!existsSync(addonPath)) {
    throw new Error(`the libtorch addon is not built (${addonPath} is missing); run ./scripts/setup.sh`);
  }
  const require = createRequire(import.meta.url);
  const addon = require(addonPath) as NativeAddon;
  const threads = Number(process.env.TAILOR_THREADS ?? '');
  if (Number.isInteger(threads) && threads > 0) addon.setNumThreads(threads);
  return addon;
}

export const native: NativeAddon = load();

export function engineInfo(): { torchVersion: string; threads: number } {
  return { torchVersion: native.torchVersion, threads: native.getNumThreads() };
}
