import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, repoRoot } from '../helpers.js';
import { native } from '../../src/torch/native.js';

const tailor = join(repoRoot, 'bin', 'tailor');
const gloo = native.buildInfo().gloo;

test(
  'launch starts the ranks with the torchrun variables; dist-check sees a world of 2',
  { skip: !gloo },
  async () => {
    const port = String(await freePort());
    const r = spawnSync(
      tailor,
      [
        'launch',
        '--nproc-per-node',
        '2',
        '--master-port',
        port,
        '--',
        'dist-check',
        '--size-mb',
        '1',
        '--iters',
        '2',
      ],
      {
        encoding: 'utf8',
        timeout: 60000,
      },
    );
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    assert.equal(out.world_size, 2);
    assert.equal(out.ok, true);
    assert.ok((out.allreduce_ms as number) > 0);
  },
);

test("launch exits with the first failed rank's code", () => {
  const r = spawnSync(tailor, ['launch', '--nproc-per-node', '2', '--grace', '1', '--', 'no-such-command'], {
    encoding: 'utf8',
    timeout: 60000,
  });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /tailor launch: rank \d exited with code 2/);
});

/** Resolves once process `pid` has `n` children (Linux's /proc), then a little later; else after 4 s. */
async function ranksStarted(pid: number, n: number): Promise<void> {
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  const children = `/proc/${pid}/task/${pid}/children`;
  for (const started = Date.now(); Date.now() - started < 20_000; await sleep(100)) {
    let listed: string;
    try {
      listed = readFileSync(children, 'utf8');
    } catch {
      return sleep(4000);
    }
    if (listed.trim().split(/\s+/).filter(Boolean).length >= n) return sleep(300);
  }
}

test('launch forwards signals to the ranks', { skip: !gloo }, async () => {
  const port = String(await freePort());
  const child = spawn(
    tailor,
    [
      'launch',
      '--nproc-per-node',
      '2',
      '--master-port',
      port,
      '--',
      'dist-check',
      '--size-mb',
      '64',
      '--iters',
      '1000',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // bin/tailor execs node, so the launcher is this pid: once both ranks are its children it has
  // installed its signal handlers (in the same tick as the spawns); a fixed 4 s where /proc
  // cannot tell.
  await ranksStarted(child.pid!, 2);
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  assert.equal(code, 130, stderr);
});

test('launch refuses bad options with a named error', () => {
  const r = spawnSync(tailor, ['launch', '--nproc-per-node', '0', '--', 'version'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /tailor: --nproc-per-node needs an integer in \[1, 1024\], got '0'/);
  const none = spawnSync(tailor, ['launch', '--nproc-per-node', '2'], { encoding: 'utf8' });
  assert.match(none.stderr, /launch: give the command to run after --/);
});

test(
  'a rank whose peers never arrive fails with RankFailureError at the deadline',
  { skip: !gloo },
  async () => {
    const port = String(await freePort());
    const r = spawnSync(tailor, ['dist-check'], {
      encoding: 'utf8',
      timeout: 60000,
      // 1 s, the least whole second: c10d's store counts whole seconds, so a shorter deadline
      // fails its connection to rank 0's own server instead of waiting for the peers
      env: { ...process.env, RANK: '0', WORLD_SIZE: '2', MASTER_PORT: port, TAILOR_DIST_TIMEOUT: '1' },
    });
    assert.equal(r.status, 3, r.stderr);
    assert.match(
      r.stderr,
      /^tailor: RankFailureError: rank 0 of 2 could not join the job at 127\.0\.0\.1:\d+ within 1 s/,
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  },
);

test(
  'launch -- train: two ranks train one run; rank 0 alone writes results.json with world_size 2',
  { skip: !gloo },
  async () => {
    const port = String(await freePort());
    const dir = mkdtempSync(join(tmpdir(), 'tailor-launch-train-'));
    const run = join(dir, 'run');
    try {
      const r = spawnSync(
        tailor,
        [
          'launch',
          '--nproc-per-node',
          '2',
          '--master-port',
          port,
          '--',
          'train',
          '-c',
          'configs/fmnist_lt_ir100_sade.json',
          '--epochs',
          '1',
          '--train-max-per-class',
          '12',
          '--test-per-class',
          '4',
          '--quiet',
          '--out',
          run,
        ],
        { encoding: 'utf8', cwd: repoRoot, timeout: 120000 },
      );
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.match(/^results: /gm)?.length, 1, 'one results line: rank 0 only');
      assert.match(r.stderr, /data-parallel: 2 ranks x batch 64 = effective batch 128/);
      const results = JSON.parse(readFileSync(join(run, 'results.json'), 'utf8')) as Record<string, unknown>;
      assert.equal(results.world_size, 2);
      assert.equal(results.effective_batch, 128);
      assert.equal(readFileSync(join(run, 'metrics.jsonl'), 'utf8').trim().split('\n').length, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
