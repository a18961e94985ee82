// The browser code a report inlines: uPlot (MIT, from node_modules) and web/report-*.js.
import { createHash } from 'node:crypto';
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

export interface ReportAssets {
  uplotJs: string;
  uplotCss: string;
  clientJs: string;
}

/** The client code, in load order (helpers and charts, the simplex control, the page wiring). */
export const CLIENT_FILES = ['report-core.js', 'report-simplex.js', 'report.js'];

let cached: ReportAssets | undefined;

/** The repository root, found upwards from this module (it runs from src/ or dist/src/). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'web', 'report.js'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('report: cannot find web/report.js above ' + fileURLToPath(import.meta.url));
}

function read(path: string, remedy: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`report: cannot read ${path} (${(error as Error).message}); ${remedy}`, { cause: error });
  }
}

function uplotDist(): string {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');
  } catch {
    return join(packageRoot(), 'node_modules', 'uplot', 'dist');
  }
}

export function reportAssets(): ReportAssets {
  if (cached) return cached;
  const root = packageRoot();
  // uPlot wherever Node resolves it from here: the checkout's node_modules, or beside tailor in
  // the node_modules of a project that installed it.
  const uplot = uplotDist();
  const js = read(join(uplot, 'uPlot.iife.min.js'), "run 'npm install' (the report inlines uPlot)");
  cached = {
    // A literal "</script" inside inlined code would end the element early.
    uplotJs: js.replace(/<\/script/gi, '<\\/script'),
    uplotCss: read(join(uplot, 'uPlot.min.css'), "run 'npm install'"),
    clientJs: CLIENT_FILES.map((f) => read(join(root, 'web', f), 'the checkout is incomplete'))
      .join('\n')
      .replace(/<\/script/gi, '<\\/script'),
  };
  return cached;
}

/**
 * The Content-Security-Policy of every report page: scripts only if they are the report's own
 * (by SHA-256 of the inlined uPlot and client code), so markup that slipped into a page could not
 * run; no loads from elsewhere, fetch only back to the serving origin.
 */
export function reportCsp(): string {
  const { uplotJs, clientJs } = reportAssets();
  const hash = (code: string) => `'sha256-${createHash('sha256').update(code, 'utf8').digest('base64')}'`;
  return [
    "default-src 'none'",
    `script-src ${hash(uplotJs)} ${hash(clientJs)}`,
    "style-src 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}
