// The responses of `tailor serve`: JSON for the API, small pages for browsers, and one error
// type whose status and message reach the client (anything else is a 500 logged with its stack).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { escapeHtml } from '../html.js';
import { reportCsp } from '../assets.js';

/** An error answered with its status and message; it is the client's doing, so no stack is logged. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra response headers (Retry-After on a 503, WWW-Authenticate on a 401). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

// Pages inline their styles and the report's own scripts (allowed by hash, never any other
// inline script); nothing else may load, fetch goes only back here, and no site may frame them.
// The report's code is read once per process, so its hashes are computed once.
let cachedCsp: string | undefined;
export const csp = (): string => (cachedCsp ??= `${reportCsp()}; frame-ancestors 'none'`);

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(text);
}

export function sendHtml(
  res: ServerResponse,
  status: number,
  html: string,
  head: boolean,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'cache-control': 'no-store',
    'content-security-policy': csp(),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    ...headers,
  });
  res.end(head ? undefined : html);
}

/**
 * An error as JSON (API paths) or a small page. Errors that are not HttpErrors are bugs: they
 * are logged with their stack and answered 500. When the request body was not read to its end
 * the connection is closed after the answer, so the unread bytes are not taken for a request.
 */
export function sendError(
  log: (line: string) => void,
  req: IncomingMessage,
  res: ServerResponse,
  error: unknown,
): void {
  const known = error instanceof HttpError;
  const status = known ? error.status : 500;
  if (!known) log(`error: ${(error as Error | undefined)?.stack ?? String(error)}`);
  if (res.headersSent || res.destroyed) return void res.end();
  const message = error instanceof Error ? error.message : String(error);
  const headers: Record<string, string> = { ...(known ? error.headers : {}) };
  if (!req.complete) headers.connection = 'close';
  if ((req.url ?? '').startsWith('/api/')) sendJson(res, status, { error: message }, headers);
  else
    sendHtml(
      res,
      status,
      `<!doctype html><title>${status}</title><h1>${status}</h1><p>${escapeHtml(message)}</p>`,
      req.method === 'HEAD',
      headers,
    );
}

/**
 * Answers what never reaches a request handler with a short text and closes the connection:
 * a malformed request line or header (400), headers too large (431) or too slow (408), CONNECT
 * (405; without a listener Node would drop the connection without a word).
 */
export function answerMalformedRequests(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') return void socket.destroy();
    const [status, text] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout']
          : [400, 'Bad Request'];
    const body = `${status} ${text}: ${error.code ?? 'malformed request'}\n`;
    socket.end(
      `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    const body = 'CONNECT is not allowed\n';
    socket.end(
      `HTTP/1.1 405 Method Not Allowed\r\ncontent-type: text/plain; charset=utf-8\r\n` +
        `content-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}
