// Every `@example` of a doc comment in src/ is a complete program that imports the package by name
// ('tailor/mixture', ...): each is written out and type-checked against the build's declarations,
// as a user pasting it would compile it, so the reference's examples cannot drift from the API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from './helpers.js';

interface Example {
  source: string;
  line: number;
  code: string;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The fenced code of each `@example` tag; an example without a ```ts fence is reported as such. */
function examples(file: string): Example[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const found: Example[] = [];
  lines.forEach((text, k) => {
    if (!/^\s*\*\s*@example\s*$/.test(text)) return;
    const source = relative(repoRoot, file);
    const open = lines[k + 1]?.replace(/^\s*\*\s?/, '').trim();
    if (open !== '```ts') {
      found.push({ source, line: k + 1, code: '' });
      return;
    }
    const body: string[] = [];
    for (let j = k + 2; j < lines.length; j++) {
      const inner = lines[j]!.replace(/^\s*\*\s?/, '');
      if (inner.trim() === '```') break;
      body.push(inner);
    }
    found.push({ source, line: k + 1, code: body.join('\n') });
  });
  return found;
}

test('doc-comment examples are complete programs that type-check against the package', () => {
  const all = sources(join(repoRoot, 'src')).flatMap(examples);
  assert.ok(all.length >= 10, `only ${all.length} examples found`);
  const fragments = all.filter((e) => !/from 'tailor(\/[a-z]+)?'/.test(e.code));
  assert.deepEqual(
    fragments.map((e) => `${e.source}:${e.line}`),
    [],
    "these @example blocks are not a ```ts block importing from 'tailor...' (write them as complete programs)",
  );
  // Inside the repository, 'tailor/...' resolves through package.json's exports to dist/src.
  const dir = join(repoRoot, 'dist', 'doc-examples');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const names = all.map((e, i) => {
    const name = `example-${String(i).padStart(2, '0')}.ts`;
    writeFileSync(join(dir, name), `// ${e.source}:${e.line}\n${e.code}\nexport {};\n`);
    return name;
  });
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        types: ['node'],
      },
      files: names,
    }),
  );
  const tsc = spawnSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', dir], {
    encoding: 'utf8',
  });
  const where = (out: string) =>
    out.replace(
      /example-(\d+)\.ts/g,
      (_, i: string) => `${all[Number(i)]!.source}:${all[Number(i)]!.line} (example)`,
    );
  assert.equal(tsc.status, 0, `the examples do not type-check:\n${where(tsc.stdout + tsc.stderr)}`);
});
