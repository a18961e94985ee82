// `tailor serve`: a read-only local web app over a runs directory. It lists the runs, renders
// each run's report live, serves files inside run directories, and answers one query endpoint
// (the accuracy of a PRL run at a preference). Every path is decoded segment by segment and
// checked, so no file outside the runs directory can be reached (no `..`, no encoded slashes,
// no symbolic links leading out).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createReadStream, realpathSync, statSync } from 'node:fs';
import { extname, join, sep } from 'node:path';
import type { AddressInfo } from 'node:net';
import { escapeHtml } from './html.js';
import { reportCsp } from './assets.js';
import { readResults, renderRunReport } from './index.js';
import { isPrlResults, prlExperts } from './longtail.js';
import { listRuns, type RunEntry } from './runs.js';
import type { PreferenceAnswer } from './types.js';
import {
  Preference,
  PreferenceError,
  PreferenceTextError,
  evaluatePreference as evaluateRunPreference,
  parsePreferenceText,
} from '../longtail/index.js';

export type EvaluatePreference = (runDir: string, preference: Preference) => Promise<PreferenceAnswer>;

export interface ServeOptions {
  runsDir: string;
  port?: number;
  host?: string;
  /** The evaluator of the preference endpoint; by default the run's PRL model (src/longtail/workflows/preference.ts). */
  evaluatePreference?: EvaluatePreference;
  log?: (line: string) => void;
}

export interface RunningServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.jsonl': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.jpg': 'image/jpeg',
};

// Pages inline their styles and the report's own scripts (allowed by hash, never any other
// inline script); nothing else may load, fetch goes only back here, and no site may frame them.
const csp = (): string => `${reportCsp()}; frame-ancestors 'none'`;

/** Decoded path segments; rejects traversal and encoded separators (403) and bad escapes (400). */
export function safeSegments(rawPath: string): string[] {
  if (!rawPath.startsWith('/')) throw new HttpError(400, 'the request path must start with /');
  const segments = rawPath.slice(1).split('/');
  return segments.map((s, i) => {
    let d: string;
    try {
      d = decodeURIComponent(s);
    } catch {
      throw new HttpError(400, `bad percent-encoding in path segment ${i + 1}`);
    }
    if (d === '..' || d === '.' || d.includes('/') || d.includes('\\') || d.includes('\0'))
      throw new HttpError(403, 'path traversal is not allowed');
    return d;
  });
}

/** True when real path p is root or inside it. */
function inside(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(text);
}

function sendHtml(res: ServerResponse, status: number, html: string, head: boolean): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': csp(),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
  });
  res.end(head ? undefined : html);
}

