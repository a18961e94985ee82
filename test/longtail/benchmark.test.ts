// tailor benchmark: the statistics against hand-computed values, the suite checks, and the tiny
// suite end to end through the CLI (interrupted after the first run, resumed, finished work skipped).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, runTailor } from '../helpers.js';
import { spread, tQuantile975 } from '../../src/longtail/workflows/benchmark-stats.js';
import { benchmarkTable, type MethodRecord } from '../../src/longtail/workflows/benchmark-table.js';
import { loadSuite } from '../../src/longtail/workflows/benchmark-suite.js';
import { ConfigError } from '../../src/longtail/config/schema.js';
import { TEST_DISTRIBUTIONS } from '../../src/longtail/data/longtail.js';
import { benchmarkMarkdown } from '../../src/report/benchmark.js';

const close = (a: number | null | undefined, b: number, eps = 1e-9) =>
  assert.ok(typeof a === 'number' && Math.abs(a - b) < eps, `${a} != ${b}`);

test('spread: mean, sample sd and the 95 % t-interval', () => {
  const s = spread([0.5, 0.7]);
  close(s.mean, 0.6);
  close(s.sd, Math.SQRT2 * 0.1); // sqrt(((-0.1)^2 + 0.1^2) / 1)
  // t(0.975, 1) = 12.7062; half width 12.7062 * 0.141421 / sqrt(2) = 1.27062
  close(s.ci95![0], 0.6 - 1.27062, 1e-9);
  close(s.ci95![1], 0.6 + 1.27062, 1e-9);
  const three = spread([0.8, 0.82, 0.87]); // mean 0.83, sd 0.036055513, t(2) = 4.3027
  close(three.mean, 0.83);
  close(three.sd, 0.036055512754639925, 1e-12);
  close(three.ci95![1] - 0.83, (4.3027 * 0.036055512754639925) / Math.sqrt(3), 1e-12);
  const one = spread([0.4, null]);
  assert.equal(one.n, 1);
  assert.equal(one.sd, null);
  assert.equal(one.ci95, null);
  assert.deepEqual(spread([]).mean, null);
  close(tQuantile975(40), 2.0211, 1e-4);
  close(tQuantile975(120), 1.9799, 1e-4);
  assert.throws(() => tQuantile975(0), RangeError);
});

test('benchmarkTable: per distribution and mean over seeds, unsupported and missing runs', () => {
  const run = (base: number): MethodRecord => {
    const distributions = Object.fromEntries(
      TEST_DISTRIBUTIONS.map((d, i) => [
        d,
        { top1: base + i / 100, many: base, medium: null, few: 1 - base },
      ]),
    );
    return { distributions, mean_top1: null };
  };
  const t = benchmarkTable({
    name: 'hand',
    suite: 'hand.json',
    seeds: [0, 1, 2],
    models: ['A'],
    methods: ['plain', 'preference'],
    records: {
      A: {
        0: { plain: run(0.5), preference: { unsupported: 'needs PRL' } },
        1: { plain: run(0.6), preference: { unsupported: 'needs PRL' } },
        2: { plain: run(0.7) },
      },
    },
  });
  assert.equal(t.complete, false); // seed 2 has no 'preference' record yet
  const plain = t.rows.find((r) => r.method === 'plain')!;
  assert.deepEqual(plain.seeds, [0, 1, 2]);
  const f50 = plain.distributions.forward50!;
  close(f50.top1.mean, 0.6);
  close(f50.top1.sd, 0.1);
  close(f50.top1.ci95![0], 0.6 - (4.3027 * 0.1) / Math.sqrt(3));
  assert.equal(f50.medium.mean, null);
  close(f50.few.mean, 0.4);
  // Mean over the eleven distributions per seed: base + (0 + ... + 10) / 11 / 100 = base + 0.05.
  close(plain.mean_top1.mean, 0.65);
  close(plain.mean_top1.sd, 0.1);
  const pref = t.rows.find((r) => r.method === 'preference')!;
  assert.equal(pref.unsupported, 'needs PRL');
  assert.equal(pref.mean_top1.mean, null);
  const md = benchmarkMarkdown(t);
  assert.match(md, /\| A \/ plain \| 3 \| 60\.00 ± 10\.00 \|/);
  assert.match(md, /n\/a: needs PRL/);
  assert.match(md, /INCOMPLETE/);
});

