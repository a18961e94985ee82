// Load and fuzz drivers for `tailor serve`, shared by its test (small, fixed seed) and the
// benchmark (npm run bench -- serve: 100 clients for 60 s, 10,000 fuzzed requests, a soak). They
// only ever connect to 127.0.0.1, and every run is bounded in requests and time.
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { Rng } from '../../src/util/rng.js';

/** An HTTP answer: status, body text and headers. */
export interface HttpReply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * One request to 127.0.0.1:`port` on a connection of its own (no agent), the path sent as given
 * (no client-side normalisation).
 */
export function httpExchange(
  port: number | string,
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: o.method ?? 'GET', agent: false, headers: o.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            headers: res.headers,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/** Latency and status counts of one route. */
export interface RouteStats {
  count: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  max: number;
}

export interface LoadReport {
  seconds: number;
  requests: number;
  statuses: Record<string, number>;
  /** Requests that got no answer (connection refused or reset). */
  networkErrors: number;
  routes: Record<string, RouteStats>;
}

export interface LoadOptions {
  /** The server's port on 127.0.0.1. */
  port: number;
  clients: number;
  seconds: number;
  /** A PRL run of the server (its id) and the number of its experts. */
  runId: string;
  experts: number;
  /** Files of that run to fetch as report assets (below /runs/<id>/files/). */
  assets: string[];
  token?: string;
  seed?: number;
  /** A pause of up to this many ms (uniform) between a client's answer and its next request. */
  thinkMs?: number;
}

/** Milliseconds of the q-quantile of sorted values (0 when empty). */
function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function summarise(samples: Map<string, { ms: number[]; statuses: Record<string, number> }>) {
  const routes: Record<string, RouteStats> = {};
  for (const [name, s] of [...samples].sort(([a], [b]) => a.localeCompare(b))) {
    const sorted = [...s.ms].sort((a, b) => a - b);
    routes[name] = {
      count: sorted.length,
      statuses: s.statuses,
      p50: round(quantile(sorted, 0.5)),
      p99: round(quantile(sorted, 0.99)),
      max: round(sorted.at(-1) ?? 0),
    };
  }
  return routes;
}

const round = (ms: number): number => Math.round(ms * 10) / 10;

const encodeId = (id: string): string => id.split('/').map(encodeURIComponent).join('/');

/**
 * `clients` concurrent clients, each sending its next request when the last is answered (after
 * a pause of up to `thinkMs`), for
 * `seconds`: page loads (the index and the run's report), report assets, the run list, and
 * preference evaluations (GET and POST; a third of them repeat a few points, so that identical
 * requests meet in flight).
 */
export async function runLoad(o: LoadOptions): Promise<LoadReport> {
  const rng = new Rng(o.seed ?? 1);
  const agent = new Agent({ keepAlive: true, maxSockets: o.clients });
  const samples = new Map<string, { ms: number[]; statuses: Record<string, number> }>();
  const statuses: Record<string, number> = {};
  let networkErrors = 0;
  const auth: Record<string, string> = o.token ? { authorization: `Bearer ${o.token}` } : {};
  const host = `127.0.0.1:${o.port}`;
  const runPath = encodeId(o.runId);
  const fixed = Array.from({ length: 4 }, () => rng.dirichlet(1, o.experts));
  const preference = (): number[] =>
    rng.uniform() < 0.33 ? fixed[rng.int(fixed.length)]! : rng.dirichlet(1, o.experts);
  const pick = (): { route: string; method: string; path: string; body?: string } => {
    const u = rng.uniform();
    if (u < 0.15) return { route: 'page /', method: 'GET', path: '/' };
    if (u < 0.35) return { route: 'page /runs/<id>/', method: 'GET', path: `/runs/${runPath}/` };
    if (u < 0.6) {
      const f = o.assets[rng.int(o.assets.length)]!;
      return { route: 'asset /runs/<id>/files/*', method: 'GET', path: `/runs/${runPath}/files/${f}` };
    }
    if (u < 0.7) return { route: 'api /api/runs', method: 'GET', path: '/api/runs' };
    const r = preference();
    if (u < 0.85)
      return {
        route: 'preference GET',
        method: 'GET',
        path: `/api/runs/${runPath}/preference?r=${r.map((v) => v.toFixed(4)).join(',')}`,
      };
    return {
      route: 'preference POST',
      method: 'POST',
      path: `/api/runs/${runPath}/preference`,
      body: JSON.stringify({ preference: r.map((v) => Number(v.toFixed(4))) }),
    };
  };
  const one = (q: ReturnType<typeof pick>): Promise<number> =>
    new Promise((resolvePromise) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: o.port,
          path: q.path,
          method: q.method,
          agent,
          headers: {
            host,
            ...auth,
            ...(q.body
              ? {
                  'content-type': 'application/json',
                  origin: `http://${host}`,
                  'sec-fetch-site': 'same-origin',
                }
              : {}),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolvePromise(res.statusCode ?? 0));
          res.on('error', () => resolvePromise(0));
        },
      );
      req.setTimeout(30_000, () => req.destroy());
      req.on('error', () => resolvePromise(0));
      req.end(q.body);
    });
  const started = performance.now();
  const end = started + o.seconds * 1000;
  const client = async (): Promise<void> => {
    while (performance.now() < end) {
      const q = pick();
      const t0 = performance.now();
      const status = await one(q);
      const ms = performance.now() - t0;
      if (status === 0) {
        networkErrors++;
        continue;
      }
      let s = samples.get(q.route);
      if (!s) samples.set(q.route, (s = { ms: [], statuses: {} }));
      s.ms.push(ms);
      s.statuses[status] = (s.statuses[status] ?? 0) + 1;
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (o.thinkMs) await new Promise((done) => setTimeout(done, rng.uniform() * o.thinkMs!));
    }
  };
  await Promise.all(Array.from({ length: o.clients }, client));
  agent.destroy();
  const routes = summarise(samples);
  return {
    seconds: round((performance.now() - started) / 1000),
    requests: Object.values(routes).reduce((a, r) => a + r.count, 0),
    statuses,
    networkErrors,
    routes,
  };
}

