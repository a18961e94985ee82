// `npm run fuzz -- [--count 10000] [--target NAME] [--only I] [--jobs N]`: builds the TypeScript,
// then runs the fuzz campaign of test/fuzz/campaign.ts (a table per parser: tried, named errors,
// other errors, crashes, hangs). Exit status 1 when anything but a named error was seen.
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
execFileSync(
  process.execPath,
  [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')],
  {
    stdio: 'inherit',
  },
);
const result = spawnSync(
  process.execPath,
  [join(root, 'dist/test/fuzz/campaign.js'), ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
process.exit(result.status ?? 1);
