// The long-tail commands end to end on a tiny Fashion-MNIST-LT run, through the real CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { repoRoot, runTailor } from '../helpers.js';
import { TEST_DISTRIBUTIONS } from '../../src/longtail/data/longtail.js';

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');
const tiny = ['--epochs', '1', '--train-max-per-class', '12', '--test-per-class', '4', '--quiet'];

const tailor = (...args: string[]) => runTailor(args);

const DISTRIBUTIONS = TEST_DISTRIBUTIONS;

test(
  'train, test, test-all and test-time-train on PRL',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-cli-'));
    try {
      const run = join(dir, 'prl');
      const t = tailor('train', '-c', 'configs/fmnist_lt_ir100_prl.json', ...tiny, '--out', run);
      assert.equal(t.code, 0, t.err);
      const results = JSON.parse(readFileSync(join(run, 'results.json'), 'utf8'));
      assert.equal(results.kind, 'longtail');
      assert.equal(results.graph, 'eager');
      assert.deepEqual(Object.keys(results.distributions), DISTRIBUTIONS);
      assert.equal(results.controllability.points.length, 66);

      const one = tailor('test', '-r', run, '--json');
      assert.equal(one.code, 0, one.err);
      const u = JSON.parse(one.out);
      assert.ok(u.top1 >= 0 && u.top1 <= 1);
      assert.equal(u.n, 40);

      const all = tailor('test-all', '-r', join(run, 'checkpoint-last.json'), '--json');
      assert.equal(all.code, 0, all.err);
      const a = JSON.parse(all.out);
      assert.deepEqual(Object.keys(a.distributions), DISTRIBUTIONS);
      // The uniform distribution is the whole balanced test set that `test` scored.
      assert.equal(a.distributions.uniform.top1, u.top1);
      const tops = DISTRIBUTIONS.map((name) => a.distributions[name].top1 as number);
      assert.ok(Math.abs(a.mean_top1 - tops.reduce((s, v) => s + v, 0) / tops.length) < 1e-12);

      // Another preference changes the experts without retraining; it matches the grid's point.
      const pref = tailor('test-all', '-r', run, '--json', '--preference', '0.8,0.1,0.1');
      assert.equal(pref.code, 0, pref.err);
      const p = JSON.parse(pref.out);
      assert.deepEqual(
        p.preference.map((v: number) => +v.toFixed(6)),
        [0.8, 0.1, 0.1],
      );
      const point = results.controllability.points.find((q: { preference: number[] }) =>
        q.preference.every((v, i) => Math.abs(v - [0.8, 0.1, 0.1][i]!) < 1e-9),
      );
      assert.ok(point, 'grid has the point 0.8/0.1/0.1');
      for (const name of DISTRIBUTIONS)
        assert.ok(Math.abs(point.distributions[name] - p.distributions[name].top1) < 1e-9, name);

      const cmp = tailor('compare', run, run, '--json');
      assert.equal(cmp.code, 0, cmp.err);
      const rows = JSON.parse(cmp.out);
      assert.equal(rows.length, 2);
      assert.deepEqual(Object.keys(rows[0].distributions), DISTRIBUTIONS);
      assert.equal(rows[0].mean_top1, results.mean_top1);
      assert.equal(tailor('compare', join(dir, 'nothing')).code, 2);
      // the table names each column by its method and run directory, whole, in aligned columns
      const text = tailor('compare', run, run);
      assert.equal(text.code, 0, text.err);
      const lines = text.out.trimEnd().split('\n');
      assert.match(lines[0]!, /^distribution {2}PRL \(paper\) PRL \(paper\)$/);
      assert.match(lines[1]!, new RegExp(`^run +${basename(run)} +${basename(run)}$`));
      assert.deepEqual(
        lines.slice(2, 2 + DISTRIBUTIONS.length).map((l) => l.split(/ +/)[0]),
        [...DISTRIBUTIONS],
      );
      assert.ok(new Set(lines.map((l) => l.length)).size === 1, 'every row as wide as the header');

      const ttConfig = join(dir, 'tt.json');
      writeFileSync(
        ttConfig,
        JSON.stringify({
          name: 'tt',
          method: 'all',
          distributions: ['forward50', 'backward50'],
          optimizer: { type: 'SGD', args: { lr: 0.025, momentum: 0.9 } },
          trainer: { epochs: 1 },
          data_loader: { args: { batch_size: 16 } },
        }),
      );
      const tt = tailor('test-time-train', '-c', ttConfig, '-r', run, '--json', '--save');
      assert.equal(tt.code, 0, tt.err);
      const r = JSON.parse(tt.out);
      // --save added the same summary to the run's results.json.
      const saved = JSON.parse(readFileSync(join(run, 'results.json'), 'utf8'));
      assert.deepEqual(saved.test_time, r);
      // A run without results.json (its training stopped before the final evaluation): said before
      // the searches run, with the command that writes it.
      renameSync(join(run, 'results.json'), join(dir, 'results.json'));
      const unsaved = tailor('test-time-train', '-c', ttConfig, '-r', run, '--save');
      renameSync(join(dir, 'results.json'), join(run, 'results.json'));
      assert.equal(unsaved.code, 2, unsaved.err);
      assert.match(
        unsaved.err,
        /^tailor: --save adds to the run's results\.json, which .* lacks .*tailor test-all -r/m,
      );
      // --json keeps the progress of the views on stderr (plain lines off a terminal).
      assert.match(tt.err, /\d+\/\d+ .* ETA /);
      for (const name of ['forward50', 'backward50']) {
        const d = r.distributions[name];
        // Before adaptation: the model as test-all scored it on the same distribution.
        assert.equal(d.before.top1, a.distributions[name].top1, name);
        // An epoch of each search moved its parameter off the uniform start.
        assert.equal(d.weights.length, 3);
        assert.ok(
          d.weights.some((v: number) => Math.abs(v - 1 / 3) > 1e-7),
          `weights ${d.weights}`,
        );
        assert.equal(d.preference.length, 3);
        assert.ok(
          d.preference.some((v: number) => Math.abs(v - 1 / 3) > 1e-7),
          `preference ${d.preference}`,
        );
        // Prior matching fitted the distribution's prior: far from uniform on a 50x imbalanced set.
        const matched = d.prior_matching;
        assert.equal(matched.preference.length, 3);
        assert.equal(matched.estimated_prior.length, 10);
        assert.ok(matched.em_iterations >= 1);
        assert.ok(Math.max(...matched.estimated_prior) > 0.15, `prior ${matched.estimated_prior}`);
      }
      // Forward and backward sets have opposite priors; EM's estimates must say so.
      const head = (name: string) => r.distributions[name].prior_matching.estimated_prior[0];
      assert.ok(head('forward50') > head('backward50'), 'the head class is likelier on forward50');
      assert.equal(typeof r.mean_top1_prior, 'number');
      // Every method by its exported name, with its prior estimate and the error against the truth.
      for (const name of ['forward50', 'backward50']) {
        const m = r.distributions[name].methods;
        for (const method of [
          'none',
          'aggregation',
          'preference',
          'prior',
          'em',
          'em_ts',
          'em_bcts',
          'bbse',
          'oracle',
        ])
          assert.ok(m[method], `${name}: ${method} reported`);
        assert.equal(m.none.top1, r.distributions[name].before.top1);
        for (const method of ['prior', 'em', 'em_ts', 'em_bcts', 'bbse', 'oracle']) {
          assert.equal(m[method].estimated_prior.length, 10, method);
          assert.ok(m[method].prior_error.l1 >= 0 && m[method].prior_error.kl >= 0, method);
        }
        assert.ok(m.oracle.prior_error.l1 < 1e-12, 'the oracle knows the prior');
      }
      assert.equal(typeof r.mean_top1_methods.em_bcts, 'number');
      assert.ok(r.calibration.bcts.nll_after <= r.calibration.bcts.nll_before + 1e-12);
      // The run recorded its validation split and the calibration fitted on it after training.
      assert.deepEqual(results.dataset.validation.counts.length, 10);
      assert.equal(typeof results.calibration.bcts.temperature, 'number');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'user errors: bad config, missing checkpoint, wrong preference',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-cli-err-'));
    try {
      const cfg = JSON.parse(readFileSync(join(repoRoot, 'configs', 'fmnist_lt_ir100_sade.json'), 'utf8'));
      cfg.optimizer.args.momentun = 0.9;
      writeFileSync(join(dir, 'bad.json'), JSON.stringify(cfg));
      const bad = tailor('train', '-c', join(dir, 'bad.json'));
      assert.equal(bad.code, 2);
      assert.match(bad.err, /bad\.json: optimizer\.args\.momentun: unknown key; did you mean 'momentum'\?/);
      const missing = tailor('test-all', '-r', join(dir, 'nothing'));
      assert.equal(missing.code, 2);
      assert.match(missing.err, /no checkpoint at/);
      const run = join(dir, 'sade');
      assert.equal(tailor('train', '-c', 'configs/fmnist_lt_ir100_sade.json', ...tiny, '--out', run).code, 0);
      const pref = tailor('test-all', '-r', run, '--preference', '1,0,0');
      assert.equal(pref.code, 2);
      assert.match(pref.err, /PRL checkpoints only/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