/** One raw exchange: the bytes as written, and what came back before the server closed. */
export interface RawReply {
  /** The status of the answer, 0 when none came. */
  status: number;
  head: string;
  body: string;
  /** The connection was still open at the deadline without a complete answer. */
  hung: boolean;
  /** The connection was reset or closed before any answer. */
  noAnswer: boolean;
  ms: number;
}

/**
 * Writes `bytes` to a fresh connection (all at once, or the first `stallAfter` bytes and then
 * nothing) and reads until the server closes it or `deadlineMs` passes. Every fuzzed request asks
 * for `Connection: close` (or is malformed, which closes it too), so the close ends the answer.
 */
export function rawExchange(
  port: number,
  bytes: Buffer,
  deadlineMs: number,
  stallAfter?: number,
): Promise<RawReply> {
  return new Promise((resolvePromise) => {
    const t0 = performance.now();
    const chunks: Buffer[] = [];
    let settled = false;
    const socket = connect({ host: '127.0.0.1', port });
    const finish = (hung: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const all = Buffer.concat(chunks).toString('latin1');
      const split = all.indexOf('\r\n\r\n');
      const head = split >= 0 ? all.slice(0, split) : all;
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(all);
      const status = m ? Number(m[1]) : 0;
      resolvePromise({
        status,
        head,
        body: split >= 0 ? all.slice(split + 4) : '',
        hung: hung && status === 0,
        noAnswer: !hung && status === 0,
        ms: performance.now() - t0,
      });
    };
    const timer = setTimeout(() => finish(true), deadlineMs);
    socket.on('connect', () =>
      socket.write(stallAfter === undefined ? bytes : bytes.subarray(0, stallAfter)),
    );
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => finish(false));
    socket.on('error', () => {
      /* reported by close */
    });
  });
}