function indexPage(runs: RunEntry[], runsDir: string): string {
  const rows = runs
    .map(
      (r) =>
        `<tr><td><a href="/runs/${r.id.split('/').map(encodeURIComponent).join('/')}/">${escapeHtml(r.id)}</a></td><td>${escapeHtml(r.kind ?? 'unknown')}</td><td>${escapeHtml(r.error ?? r.title)}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>tailor runs</title>
<style>body{font:14px system-ui,sans-serif;margin:20px auto;max-width:1000px} table{border-collapse:collapse} td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}</style></head>
<body data-ready="true"><h1>Runs in ${escapeHtml(runsDir)}</h1>
${runs.length ? `<table id="runs"><thead><tr><th>run</th><th>kind</th><th>summary</th></tr></thead><tbody>${rows}</tbody></table>` : '<p>No run directories (folders with a results.json) here yet.</p>'}
</body></html>`;
}

/**
 * A preference from `r=a,b,c`, or the array (or text) of a JSON body {"preference": [...]}, checked
 * and normalised to the simplex (Preference.of) for a run of `experts` experts (null: unknown).
 */
export function parsePreference(
  given: string | readonly unknown[] | null,
  experts: number | null,
): Preference {
  if (given === null || (typeof given === 'string' && given.trim() === ''))
    throw new HttpError(400, 'give the preference as ?r=a,b,c (one non-negative weight per expert)');
  try {
    return Preference.of(typeof given === 'string' ? parsePreferenceText(given) : given, experts);
  } catch (error) {
    if (error instanceof PreferenceTextError || error instanceof PreferenceError)
      throw new HttpError(400, `r ${error.message}`);
    throw error;
  }
}

function readBody(req: IncomingMessage, limit = 16 * 1024): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new HttpError(413, 'request body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolvePromise(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** What every request of one server shares: its options, the runs' real root, the run list, the queue. */
interface ServerContext {
  o: ServeOptions;
  root: string;
  log: (line: string) => void;
  /** The runs under the root (listed again after 2 s). */
  runs(): RunEntry[];
  /** Runs f after the evaluations queued before it: one at a time, as the evaluator drives the tensor engine. */
  serialized<T>(f: () => Promise<T>): Promise<T>;
}

export function createReportServer(o: ServeOptions): Server {
  const ctx = serverContext(o);
  return createServer((req, res) => {
    handle(ctx, req, res).catch((error: unknown) => sendError(ctx, req, res, error));
  });
}

function serverContext(o: ServeOptions): ServerContext {
  const root = realpathSync(o.runsDir);
  let cache: { at: number; runs: RunEntry[] } | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  return {
    o,
    root,
    log: o.log ?? (() => {}),
    runs: () => {
      if (!cache || Date.now() - cache.at > 2000) cache = { at: Date.now(), runs: listRuns(root) };
      return cache.runs;
    },
    serialized: <T>(f: () => Promise<T>): Promise<T> => {
      const next = queue.then(f, f);
      queue = next.catch(() => undefined);
      return next;
    },
  };
}

/** The Host header names this server (no DNS rebinding), unless it listens on every interface. */
function hostAllowed(o: ServeOptions, req: IncomingMessage): boolean {
  if (o.host === '0.0.0.0' || o.host === '::') return true;
  const allowedHosts = new Set(['localhost', '127.0.0.1', '[::1]', o.host ?? '127.0.0.1']);
  const h = req.headers.host;
  if (!h) return false;
  const name = h.startsWith('[') ? h.slice(0, h.indexOf(']') + 1) : h.split(':')[0]!;
  return allowedHosts.has(name.toLowerCase());
}

/** The run whose id is the longest prefix of the segments, and the segments after it. */
function findRun(ctx: ServerContext, segments: string[]): { run: RunEntry; rest: string[] } {
  const list = ctx.runs();
  for (let n = segments.length; n >= 1; n--) {
    const id = segments.slice(0, n).join('/');
    const run = list.find((r) => r.id === id);
    if (run) return { run, rest: segments.slice(n) };
  }
  throw new HttpError(404, 'no such run');
}

function serveFile(
  ctx: ServerContext,
  res: ServerResponse,
  run: RunEntry,
  rel: string[],
  head: boolean,
): void {
  if (rel.length === 0 || rel.some((s) => s === '')) throw new HttpError(403, 'bad file path');
  let real: string;
  try {
    real = realpathSync(join(run.dir, ...rel));
  } catch {
    throw new HttpError(404, 'no such file');
  }
  // The real path must stay inside both the run and the runs root (symbolic links included).
  const runReal = realpathSync(run.dir);
  if (!inside(ctx.root, real) || !inside(runReal, real))
    throw new HttpError(403, 'outside the runs directory');
  const st = statSync(real);
  if (!st.isFile()) throw new HttpError(404, 'not a file');
  const type = CONTENT_TYPES[extname(real).toLowerCase()] ?? 'application/octet-stream';
  const headers: Record<string, string | number> = {
    'content-type': type,
    'content-length': st.size,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
  if (type.startsWith('text/html')) headers['content-security-policy'] = csp();
  res.writeHead(200, headers);
  if (head) res.end();
  else createReadStream(real).pipe(res);
}

/** The preference endpoint: the run's PRL model evaluated at ?r=a,b,c (or a POSTed preference). */
async function answerPreference(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  run: RunEntry,
  query: URLSearchParams,
): Promise<void> {
  const started = performance.now();
  let results: Record<string, unknown>;
  try {
    results = readResults(run.dir) as Record<string, unknown>;
  } catch (error) {
    throw new HttpError(500, (error as Error).message);
  }
  if (!isPrlResults(results)) {
    throw new HttpError(
      501,
      `run ${run.id} is not a PRL run: only PRL checkpoints can be evaluated at a preference`,
    );
  }
  const experts = prlExperts(results);
  let given: string | unknown[] | null = query.get('r');
  if (req.method === 'POST' && given === null) {
    const body = await readBody(req);
    try {
      const parsed = JSON.parse(body) as { preference?: unknown; r?: unknown };
      const v = parsed.preference ?? parsed.r;
      given = Array.isArray(v) || typeof v === 'string' ? v : null;
    } catch {
      throw new HttpError(400, 'the POST body must be JSON {"preference": [a, b, c]} (or pass ?r=a,b,c)');
    }
  }
  const r = parsePreference(given, experts);
  const evaluate = ctx.o.evaluatePreference ?? evaluateRunPreference;
  let answer: PreferenceAnswer;
  try {
    answer = await ctx.serialized(() => evaluate(run.dir, r));
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(500, `evaluation failed: ${(error as Error).message}`);
  }
  const seconds = (performance.now() - started) / 1000;
  ctx.log(`preference ${run.id} r=${r.weights.map((v) => v.toFixed(3)).join(',')} ${seconds.toFixed(3)} s`);
  sendJson(res, 200, {
    run: run.id,
    preference: r.weights,
    many: answer.many,
    medium: answer.medium,
    few: answer.few,
    top1: answer.top1,
    distributions: answer.distributions,
    seconds,
  });
}

async function handle(ctx: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!hostAllowed(ctx.o, req)) throw new HttpError(403, 'unexpected Host header');
  const rawUrl = req.url ?? '/';
  const q = rawUrl.indexOf('?');
  const rawPath = q >= 0 ? rawUrl.slice(0, q) : rawUrl;
  const query = new URLSearchParams(q >= 0 ? rawUrl.slice(q + 1) : '');
  const segments = safeSegments(rawPath);
  const method = req.method ?? 'GET';
  const head = method === 'HEAD';
  const isPreference =
    segments[0] === 'api' &&
    segments[1] === 'runs' &&
    segments.length >= 4 &&
    segments[segments.length - 1] === 'preference';
  if (method === 'POST' && !isPreference)
    throw new HttpError(405, 'read-only server: the only POST endpoint is /api/runs/<id>/preference');
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST')
    throw new HttpError(405, `method ${method} is not allowed`);

  if (segments.length === 1 && segments[0] === '')
    return sendHtml(res, 200, indexPage(ctx.runs(), ctx.o.runsDir), head);
  if (segments.length === 1 && segments[0] === 'favicon.ico') {
    res.writeHead(204, { 'cache-control': 'max-age=86400' });
    return void res.end();
  }
  if (segments[0] === 'api' && segments[1] === 'runs' && segments.length === 2) {
    return sendJson(
      res,
      200,
      ctx.runs().map((r) => ({
        id: r.id,
        kind: r.kind,
        title: r.title,
        ...(r.error ? { error: r.error } : {}),
      })),
    );
  }
  if (isPreference) {
    const { run, rest } = findRun(ctx, segments.slice(2, -1));
    if (rest.length > 0) throw new HttpError(404, 'no such run');
    return answerPreference(ctx, req, res, run, query);
  }
  if (segments[0] === 'runs' && segments.length >= 2) {
    const { run, rest } = findRun(ctx, segments.slice(1));
    if (rest.length === 0) {
      res.writeHead(301, { location: rawPath + '/' });
      return void res.end();
    }
    if (rest.length === 1 && (rest[0] === '' || rest[0] === 'report.html'))
      return sendRunPage(res, run, head);
    if (rest[0] === 'files') return serveFile(ctx, res, run, rest.slice(1), head);
  }
  throw new HttpError(404, 'not found');
}

/** A run's report, rendered live; a PRL run of 3 experts gets the live preference control. */
function sendRunPage(res: ServerResponse, run: RunEntry, head: boolean): void {
  let html: string;
  try {
    const endpoint = '/api/runs/' + run.id.split('/').map(encodeURIComponent).join('/') + '/preference';
    const results = readResults(run.dir) as Record<string, unknown>;
    const live = isPrlResults(results) && prlExperts(results) === 3;
    html = renderRunReport(run.dir, live ? { endpoint } : undefined);
  } catch (error) {
    throw new HttpError(500, (error as Error).message);
  }
  sendHtml(res, 200, html, head);
}

/** An error as JSON (API paths) or a small page; unexpected ones are logged with their stack. */
function sendError(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, error: unknown): void {
  const status = error instanceof HttpError ? error.status : 500;
  if (!(error instanceof HttpError)) ctx.log(`error: ${(error as Error).stack ?? String(error)}`);
  if (res.headersSent) return void res.end();
  const message = error instanceof Error ? error.message : String(error);
  if ((req.url ?? '').startsWith('/api/')) sendJson(res, status, { error: message });
  else
    sendHtml(
      res,
      status,
      `<!doctype html><title>${status}</title><h1>${status}</h1><p>${escapeHtml(message)}</p>`,
      req.method === 'HEAD',
    );
}

export function startReportServer(o: ServeOptions): Promise<RunningServer> {
  const server = createReportServer(o);
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => {
      const addr = server.address() as AddressInfo;
      const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolvePromise({
        server,
        url: `http://${host}:${addr.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
