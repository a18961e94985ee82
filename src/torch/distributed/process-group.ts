// A c10d process group (libtorch's Gloo, or NCCL where the libtorch has it) over a TCPStore or a
// FileStore. The collectives are libtorch's; this class checks arguments, applies the deadline and
// turns a dead or silent peer into a RankFailureError.
import { UserError } from '../../util/errors.js';
import { native, describeLibtorch } from '../native.js';
import type { Tensor } from '../tensor.js';
import { readDistEnv, type DistEnv } from './env.js';

/** The collective backends: 'gloo' (CPU) and 'nccl' (CUDA). */
export type Backend = 'gloo' | 'nccl';
/** How allreduce combines the ranks' tensors. */
export type ReduceOp = 'sum' | 'max' | 'min' | 'product';

/** The default deadline of one collective or of the rendezvous (TAILOR_DIST_TIMEOUT, in seconds). */
export const DEFAULT_TIMEOUT_MS = 300_000;

/** A peer rank died or stopped answering: the job ends with exit code 3. */
export class RankFailureError extends UserError {
  constructor(
    message: string,
    readonly rank: number,
    readonly worldSize: number,
  ) {
    super(`RankFailureError: ${message}`, { exitCode: 3 });
  }
}

export class DistributedUnavailableError extends UserError {
  constructor(message: string) {
    super(`DistributedUnavailableError: ${message}`);
  }
}

/** How ProcessGroup.init joins the job: backend, timeout, a FileStore instead of the TCPStore, the environment. */
export interface InitOptions {
  backend?: Backend;
  /** Deadline of the rendezvous and of each collective. */
  timeoutMs?: number;
  /** A FileStore at this path instead of the TCPStore at MASTER_ADDR:MASTER_PORT. */
  fileStore?: string;
  /** The torchrun variables (default: process.env). */
  env?: DistEnv;
  /** Gloo transport threads (default 1: collectives are sequential here). */
  threads?: number;
}

type Distributed = Required<
  Pick<
    typeof native,
    | 'createStore'
    | 'createProcessGroup'
    | 'allreduce'
    | 'broadcast'
    | 'allgather'
    | 'barrier'
    | 'destroyProcessGroup'
  >
>;

function distributedAddon(backend: Backend): Distributed {
  const info = native.buildInfo();
  if (!info.gloo || !native.createStore) {
    throw new DistributedUnavailableError(
      `the addon was built without c10d (no Gloo headers for ${describeLibtorch()}); install libgloo-dev and rerun ./scripts/setup.sh`,
    );
  }
  if (backend === 'nccl' && !info.nccl) {
    throw new DistributedUnavailableError(
      `NCCL is not available in ${describeLibtorch()}; use --dist-backend gloo, or a CUDA libtorch with NCCL`,
    );
  }
  return native as unknown as Distributed;
}

/** The collective timeout in ms from TAILOR_DIST_TIMEOUT (seconds), or the default of 300 s. */
export function timeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TAILOR_DIST_TIMEOUT;
  if (raw === undefined || raw === '') return DEFAULT_TIMEOUT_MS;
  const seconds = Number(raw);
  if (!(seconds > 0) || !Number.isFinite(seconds))
    throw new RangeError(`TAILOR_DIST_TIMEOUT=${raw} is not a positive number of seconds`);
  return Math.round(seconds * 1000);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host.startsWith('127.') || host === '::1';
}

/** A group of ranks that run collectives together (torch.distributed's process group over c10d): allreduce, broadcast, allgather, barrier. Make one with ProcessGroup.init. */
export class ProcessGroup {
  private destroyed = false;

  private constructor(
    private readonly addon: Distributed,
    private readonly id: number,
    readonly rank: number,
    readonly worldSize: number,
    readonly backend: Backend,
    readonly timeoutMs: number,
  ) {}

  /**
   * Joins the job: rank 0 serves the TCPStore at MASTER_ADDR:MASTER_PORT, every rank connects
   * (or all share a FileStore), then the process group connects all pairs. Fails with a
   * RankFailureError when the others do not arrive within the deadline.
   */
  static init(options: InitOptions = {}): ProcessGroup {
    const env = options.env ?? readDistEnv();
    const backend = options.backend ?? 'gloo';
    const timeoutMs = options.timeoutMs ?? timeoutFromEnv();
    const addon = distributedAddon(backend);
    const where = options.fileStore
      ? `file store ${options.fileStore}`
      : `${env.masterAddr}:${env.masterPort}`;
    let id: number;
    try {
      const store = addon.createStore(
        options.fileStore
          ? { kind: 'file', path: options.fileStore, worldSize: env.worldSize, timeoutMs }
          : {
              kind: 'tcp',
              host: env.masterAddr,
              port: env.masterPort,
              isServer: env.rank === 0,
              worldSize: env.worldSize,
              timeoutMs,
            },
      );
      // The transport binds to GLOO_SOCKET_IFNAME when given (as PyTorch), to loopback for a
      // one-machine job on 127.0.0.1, else to the address this host name resolves to.
      const iface = process.env.GLOO_SOCKET_IFNAME;
      id = addon.createProcessGroup(store, {
        backend,
        rank: env.rank,
        size: env.worldSize,
        timeoutMs,
        threads: options.threads ?? 1,
        ...(iface ? { iface } : isLoopback(env.masterAddr) ? { hostname: '127.0.0.1' } : {}),
      });
    } catch (error) {
      throw new RankFailureError(
        `rank ${env.rank} of ${env.worldSize} could not join the job at ${where} within ${timeoutMs / 1000} s: ` +
          `${(error as Error).message} (are all ranks started, with the same MASTER_ADDR/MASTER_PORT and WORLD_SIZE?)`,
        env.rank,
        env.worldSize,
      );
    }
    return new ProcessGroup(addon, id, env.rank, env.worldSize, backend, timeoutMs);
  }

  private run(what: string, fn: () => void): void {
    if (this.destroyed) throw new Error(`ProcessGroup.${what}: the group was destroyed`);
    try {
      fn();
    } catch (error) {
      const e = error as Error & { c10dFailure?: boolean };
      if (!e.c10dFailure) throw error;
      throw new RankFailureError(
        `${what} failed on rank ${this.rank} of ${this.worldSize}: another rank died or stopped answering ` +
          `(deadline ${this.timeoutMs / 1000} s, TAILOR_DIST_TIMEOUT): ${e.message}`,
        this.rank,
        this.worldSize,
      );
    }
  }

  /** Reduces the tensor in place across all ranks (sum by default; Gloo has no average). */
  allreduce(tensor: Tensor, op: ReduceOp = 'sum'): void {
    this.run('allreduce', () => this.addon.allreduce(this.id, [tensor.handle], op));
  }

  /** Overwrites the tensor on every rank with root's. */
  broadcast(tensor: Tensor, root = 0): void {
    this.run('broadcast', () => this.addon.broadcast(this.id, [tensor.handle], root));
  }

  /** outputs[r] receives rank r's input (all of the same shape and dtype). */
  allgather(input: Tensor, outputs: Tensor[]): void {
    if (outputs.length !== this.worldSize)
      throw new RangeError(`allgather: needs ${this.worldSize} outputs, got ${outputs.length}`);
    this.run('allgather', () =>
      this.addon.allgather(
        this.id,
        input.handle,
        outputs.map((t) => t.handle),
      ),
    );
  }

  /** Waits until every rank reaches the barrier. */
  barrier(): void {
    this.run('barrier', () => this.addon.barrier(this.id));
  }

  /** Leaves the group and frees it (idempotent). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.addon.destroyProcessGroup(this.id);
  }
}
