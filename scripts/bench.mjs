// npm run bench -- NAME [args]: runs the compiled benchmark bench/NAME.ts (TAILOR_JEMALLOC=1
// preloads jemalloc, as the launcher does).
import { spawnSync, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const [name, ...args] = process.argv.slice(2);
if (!name) {
  console.error('usage: npm run bench -- NAME [--json] (NAME is a file of bench/, without .ts)');
  process.exit(2);
}
execFileSync(
  process.execPath,
  [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')],
  {
    stdio: 'inherit',
  },
);
const file = join(root, 'dist/bench', `${name}.js`);
if (!existsSync(file)) {
  console.error(`no benchmark '${name}' (looked for bench/${name}.ts)`);
  process.exit(2);
}
const jemalloc = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
const env = { ...process.env };
if (existsSync(jemalloc) && env.TAILOR_JEMALLOC && env.TAILOR_JEMALLOC !== '0')
  env.LD_PRELOAD = [env.LD_PRELOAD, jemalloc].filter(Boolean).join(':');
const r = spawnSync(process.execPath, ['--expose-gc', file, ...args], { stdio: 'inherit', env });
process.exit(r.status ?? 1);
