// Every command's --help names what the command runs: its methods, estimators, losses, baselines
// and the choices of its enumerated options. The names come from the code (the method tables,
// the config schemas, the baseline and ablation lists), so adding a method or a choice without
// a line in the help fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { z } from 'zod';
import { repoRoot } from '../helpers.js';
import { BENCHMARK_METHOD_NAMES, BUILTIN_DATASETS, TEST_TIME_METHODS } from '../../src/longtail/index.js';
import { LOSS_TYPES } from '../../src/longtail/config/losses.js';
import { configJsonSchemas } from '../../src/longtail/config/json-schema.js';
import { BASELINES } from '../../src/nmr/eval/evaluate.js';
import { SINGLE_BASELINES } from '../../src/nmr/eval/single.js';
import { ABLATIONS } from '../../src/nmr/train/ablation.js';
import { FAMILIES } from '../../src/nmr/data/simulate.js';
import { COVARIANCE_TYPES } from '../../src/mixture/gaussian-params.js';

const tailor = join(repoRoot, 'bin', 'tailor');

function help(...command: string[]): string {
  const r = spawnSync(tailor, [...command, '--help'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.status, 0, `tailor ${command.join(' ')} --help: exit ${r.status}\n${r.stderr}`);
  return r.stdout;
}

/** Names that `text` does not mention as a whole word (so 'em' is not found inside 'them'). */
function missing(text: string, names: Iterable<string>): string[] {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [...new Set(names)].filter((n) => !new RegExp(`(^|[^\\w])${escape(n)}($|[^\\w])`).test(text));
}

function assertNames(text: string, names: Iterable<string>, what: string): void {
  const absent = missing(text, names);
  assert.deepEqual(absent, [], `${what}: the help does not name ${absent.join(', ')}`);
}

// The JSON Schemas are generated from the zod schemas that check the configs.
type Schema = {
  properties?: Record<string, Schema>;
  items?: Schema;
  oneOf?: Schema[];
  enum?: string[];
  const?: string;
};
const schemas = configJsonSchemas() as Record<string, Schema>;
const trainSchema = schemas['train.schema.json']!.properties!;
const testTimeSchema = schemas['test-time.schema.json']!.properties!;
const enumOf = (s: Schema | undefined): string[] => s?.enum ?? s?.items?.enum ?? [];
const typesOf = (s: Schema | undefined): string[] =>
  (s?.oneOf ?? []).map((o) => o.properties?.type?.const).filter((t): t is string => t !== undefined);

test('test-time-train --help names every test-time method and every choice of its config', () => {
  const text = help('test-time-train');
  assertNames(text, TEST_TIME_METHODS, 'methods (src/longtail/adapt/methods.ts)');
  for (const key of ['method', 'methods', 'aggregation_objective', 'preference_objective', 'prior_fit']) {
    const choices = enumOf(testTimeSchema[key]);
    assert.ok(choices.length > 0, `the test-time schema has choices for ${key}`);
    assertNames(text, choices, `test-time config ${key}`);
  }
});

test('tune-test-time --help names the searches it tunes and their objectives', () => {
  const text = help('tune-test-time');
  assertNames(text, ['aggregation', 'preference'], 'methods');
  assertNames(text, enumOf(testTimeSchema.aggregation_objective), 'objectives');
  assertNames(text, enumOf(testTimeSchema.preference_objective), 'objectives');
});

test('benchmark --help names every method a suite can run', () => {
  assertNames(help('benchmark'), BENCHMARK_METHOD_NAMES, 'suite methods');
});

test('train --help names every loss, architecture, data loader, optimizer and scheduler', () => {
  const text = help('train');
  assertNames(text, Object.keys(LOSS_TYPES), 'loss.type');
  for (const key of ['arch', 'data_loader', 'optimizer', 'lr_scheduler']) {
    const types = typesOf(trainSchema[key]);
    assert.ok(types.length > 0, `the training schema has types for ${key}`);
    assertNames(text, types, `${key}.type`);
  }
  const prl = trainSchema.prl!.properties!;
  assertNames(text, [...enumOf(prl.variant), ...enumOf(prl.scalarization)], 'the prl section');
  const prlLoss = z.toJSONSchema(LOSS_TYPES.PRLLoss, { io: 'input' }) as Schema;
  assertNames(text, enumOf(prlLoss.properties!.scalarization), 'PRLLoss scalarization');
});

test('nmr help names every baseline, ablation variant and simulated family', () => {
  const nmr = help('nmr');
  assertNames(nmr, BASELINES, 'nmr evaluate --baselines');
  assertNames(nmr, Object.keys(FAMILIES), 'nmr simulate --family');
  assertNames(help('nmr', 'yardstick'), SINGLE_BASELINES, 'nmr yardstick --baselines');
  assertNames(help('nmr', 'ablate'), Object.keys(ABLATIONS), 'nmr ablate variants');
});

test('gmm and data --help name their choices', () => {
  assertNames(help('gmm'), COVARIANCE_TYPES, 'gmm --covariance');
  assertNames(help('data', 'summary'), BUILTIN_DATASETS, 'data --dataset');
});

test('the whole-word check finds a missing name (it can fail)', () => {
  assert.deepEqual(missing('em_ts, em_bcts and them', ['em', 'em_ts']), ['em']);
});
