// The checked-in API report (etc/api/*.api.md) matches the public surface of the compiled
// package: a change to an entry point's exports or declarations fails here until `npm run api`
// rewrites the reports, so that the change is deliberate and visible in review.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './helpers.js';

test('the API report of every entry point is up to date (npm run api)', () => {
  const result = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'api-report.mjs'), '--check'], {
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, result.stderr);
});
