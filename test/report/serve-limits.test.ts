// `tailor serve`'s bounds and credentials: the per-run evaluation queue (503 with Retry-After
// past it, shared identical requests), body size and JSON depth limits, timeouts on slow clients,
// the token (required off loopback, or forced with --token) and the same-origin check.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { startReportServer, type RunningServer, type ServeOptions } from '../../src/report/server.js';
import { EvaluationQueue } from '../../src/report/serve/queue.js';
import { DRAIN_BYTES, parseJsonBody } from '../../src/report/serve/limits.js';
import {
  ServeOptionError,
  checkSameOrigin,
  isLoopback,
  resolveToken,
  sameToken,
} from '../../src/report/serve/auth.js';
import { UserError } from '../../src/util/errors.js';
import { repoRoot } from '../helpers.js';
import { syntheticAccuracy, syntheticLongtail, writeRun } from './fixtures.js';
import { httpExchange, rawExchange, type HttpReply } from './serve-harness.js';

const base = mkdtempSync(join(tmpdir(), 'tailor-serve-limits-'));
const runsDir = join(base, 'runs');
writeRun(join(runsDir, 'prl'), syntheticLongtail({ prl: true }), { 'notes.txt': 'hello' });
writeRun(join(runsDir, 'prl2'), syntheticLongtail({ prl: true }));

after(() => rmSync(base, { recursive: true, force: true }));

type Reply = HttpReply;

function get(
  srv: RunningServer,
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  const port = new URL(srv.url).port;
  return httpExchange(port, path, { ...o, headers: { host: `127.0.0.1:${port}`, ...o.headers } });
}

/** An evaluator that waits until released, counting its calls. */
function gatedEvaluator(): {
  evaluate: NonNullable<ServeOptions['evaluatePreference']>;
  calls: string[];
  release(): void;
} {
  const calls: string[] = [];
  let gate!: () => void;
  let opened = new Promise<void>((r) => (gate = r));
  return {
    calls,
    evaluate: async (dir, r) => {
      calls.push(`${dir.endsWith('prl2') ? 'prl2' : 'prl'}:${r.weights.join(',')}`);
      await opened;
      return syntheticAccuracy([...r.weights]);
    },
    release: () => {
      gate();
      opened = Promise.resolve();
    },
  };
}

const tick = (ms = 30): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('a full queue answers 503 with Retry-After at once; identical requests share one evaluation', async () => {
  const g = gatedEvaluator();
  const srv = await startReportServer({
    runsDir,
    port: 0,
    evaluatePreference: g.evaluate,
    limits: { concurrency: 1, queue: 2, queueWaitMs: 10_000 },
  });
  try {
    const running = get(srv, '/api/runs/prl/preference?r=1,0,0');
    await tick();
    const queued = [
      get(srv, '/api/runs/prl/preference?r=0,1,0'),
      get(srv, '/api/runs/prl/preference?r=0,0,1'),
    ];
    // The same preference as one in flight: shared, no queue slot taken.
    const shared = [
      get(srv, '/api/runs/prl/preference?r=2,0,0'),
      get(srv, '/api/runs/prl/preference?r=1,0,0'),
    ];
    await tick();
    const t0 = performance.now();
    const refused = await get(srv, '/api/runs/prl/preference?r=1,1,0');
    assert.equal(refused.status, 503, refused.body);
    assert.ok(performance.now() - t0 < 500, 'refused at once, not after the queue');
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(
      (JSON.parse(refused.body) as { error: string }).error,
      /server busy: the evaluation queue of this run is full \(1 running, 2 waiting\)/,
    );
    // Another run has its own lane.
    const other = get(srv, '/api/runs/prl2/preference?r=1,1,1');
    // Pages are not held up by waiting evaluations.
    assert.equal((await get(srv, '/api/runs')).status, 200);
    g.release();
    const all = await Promise.all([running, ...queued, ...shared, other]);
    assert.deepEqual(
      all.map((r) => r.status),
      [200, 200, 200, 200, 200, 200],
    );
    assert.deepEqual(g.calls.sort(), [
      'prl2:0.3333333333333333,0.3333333333333333,0.3333333333333333',
      'prl:0,0,1',
      'prl:0,1,0',
      'prl:1,0,0',
    ]);
    const stats = srv.queueStats();
    assert.equal(stats.shared, 2);
    assert.equal(stats.refusedFull, 1);
    assert.equal(stats.running + stats.waiting, 0);
  } finally {
    g.release();
    await srv.close();
  }
});

