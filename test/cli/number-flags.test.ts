// Number and list flags of the commands go through src/cli/args.ts: a bad value ends in one
// `tailor:` line naming the flag and what it needs, before any file is read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';

const cli = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
const missing = join(repoRoot, 'no-such-dir');

function fails(args: string[], expected: RegExp, env: NodeJS.ProcessEnv = {}): void {
  const r = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  const lines = r.stderr.trim().split('\n');
  assert.notEqual(r.status, 0, `${args.join(' ')}: exit status`);
  assert.equal(lines.length, 1, `${args.join(' ')}: one line, got\n${r.stderr}`);
  assert.match(lines[0]!, expected, args.join(' '));
}

test('nmr yardstick: --max-samples, --validation, --ratio and --baselines name the flag', () => {
  const y = (...flags: string[]) => ['nmr', 'yardstick', '--data', missing, ...flags];
  fails(y('--max-samples', '0'), /^tailor: --max-samples needs a positive integer, got '0'$/);
  fails(y('--max-samples', '2.5'), /^tailor: --max-samples needs a positive integer, got '2\.5'$/);
  fails(y('--validation', '1'), /^tailor: --validation needs a number in \[0, 1\), got '1'$/);
  fails(y('--validation', ''), /^tailor: --validation needs a number in \[0, 1\), got ''$/);
  fails(y('--ratio=-2'), /^tailor: --ratio needs a positive number, got '-2'$/);
  fails(y('--baselines', 'raw,fusion'), /^tailor: --baselines: 'fusion' is not one of raw, savgol, /);
});

test('nmr train --size needs a power of two >= 64', () => {
  for (const size of ['100', '32', '64.5', 'x'])
    fails(
      ['nmr', 'train', '--experiments', `${missing}/a.jdx,${missing}/b.jdx`, '--size', size],
      new RegExp(`^tailor: --size needs a power of two >= 64, got '${size.replace('.', '\\.')}'$`),
    );
});

test('nmr evaluate --baselines: all or names from the list', () => {
  fails(
    ['nmr', 'evaluate', '--data', missing, '--baselines', 'raw,median'],
    /^tailor: --baselines: 'median' is not one of all, raw, savgol, matched, wavelet, tv, cadzow, /,
  );
});

test('dist-check --size-mb and --iters, launch --grace name the flag', () => {
  fails(['dist-check', '--size-mb', '0'], /^tailor: --size-mb needs a number in \(0, 4096\], got '0'$/);
  fails(['dist-check', '--size-mb', '5000'], /^tailor: --size-mb needs a number in \(0, 4096\], got '5000'$/);
  fails(['dist-check', '--iters', '1.5'], /^tailor: --iters needs an integer in \[1, 1000\], got '1\.5'$/);
  fails(
    ['launch', '--grace', 'x', '--', 'version'],
    /^tailor: --grace needs an integer in \[0, 3600\], got 'x'$/,
  );
});

test('benchmark --max-runs and --threads; --threads and TAILOR_THREADS of the other commands', () => {
  const suite = join(repoRoot, 'configs', 'suites', 'tiny.json');
  fails(
    ['benchmark', '-c', suite, '--max-runs=-1'],
    /^tailor: --max-runs needs a non-negative integer, got '-1'$/,
  );
  fails(
    ['benchmark', '-c', suite, '--threads', '0'],
    /^tailor: --threads needs a positive integer, got '0'$/,
  );
  const testTime = ['test-time-train', '-c', missing, '-r', missing];
  fails([...testTime, '--threads', '1.5'], /^tailor: --threads needs a positive integer, got '1\.5'$/);
  fails(testTime, /^tailor: TAILOR_THREADS needs a positive integer, got 'many'$/, {
    TAILOR_THREADS: 'many',
  });
});