export interface FuzzCase {
  kind: string;
  bytes: Buffer;
  /** Send only this many bytes, then stall (a slow client). */
  stallAfter?: number;
  /** The case is well-formed and may be answered 2xx or 3xx. */
  mayPass: boolean;
}

const METHODS = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'OPTIONS',
  'TRACE',
  'PROPFIND',
  'get',
  'G ET',
  'X'.repeat(40),
  '',
];

const TRAVERSALS = [
  '../',
  '..%2f',
  '%2e%2e/',
  '%2E%2E%2F',
  '%252e%252e%252f',
  '..%5c',
  '..\\',
  '%c0%ae%c0%ae/',
  '.%2e/',
  '%00',
  '%',
  '%zz',
  '%e0%80',
  '//',
  '/etc/passwd',
  '%2fetc%2fpasswd',
  '~/',
  ';/',
  '?token=x',
  '#frag',
];

/**
 * A fuzzed request of the seeded generator: methods, paths with encodings and traversal, headers
 * (missing, duplicated, oversized, malformed), bodies (oversized, malformed, deep, truncated) and
 * preference vectors (NaN, negatives, infinities, wrong length, not numbers).
 */
export function fuzzCase(
  rng: Rng,
  o: { port: number; runId: string; experts: number; token?: string },
): FuzzCase {
  const host = `127.0.0.1:${o.port}`;
  const run = encodeId(o.runId);
  const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;
  const bases = [
    '/',
    '/api/runs',
    `/runs/${run}/`,
    `/runs/${run}/files/results.json`,
    `/api/runs/${run}/preference`,
    '/runs/',
    '/api/',
    '/favicon.ico',
    `/runs/${run}/files/`,
  ];
  const traversal = (): string => {
    let p = pick(bases);
    const n = 1 + rng.int(4);
    for (let i = 0; i < n; i++) p += pick(TRAVERSALS);
    return p + pick(['secret.txt', 'outside/secret.txt', 'results.json', '', 'etc/passwd']);
  };
  const auth = o.token ? `authorization: Bearer ${o.token}\r\n` : '';
  const build = (method: string, path: string, headers: string, body = '', version = 'HTTP/1.1'): Buffer =>
    Buffer.from(
      `${method} ${path} ${version}\r\n${headers}${auth}connection: close\r\n\r\n${body}`,
      'latin1',
    );
  const hostH = `host: ${host}\r\n`;
  const json = (v: string): string =>
    `${hostH}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(v, 'latin1')}\r\n`;
  const prefBody = (): string => {
    const wrong = [
      'NaN',
      '-1',
      '1e999',
      '-1e999',
      'null',
      '"1"',
      '[]',
      '{}',
      'true',
      '0',
      '1e-400',
      '"a,b,c"',
      '"NaN,1,1"',
      '"1,1,1,1"',
    ];
    const n = pick([0, 1, 2, o.experts, o.experts + 1, 50]);
    const items = Array.from({ length: n }, () =>
      rng.uniform() < 0.4 ? pick(wrong) : String(rng.uniform()),
    );
    return pick([
      `{"preference":[${items.join(',')}]}`,
      `{"r":[${items.join(',')}]}`,
      `{"r":"${items.join(',')}"}`,
      `[${items.join(',')}]`,
      `{"preference":${'['.repeat(2 + rng.int(2000))}1${']'.repeat(rng.int(2000))}}`,
      `{"preference":[1,1,1]`,
      `{"preference":"${'9'.repeat(rng.int(20000))}"}`,
      '\u00ff\u00fe\u0000garbage',
      '',
    ]);
  };
  const u = rng.uniform();
  if (u < 0.2) {
    const method = pick(METHODS);
    return {
      kind: 'method',
      bytes: build(method, pick(bases), hostH),
      mayPass: method === 'GET' || method === 'HEAD',
    };
  }
  if (u < 0.45)
    return { kind: 'path', bytes: build(pick(['GET', 'HEAD', 'POST']), traversal(), hostH), mayPass: true };
  if (u < 0.55) {
    const qs = Array.from({ length: 1 + rng.int(3) }, () =>
      pick([
        'r=NaN,1,1',
        'r=-1,0,0',
        'r=1,1',
        'r=1e999,0,0',
        'r=',
        'r=%ff%fe',
        'r=1,1,1,1,1',
        'r=0,0,0',
        `r=${'1,'.repeat(5000)}1`,
        'token=wrong',
        'r=1;1;1',
        'r=0x1,0,0',
      ]),
    ).join('&');
    return { kind: 'query', bytes: build('GET', `/api/runs/${run}/preference?${qs}`, hostH), mayPass: true };
  }
  if (u < 0.75) {
    const b = prefBody();
    return { kind: 'body', bytes: build('POST', `/api/runs/${run}/preference`, json(b), b), mayPass: true };
  }
  if (u < 0.87) {
    const which = rng.int(12);
    const headerCases: [string, boolean][] = [
      ['', false], // no Host
      [`host: evil.example\r\n`, false],
      [`${hostH}host: other\r\n`, false],
      [`${hostH}x-big: ${'a'.repeat(20000 + rng.int(20000))}\r\n`, false],
      [`${hostH}${Array.from({ length: 300 }, (_, i) => `x-h${i}: ${i}\r\n`).join('')}`, true],
      [`${hostH}x-bad: a\u0000b\r\n`, false],
      [`${hostH}content-length: abc\r\n`, false],
      [`${hostH}content-length: 5\r\ncontent-length: 7\r\n`, false],
      [`${hostH}transfer-encoding: chunked\r\ncontent-length: 3\r\n`, false],
      [`${hostH}origin: http://evil.example\r\nsec-fetch-site: cross-site\r\n`, true],
      [`${hostH}cookie: tailor_token_${o.port}=wrong; a=b\r\n`, true],
      [`${hostH}authorization: Bearer ${'x'.repeat(rng.int(100))}\r\n`, true],
    ];
    const [h, pass] = headerCases[which]!;
    const path = pick(bases);
    return { kind: 'header', bytes: build('GET', path, h), mayPass: pass && !path.includes('preference') };
  }
  if (u < 0.95) {
    const declared = pick([20_000, 100_000, 1_000_000]);
    const big = `{"preference":[${'1,'.repeat(Math.floor(declared / 2))}1]}`;
    const chunked = rng.uniform() < 0.5;
    const bytes = chunked
      ? build(
          'POST',
          `/api/runs/${run}/preference`,
          `${hostH}transfer-encoding: chunked\r\n`,
          `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`,
        )
      : build('POST', `/api/runs/${run}/preference`, json(big), big);
    return { kind: 'oversized', bytes, mayPass: false };
  }
  if (u < 0.985) {
    const garbage = [
      'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
      'GET /\r\n\r\n',
      '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003',
      `GET / HTTP/9.9\r\n${hostH}\r\n`,
      `GET /${'a'.repeat(70000)} HTTP/1.1\r\n${hostH}\r\n`,
      `GET / HTTP/1.1\n${hostH.replace('\r\n', '\n')}\n`,
      Array.from({ length: 1 + rng.int(200) }, () => String.fromCharCode(rng.int(256))).join(''),
      `POST /api/runs/${run}/preference HTTP/1.1\r\n${hostH}transfer-encoding: chunked\r\nconnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${hostH}\r\n`,
    ];
    return { kind: 'protocol', bytes: Buffer.from(pick(garbage), 'latin1'), mayPass: false };
  }
  // Slow clients: headers that never end, or a body shorter than its length.
  if (rng.uniform() < 0.5) {
    const bytes = build('GET', '/', hostH);
    return { kind: 'stalled headers', bytes, stallAfter: 20, mayPass: false };
  }
  const b = '{"preference":[1,1,1]}';
  const bytes = build(
    'POST',
    `/api/runs/${run}/preference`,
    `${hostH}content-type: application/json\r\ncontent-length: 1000\r\n`,
    b,
  );
  return { kind: 'stalled body', bytes, mayPass: false };
}