test('an evaluation that waits past queueWaitMs is refused with 503', async () => {
  const g = gatedEvaluator();
  const srv = await startReportServer({
    runsDir,
    port: 0,
    evaluatePreference: g.evaluate,
    limits: { concurrency: 1, queue: 4, queueWaitMs: 150 },
  });
  try {
    const first = get(srv, '/api/runs/prl/preference?r=1,0,0');
    await tick();
    const t0 = performance.now();
    const late = await get(srv, '/api/runs/prl/preference?r=0,1,0');
    const waited = performance.now() - t0;
    assert.equal(late.status, 503);
    assert.match(late.body, /waited 150 ms in the queue/);
    assert.ok(waited >= 140 && waited < 1500, `${waited} ms`);
    g.release();
    assert.equal((await first).status, 200);
    // The refused one never ran, and the lane is free again.
    assert.equal((await get(srv, '/api/runs/prl/preference?r=0,0,1')).status, 200);
    assert.deepEqual(g.calls, ['prl:1,0,0', 'prl:0,0,1']);
  } finally {
    g.release();
    await srv.close();
  }
});

test('EvaluationQueue: a throwing evaluation frees its slot', async () => {
  const q = new EvaluationQueue({ concurrency: 1, queue: 1, queueWaitMs: 1000 });
  await assert.rejects(
    q.run('a', 'k1', () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  await assert.rejects(
    q.run('a', 'k2', () => Promise.reject(new Error('later'))),
    /later/,
  );
  assert.equal(await q.run('a', 'k3', () => Promise.resolve(3)), 3);
  assert.deepEqual(
    { ...q.stats(), started: 0 },
    { started: 0, shared: 0, refusedFull: 0, refusedWait: 0, abandoned: 0, running: 0, waiting: 0 },
  );
});

test('bodies: size and JSON depth are limited; slow bodies and headers time out without holding the server', async () => {
  const srv = await startReportServer({
    runsDir,
    port: 0,
    evaluatePreference: async (_d, r) => syntheticAccuracy([...r.weights]),
    limits: { bodyBytes: 1024, jsonDepth: 4, bodyTimeoutMs: 300, headersTimeoutMs: 300 },
  });
  const port = Number(new URL(srv.url).port);
  const post = (body: string, headers: Record<string, string> = {}) =>
    get(srv, '/api/runs/prl/preference', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
    });
  try {
    const big = await post(JSON.stringify({ preference: [1, 1, 1], pad: 'x'.repeat(2000) }));
    assert.equal(big.status, 413);
    assert.match(big.body, /larger than 1024 bytes/);
    // A client that sends its whole body before reading still gets the 413 (the rest of the body
    // is read and dropped, not reset under it); past DRAIN_BYTES the connection is closed at once.
    for (const bytes of [300_000, DRAIN_BYTES - 100]) {
      const body = `{"preference":[${'1,'.repeat(bytes / 2)}1]}`;
      const r = await rawExchange(
        port,
        Buffer.from(
          `POST /api/runs/prl/preference HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        ),
        5000,
      );
      assert.equal(r.status, 413, `${bytes} bytes: ${r.head}`);
    }
    const huge = await get(srv, '/api/runs/prl/preference', {
      method: 'POST',
      headers: { 'content-length': String(DRAIN_BYTES + 1) },
    });
    assert.equal(huge.status, 413);
    assert.equal(huge.headers.connection, 'close');
    // Chunked, so no Content-Length to refuse it by: cut off when the limit is passed.
    const chunked = await rawExchange(
      port,
      Buffer.from(
        `POST /api/runs/prl/preference HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ntransfer-encoding: chunked\r\n\r\n` +
          `800\r\n${'x'.repeat(0x800)}\r\n0\r\n\r\n`,
      ),
      3000,
    );
    assert.equal(chunked.status, 413);
    const deep = await post(`{"preference":${'['.repeat(5)}1${']'.repeat(5)}}`);
    assert.equal(deep.status, 400);
    assert.match(deep.body, /nests deeper than 4 levels/);
    assert.equal((await post('[1,1,1]')).status, 400, 'not an object');
    assert.equal((await post('{"preference":[1,1,1]}')).status, 200);
    assert.deepEqual(
      parseJsonBody('{"a":"[[[[[[[["}', 2),
      { a: '[[[[[[[[' },
      'brackets in strings do not count',
    );
    assert.throws(() => parseJsonBody('[[[1]]]', 2), /deeper than 2/);
    assert.deepEqual(parseJsonBody('{"a":"[[[[\\"[[[["}', 2), { a: '[[[["[[[[' });

    // A body that stalls: 408 after bodyTimeoutMs, and other clients are served meanwhile.
    const t0 = performance.now();
    const stalled = rawExchange(
      port,
      Buffer.from(
        `POST /api/runs/prl/preference HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-length: 100\r\n\r\n{"preference":`,
      ),
      5000,
    );
    const headers = rawExchange(
      port,
      Buffer.from(`GET / HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nx-slow: `),
      5000,
    );
    assert.equal((await get(srv, '/api/runs')).status, 200);
    const [b, h] = await Promise.all([stalled, headers]);
    assert.equal(b.status, 408, b.head);
    assert.match(b.body, /took longer than 300 ms/);
    assert.equal(h.status, 408, h.head);
    assert.ok(performance.now() - t0 < 3000);
  } finally {
    await srv.close();
  }
});

test('token mode: every request without the token is 401; with it the same pages; ?token= sets a cookie', async () => {
  const token = 'test-token-0123456789abcdef';
  const open = await startReportServer({
    runsDir,
    port: 0,
    evaluatePreference: async (_d, r) => syntheticAccuracy([...r.weights]),
  });
  const srv = await startReportServer({
    runsDir,
    port: 0,
    token,
    evaluatePreference: async (_d, r) => syntheticAccuracy([...r.weights]),
  });
  try {
    assert.equal(open.token, null, 'loopback: no token by default');
    assert.equal(srv.token, token);
    assert.equal(srv.link, `${srv.url}/?token=${token}`);
    const paths = [
      '/',
      '/api/runs',
      '/runs/prl/',
      '/runs/prl/files/notes.txt',
      '/api/runs/prl/preference?r=1,2,3',
      '/favicon.ico',
      '/nope',
    ];
    const cookie = `tailor_token_${new URL(srv.url).port}`;
    for (const path of paths) {
      for (const headers of [
        {},
        { authorization: 'Bearer wrong-token-0123456789' },
        { 'x-tailor-token': token.slice(0, -1) },
        { cookie: `${cookie}=nope` },
        { cookie: `tailor_token_1=${token}` },
      ] as Record<string, string>[]) {
        const r = await get(srv, path, { headers });
        assert.equal(r.status, 401, `${path} ${JSON.stringify(headers)}`);
        assert.equal(r.headers['www-authenticate'], 'Bearer realm="tailor"');
        assert.match(r.body, /token/);
      }
      const expected = await get(open, path);
      for (const headers of [
        { authorization: `Bearer ${token}` },
        { 'x-tailor-token': token },
        { cookie: `a=b; ${cookie}=${token}` },
      ] as Record<string, string>[]) {
        const r = await get(srv, path, { headers });
        assert.equal(r.status, expected.status, `${path} ${JSON.stringify(headers)}`);
        if (!path.includes('preference'))
          assert.equal(r.body.replaceAll(srv.url, ''), expected.body.replaceAll(open.url, ''));
      }
    }
    const link = await get(srv, `/runs/prl/?x=1&token=${token}`);
    assert.equal(link.status, 303);
    assert.equal(link.headers.location, '/runs/prl/?x=1', 'the token leaves the address bar');
    assert.deepEqual(link.headers['set-cookie'], [`${cookie}=${token}; Path=/; HttpOnly; SameSite=Strict`]);
    assert.equal((await get(srv, `/?token=${token}x`)).status, 401);
    const offsite = await get(srv, `//evil.example/x?token=${token}`);
    assert.equal(offsite.headers.location, '/evil.example/x', 'never a redirect to another site');
    assert.equal(
      (await get(srv, '/', { headers: { host: 'evil.example', authorization: `Bearer ${token}` } })).status,
      403,
      'Host is still checked',
    );
  } finally {
    await srv.close();
    await open.close();
  }
});

test('tokens: generated off loopback, checked for form, compared whole', async () => {
  for (const h of ['127.0.0.1', '127.3.2.1', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'])
    assert.ok(isLoopback(h), h);
  for (const h of ['0.0.0.0', '::', '192.168.1.5', '10.0.0.1', 'example.com', '128.0.0.1'])
    assert.ok(!isLoopback(h), h);
  assert.deepEqual(resolveToken('127.0.0.1', undefined), { token: null, generated: false });
  const made = resolveToken('0.0.0.0', null);
  assert.ok(made.generated);
  assert.match(made.token!, /^[A-Za-z0-9_-]{32}$/);
  assert.notEqual(resolveToken('0.0.0.0', '').token, made.token, 'a fresh token each start');
  assert.deepEqual(resolveToken('0.0.0.0', 'given-token-0123456789'), {
    token: 'given-token-0123456789',
    generated: false,
  });
  assert.throws(
    () => resolveToken('0.0.0.0', 'short'),
    (e: unknown) =>
      e instanceof ServeOptionError && e instanceof UserError && /16 to 256 characters/.test(e.message),
  );
  assert.throws(() => resolveToken('127.0.0.1', 'has spaces in it 0123456789'), ServeOptionError);
  assert.ok(sameToken('abc', 'abc'));
  assert.ok(!sameToken('abc', 'abd'));
  assert.ok(!sameToken('abc', 'abcd'));
  // Bound to every interface without a token: one is generated and required (asked here over loopback).
  const srv = await startReportServer({ runsDir, port: 0, host: '0.0.0.0' });
  try {
    assert.ok(srv.tokenGenerated && srv.token !== null);
    assert.ok(srv.link.endsWith(`/?token=${srv.token}`));
    assert.equal((await get(srv, '/api/runs')).status, 401);
    assert.equal(
      (await get(srv, '/api/runs', { headers: { authorization: `Bearer ${srv.token}` } })).status,
      200,
    );
  } finally {
    await srv.close();
  }
});

test('the preference endpoint refuses requests from other sites', async () => {
  const srv = await startReportServer({
    runsDir,
    port: 0,
    evaluatePreference: async (_d, r) => syntheticAccuracy([...r.weights]),
  });
  const host = `127.0.0.1:${new URL(srv.url).port}`;
  const body = JSON.stringify({ preference: [1, 1, 1] });
  const post = (headers: Record<string, string>) =>
    get(srv, '/api/runs/prl/preference', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
    });
  try {
    assert.equal((await post({ origin: `http://${host}`, 'sec-fetch-site': 'same-origin' })).status, 200);
    assert.equal((await post({})).status, 200, 'no browser headers: not a browser');
    for (const headers of [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { origin: `https://${host}` },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ] as Record<string, string>[]) {
      const r = await post(headers);
      assert.equal(r.status, 403, JSON.stringify(headers));
      assert.match(r.body, /refused/);
    }
    const cross = await get(srv, '/api/runs/prl/preference?r=1,0,0', {
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(cross.status, 403, 'a GET that runs the model too');
    assert.equal(
      (await get(srv, '/', { headers: { 'sec-fetch-site': 'cross-site' } })).status,
      200,
      'pages can be linked',
    );
    assert.throws(
      () => checkSameOrigin({ headers: { host: 'a:1', origin: 'http://b:1' } } as never),
      /another origin/,
    );
  } finally {
    await srv.close();
  }
});

test('tailor serve: --token is required to be well formed; --queue and --concurrency are checked', () => {
  const cli = join(repoRoot, 'dist/src/cli/main.js');
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [cli, 'serve', '--runs', runsDir, '--port', '0', ...args], {
      encoding: 'utf8',
      timeout: 20_000,
    });
  const short = run('--token', 'short');
  assert.equal(short.status, 2, short.stderr);
  assert.match(short.stderr, /^tailor: the serve token must be 16 to 256 characters/m);
  assert.doesNotMatch(short.stderr, /\n\s+at /, 'no stack trace');
  const queue = run('--queue', '-1');
  assert.equal(queue.status, 2);
  assert.match(queue.stderr, /--queue/);
  const conc = run('--concurrency', '0');
  assert.equal(conc.status, 2);
  assert.match(conc.stderr, /--concurrency/);
});

test('tailor serve with a token from the environment prints the link and asks for it', async () => {
  const { spawn } = await import('node:child_process');
  const token = 'env-token-0123456789abcdef';
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'dist/src/cli/main.js'), 'serve', '--runs', runsDir, '--port', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TAILOR_SERVE_TOKEN: token } },
  );
  try {
    const link = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /at (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+) /.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
      setTimeout(() => reject(new Error(`no link printed: ${out}`)), 10000);
    });
    assert.ok(link.endsWith(`?token=${token}`));
    const root = link.replace(/\?token=.*$/, '');
    assert.equal((await fetch(root + 'api/runs')).status, 401);
    const first = await fetch(link, { redirect: 'manual' });
    assert.equal(first.status, 303);
    const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
    const page = await fetch(root, { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /href="\/runs\/prl\/"/);
  } finally {
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  }
});

test('the evaluator thread passes errors back, reports its tensors, and starts again after close', async () => {
  const { WorkerEvaluator } = await import('../../src/report/serve/evaluator.js');
  const { Preference } = await import('../../src/longtail/index.js');
  const w = new WorkerEvaluator();
  try {
    assert.equal(await w.stats(), null, 'no thread before the first evaluation');
    await assert.rejects(w.evaluate(join(runsDir, 'prl'), Preference.of([1, 1, 1], 3)), /no checkpoint at/);
    const stats = await w.stats();
    assert.equal(typeof stats?.liveTensors, 'number');
    await w.close();
    assert.equal(await w.stats(), null);
    await assert.rejects(
      w.evaluate(join(runsDir, 'nope'), Preference.of([1, 1, 1], 3)),
      /no checkpoint at|no such|ENOENT/,
    );
  } finally {
    await w.close();
  }
});

test('connections past the limit are closed as they arrive; the server keeps serving', async () => {
  const { connect } = await import('node:net');
  const srv = await startReportServer({ runsDir, port: 0, limits: { connections: 2 } });
  const port = Number(new URL(srv.url).port);
  const open = () =>
    new Promise<import('node:net').Socket>((resolve, reject) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
      s.on('error', reject);
    });
  const held = [await open(), await open()];
  try {
    await tick(50);
    const extra = await open();
    // The server drops the third connection at once: it reads end-of-stream without sending anything.
    const closed = await new Promise<boolean>((resolve) => {
      extra.on('close', () => resolve(true));
      extra.on('error', () => resolve(true));
      setTimeout(() => resolve(false), 2000);
    });
    assert.ok(closed, 'the connection past the limit was not closed');
    for (const s of held) s.destroy();
    await tick(100);
    assert.equal((await get(srv, '/')).status, 200);
  } finally {
    for (const s of held) s.destroy();
    await srv.close();
  }
});

test('EvaluationQueue: a waiting evaluation whose clients all left is dropped; a running one finishes', async () => {
  const q = new EvaluationQueue({ concurrency: 1, queue: 4, queueWaitMs: 10_000 });
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const calls: string[] = [];
  const job = (name: string) => async () => {
    calls.push(name);
    await gate;
    return name;
  };
  const leftRunning = new AbortController();
  const running = q.run('run', 'a', job('a'), leftRunning.signal);
  const first = new AbortController();
  const second = new AbortController();
  const waiting = [q.run('run', 'b', job('b'), first.signal), q.run('run', 'b', job('b'), second.signal)];
  const kept = q.run('run', 'c', job('c'), new AbortController().signal);
  // One of b's two clients leaves: b still waits for the other.
  first.abort();
  assert.equal(q.stats().waiting, 2);
  second.abort();
  for (const w of waiting) await assert.rejects(w, /closed the connection while its evaluation waited/);
  assert.equal(q.stats().waiting, 1);
  // The running evaluation is not stopped by its client leaving.
  leftRunning.abort();
  open();
  assert.equal(await running, 'a');
  assert.equal(await kept, 'c');
  assert.deepEqual(calls, ['a', 'c']);
  assert.equal(q.stats().abandoned, 1);
});

test('a client that disconnects while its evaluation waits takes the evaluation with it', async () => {
  const g = gatedEvaluator();
  const srv = await startReportServer({
    runsDir,
    port: 0,
    evaluatePreference: g.evaluate,
    limits: { concurrency: 1, queue: 2, queueWaitMs: 10_000 },
  });
  const port = Number(new URL(srv.url).port);
  try {
    const running = get(srv, '/api/runs/prl/preference?r=1,0,0');
    await tick();
    const { connect } = await import('node:net');
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`GET /api/runs/prl/preference?r=0,1,0 HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`),
    );
    socket.on('error', () => undefined);
    await tick(100);
    assert.equal(srv.queueStats().waiting, 1);
    socket.destroy();
    await tick(100);
    assert.equal(srv.queueStats().waiting, 0);
    g.release();
    assert.equal((await running).status, 200);
    assert.deepEqual(g.calls, ['prl:1,0,0']);
    assert.equal(srv.queueStats().abandoned, 1);
  } finally {
    g.release();
    await srv.close();
  }
});
