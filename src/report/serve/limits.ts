// The bounds of `tailor serve`: how many evaluations run and wait, how large and how deeply
// nested a request body may be, and how long a client may take to send its headers and body. A
// slow or stalled client is cut off by these timeouts before it reaches the evaluation queue (the
// body is read in full first), so it never holds an evaluation slot.
import type { IncomingMessage, Server } from 'node:http';
import { HttpError } from './http.js';

export interface ServeLimits {
  /** Evaluations of one run that run at once (default 1: the model drives the tensor engine). */
  concurrency: number;
  /** Evaluations of one run that may wait behind the running ones; past it the answer is 503 at once. */
  queue: number;
  /** The longest an evaluation waits in the queue before it is refused with 503, in ms. */
  queueWaitMs: number;
  /** The largest request body, in bytes (413 past it). */
  bodyBytes: number;
  /** The deepest nesting of arrays and objects in a JSON body (400 past it). */
  jsonDepth: number;
  /** Time to receive the request headers, in ms (408 past it). */
  headersTimeoutMs: number;
  /** Time to receive the request body once the headers are in, in ms (408 past it). */
  bodyTimeoutMs: number;
  /** A connection with no traffic for this long (a client that stopped reading, or idles) is closed, in ms. */
  idleTimeoutMs: number;
  /** Open connections at once; a connection past it is closed as it arrives (each holds a socket and buffers). */
  connections: number;
}

export const DEFAULT_LIMITS: ServeLimits = {
  concurrency: 1,
  queue: 8,
  queueWaitMs: 1500,
  bodyBytes: 16 * 1024,
  jsonDepth: 8,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
  connections: 512,
};

/** The defaults with the given values over them; every value must be a positive integer (queue may be 0). */
export function resolveLimits(given: Partial<ServeLimits> = {}): ServeLimits {
  const limits = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(given) as [keyof ServeLimits, number | undefined][]) {
    if (v === undefined) continue;
    const min = k === 'queue' ? 0 : 1;
    if (!Number.isInteger(v) || v < min)
      throw new RangeError(`serve limit ${k} must be an integer >= ${min}, got ${String(v)}`);
    limits[k] = v;
  }
  return limits;
}

/**
 * Node's own timeouts: headers, the whole request, and idle connections. Node checks the first
 * two on an interval, so it is set well below them (the default of 30 s would let a stalled
 * client hold its connection that long).
 */
export function serverTimeouts(limits: ServeLimits): {
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
  keepAliveTimeout: number;
  requireHostHeader: boolean;
} {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.headersTimeoutMs + limits.bodyTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    keepAliveTimeout: Math.min(5000, limits.idleTimeoutMs),
    // The handler answers a missing Host with a message (Node's own 400 has no body).
    requireHostHeader: false,
  };
}

/**
 * Applies the idle timeout (a socket without traffic for that long is destroyed) and the bound on
 * open connections (Node closes one past it as it arrives), so idle or stalled clients cannot
 * exhaust the process's file descriptors.
 */
export function applyIdleTimeout(server: Server, limits: ServeLimits): void {
  server.setTimeout(limits.idleTimeoutMs, (socket) => socket.destroy());
  server.maxConnections = limits.connections;
}

/**
 * How much of a body past the limit is still read (and thrown away) before the 413 goes out. A
 * client usually sends its whole body before it reads the answer; were the connection closed
 * under it, its system would reset the connection and drop the 413 unread. Past this much, or
 * the body timeout, the connection is closed all the same.
 */
export const DRAIN_BYTES = 2 * 1024 * 1024;

/** The request body as text: 413 past limits.bodyBytes, 408 when it takes longer than limits.bodyTimeoutMs. */
export function readBody(req: IncomingMessage, limits: ServeLimits): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > DRAIN_BYTES) return Promise.reject(tooLarge(limits));
  return new Promise((resolvePromise, reject) => {
    let size = 0;
    let done = false;
    const chunks: Buffer[] = [];
    const finish = (error: Error | null, text?: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.off('data', onData);
      if (error) {
        // Stop reading: unless the body was read to its end, the answer goes out with
        // Connection: close (sendError).
        req.pause();
        reject(error);
      } else resolvePromise(text!);
    };
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > DRAIN_BYTES) finish(tooLarge(limits));
      else if (size <= limits.bodyBytes) chunks.push(c);
    };
    const timer = setTimeout(
      () =>
        finish(
          size > limits.bodyBytes
            ? tooLarge(limits)
            : new HttpError(408, `the request body took longer than ${limits.bodyTimeoutMs} ms`),
        ),
      limits.bodyTimeoutMs,
    );
    req.on('data', onData);
    req.on('end', () =>
      finish(size > limits.bodyBytes ? tooLarge(limits) : null, Buffer.concat(chunks).toString('utf8')),
    );
    req.on('error', () => finish(new HttpError(400, 'the request body could not be read')));
    req.on('close', () => finish(new HttpError(400, 'the client closed the connection')));
  });
}

function tooLarge(limits: ServeLimits): HttpError {
  return new HttpError(413, `the request body is larger than ${limits.bodyBytes} bytes`);
}

/** JSON.parse, after checking that arrays and objects nest at most maxDepth deep (400 otherwise). */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) throw new HttpError(400, `the JSON body nests deeper than ${maxDepth} levels`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, 'the POST body must be JSON {"preference": [a, b, c]} (or pass ?r=a,b,c)');
  }
}
