// The pages of `tailor serve`: the list of runs and each run's report, and what a preference
// request needs of a run's results. A report takes tens of milliseconds to render, so it is kept
// until a file of the run changes (its name, size or time in the run directory) or it is 5 s
// old, whichever is first; a run that is still training shows its new epochs within seconds, and
// a page under load costs a directory listing.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { escapeHtml } from '../html.js';
import { readResults, renderRunReport } from '../index.js';
import { isPrlResults, prlExperts } from '../longtail.js';
import type { RunEntry } from '../runs.js';
import { HttpError } from './http.js';

const MAX_AGE_MS = 5000;
const MAX_PAGES = 32;

/** What the run directory holds now: names, sizes and modification times, one level deep. */
function signature(dir: string): string {
  const parts: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    try {
      const st = statSync(join(dir, name));
      parts.push(`${name}:${st.size}:${st.mtimeMs}`);
    } catch {
      parts.push(`${name}:gone`);
    }
  }
  return parts.join('|');
}

export class RunPageCache {
  private readonly pages = new Map<string, { at: number; signature: string; html: string }>();
  private readonly prl = new Map<string, { key: string; experts: number | null | false }>();

  /**
   * The number of experts of a PRL run (null: not recorded), or false for any other run; read
   * again when results.json changes, so a preference request does not parse it each time.
   */
  experts(run: RunEntry): number | null | false {
    if (run.kind === 'nmr-train' || run.kind === 'nmr-ablation') return false;
    let key: string;
    let results: Record<string, unknown>;
    try {
      const st = statSync(join(run.dir, 'results.json'));
      key = `${st.size}:${st.mtimeMs}`;
      const hit = this.prl.get(run.dir);
      if (hit && hit.key === key) return hit.experts;
      results = readResults(run.dir) as Record<string, unknown>;
    } catch (error) {
      throw new HttpError(500, (error as Error).message);
    }
    const experts = isPrlResults(results) ? prlExperts(results) : false;
    if (this.prl.size >= MAX_PAGES * 8) this.prl.clear();
    this.prl.set(run.dir, { key, experts });
    return experts;
  }

  /** The run's report page (a PRL run of 3 experts gets the live preference control). */
  page(run: RunEntry): string {
    let sig: string;
    try {
      sig = signature(run.dir);
    } catch (error) {
      throw new HttpError(500, (error as Error).message);
    }
    const hit = this.pages.get(run.dir);
    if (hit && hit.signature === sig && Date.now() - hit.at < MAX_AGE_MS) return hit.html;
    const html = renderPage(run);
    this.pages.delete(run.dir);
    if (this.pages.size >= MAX_PAGES) this.pages.delete(this.pages.keys().next().value!);
    this.pages.set(run.dir, { at: Date.now(), signature: sig, html });
    return html;
  }
}

function renderPage(run: RunEntry): string {
  try {
    // NMR training runs and ablations have no results.json (and no preference control)
    if (run.kind === 'nmr-train' || run.kind === 'nmr-ablation') return renderRunReport(run.dir);
    const endpoint = '/api/runs/' + run.id.split('/').map(encodeURIComponent).join('/') + '/preference';
    const results = readResults(run.dir) as Record<string, unknown>;
    const live = isPrlResults(results) && prlExperts(results) === 3;
    return renderRunReport(run.dir, live ? { endpoint } : undefined);
  } catch (error) {
    throw new HttpError(500, (error as Error).message);
  }
}

export function indexPage(runs: RunEntry[], runsDir: string): string {
  const rows = runs
    .map(
      (r) =>
        `<tr><td><a href="/runs/${r.id.split('/').map(encodeURIComponent).join('/')}/">${escapeHtml(r.id)}</a></td><td>${escapeHtml(r.kind ?? 'unknown')}</td><td>${escapeHtml(r.error ?? r.title)}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>tailor runs</title>
<style>body{font:14px system-ui,sans-serif;margin:20px auto;max-width:1000px} table{border-collapse:collapse} td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}</style></head>
<body data-ready="true"><h1>Runs in ${escapeHtml(runsDir)}</h1>
${runs.length ? `<table id="runs"><thead><tr><th>run</th><th>kind</th><th>summary</th></tr></thead><tbody>${rows}</tbody></table>` : '<p>No run directories (folders with a results.json, or the history.json of an nmr train run) here yet.</p>'}
</body></html>`;
}
