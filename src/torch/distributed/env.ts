// The torchrun environment convention (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT),
// read and checked; `tailor launch` sets the same variables, so either launcher starts the ranks.
import { UserError } from '../../util/errors.js';

/** The torchrun environment of a rank: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT. */
export interface DistEnv {
  rank: number;
  worldSize: number;
  localRank: number;
  /** LOCAL_WORLD_SIZE: ranks on this machine. */
  localWorldSize: number;
  masterAddr: string;
  masterPort: number;
}

export class DistEnvError extends UserError {
  constructor(message: string) {
    super(`DistEnvError: ${message}`);
  }
}

function intVar(env: NodeJS.ProcessEnv, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  const value = Number(raw);
  if (raw === undefined || raw.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
    throw new DistEnvError(
      `${name}=${raw ?? '(unset)'} is not an integer in ${min}..${max === Number.MAX_SAFE_INTEGER ? 'inf' : max}` +
        ' (start the ranks with `tailor launch` or torchrun)',
    );
  }
  return value;
}

/** True when the process was started as one rank of a job (WORLD_SIZE set). */
export function isDistributedEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.WORLD_SIZE !== undefined && env.WORLD_SIZE !== '';
}

/** Reads the torchrun variables (default process.env); throws DistEnvError naming a missing or invalid one. */
export function readDistEnv(env: NodeJS.ProcessEnv = process.env): DistEnv {
  const worldSize = intVar(env, 'WORLD_SIZE', 1, 65536);
  const rank = intVar(env, 'RANK', 0, worldSize - 1);
  const localRank = env.LOCAL_RANK === undefined ? rank : intVar(env, 'LOCAL_RANK', 0, worldSize - 1);
  const localWorldSize =
    env.LOCAL_WORLD_SIZE === undefined ? worldSize : intVar(env, 'LOCAL_WORLD_SIZE', 1, worldSize);
  const masterAddr = env.MASTER_ADDR ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:_-]+$/.test(masterAddr))
    throw new DistEnvError(`MASTER_ADDR=${masterAddr} is not a host name or address`);
  const masterPort = env.MASTER_PORT === undefined ? 29500 : intVar(env, 'MASTER_PORT', 1, 65535);
  return { rank, worldSize, localRank, localWorldSize, masterAddr, masterPort };
}
