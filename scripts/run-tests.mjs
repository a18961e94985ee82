// Builds the TypeScript (type-checking everything) and runs every compiled test with node:test.
// Usage: node scripts/run-tests.mjs [substring-filter ...]
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
execFileSync(
  process.execPath,
  [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')],
  {
    stdio: 'inherit',
  },
);

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...collect(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}
const filters = process.argv.slice(2);
const files = collect(join(root, 'dist/test'))
  // Filters match the path below the repository ('test/mixture/gmm.api.test.js'), so that the
  // checkout's own folder name never matches.
  .filter(
    (f) =>
      filters.length === 0 || filters.some((s) => `test/${relative(join(root, 'dist/test'), f)}`.includes(s)),
  )
  .sort();
if (filters.length > 0 && files.length === 0) {
  // A filter that matches nothing would otherwise run every test.
  console.error(`run-tests: no compiled test matches ${filters.map((f) => `'${f}'`).join(', ')}`);
  process.exit(2);
}
const env = { ...process.env, ...preloadEnv() };
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...files], {
  stdio: 'inherit',
  env,
});
process.exit(result.status ?? 1);

function preloadEnv() {
  // Same allocator choice as the `tailor` launcher: glibc unless TAILOR_JEMALLOC=1.
  const jemalloc = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
  if (!process.env.TAILOR_JEMALLOC || process.env.TAILOR_JEMALLOC === '0') return {};
  try {
    statSync(jemalloc);
    return { LD_PRELOAD: [process.env.LD_PRELOAD, jemalloc].filter(Boolean).join(':') };
  } catch {
    return {};
  }
}
