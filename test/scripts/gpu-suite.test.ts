// scripts/gpu-suite.sh on the CPU (DEVICE=cpu) with a two-model smoke suite: MODELS runs only the
// named models' runs, the table and the archive are written, MPS=1 without the MPS daemon says so
// in the last line, BRANCH_STREAMS=off reaches the runs (as --no-branch-streams), and a MODELS
// name the suite lacks or a BRANCH_STREAMS value other than on/off stops before anything starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';

const fmnistMissing = !existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');
const mpsHere =
  spawnSync('sh', ['-c', 'command -v nvidia-cuda-mps-control'], { encoding: 'utf8' }).status === 0;

function suite(dir: string): string {
  const tiny = JSON.parse(readFileSync(join(repoRoot, 'configs/suites/tiny.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const file = join(dir, 'two.json');
  const configs = join(repoRoot, 'configs');
  writeFileSync(
    file,
    JSON.stringify({
      ...tiny,
      name: 'two',
      seeds: [0],
      models: [
        { name: 'SADE', config: join(configs, 'fmnist_lt_ir100_sade.json') },
        { name: 'CE', config: join(configs, 'fmnist_lt_ir100_ce.json') },
      ],
      methods: ['plain', 'prior'],
      test_time: join(configs, 'suites/tiny_test_time.json'),
    }),
  );
  return file;
}

test(
  'gpu-suite.sh: MODELS runs only those models, MPS=1 without a daemon says why, bad settings stop',
  { skip: fmnistMissing && 'Fashion-MNIST not installed', timeout: 300_000 },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-gpu-suite-'));
    try {
      const file = suite(dir);
      const out = join(dir, 'out');
      const env = {
        ...process.env,
        DEVICE: 'cpu',
        MODELS: 'SADE',
        MPS: '1',
        BRANCH_STREAMS: 'off',
        TABLE_SECONDS: '60',
        THREADS: '1',
      };
      const run = spawnSync(
        'sh',
        [join(repoRoot, 'scripts/gpu-suite.sh'), file, out, '240', join(dir, 'a.tgz')],
        {
          cwd: repoRoot,
          encoding: 'utf8',
          env,
        },
      );
      assert.equal(run.status, 0, run.stderr);
      const last = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
        mps: string;
        branch_streams: string;
        table_rows: Record<string, { mean: number } | string | null>;
      };
      if (!mpsHere) assert.match(last.mps, /^unavailable: nvidia-cuda-mps-control is not on PATH/);
      assert.equal(last.branch_streams, 'off');
      assert.ok(existsSync(join(out, 'runs/SADE/seed-0/results.json')));
      assert.ok(!existsSync(join(out, 'runs/CE')), 'CE was not asked for');
      const sade = last.table_rows['SADE/plain'] as { mean: number };
      assert.ok(sade.mean > 0 && sade.mean <= 100, JSON.stringify(last.table_rows));
      assert.ok(existsSync(join(dir, 'a.tgz')));

      const wrong = spawnSync(
        'sh',
        [join(repoRoot, 'scripts/gpu-suite.sh'), file, join(dir, 'never'), '60'],
        {
          cwd: repoRoot,
          encoding: 'utf8',
          env: { ...env, MODELS: 'SADE,Nope' },
        },
      );
      assert.equal(wrong.status, 2);
      assert.match(wrong.stderr, /MODELS names Nope, which the suite lacks \(its models: SADE, CE\)/);
      assert.ok(!existsSync(join(dir, 'never')), 'nothing started');
      const badStreams = spawnSync(
        'sh',
        [join(repoRoot, 'scripts/gpu-suite.sh'), file, join(dir, 'never'), '60'],
        { cwd: repoRoot, encoding: 'utf8', env: { ...env, BRANCH_STREAMS: 'maybe' } },
      );
      assert.equal(badStreams.status, 2);
      assert.match(badStreams.stderr, /BRANCH_STREAMS must be on or off, got 'maybe'/);
      assert.ok(!existsSync(join(dir, 'never')), 'nothing started');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
