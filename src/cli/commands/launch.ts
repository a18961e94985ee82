// tailor launch: starts the ranks of a data-parallel job on this machine with torchrun's
// environment convention (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), so `torchrun --no-python --nproc-per-node N ./bin/tailor train ...` is equivalent.
// The same command on every machine (each with its --node-rank) runs a multi-machine job.
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { CliError } from '../errors.js';
import { defineCommand } from '../command.js';
import { numberOr } from '../args.js';

const HELP = `usage: tailor launch --nproc-per-node N [--nnodes M --node-rank R --master-addr A --master-port P]
                     [--threads T] [--grace S] -- COMMAND [ARGS...]

Starts N ranks of \`tailor COMMAND ARGS...\` on this machine (world size N x M), e.g.
  tailor launch --nproc-per-node 2 -- train -c configs/fmnist_lt_sade.json
On M machines run the same command on each with --nnodes M, its own --node-rank (0..M-1) and
the address of node 0 in --master-addr (default 127.0.0.1) and a free --master-port (29500).

  --threads T  libtorch threads per rank (default: cores / N, at least 1)
  --grace S    after the first rank fails, seconds to let the others report before they are
               stopped (default 10)
Signals (SIGINT, SIGTERM, SIGHUP) are forwarded to every rank. The exit code is the first
failed rank's (128 + signal number for a rank killed by a signal), 0 when all succeed.
Each rank exits with a RankFailureError when another dies or stops answering for
TAILOR_DIST_TIMEOUT seconds (default 300).`;

function intOption(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  return numberOr(`--${name}`, raw, fallback, { integer: true, min, max });
}

const SIGNAL_NUMBERS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGKILL: 9,
  SIGTERM: 15,
  SIGSEGV: 11,
  SIGABRT: 6,
};

export const run = defineCommand({
  help: HELP,
  options: {
    'nproc-per-node': { type: 'string' },
    nnodes: { type: 'string' },
    'node-rank': { type: 'string' },
    'master-addr': { type: 'string' },
    'master-port': { type: 'string' },
    threads: { type: 'string' },
    grace: { type: 'string' },
  },
  passThrough: true,
  run: async ({ values, rest: command }) => {
    if (command.length === 0) throw new CliError(`launch: give the command to run after --\n\n${HELP}`);
    const nproc = intOption('nproc-per-node', values['nproc-per-node'], 1, 1, 1024);
    const nnodes = intOption('nnodes', values.nnodes, 1, 1, 65536);
    const nodeRank = intOption('node-rank', values['node-rank'], 0, 0, nnodes - 1);
    const masterPort = intOption('master-port', values['master-port'], 29500, 1, 65535);
    const masterAddr = values['master-addr'] ?? '127.0.0.1';
    if (!/^[A-Za-z0-9.:_-]+$/.test(masterAddr))
      throw new CliError(`launch: --master-addr '${masterAddr}' is not a host`);
    const threads = intOption(
      'threads',
      values.threads,
      Math.max(1, Math.floor(availableParallelism() / nproc)),
      1,
      4096,
    );
    const graceMs = intOption('grace', values.grace, 10, 0, 3600) * 1000;
    const worldSize = nproc * nnodes;
    const main = fileURLToPath(new URL('../main.js', import.meta.url));

    const children: ChildProcess[] = [];
    let firstFailure: { rank: number; code: number } | null = null;
    let running = nproc;
    let graceTimer: NodeJS.Timeout | undefined;
    const finished = new Promise<void>((resolve) => {
      for (let local = 0; local < nproc; local++) {
        const rank = nodeRank * nproc + local;
        const child = spawn(process.execPath, [...process.execArgv, main, ...command], {
          stdio: 'inherit',
          env: {
            ...process.env,
            RANK: String(rank),
            LOCAL_RANK: String(local),
            WORLD_SIZE: String(worldSize),
            LOCAL_WORLD_SIZE: String(nproc),
            GROUP_RANK: String(nodeRank),
            MASTER_ADDR: masterAddr,
            MASTER_PORT: String(masterPort),
            TAILOR_THREADS: String(threads),
            OMP_NUM_THREADS: String(threads),
          },
        });
        children.push(child);
        child.on('exit', (code, signal) => {
          running--;
          const status = code ?? 128 + (SIGNAL_NUMBERS[signal ?? ''] ?? 1);
          if (status !== 0 && firstFailure === null) {
            firstFailure = { rank, code: status };
            console.error(`tailor launch: rank ${rank} exited with ${signal ?? `code ${code}`}`);
            // The others notice the lost peer themselves (RankFailureError); stop the stragglers.
            graceTimer = setTimeout(() => {
              for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
            }, graceMs);
          }
          if (running === 0) {
            if (graceTimer) clearTimeout(graceTimer);
            resolve();
          }
        });
      }
    });
    const forward = (signal: NodeJS.Signals) => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill(signal);
    };
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    for (const s of signals) process.on(s, forward);
    await finished;
    for (const s of signals) process.off(s, forward);
    const failure = firstFailure as { rank: number; code: number } | null;
    return failure ? failure.code : 0;
  },
});
