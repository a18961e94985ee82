// `tailor serve`: run listing, live report pages, the preference endpoint, and security: no
// path outside the runs directory can be read (.., encoded dots and slashes, absolute paths,
// symbolic links), no write endpoints, no foreign Host header.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { httpExchange, type HttpReply } from './serve-harness.js';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startReportServer,
  parsePreference,
  safeSegments,
  type RunningServer,
} from '../../src/report/server.js';
import { repoRoot } from '../helpers.js';
import { syntheticAccuracy, syntheticLongtail, writeAblationDir, writeRun } from './fixtures.js';

const SECRET = 'TOP-SECRET-5f2c9a';
let base: string;
let runsDir: string;
let server: RunningServer;
const calls: number[][] = [];

type Reply = HttpReply;

/** A raw request: the path goes out byte for byte (no client-side normalisation). */
function raw(
  path: string,
  o: { method?: string; host?: string; body?: string; srv?: RunningServer } = {},
): Promise<Reply> {
  const url = new URL((o.srv ?? server).url);
  return httpExchange(url.port, path, {
    ...(o.method ? { method: o.method } : {}),
    headers: {
      host: o.host ?? `127.0.0.1:${url.port}`,
      ...(o.body ? { 'content-type': 'application/json' } : {}),
    },
    ...(o.body !== undefined ? { body: o.body } : {}),
  });
}

before(async () => {
  base = mkdtempSync(join(tmpdir(), 'tailor-serve-'));
  runsDir = join(base, 'runs');
  writeFileSync(join(base, 'secret.txt'), SECRET);
  mkdirSync(join(base, 'outside-run'));
  writeRun(join(base, 'outside-run'), syntheticLongtail(), { 'secret.txt': SECRET });
  writeRun(join(runsDir, 'prl'), syntheticLongtail({ prl: true }), { 'notes.txt': 'hello' });
  writeRun(join(runsDir, 'group', 'sade'), syntheticLongtail());
  const noGrid = syntheticLongtail({ prl: true });
  delete noGrid.controllability;
  writeRun(join(runsDir, 'prl-nogrid'), noGrid);
  // an nmr train run: history.json and best.json, no results.json
  mkdirSync(join(runsDir, 'nmr'));
  writeFileSync(
    join(runsDir, 'nmr', 'history.json'),
    JSON.stringify([
      {
        epoch: 1,
        stage: 'A',
        lr: 3e-4,
        loss: 0.2,
        rec: 0.1,
        deriv: 0,
        curv: 0,
        cons: 0,
        ratio: 0,
        minLevel: 1,
        val: { rec: 0.1, energySnrDb: null, inputEnergySnrDb: null },
        seconds: 1,
      },
    ]),
  );
  writeFileSync(join(runsDir, 'nmr', 'best.json'), '{"epoch": 0}');
  writeAblationDir(join(runsDir, 'abl'));
  symlinkSync(join(base, 'secret.txt'), join(runsDir, 'prl', 'link-out.txt'));
  symlinkSync(join(base, 'outside-run'), join(runsDir, 'linked-run'));
  symlinkSync(base, join(runsDir, 'prl', 'up'));
  server = await startReportServer({
    runsDir,
    port: 0,
    evaluatePreference: async (dir, r) => {
      calls.push([...r.weights]);
      assert.equal(dir, join(runsDir, 'prl'));
      return syntheticAccuracy([...r.weights]);
    },
  });
});

after(async () => {
  await server?.close();
  rmSync(base, { recursive: true, force: true });
});

