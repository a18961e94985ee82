#!/usr/bin/env node
// Writes the JSON Schemas of the config files to configs/schema/ (from the built dist/; run
// `npm run build:ts` first). test/longtail/config-schema.test.ts fails when they are out of date.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { configJsonSchemas } = await import(join(root, 'dist/src/longtail/config/json-schema.js'));
const dir = join(root, 'configs', 'schema');
mkdirSync(dir, { recursive: true });
for (const [name, schema] of Object.entries(configJsonSchemas())) {
  const file = join(dir, name);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(schema, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  console.log(`wrote ${file}`);
}
