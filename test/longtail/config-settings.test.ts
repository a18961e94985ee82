// `tailor train --set PATH=VALUE` and BalPoE's tau_list texts ('limits', 'uniform', 'a;b;c').
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/longtail/config/config.js';
import { applySettings, parseSetting } from '../../src/longtail/config/settings.js';
import { tauListFromText } from '../../src/longtail/config/tau-list.js';
import { loadTestTimeConfig } from '../../src/longtail/config/testtime.js';
import { repoRoot, runTailor } from '../helpers.js';

const balpoe = join(repoRoot, 'configs', 'fmnist_lt_ir100_balpoe.json');

test('--set: values read as JSON, else as text; dotted paths; lists by index', () => {
  assert.deepEqual(parseSetting('optimizer.args.lr=0.05'), {
    path: ['optimizer', 'args', 'lr'],
    value: 0.05,
  });
  assert.deepEqual(parseSetting('a=true').value, true);
  assert.deepEqual(parseSetting('a=[0, 1.5]').value, [0, 1.5]);
  assert.deepEqual(parseSetting('a=null').value, null);
  assert.equal(parseSetting('a=limits').value, 'limits');
  assert.equal(parseSetting('a=1;2;3').value, '1;2;3');
  assert.equal(parseSetting('a=b=c').value, 'b=c');
  assert.equal(parseSetting('a=').value, '');

  const raw = {
    name: 'x',
    arch: { args: { num_experts: 3 } },
    lr_scheduler: { args: { milestones: [160, 180] } },
  };
  const before = structuredClone(raw);
  const set = applySettings(raw, [
    'arch.args.num_experts=7',
    'lr_scheduler.args.milestones.1=190',
    'lr_scheduler.args.milestones.2=195',
    'trainer.epochs=4',
    'arch.args.num_experts=5',
  ]) as typeof raw & { trainer: { epochs: number } };
  assert.equal(set.arch.args.num_experts, 5, 'later settings win');
  assert.deepEqual(set.lr_scheduler.args.milestones, [160, 190, 195]);
  assert.deepEqual(set.trainer, { epochs: 4 }, 'missing objects are created');
  assert.deepEqual(raw, before, 'the input is left as it was');
  assert.equal(applySettings(raw, []), raw);
});

test('--set: a malformed setting or a path through a value is named', () => {
  const named = (settings: string[], pattern: RegExp) =>
    assert.throws(
      () => applySettings({ name: 'x', list: [1] }, settings),
      (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
      settings.join(' '),
    );
  named(['lr'], /^--set: 'lr': needs the form PATH=VALUE/);
  named(['a..b=1'], /empty field name/);
  named(['__proto__.polluted=1'], /'__proto__' is not a config field/);
  named(['constructor.prototype.x=1'], /'constructor' is not a config field/);
  named(['name.first=1'], /^--set: name: is "x", not an object, so it has no field 'first'/);
  named(['list.5=1'], /^--set: list.5: indexes a list of 1 values: use 0..0, or 1 to append/);
  named(['list.a=1'], /indexes a list/);
  named([`${'a.'.repeat(20)}b=1`], /nests deeper than 16 fields/);
  named(
    Array.from({ length: 300 }, () => 'a=1'),
    /is given 300 times; at most 256/,
  );
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test("BalPoE's tau_list texts: limits, uniform and 'a;b;c', as its parse_tau_list", () => {
  const range = { min: 0, max: 2 };
  assert.deepEqual(tauListFromText('limits', 5, range, 'f'), [0, 0.5, 1, 1.5, 2]);
  assert.deepEqual(tauListFromText('limits', 1, range, 'f'), [1]);
  assert.deepEqual(tauListFromText('uniform', 4, range, 'f'), [0.25, 0.75, 1.25, 1.75]);
  assert.deepEqual(tauListFromText('0;1.5;-1;2e0', 4, range, 'f'), [0, 1.5, -1, 2]);
  assert.throws(() => tauListFromText('limits', 3, { min: 0 }, 'f'), /set both/);
  assert.throws(() => tauListFromText('1;;2', 3, range, 'f'), /part 2 is ''/);
  assert.throws(() => tauListFromText('1;Infinity', 2, range, 'f'), /part 2 is 'Infinity'/);
});

test('a config with --set is checked by the rules of the fields it sets, and keeps the resolved taus', () => {
  const seven = loadConfig(balpoe, [
    'arch.args.num_experts=7',
    'loss.args.tau_list=limits',
    'loss.tau_min=0',
    'loss.tau_max=3',
  ]);
  assert.equal(seven.arch.args?.num_experts, 7);
  assert.deepEqual(seven.loss.args.tau_list, [0, 0.5, 1, 1.5, 2, 2.5, 3]);
  const rejects = (settings: string[], pattern: RegExp) =>
    assert.throws(
      () => loadConfig(balpoe, settings),
      (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
      settings.join(' '),
    );
  rejects(
    ['arch.args.num_expert=4'],
    /\(with --set\): arch\.args\.num_expert: unknown key; did you mean 'num_experts'/,
  );
  rejects(['optimizer.args.lr=-1'], /\(with --set\): optimizer\.args\.lr: must be >= 0/);
  rejects(['loss.args.tau_list=[0, 1]'], /tau_list: has 2 values but arch\.args\.num_experts is 3/);
  rejects(['arch.args.num_experts=4'], /tau_list: has 3 values but arch\.args\.num_experts is 4/);
  rejects(
    ['loss.args.tau_list=limits'],
    /'limits' spreads the taus over loss\.tau_min\.\.loss\.tau_max; set both/,
  );
});

test('tailor train --set: a bad setting is one tailor: line, before anything trains', () => {
  const r = runTailor(['train', '-c', balpoe, '--set', 'loss.args.tau_list=1;2;x', '--epochs', '1']);
  assert.equal(r.code, 2, r.err);
  assert.match(
    r.err,
    /^tailor: .*fmnist_lt_ir100_balpoe\.json \(with --set\): loss\.args\.tau_list: '1;2;x' is neither/,
  );
  assert.equal(r.err.trim().split('\n').length, 1, r.err);
  const help = runTailor(['train', '--help']);
  assert.match(help.out, /--set PATH=VALUE/);
});

test('a test-time config with --set: the fields it sets, checked as written ones', () => {
  const file = join(repoRoot, 'configs', 'fmnist_test_time.json');
  const options = loadTestTimeConfig(file, false, ['trainer.epochs=3', 'methods=["em","bbse"]']);
  assert.equal(options.epochs, 3);
  assert.deepEqual(options.methods, ['em', 'bbse']);
  assert.throws(
    () => loadTestTimeConfig(file, false, ['method=al']),
    (e: unknown) =>
      e instanceof ConfigError &&
      /fmnist_test_time\.json \(with --set\): method: unknown value 'al'/.test(e.message),
  );
});
