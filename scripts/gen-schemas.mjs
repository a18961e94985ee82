#!/usr/bin/env node
// Writes the JSON Schemas of the config files to configs/schema/ (from the built dist/; run
// `npm run build:ts` first): the long-tail configs and the NMR experiments file.
// test/longtail/config-schema.test.ts and test/nmr/experiments.test.ts fail when they are out of date.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { configJsonSchemas } = await import(join(root, 'dist/src/longtail/config/json-schema.js'));
const { experimentsJsonSchema } = await import(join(root, 'dist/src/nmr/data/experiments.js'));
const dir = join(root, 'configs', 'schema');
mkdirSync(dir, { recursive: true });
const schemas = { ...configJsonSchemas(), 'nmr-experiments.schema.json': experimentsJsonSchema() };
for (const [name, schema] of Object.entries(schemas)) {
  const file = join(dir, name);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(schema, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  console.log(`wrote ${file}`);
}
