// npm run bench -- NAME [args]: runs the compiled benchmark bench/NAME.ts (TAILOR_JEMALLOC=1
// preloads jemalloc, as the launcher does).
import { spawnSync, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const [name, ...args] = process.argv.slice(2);
// Each file of bench/ is a benchmark; bench/lib/ holds what they share.
const names = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3))
  .sort();
const usage = `usage: npm run bench -- NAME [options]; NAME is one of: ${names.join(', ')} (each file's header lists its options)`;
if (!name) {
  console.error(usage);
  process.exit(2);
}
if (!names.includes(name)) {
  console.error(`tailor: bench: no benchmark '${name}'; ${usage}`);
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
  console.error(`tailor: bench: ${name} was not compiled to ${file}`);
  process.exit(2);
}
const jemalloc = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
const env = { ...process.env };
if (existsSync(jemalloc) && env.TAILOR_JEMALLOC && env.TAILOR_JEMALLOC !== '0')
  env.LD_PRELOAD = [env.LD_PRELOAD, jemalloc].filter(Boolean).join(':');
const r = spawnSync(process.execPath, ['--expose-gc', file, ...args], { stdio: 'inherit', env });
process.exit(r.status ?? 1);
