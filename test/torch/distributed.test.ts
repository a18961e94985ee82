import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as torch from '../../src/torch/index.js';
import { Rng } from '../../src/util/rng.js';
import { makeBatch, makeModel, sgdStep } from './distributed-fixture.js';
import { freePort } from '../helpers.js';

const { assignBuckets, DistributedSampler, readDistEnv, FIRST_BUCKET_BYTES, BUCKET_BYTES } =
  torch.distributed;
const sequential = (n: number) => ({ length: n, indices: () => Int32Array.from({ length: n }, (_, i) => i) });
const fixture = fileURLToPath(new URL('./distributed-fixture.js', import.meta.url));
const glooBuilt =
  torch.distributed.ProcessGroup !== undefined &&
  (await import('../../src/torch/native.js')).native.buildInfo().gloo;

interface RankRun {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  done: Promise<number | null>;
}

async function startRanks(mode: string, timeoutMs = 20000): Promise<RankRun[]> {
  const port = await freePort();
  return [0, 1].map((rank) => {
    const child = spawn(process.execPath, [fixture, mode], {
      env: {
        ...process.env,
        RANK: String(rank),
        LOCAL_RANK: String(rank),
        WORLD_SIZE: '2',
        MASTER_ADDR: '127.0.0.1',
        MASTER_PORT: String(port),
        TAILOR_THREADS: '1',
        FIXTURE_TIMEOUT_MS: String(timeoutMs),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run: RankRun = { child, stdout: '', stderr: '', done: Promise.resolve(null) };
    child.stdout!.on('data', (d: Buffer) => (run.stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (run.stderr += d.toString()));
    run.done = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    return run;
  });
}

function lastJson(run: RankRun): Record<string, unknown> {
  const lines = run.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>;
}

test('torchrun variables are read and checked', () => {
  const env = readDistEnv({ RANK: '1', WORLD_SIZE: '2', MASTER_ADDR: '10.0.0.1', MASTER_PORT: '1234' });
  assert.deepEqual(env, {
    rank: 1,
    worldSize: 2,
    localRank: 1,
    localWorldSize: 2,
    masterAddr: '10.0.0.1',
    masterPort: 1234,
  });
  assert.throws(
    () => readDistEnv({ RANK: '2', WORLD_SIZE: '2' }),
    /DistEnvError: RANK=2 is not an integer in 0\.\.1/,
  );
  assert.throws(() => readDistEnv({ RANK: '0' }), /WORLD_SIZE=\(unset\)/);
});

test('buckets: reverse order of the caller, first bucket 1 MiB, then 25 MiB caps, one dtype per bucket', () => {
  const MB = 1024 * 1024;
  const f = (mb: number) => ({ bytes: mb * MB, key: 'float32@cpu' });
  const b = assignBuckets([f(0.5), f(0.6), f(10), f(10), f(10), f(3)]);
  assert.deepEqual(b, [[0, 1], [2, 3, 4], [5]]);
  assert.equal(FIRST_BUCKET_BYTES, MB);
  assert.equal(BUCKET_BYTES, 25 * MB);
  const mixed = assignBuckets([f(0.1), { bytes: 8, key: 'float64@cpu' }, f(2)]);
  assert.deepEqual(mixed, [[0, 2], [1]]);
});

test('DistributedSampler: disjoint shards of the same seeded permutation, padded like torch', () => {
  // A seeded epoch order, the same on every rank.
  const base = {
    length: 10,
    indices: (epoch: number) => Int32Array.from(new Rng(7 + epoch).permutation(10)),
  };
  const shards = [0, 1, 2].map((rank) => [
    ...new DistributedSampler(base, { rank, worldSize: 3 }).indices(4),
  ]);
  const order = [...base.indices(4)];
  assert.deepEqual(shards[0], [order[0], order[3], order[6], order[9]]);
  assert.deepEqual(shards[1], [order[1], order[4], order[7], order[0]], 'padded from the start of the order');
  assert.deepEqual(shards[2], [order[2], order[5], order[8], order[1]]);
  const union = new Set([...shards[0]!.slice(0, 4), ...shards[1]!.slice(0, 3), ...shards[2]!.slice(0, 3)]);
  assert.equal(union.size, 10);
  const dropped = new DistributedSampler(sequential(10), {
    rank: 1,
    worldSize: 3,
    dropLast: true,
  });
  assert.deepEqual([...dropped.indices(0)], [1, 4, 7]);
  assert.throws(() => new DistributedSampler(base, { rank: 3, worldSize: 3 }), /rank must be in 0\.\.2/);
});

test('two processes over Gloo: broadcast, allreduce, allgather, barrier', { skip: !glooBuilt }, async () => {
  const ranks = await startRanks('collectives');
  const codes = await Promise.all(ranks.map((r) => r.done));
  assert.deepEqual(codes, [0, 0], ranks.map((r) => r.stderr).join('\n'));
  for (const r of ranks) {
    const out = lastJson(r);
    assert.deepEqual(out.broadcast, [42, 7]);
    assert.deepEqual(out.allreduce, [3, 30]);
    assert.equal(out.max, 1);
    assert.deepEqual(out.allgather, [0, 5]);
    assert.equal(out.barrier, true);
    assert.deepEqual(out.buffers, [[6, 6, 6], [5, 5, 5], [5]]);
  }
});

test(
  'one data-parallel SGD step equals the single-process step on the whole batch',
  { skip: !glooBuilt },
  async () => {
    const ranks = await startRanks('ddp');
    const codes = await Promise.all(ranks.map((r) => r.done));
    assert.deepEqual(codes, [0, 0], ranks.map((r) => r.stderr).join('\n'));
    const model = makeModel(1);
    const { x, y } = makeBatch();
    const expected = sgdStep(model, x, y);
    const initial = makeModel(99)
      .parameters()
      .flatMap((p) => [...p.toFloat32Array()]);
    for (const r of ranks) {
      const got = lastJson(r).params as number[];
      assert.equal(got.length, expected.length);
      let worst = 0;
      for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i]! - expected[i]!));
      assert.ok(worst <= 1e-6, `max |ddp - single| = ${worst}`);
      assert.notDeepEqual(got.slice(0, 8), initial.slice(0, 8));
    }
  },
);

test('a killed rank ends the other with RankFailureError', { skip: !glooBuilt }, async () => {
  const ranks = await startRanks('die', 20000);
  const started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (ranks.every((r) => r.stdout.includes('"ready":true'))) {
        clearInterval(timer);
        resolve();
      } else if (Date.now() - started > 30000) {
        clearInterval(timer);
        reject(new Error(`ranks never got ready: ${ranks.map((r) => r.stderr).join('\n')}`));
      }
    }, 50);
  });
  ranks[1]!.child.kill('SIGKILL');
  const killedAt = Date.now();
  const code = await ranks[0]!.done;
  assert.equal(code, 3, ranks[0]!.stderr);
  assert.match(
    ranks[0]!.stderr,
    /tailor: RankFailureError: barrier failed on rank 0 of 2: another rank died/,
  );
  assert.ok(Date.now() - killedAt < 15000, 'well before the 20 s deadline: the closed connection is noticed');
});

test('a silent rank ends the other with RankFailureError at the deadline', { skip: !glooBuilt }, async () => {
  const ranks = await startRanks('die', 2000);
  const code = await ranks[0]!.done;
  assert.equal(code, 3, ranks[0]!.stderr);
  assert.match(ranks[0]!.stderr, /RankFailureError: barrier failed on rank 0 of 2.*deadline 2 s/);
  ranks[1]!.child.kill('SIGKILL');
  await ranks[1]!.done;
});
