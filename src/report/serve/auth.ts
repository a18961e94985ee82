// Who may use `tailor serve`. On a loopback address only this machine can connect, so no
// credential is asked by default. On any other address anyone on the network could read the runs
// and drive the model, so a token is required: given, or generated and printed at start. A
// browser presents it once as ?token=... (the printed link), which sets a cookie for this port;
// scripts send it as `Authorization: Bearer` or `X-Tailor-Token`. Comparisons take constant time.
// Requests that browsers mark as coming from another site are refused on the endpoints that
// run the model, so no other page can drive it with the user's cookie.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { UserError } from '../../util/errors.js';
import { HttpError } from './http.js';

/** A `tailor serve` setting that cannot be used (a token too short, a limit out of range). */
export class ServeOptionError extends UserError {}

/** The environment variable that gives the token when --token is not given. */
export const TOKEN_ENV = 'TAILOR_SERVE_TOKEN';

const TOKEN_RE = /^[A-Za-z0-9._~-]{16,256}$/;

/** True for addresses only this machine can reach: localhost, 127.0.0.0/8, ::1 (and its IPv4-mapped form). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/**
 * The token a server bound to `host` requires: the given one, a generated one when the address is
 * not loopback, or null (no token) on loopback. A given token must be 16 to 256 characters of
 * A-Z a-z 0-9 . _ ~ - (it travels in URLs and cookies).
 */
export function resolveToken(
  host: string,
  given: string | undefined | null,
): { token: string | null; generated: boolean } {
  if (given !== undefined && given !== null && given !== '') {
    if (!TOKEN_RE.test(given))
      throw new ServeOptionError(
        'the serve token must be 16 to 256 characters of A-Z a-z 0-9 . _ ~ - (leave --token and ' +
          `${TOKEN_ENV} unset to have one generated)`,
      );
    return { token: given, generated: false };
  }
  if (isLoopback(host)) return { token: null, generated: false };
  return { token: randomBytes(24).toString('base64url'), generated: true };
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** a === b in time independent of where they differ (both are hashed to the same length first). */
export function sameToken(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** The cookie that carries the token; named per port, as cookies do not tell ports apart. */
export const tokenCookie = (port: number): string => `tailor_token_${port}`;

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** What the token check decided: go on, or answer with a redirect that sets the cookie. */
export type TokenCheck = { kind: 'ok' } | { kind: 'redirect'; location: string; setCookie: string };

/**
 * Checks the request's token (401 without it or with a wrong one). A GET with a right ?token=
 * is redirected to the same URL without it, setting the cookie, so the token does not stay in
 * the address bar, the history or links copied from the page.
 */
export function checkToken(
  token: string,
  port: number,
  req: IncomingMessage,
  path: string,
  query: URLSearchParams,
): TokenCheck {
  const inQuery = query.get('token');
  if (inQuery !== null) {
    if (!sameToken(inQuery, token)) throw unauthorized('the token in the link is not this server’s');
    if (req.method === 'GET' || req.method === 'HEAD') {
      const rest = new URLSearchParams(query);
      rest.delete('token');
      const q = rest.toString();
      return {
        kind: 'redirect',
        // One leading slash: '//host/...' would send the browser to another site.
        location: '/' + path.replace(/^[/\\]+/, '') + (q ? `?${q}` : ''),
        setCookie: `${tokenCookie(port)}=${token}; Path=/; HttpOnly; SameSite=Strict`,
      };
    }
    return { kind: 'ok' };
  }
  const auth = req.headers.authorization;
  const bearer = auth && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, '').trim() : undefined;
  const header = req.headers['x-tailor-token'];
  const given =
    bearer ??
    (typeof header === 'string' ? header : undefined) ??
    cookieValue(req.headers.cookie, tokenCookie(port));
  if (given === undefined) throw unauthorized('this server requires its token');
  if (!sameToken(given, token)) throw unauthorized('the token is not this server’s');
  return { kind: 'ok' };
}

function unauthorized(why: string): HttpError {
  return new HttpError(
    401,
    `${why}: open the link with ?token=... that 'tailor serve' printed at start, or send the header ` +
      '`Authorization: Bearer TOKEN`',
    { 'www-authenticate': 'Bearer realm="tailor"' },
  );
}

/**
 * Refuses (403) a request a browser marks as sent by another site (Sec-Fetch-Site) or from
 * another origin (Origin): a page elsewhere must not drive the model. Clients that send neither
 * header (curl, scripts) are not browsers acting for a user, and pass.
 */
export function checkSameOrigin(req: IncomingMessage): void {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none')
    throw new HttpError(403, `cross-site request refused (Sec-Fetch-Site: ${site})`);
  const origin = req.headers.origin;
  if (origin === undefined) return;
  const host = req.headers.host;
  if (!host || origin.toLowerCase() !== `http://${host.toLowerCase()}`)
    throw new HttpError(403, `request from another origin refused (Origin: ${origin})`);
}