export interface FuzzReport {
  requests: number;
  seconds: number;
  statuses: Record<string, number>;
  kinds: Record<string, number>;
  hangs: number;
  /** Connections closed without an answer. */
  noAnswer: number;
  /** Answers that broke a rule (a 5xx other than 503, an error without a message, the secret). */
  violations: string[];
}

/**
 * `count` fuzzed requests from seed, `concurrency` at a time. An answer breaks a rule when it is a
 * 5xx other than a 503 with Retry-After, a 2xx/3xx to a request that is not well-formed, an error
 * without a text or JSON message, or a body holding `secret` (a file outside the runs directory).
 */
export async function runFuzz(o: {
  port: number;
  runId: string;
  experts: number;
  count: number;
  seed: number;
  concurrency: number;
  secret: string;
  deadlineMs: number;
  token?: string;
}): Promise<FuzzReport> {
  const rng = new Rng(o.seed);
  const cases = Array.from({ length: o.count }, () => fuzzCase(rng, o));
  const statuses: Record<string, number> = {};
  const kinds: Record<string, number> = {};
  const violations: string[] = [];
  let hangs = 0;
  let noAnswer = 0;
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < cases.length) {
      const c = cases[next++]!;
      kinds[c.kind] = (kinds[c.kind] ?? 0) + 1;
      const r = await rawExchange(o.port, c.bytes, o.deadlineMs, c.stallAfter);
      const label = JSON.stringify(c.bytes.subarray(0, 120).toString('latin1'));
      if (r.hung) {
        hangs++;
        violations.push(`${c.kind}: no answer in ${o.deadlineMs} ms: ${label}`);
        continue;
      }
      if (r.noAnswer) {
        noAnswer++;
        violations.push(`${c.kind}: closed without an answer: ${label}`);
        continue;
      }
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      const fail = (why: string): void => void violations.push(`${c.kind}: ${r.status} ${why}: ${label}`);
      if (r.body.includes(o.secret) || r.head.includes(o.secret))
        fail('served a file outside the runs directory');
      if (r.status >= 500 && !(r.status === 503 && /retry-after:/i.test(r.head))) fail('server error');
      else if (r.status < 400 && !c.mayPass) fail('accepted a malformed request');
      else if (r.status === 200 && /^\S+ \/api\/runs\/.*\/preference/.test(label.slice(1))) {
        // An evaluation was run: only ever at a point of the simplex.
        const p = (JSON.parse(r.body) as { preference?: unknown }).preference;
        const ok =
          Array.isArray(p) &&
          p.length === o.experts &&
          p.every((v) => typeof v === 'number' && Number.isFinite(v) && v >= 0) &&
          Math.abs((p as number[]).reduce((a, v) => a + v, 0) - 1) < 1e-9;
        if (!ok) fail(`evaluated at ${JSON.stringify(p)}`);
      } else if (r.status >= 400) {
        const isHead = c.bytes.subarray(0, 5).toString('latin1') === 'HEAD ';
        if (!/content-type: (application\/json|text\/(plain|html))/i.test(r.head))
          fail('error without a text or JSON type');
        else if (!isHead && r.body.trim() === '') fail('error without a message');
        if (/\n\s+at .+:\d+:\d+/.test(r.body)) fail('stack trace in the answer');
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  return {
    requests: cases.length,
    seconds: round((performance.now() - started) / 1000),
    statuses,
    kinds,
    hangs,
    noAnswer,
    violations,
  };
}
