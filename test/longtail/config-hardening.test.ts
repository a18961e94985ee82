// Hostile configs (issue: hostile input): long keys, deep nesting and prototype keys end in a
// named error quickly; the published JSON Schemas match the zod schemas that check the files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig, ConfigError } from '../../src/longtail/config/config.js';
import { closest, levenshtein } from '../../src/longtail/config/schema.js';
import { configJsonSchemas } from '../../src/longtail/config/json-schema.js';
import { createLoss } from '../../src/longtail/config/losses.js';
import { repoRoot } from '../helpers.js';

const configText = readFileSync(join(repoRoot, 'configs', 'fmnist_lt_ir100_sade.json'), 'utf8');
const base = JSON.parse(configText) as Record<string, unknown>;

/** JSON text of the config with `key: value` added inside `section` (or at the top). */
function withKey(key: string, value: unknown, section?: string): string {
  const inner = section ? JSON.stringify(base[section]).slice(1, -1) : null;
  const add = `${JSON.stringify(key)}: ${JSON.stringify(value)}`;
  if (!section) return `{${add}, ${JSON.stringify(base).slice(1)}`;
  const rest = { ...base };
  delete rest[section];
  return `{"${section}": {${add}${inner ? `, ${inner}` : ''}}, ${JSON.stringify(rest).slice(1)}`;
}

test('a very long unknown key is named (shortened) within milliseconds', () => {
  for (const length of [100_000, 1_000_000]) {
    const key = 'x'.repeat(length);
    const start = performance.now();
    assert.throws(
      () => parseConfig(withKey(key, 1, 'trainer'), 'long.json'),
      (e: Error) =>
        e instanceof ConfigError &&
        /^long\.json: trainer\.x{64}… \(\d+ characters\): unknown key; valid: epochs/.test(e.message) &&
        e.message.length < 400,
    );
    const ms = performance.now() - start;
    assert.ok(ms < 500, `${length}-character key took ${ms.toFixed(0)} ms`);
  }
  // a long near-miss of a valid key is not compared letter by letter against everything
  const start = performance.now();
  assert.equal(closest('epoch'.repeat(20_000), ['epochs', 'save_dir']), undefined);
  assert.ok(performance.now() - start < 100);
});

test('the bounded edit distance agrees with the full one below its bound', () => {
  const words = [
    'weight_decay',
    'wieght_decay',
    'epochs',
    'epoch',
    'trainer',
    'trainr',
    'mu',
    'muu',
    'z',
    'alpha',
  ];
  for (const a of words)
    for (const b of words) {
      const full = levenshtein(a, b);
      for (const bound of [0, 1, 2, 3, 5])
        assert.equal(levenshtein(a, b, bound), Math.min(full, bound + 1), `${a} ${b} ${bound}`);
    }
  assert.equal(closest('wieght_decay', ['weight_decay', 'momentum']), 'weight_decay');
});

test('a deeply nested config is an error with its position, not a stack overflow', () => {
  for (const depth of [40, 100_000]) {
    const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const textDeep = `{"name": "x",\n "metrics": ${deep}}`;
    assert.throws(
      () => parseConfig(textDeep, 'deep.json'),
      (e: Error) =>
        e instanceof ConfigError && /^deep\.json:2:\d+: nested deeper than 32 levels/.test(e.message),
    );
    // also when the text is not valid JSON (the syntax error locator walks it too)
    assert.throws(
      () => parseConfig(`{"a": ${'{"a": '.repeat(depth)}`, 'broken.json'),
      /broken\.json:1:\d+: nested deeper/,
    );
  }
  // brackets inside strings do not count
  const brackets = '[[[{{'.repeat(100);
  const quoted = configText.replace(/"name": "/, `"name": "${brackets}`);
  assert.ok(parseConfig(quoted, 'ok.json').name.startsWith(brackets));
  // A string broken by a line break: the depth check reads the braces after it as quoted, the
  // syntax error locator (which ends strings at line breaks) as 20,000 nested objects.
  const broken = '{\n  "name": "a\n' + '    "args": {\n'.repeat(20_000) + '}';
  assert.throws(
    () => parseConfig(broken, 'broken.json'),
    (e: Error) => e instanceof ConfigError && /^broken\.json:2:\d+: invalid JSON/.test(e.message),
  );
});

test('__proto__, constructor and toString are unknown keys at every level', () => {
  for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty'])
    for (const section of [undefined, 'trainer', 'optimizer']) {
      const where = section === 'optimizer' ? undefined : section;
      const text =
        section === 'optimizer'
          ? configText.replace('"lr":', `${JSON.stringify(key)}: {}, "lr":`)
          : withKey(key, {}, where);
      assert.throws(
        () => parseConfig(text, 'p.json'),
        (e: Error) =>
          e instanceof ConfigError &&
          e.message.includes(`${key}: unknown key`) &&
          e.message.startsWith('p.json: '),
        `${key} in ${section ?? 'the top level'}`,
      );
    }
  // a loss type or a loss argument named after an Object.prototype member
  const ctx = { classCounts: [5, 3, 1], experts: 1, file: 'l.json' };
  for (const type of ['__proto__', 'constructor', 'toString'])
    assert.throws(() => createLoss(type, {}, ctx), /l\.json: loss\.type: unknown loss/);
  assert.throws(
    () => createLoss('CrossEntropyLoss', JSON.parse('{"__proto__": 1}'), ctx),
    /loss\.args\.__proto__: unknown key/,
  );
  assert.equal(({} as { polluted?: unknown }).polluted, undefined);
});

test('configs/schema/ holds the JSON Schemas of the current config schemas (npm run schemas)', () => {
  for (const [name, schema] of Object.entries(configJsonSchemas())) {
    const file = join(repoRoot, 'configs', 'schema', name);
    assert.deepEqual(
      JSON.parse(readFileSync(file, 'utf8')),
      schema,
      `${file} is out of date: run npm run schemas`,
    );
  }
  const train = configJsonSchemas()['train.schema.json'] as {
    properties: Record<string, unknown>;
    additionalProperties: unknown;
  };
  assert.ok('trainer' in train.properties && 'prl' in train.properties);
  assert.equal(train.additionalProperties, false);
  // every shipped config points editors at its schema and still parses
  assert.equal(base.$schema, './schema/train.schema.json');
  assert.equal(parseConfig(configText, 'sade.json').$schema, './schema/train.schema.json');
});
