// The fuzz campaign at a small count per parser, as part of the normal test run: every parser
// must answer mutated inputs with success or a named `tailor:` error, never a crash, a hang or
// an unnamed error; the tensor API's areas share one target ('api: every area') here. `npm run fuzz -- --count 10000` runs the large campaign.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTable, runCampaign } from './campaign.js';

const COUNT = Number(process.env.TAILOR_FUZZ_COUNT ?? 40);

test(
  `fuzz: ${COUNT} mutated inputs per parser, no crash, hang or unnamed error`,
  { timeout: 600_000 },
  async () => {
    const reports = await runCampaign({
      count: COUNT,
      seed: Number(process.env.TAILOR_FUZZ_SEED ?? 1),
      jobs: 2,
      // the API areas in one child: a child per area would cost a libtorch start-up each
      accept: (name) => !name.startsWith('api: ') || name === 'api: every area',
    });
    const bad = reports.filter((r) => r.other + r.crashes + r.hangs > 0);
    const detail = bad.flatMap((r) => r.findings.map((f) => `${r.target} #${f.i} ${f.kind}: ${f.detail}`));
    assert.equal(bad.length, 0, `${formatTable(reports)}\n${detail.join('\n')}`);
    for (const r of reports) assert.equal(r.tried, COUNT, `${r.target} ran every input`);
    // the mutator must reach the readers' checks, not only their first line
    const named = reports.reduce((a, r) => a + r.named, 0);
    const ok = reports.reduce((a, r) => a + r.ok, 0);
    assert.ok(named > 0 && ok > 0, 'some inputs are accepted and some rejected');
  },
);
