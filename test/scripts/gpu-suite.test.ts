// scripts/gpu-suite.sh on the CPU (DEVICE=cpu) with a two-model smoke suite: MODELS runs only the
// named models' runs, the table and the archive are written, MPS=1 without the MPS daemon says so
// in the last line (with each run's training and test-time seconds), BRANCH_STREAMS=off reaches the runs (as --no-branch-streams), and a MODELS
// name the suite lacks or a BRANCH_STREAMS value other than on/off stops before anything starts;
// FIRST_MODELS changes the order the runs start in. Stopped from outside (TERM to its process
// group, as at a device call's limit), it still archives the finished runs and prints its last line.
// With a stand-in MPS control program: a daemon an earlier call left running is used and stopped
// at the end; one that neither starts nor answers is named in the last line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  { skip: fmnistMissing && 'Fashion-MNIST not installed', timeout: 400_000 },
  async () => {
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
        runs: Record<string, { train_s: number | null; test_time_s: number | null }>;
        table_rows: Record<string, { mean: number } | string | null>;
      };
      // where the time went: the run's epochs and its test-time methods
      assert.deepEqual(Object.keys(last.runs), ['SADE/0']);
      assert.ok(last.runs['SADE/0']!.train_s! > 0, JSON.stringify(last.runs));
      assert.ok(last.runs['SADE/0']!.test_time_s! >= 0, JSON.stringify(last.runs));
      if (!mpsHere) assert.match(last.mps, /^unavailable: nvidia-cuda-mps-control is not on PATH/);
      assert.equal(last.branch_streams, 'off');
      assert.ok(existsSync(join(out, 'runs/SADE/seed-0/results.json')));
      assert.ok(!existsSync(join(out, 'runs/CE')), 'CE was not asked for');
      const sade = last.table_rows['SADE/plain'] as { mean: number };
      assert.ok(sade.mean > 0 && sade.mean <= 100, JSON.stringify(last.table_rows));
      assert.ok(existsSync(join(dir, 'a.tgz')));

      await stoppedFromOutside(file, out, join(dir, 'stopped.tgz'), env);

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
      const badFirst = spawnSync(
        'sh',
        [join(repoRoot, 'scripts/gpu-suite.sh'), file, join(dir, 'never'), '60'],
        { cwd: repoRoot, encoding: 'utf8', env: { ...env, MODELS: '', FIRST_MODELS: 'Nope' } },
      );
      assert.equal(badFirst.status, 2);
      assert.match(badFirst.stderr, /FIRST_MODELS names Nope, which the suite lacks/);
      // FIRST_MODELS starts CE before SADE (70 s with 60 for the table: no run starts), and
      // BRANCH_STREAMS=from:FILE takes epoch-gpu's verdict
      const ab = join(dir, 'ab.json');
      writeFileSync(
        ab,
        `${JSON.stringify({ branch_streams: { use: 'off', why: 'one stream is faster' } })}\n`,
      );
      const ordered = spawnSync(
        'sh',
        [join(repoRoot, 'scripts/gpu-suite.sh'), file, join(dir, 'ordered'), '70'],
        {
          cwd: repoRoot,
          encoding: 'utf8',
          env: { ...env, MODELS: '', MPS: '0', FIRST_MODELS: 'CE', BRANCH_STREAMS: `from:${ab}` },
        },
      );
      assert.equal(ordered.status, 0, ordered.stderr);
      assert.match(ordered.stderr, /gpu-suite: 2 runs, in this order: CE 0, SADE 0/);
      assert.match(ordered.stderr, /gpu-suite: BRANCH_STREAMS=off \(one stream is faster\)/);
      assert.equal(
        (JSON.parse(ordered.stdout.trim().split('\n').pop()!) as { branch_streams: string }).branch_streams,
        'off',
      );
      // a file without a verdict (a call cut off before it): the default
      const none = spawnSync(
        'sh',
        [join(repoRoot, 'scripts/gpu-suite.sh'), file, join(dir, 'ordered'), '62'],
        {
          cwd: repoRoot,
          encoding: 'utf8',
          env: { ...env, MODELS: '', MPS: '0', BRANCH_STREAMS: `from:${dir}/missing.json` },
        },
      );
      assert.equal(none.status, 0, none.stderr);
      assert.match(
        none.stderr,
        /BRANCH_STREAMS=on \(.*missing\.json gives no branch_streams verdict: the default\)/,
      );
      // a verdict that is neither on nor off is no verdict
      const odd = join(dir, 'odd.json');
      writeFileSync(odd, JSON.stringify({ branch_streams: { use: 'maybe', why: '?' } }));
      const oddRun = spawnSync(
        'sh',
        [join(repoRoot, 'scripts/gpu-suite.sh'), file, join(dir, 'ordered'), '62'],
        {
          cwd: repoRoot,
          encoding: 'utf8',
          env: { ...env, MODELS: '', MPS: '0', BRANCH_STREAMS: `from:${odd}` },
        },
      );
      assert.equal(oddRun.status, 0, oddRun.stderr);
      assert.match(
        oddRun.stderr,
        /BRANCH_STREAMS=on \(.*odd\.json gives no branch_streams verdict: the default\)/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

/**
 * The suite again over `out` (SADE finished there), both models one at a time: once CE's run has
 * started, TERM goes to the script's process group. The archive holds SADE's finished run, the
 * last line says it was stopped, and the exit status is 143.
 */
async function stoppedFromOutside(
  file: string,
  out: string,
  archive: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const child = spawn('sh', [join(repoRoot, 'scripts/gpu-suite.sh'), file, out, '240', archive], {
    cwd: repoRoot,
    env: { ...env, MODELS: '', MPS: '0', JOBS: '1' },
    detached: true,
  });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.resume();
  const ceLog = join(out, 'logs/CE-0.log');
  for (let waited = 0; !existsSync(ceLog) && waited < 60_000; waited += 200)
    await new Promise((r) => setTimeout(r, 200));
  assert.ok(existsSync(ceLog), 'the CE run started');
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  process.kill(-child.pid!, 'SIGTERM');
  assert.equal(await exited, 143);
  const last = JSON.parse(stdout.trim().split('\n').pop()!) as {
    stopped?: string;
    runs: Record<string, { train_s: number | null }>;
    table_rows: unknown;
  };
  assert.match(
    last.stopped ?? '',
    /^by SIGTERM after \d+ s \(the runs finished by then are in the archive\)$/,
  );
  assert.ok(last.runs['SADE/0']!.train_s! > 0, JSON.stringify(last.runs));
  assert.equal(last.table_rows, null, 'stopped before the table');
  const listed = spawnSync('tar', ['-tzf', archive], { encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  assert.match(listed.stdout, /runs\/SADE\/seed-0\/results\.json/);
  assert.doesNotMatch(listed.stdout, /\.pt$/m);
}

/** A stand-in nvidia-cuda-mps-control: `-d` fails (a daemon runs already); `answers` says whether get_server_list does. */
function standInMps(dir: string, answers: boolean): { bin: string; calls: string } {
  const bin = join(dir, 'bin');
  const calls = join(dir, 'mps-calls');
  mkdirSync(bin, { recursive: true });
  const program = join(bin, 'nvidia-cuda-mps-control');
  writeFileSync(
    program,
    `#!/bin/sh
if [ "$1" = -d ]; then echo "-d" >> '${calls}'; echo 'An instance of this daemon is already running' >&2; exit 1; fi
read -r command; echo "$command" >> '${calls}'
[ "$command" = get_server_list ] && { ${answers ? 'echo 123; exit 0' : 'exit 1'}; }
exit 0
`,
  );
  chmodSync(program, 0o755);
  return { bin, calls };
}

test(
  'gpu-suite.sh: MPS=1 uses a daemon left running by an earlier call, and names one that does not answer',
  { skip: fmnistMissing && 'Fashion-MNIST not installed', timeout: 120_000 },
  () => {
    for (const answers of [true, false]) {
      const dir = mkdtempSync(join(tmpdir(), 'tailor-gpu-suite-mps-'));
      try {
        const { bin, calls } = standInMps(dir, answers);
        // 70 s with 60 for the table: no run starts, the daemon check and the table still run
        const run = spawnSync(
          'sh',
          [join(repoRoot, 'scripts/gpu-suite.sh'), suite(dir), join(dir, 'out'), '70'],
          {
            cwd: repoRoot,
            encoding: 'utf8',
            env: {
              ...process.env,
              PATH: `${bin}:${process.env.PATH}`,
              DEVICE: 'cpu',
              MPS: '1',
              TABLE_SECONDS: '60',
              TMPDIR: dir,
            },
          },
        );
        assert.equal(run.status, 0, run.stderr);
        const last = JSON.parse(run.stdout.trim().split('\n').pop()!) as { mps: string };
        const log = readFileSync(calls, 'utf8').trim().split('\n');
        if (answers) {
          assert.equal(last.mps, 'on');
          assert.deepEqual(log, ['-d', 'get_server_list', 'quit'], 'reused, then stopped at the exit');
        } else {
          assert.match(
            last.mps,
            /^unavailable: the daemon did not start or a CUDA process could not reach it/,
          );
          assert.deepEqual(log, ['-d', 'get_server_list', 'quit']);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  },
);

test('gpu-suite.sh names missing arguments, a SECONDS that is not a positive whole number and a missing suite', () => {
  const script = join(repoRoot, 'scripts', 'gpu-suite.sh');
  const cases: [string[], RegExp][] = [
    [[], /^gpu-suite: usage: scripts\/gpu-suite\.sh SUITE\.json OUTDIR SECONDS \[ARCHIVE\]$/],
    [
      ['configs/suites/tiny.json', '/tmp/unused', '10m'],
      /^gpu-suite: SECONDS needs a positive whole number, got '10m'/,
    ],
    [
      ['configs/suites/tiny.json', '/tmp/unused', '0'],
      /^gpu-suite: SECONDS needs a positive whole number, got '0'/,
    ],
    [['no-such-suite.json', '/tmp/unused', '10'], /^gpu-suite: no suite file 'no-such-suite\.json'/],
  ];
  for (const [args, message] of cases) {
    const run = spawnSync('sh', [script, ...args], { encoding: 'utf8', cwd: repoRoot });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr.trim(), message);
    assert.equal(run.stdout, '');
  }
});

test(
  "gpu-suite.sh's last line names each failed run's error and graph mode's notes; a SECONDS that leaves no time to train is said",
  { skip: fmnistMissing && 'Fashion-MNIST not installed', timeout: 120_000 },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-gpu-suite-'));
    try {
      const file = suite(dir);
      const out = join(dir, 'out');
      // what a run's log holds when its capture failed (graph mode then trains eagerly)
      mkdirSync(join(out, 'logs'), { recursive: true });
      writeFileSync(
        join(out, 'logs', 'SADE-0.log'),
        '  graph mode: the step could not be captured in a CUDA graph (out of memory); training on eagerly\n',
      );
      const script = join(repoRoot, 'scripts/gpu-suite.sh');
      // a device that cannot run here ends every run at once with a named error
      const env = { ...process.env, DEVICE: 'cuda:7', MODELS: 'CE', MPS: '0', TABLE_SECONDS: '5' };
      const run = spawnSync('sh', [script, file, out, '40'], { cwd: repoRoot, encoding: 'utf8', env });
      assert.equal(run.status, 0, run.stderr);
      const last = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
        failed?: Record<string, string>;
        graph_notes?: Record<string, string[]>;
      };
      assert.match(last.failed?.['CE/0'] ?? '', /^tailor: .*cuda:7/);
      assert.deepEqual(last.graph_notes, {
        'SADE/0': [
          'graph mode: the step could not be captured in a CUDA graph (out of memory); training on eagerly',
        ],
      });
      const short = spawnSync('sh', [script, file, join(dir, 'short'), '20'], {
        cwd: repoRoot,
        encoding: 'utf8',
        env,
      });
      assert.match(short.stderr, /gpu-suite: SECONDS 20 leaves no time to train .* give more than 25/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