test('loadSuite: clear errors naming the file, the field and the remedy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-suite-'));
  try {
    const write = (body: unknown) => {
      const f = join(dir, 'suite.json');
      writeFileSync(f, JSON.stringify(body));
      return f;
    };
    const config = join(repoRoot, 'configs', 'fmnist_lt_ir100_ce.json');
    const good = { name: 's', seeds: [0], models: [{ name: 'CE', config }], methods: ['plain', 'oracle'] };
    const ok = loadSuite(write(good));
    assert.deepEqual(ok.methods, ['plain', 'oracle']);
    const expect = (body: unknown, field: RegExp, remedy: RegExp) => {
      const f = write(body);
      assert.throws(
        () => loadSuite(f),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.message.includes(f) &&
          field.test(e.message) &&
          remedy.test(e.message),
      );
    };
    expect({ ...good, methods: ['plian'] }, /methods\[0\]/, /did you mean 'plain'/);
    expect({ ...good, methods: ['aggregation'] }, /test_time/, /add "test_time"/);
    expect({ ...good, seeds: [0, 0] }, /seeds\[1\]/, /list each once/);
    expect(
      { ...good, models: [{ name: 'CE', config: 'nope.json' }] },
      /models\[0\]\.config/,
      /relative to the suite file/,
    );
    expect({ ...good, models: [{ name: '../x', config }] }, /models\[0\]\.name/, /letters, digits/);
    expect({ ...good, seed: [0] }, /seed/, /did you mean 'seeds'/);
    expect(
      { name: 's', models: [{ name: 'CE', config }], methods: ['plain'] },
      /seeds/,
      /missing required field/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');
const tailor = (...args: string[]) => runTailor(args);

test(
  'tailor benchmark: the tiny suite, interrupted, resumed, and its table',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  () => {
    const out = mkdtempSync(join(tmpdir(), 'tailor-bench-'));
    const suite = join('configs', 'suites', 'tiny.json');
    const seedDir = (s: number) => join(out, 'runs', 'SADE', `seed-${s}`);
    try {
      // An interrupted benchmark: only the first run is done.
      const first = tailor('benchmark', '-c', suite, '--out', out, '--max-runs', '1', '--json');
      assert.equal(first.code, 0, first.err);
      assert.match(first.err, /SADE seed 1: left for the next call/);
      assert.ok(existsSync(join(seedDir(0), 'results.json')));
      // A freshly trained run records its settings at once, so that no later call can adopt it.
      assert.ok(existsSync(join(seedDir(0), 'benchmark-run.json')));
      assert.ok(!existsSync(seedDir(1)));
      assert.equal(JSON.parse(first.out).complete, false);
      const checkpoint = join(seedDir(0), 'checkpoint-last.safetensors');
      const trainedAt = statSync(checkpoint).mtimeMs;

      // Rerun: the finished run is skipped, the second trained.
      const second = tailor('benchmark', '-c', suite, '--out', out, '--json');
      assert.equal(second.code, 0, second.err);
      assert.match(second.err, /\[1\/2\] SADE seed 0: finished, skipped/);
      assert.match(second.err, /trained 1, skipped 1/);
      assert.equal(statSync(checkpoint).mtimeMs, trainedAt);
      const table = JSON.parse(second.out);
      assert.equal(table.complete, true);
      assert.deepEqual(JSON.parse(readFileSync(join(out, 'benchmark.json'), 'utf8')), table);

      // The table's statistics from each run's stored numbers, by hand.
      const runs = [0, 1].map((s) =>
        JSON.parse(readFileSync(join(seedDir(s), 'benchmark-methods.json'), 'utf8')),
      );
      const plain = table.rows.find((r: { method: string }) => r.method === 'plain');
      const means = runs.map((r) => r.plain.mean_top1 as number);
      const m = (means[0]! + means[1]!) / 2;
      const sd = Math.abs(means[0]! - means[1]!) / Math.SQRT2;
      close(plain.mean_top1.mean, m, 1e-12);
      close(plain.mean_top1.sd, sd, 1e-12);
      close(plain.mean_top1.ci95[1], m + (12.7062 * sd) / Math.SQRT2, 1e-12);
      const u = runs.map((r) => r.plain.distributions.uniform.top1 as number);
      close(plain.distributions.uniform.top1.mean, (u[0]! + u[1]!) / 2, 1e-12);
      // 'plain' is test-all: the numbers the training run wrote.
      const results = JSON.parse(readFileSync(join(seedDir(1), 'results.json'), 'utf8'));
      for (const d of TEST_DISTRIBUTIONS)
        close(runs[1].plain.distributions[d].top1, results.distributions[d].top1, 1e-12);
      // A plain model has no hypernetwork: the preference row says so instead of numbers.
      assert.match(table.rows.find((r: { method: string }) => r.method === 'preference').unsupported, /PRL/);
      const html = readFileSync(join(out, 'benchmark.html'), 'utf8');
      assert.match(html, /SADE \/ oracle \(ORACLE\)/);
      assert.match(readFileSync(join(out, 'benchmark.md'), 'utf8'), /\| SADE \/ plain \| 2 \|/);

      // A training interrupted after its last checkpoint resumes from it, with the same numbers.
      rmSync(join(seedDir(1), 'results.json'));
      rmSync(join(seedDir(1), 'benchmark-methods.json'));
      const third = tailor('benchmark', '-c', suite, '--out', out, '--json');
      assert.equal(third.code, 0, third.err);
      assert.match(third.err, /SADE seed 1: resuming the interrupted training/);
      assert.match(third.err, /resumed from .*checkpoint-last\.json at epoch 2/);
      const again = JSON.parse(readFileSync(join(seedDir(1), 'benchmark-methods.json'), 'utf8'));
      assert.deepEqual(again.plain, runs[1].plain);
      assert.deepEqual(again.oracle, runs[1].oracle);

      // Other settings (here more epochs) must not silently reuse the finished runs.
      const changed = join(out, 'changed.json');
      const tiny = JSON.parse(readFileSync(join(repoRoot, suite), 'utf8'));
      writeFileSync(
        changed,
        JSON.stringify({
          ...tiny,
          epochs: 2,
          models: [{ name: 'SADE', config: join(repoRoot, 'configs', 'fmnist_lt_ir100_sade.json') }],
          test_time: join(repoRoot, 'configs', 'suites', 'tiny_test_time.json'),
        }),
      );
      // The config's $schema line names an editor schema: a copy without it is the same run.
      const sadeConfig = JSON.parse(
        readFileSync(join(repoRoot, 'configs', 'fmnist_lt_ir100_sade.json'), 'utf8'),
      );
      delete sadeConfig.$schema;
      const noSchema = join(out, 'sade-no-schema.json');
      writeFileSync(noSchema, JSON.stringify(sadeConfig));
      const sameRuns = join(out, 'same-runs.json');
      writeFileSync(
        sameRuns,
        JSON.stringify({
          ...tiny,
          models: [{ name: 'SADE', config: noSchema }],
          test_time: join(repoRoot, 'configs', 'suites', 'tiny_test_time.json'),
        }),
      );
      const same = tailor('benchmark', '-c', sameRuns, '--out', out, '--max-runs', '0');
      assert.equal(same.code, 0, same.err);
      assert.match(same.err, /skipped 2 finished run/);

      // Other test-time settings make the stored methods stale: they are recomputed, not mixed.
      const otherTestTime = join(out, 'other_test_time.json');
      const tinyTestTime = JSON.parse(
        readFileSync(join(repoRoot, 'configs', 'suites', 'tiny_test_time.json'), 'utf8'),
      );
      writeFileSync(otherTestTime, JSON.stringify({ ...tinyTestTime, $schema: undefined, min_weight: 0.07 }));
      const otherMethods = join(out, 'other-methods.json');
      writeFileSync(
        otherMethods,
        JSON.stringify({
          ...tiny,
          models: [{ name: 'SADE', config: join(repoRoot, 'configs', 'fmnist_lt_ir100_sade.json') }],
          test_time: otherTestTime,
        }),
      );
      const recomputed = tailor('benchmark', '-c', otherMethods, '--out', out, '--max-runs', '0');
      assert.equal(recomputed.code, 0, recomputed.err);
      assert.match(recomputed.err, /test-time settings changed since its methods ran; recomputing them/);
      const stored = JSON.parse(readFileSync(join(seedDir(0), 'benchmark-test-time.json'), 'utf8'));
      assert.equal(stored.minWeight, 0.07);

      const stale = tailor('benchmark', '-c', changed, '--out', out);
      assert.equal(stale.code, 2);
      assert.match(stale.err, /^tailor: .*seed-0 was trained with other settings.*give another --out/m);

      // --models: only the named models; a name the suite lacks is an error listing its models.
      const picked = tailor('benchmark', '-c', suite, '--out', out, '--models', 'SADE', '--max-runs', '0');
      assert.equal(picked.code, 0, picked.err);
      assert.match(picked.err, /1 model\(s\) x 2 seed\(s\)/);
      const unknown = tailor('benchmark', '-c', suite, '--out', out, '--models', 'SADE,ResNet');
      assert.equal(unknown.code, 2);
      assert.match(unknown.err, /^tailor: --models: ResNet not in the suite \(its models: SADE\)/m);
      // --seeds likewise: one process per seed can share the --out directory.
      const oneSeed = tailor('benchmark', '-c', suite, '--out', out, '--seeds', '1', '--max-runs', '0');
      assert.equal(oneSeed.code, 0, oneSeed.err);
      assert.match(oneSeed.err, /1 model\(s\) x 1 seed\(s\)/);
      const otherSeed = tailor('benchmark', '-c', suite, '--out', out, '--seeds', '0,7');
      assert.equal(otherSeed.code, 2);
      assert.match(otherSeed.err, /^tailor: --seeds: 7 not in the suite \(its seeds: 0, 1\)/m);
      const notSeed = tailor('benchmark', '-c', suite, '--out', out, '--seeds', 'x');
      assert.equal(notSeed.code, 2);
      assert.match(notSeed.err, /^tailor: --seeds /m);

      const bad = tailor('benchmark', '-c', join('configs', 'fmnist_lt_ir100_ce.json'), '--out', out);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /^tailor: .*fmnist_lt_ir100_ce\.json: .*unknown key/m);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  },
);