test('index lists the runs (not the symlinked one) and pages render', async () => {
  const index = await raw('/');
  assert.equal(index.status, 200);
  assert.match(index.body, /href="\/runs\/prl\/"/);
  assert.match(index.body, /href="\/runs\/group\/sade\/"/);
  assert.ok(!index.body.includes('linked-run'), 'symbolic links are not followed when listing');
  const list = JSON.parse((await raw('/api/runs')).body) as { id: string; kind: string }[];
  assert.deepEqual(
    list.map((r) => `${r.id} ${r.kind}`),
    ['abl nmr-ablation', 'group/sade longtail', 'nmr nmr-train', 'prl longtail', 'prl-nogrid longtail'],
  );
  const ablation = await raw('/runs/abl/');
  assert.equal(ablation.status, 200);
  assert.match(ablation.body, /2 variants x 2 seeds/);
  const nmr = await raw('/runs/nmr/');
  assert.equal(nmr.status, 200);
  assert.match(nmr.body, /NMR denoiser training: 1 epochs/);
  const notPrl = await raw('/api/runs/nmr/preference?r=0.3,0.3,0.4');
  assert.equal(notPrl.status, 501);
  assert.match(notPrl.body, /run nmr is not a PRL run/);
  const page = await raw('/runs/prl/');
  assert.equal(page.status, 200);
  assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
  assert.ok(page.body.includes('"live":{"endpoint":"/api/runs/prl/preference"}'));
  const nested = await raw('/runs/group/sade/');
  assert.equal(nested.status, 200);
  assert.ok(!nested.body.includes('"live"'), 'no live control without a controllability grid');
  const noGrid = await raw('/runs/prl-nogrid/');
  assert.ok(
    noGrid.body.includes('"live":{"endpoint":"/api/runs/prl-nogrid/preference"}'),
    'PRL without a grid: live control',
  );
  assert.ok(noGrid.body.includes('"simplex":{"type":"ternary"'));
  assert.ok(noGrid.body.includes('has no controllability grid'));
  assert.equal((await raw('/runs/prl')).status, 301);
  const file = await raw('/runs/prl/files/notes.txt');
  assert.equal(file.status, 200);
  assert.equal(file.body, 'hello');
  assert.equal((await raw('/runs/nope/')).status, 404);
});

test('no path outside the runs directory can be read', async () => {
  const attempts = [
    '/runs/prl/files/../../secret.txt',
    '/runs/prl/files/..%2f..%2fsecret.txt',
    '/runs/prl/files/%2e%2e/%2e%2e/secret.txt',
    '/runs/prl/files/%2E%2E/%2E%2E/secret.txt',
    '/runs/prl/files/.%2e/.%2e/secret.txt',
    '/runs/prl/files/..%5c..%5csecret.txt',
    '/runs/prl/files/%2F' + encodeURIComponent(join(base, 'secret.txt').slice(1)),
    '/runs/prl/files/' + join(base, 'secret.txt'),
    '/runs/prl/files//' + join(base, 'secret.txt').slice(1),
    '/runs/prl/files/link-out.txt',
    '/runs/prl/files/up/secret.txt',
    '/runs/prl/files/up/outside-run/secret.txt',
    '/runs/linked-run/files/secret.txt',
    '/runs/linked-run/',
    '/runs/%2e%2e/files/secret.txt',
    '/runs/../secret.txt',
    '/../secret.txt',
    '/%2e%2e/secret.txt',
    '/runs/prl/files/%252e%252e/%252e%252e/secret.txt',
    '/runs/prl/files/secret.txt%00.txt',
    '/runs/prl/files/%',
    '/api/runs/%2e%2e/preference?r=1,0,0',
    '/api/runs/..%2foutside-run/preference?r=1,0,0',
    'http://127.0.0.1/../secret.txt',
  ];
  for (const path of attempts) {
    const r = await raw(path);
    assert.ok([400, 403, 404].includes(r.status), `${path}: status ${r.status}`);
    assert.ok(!r.body.includes(SECRET), `${path}: leaked the secret`);
  }
  // Sanity: the secret is there to be leaked, so the checks above can fail.
  assert.ok(existsSync(join(base, 'secret.txt')));
  assert.equal((await raw('/runs/prl/files/link-out.txt')).status, 403);
  assert.equal((await raw('/runs/prl/files/%2e%2e/x')).status, 403);
  assert.throws(() => safeSegments('/a/%2e%2E/b'), /traversal/);
  assert.deepEqual(safeSegments('/runs/a%20b/c'), ['runs', 'a b', 'c']);
});

