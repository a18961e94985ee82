// The benchmarks' bad options: every benchmark of bench/ ends an unknown option, and a bad value
// of its options, with one `tailor: bench NAME: ...` line and exit code 2, never a stack trace, a
// NaN in its table or a run that ignores the value; `npm run bench` names the benchmarks there are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';

const benchmarks = readdirSync(join(repoRoot, 'bench'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3));

function bench(name: string, ...args: string[]) {
  return spawnSync(process.execPath, [join(repoRoot, 'dist', 'bench', `${name}.js`), ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, TAILOR_NO_ENGINE: undefined },
  });
}

function assertNamed(run: ReturnType<typeof bench>, name: string, message: RegExp): void {
  assert.equal(run.status, 2, `${name}: exit ${run.status}\n${run.stderr}`);
  assert.doesNotMatch(run.stderr, /^\s+at /m, `${name}: a stack trace\n${run.stderr}`);
  const lines = run.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `${name}: one line\n${run.stderr}`);
  assert.match(lines[0]!, new RegExp(`^tailor: bench ${name}: `));
  assert.match(lines[0]!, message);
}

test('every benchmark names an unknown option in one line and exits 2', { timeout: 300_000 }, () => {
  assert.ok(benchmarks.length >= 20, benchmarks.join(', '));
  for (const name of benchmarks) {
    assertNamed(
      bench(name, '--no-such-option'),
      name,
      new RegExp(`Unknown option '--no-such-option'.*bench/${name}\\.ts`),
    );
  }
});

test('a bad value of a benchmark option is named with what it needs, before any work', () => {
  const cases: [string, string[], RegExp][] = [
    ['resnet32', ['--steps', '0'], /--steps needs a positive integer, got '0'/],
    ['tinyop', ['--n', 'abc'], /--n needs a positive integer, got 'abc'/],
    ['images', ['--workers', '1,x'], /--workers needs comma-separated values, each a positive integer/],
    ['images', ['--list', 'train.txt'], /--list needs --root/],
    ['epoch-gpu', ['--epochs', '1'], /--epochs needs an integer >= 2, got '1'/],
    ['epoch-gpu', ['--configs', 'sade,nope'], /--configs: 'nope' is not one of .*sade/],
    ['epoch-gpu', ['--torch-modes', 'graph,eager'], /--torch-modes: 'eager' is not one of .*dataloader-4/],
    ['serve', ['--seconds=-1'], /--seconds needs a positive number, got '-1'/],
    ['serve', ['--seconds', '-1'], /Option '--seconds' argument is ambiguous\. Did you forget/],
    ['gmm', ['--types', 'full,round'], /--types: 'round' is not one of full, tied, diag, spherical/],
    ['gmm', ['--model', 'bayes'], /--model needs one of gaussian, bayesian, got 'bayes'/],
    ['ops', ['--draws', '65'], /--draws needs an integer in \[1, 64\], got '65'/],
    ['epoch', ['--configs', 'ce'], /--configs: 'ce' is not one of sade, prl/],
    ['predict', [], /give the run with -r RUN/],
  ];
  for (const [name, args, message] of cases) assertNamed(bench(name, ...args), name, message);
});

test('npm run bench: an unknown name, or a helper of bench/lib, is named with the benchmarks', () => {
  for (const name of ['nope', 'gpu-util']) {
    const run = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'bench.mjs'), name], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(`^tailor: bench: no benchmark '${name}'; .*NAME is one of: .*epoch-gpu`),
    );
    assert.doesNotMatch(run.stderr, /, gpu-util,/);
  }
});