test('read-only: other methods and foreign hosts are refused', async () => {
  for (const method of ['PUT', 'DELETE', 'PATCH'])
    assert.equal((await raw('/runs/prl/files/notes.txt', { method })).status, 405);
  assert.equal((await raw('/runs/prl/', { method: 'POST', body: '{}' })).status, 405);
  assert.equal((await raw('/api/runs', { method: 'POST', body: '{}' })).status, 405);
  const rebound = await raw('/runs/prl/', { host: 'evil.example:80' });
  assert.equal(rebound.status, 403);
  assert.equal((await raw('/', { host: 'localhost:1234' })).status, 200);
});

test('preference endpoint: answers for the given r, normalised to the simplex', async () => {
  const r1 = await raw('/api/runs/prl/preference?r=2,0,2');
  assert.equal(r1.status, 200, r1.body);
  const body = JSON.parse(r1.body) as {
    preference: number[];
    few: number;
    many: number;
    distributions: Record<string, number>;
    seconds: number;
  };
  assert.deepEqual(body.preference, [0.5, 0, 0.5]);
  const expected = syntheticAccuracy([0.5, 0, 0.5]);
  assert.equal(body.few, expected.few);
  assert.equal(body.distributions.backward50, expected.distributions.backward50);
  assert.deepEqual(calls.at(-1), [0.5, 0, 0.5]);
  const post = await raw('/api/runs/prl/preference', {
    method: 'POST',
    body: JSON.stringify({ preference: [0, 0, 1] }),
  });
  assert.equal(post.status, 200, post.body);
  assert.equal((JSON.parse(post.body) as { few: number }).few, syntheticAccuracy([0, 0, 1]).few);
  const postText = await raw('/api/runs/prl/preference', {
    method: 'POST',
    body: JSON.stringify({ r: '1,1,2' }),
  });
  assert.equal(postText.status, 200, postText.body);
  assert.deepEqual(calls.at(-1), [0.25, 0.25, 0.5], 'the JSON body may give the text too');
  for (const [body, re] of [
    [{ preference: [1, -1, 1] }, /r must be non-negative numbers, got \[1,-1,1\]/],
    [{ preference: [1, '1', 1] }, /r must be non-negative numbers/],
    [{ preference: [1, 1] }, /r has 2 weights but the run has 3 experts/],
  ] as const) {
    const r = await raw('/api/runs/prl/preference', { method: 'POST', body: JSON.stringify(body) });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match((JSON.parse(r.body) as { error: string }).error, re);
  }
  for (const [q, re] of [
    ['', /r=a,b,c/],
    ['?r=1,0', /2 weights but the run has 3 experts/],
    ['?r=1,-1,1', /non-negative/],
    ['?r=0,0,0', /sum to 0/],
    ['?r=a,b,c', /non-negative numbers/],
  ] as const) {
    const r = await raw('/api/runs/prl/preference' + q);
    assert.equal(r.status, 400, q);
    assert.match((JSON.parse(r.body) as { error: string }).error, re);
  }
  const notPrl = await raw('/api/runs/group/sade/preference?r=1,0,0');
  assert.equal(notPrl.status, 501);
  assert.match(notPrl.body, /not a PRL run/);
  assert.throws(() => parsePreference('1,,2', 3), /non-negative numbers/);
  assert.deepEqual(parsePreference([2, 0, 2], null).weights, [0.5, 0, 0.5], 'the run checks the count');
});

test('the default evaluator on a run without a checkpoint fails with a JSON error, not a crash', async () => {
  const other = await startReportServer({ runsDir, port: 0 });
  try {
    const r = await raw('/api/runs/prl/preference?r=1,0,0', { srv: other });
    assert.equal(r.status, 500, r.body);
    // The default evaluator ran: it names the missing checkpoint.
    assert.match(
      (JSON.parse(r.body) as { error: string }).error,
      /^evaluation failed: no checkpoint at '.*prl' \(give a run directory/,
    );
    assert.equal((await raw('/', { srv: other })).status, 200, 'the server still answers');
  } finally {
    await other.close();
  }
});

test('tailor serve starts, answers, and stops on SIGTERM', async () => {
  const { spawn } = await import('node:child_process');
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'dist/src/cli/main.js'), 'serve', '--runs', runsDir, '--port', '0'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
      setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 10000);
    });
    const res = await fetch(url + '/api/runs');
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as unknown[]).length, 5);
  } finally {
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  }
});
