// End-to-end: reports in headless Chromium (Debian's chromium, driven by playwright-core). A
// static report opens from disk with every chart drawn; a served PRL run updates its numbers live
// when the preference point is dragged. Skips when /usr/bin/chromium is not installed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { writeLongtailReport } from '../../src/report/longtail.js';
import { writeRunReport } from '../../src/report/index.js';
import { HttpError, startReportServer, type RunningServer } from '../../src/report/server.js';
import {
  syntheticAccuracy,
  syntheticGmm,
  syntheticLongtail,
  writeAblationDir,
  writeRun,
} from '../report/fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is not installed (apt-get install chromium): browser tests skipped`;
if (skip) console.log(`# ${skip}`);

type Browser = import('playwright-core').Browser;
type Page = import('playwright-core').Page;

let dir: string;
let server: RunningServer;
let browser: Browser;
const evaluated: number[][] = [];

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'tailor-e2e-'));
  writeRun(join(dir, 'runs', 'prl'), syntheticLongtail({ prl: true }));
  const g = syntheticGmm();
  writeRun(join(dir, 'runs', 'gmm'), g.model, {
    'data.csv': g.csv,
    'select.json': JSON.stringify(g.selection),
  });
  writeLongtailReport(join(dir, 'runs', 'prl'));
  writeRunReport(join(dir, 'runs', 'gmm'));
  writeRunReport(writeAblationDir(join(dir, 'ablation')));
  // A report into which markup slipped: an inline script that is not the report's own.
  const report = readFileSync(join(dir, 'runs', 'prl', 'report.html'), 'utf8');
  writeFileSync(
    join(dir, 'runs', 'prl', 'injected.html'),
    report.replace('</body>', `<script>document.body.setAttribute('data-injected', 'ran')</script></body>`),
  );
  server = await startReportServer({
    runsDir: join(dir, 'runs'),
    port: 0,
    evaluatePreference: async (_runDir, r) => {
      evaluated.push([...r.weights]);
      return syntheticAccuracy([...r.weights]);
    },
  });
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Opens a page, failing on script errors and on any request that leaves file:// or the server. */
async function open(url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith('file://') && !u.startsWith(server.url) && !u.startsWith('data:'))
      problems.push(`external request ${u}`);
  });
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 15000 });
  return { page, problems };
}

/** Every chart drew, and its screenshot is a picture (many colours, not a blank box). */
async function assertChartsDrawn(page: Page, expected: string[], pictures = expected): Promise<void> {
  const charts = await page.$$eval('[data-chart]', (els) =>
    els.map((e) => ({
      id: e.getAttribute('data-chart'),
      drawn: e.getAttribute('data-drawn'),
      error: e.getAttribute('data-error'),
    })),
  );
  assert.deepEqual(charts.map((c) => c.id).sort(), [...expected].sort());
  for (const c of charts) assert.equal(c.drawn, 'true', `chart ${c.id} did not draw: ${c.error}`);
  for (const id of pictures) {
    // The plotting surface only (canvas), so legends and labels alone cannot pass the check.
    const png = await page.locator(`[data-chart="${id}"] canvas`).first().screenshot();
    const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const colours = new Set<number>();
    let coloured = 0;
    for (let i = 0; i < data.length; i += info.channels) {
      const [r, g, b] = [data[i]!, data[i + 1]!, data[i + 2]!];
      colours.add((r << 16) | (g << 8) | b);
      // Axes, grid and text are grey; data (series colours, heat-map ramps) is saturated.
      if (Math.max(r, g, b) - Math.min(r, g, b) > 40) coloured++;
    }
    const pixels = data.length / info.channels;
    assert.ok(colours.size >= 8, `chart ${id}: only ${colours.size} colours`);
    assert.ok(coloured >= 150, `chart ${id}: only ${coloured} of ${pixels} pixels carry data colours`);
  }
}

async function simplexValues(page: Page): Promise<Record<string, string>> {
  return page.$$eval('#simplex-values td[data-key]', (tds) =>
    Object.fromEntries(tds.map((td) => [td.getAttribute('data-key')!, td.textContent ?? ''])),
  );
}

test('static report opens offline from disk with every chart drawn', { skip }, async () => {
  const { page, problems } = await open(pathToFileURL(join(dir, 'runs', 'prl', 'report.html')).href);
  try {
    await assertChartsDrawn(page, [
      'loss',
      'accuracy',
      'lr',
      'perClass',
      'distributions',
      'confusion',
      'simplex',
    ]);
    // Offline (no server), the simplex panel shows the values of the nearest grid point.
    const text = await page.textContent('#simplex-status');
    assert.match(text ?? '', /nearest grid point/);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('served PRL run: dragging the preference point updates the numbers live', { skip }, async () => {
  const index = await open(server.url + '/');
  await index.page.click('a[href="/runs/prl/"]');
  await index.page.waitForSelector('body[data-ready="true"]');
  const page = index.page;
  try {
    // The static test above checks every picture; here the live control's.
    await assertChartsDrawn(
      page,
      ['loss', 'accuracy', 'lr', 'perClass', 'distributions', 'confusion', 'simplex'],
      ['simplex'],
    );
    await page.waitForSelector('#simplex-values[data-state="ready"]');
    const canvas = page.locator('.ternary-canvas');
    // Mouse coordinates are the viewport's: bring the triangle into view first.
    await canvas.scrollIntoViewIfNeeded();
    const box = (await canvas.boundingBox())!;
    const corners = JSON.parse((await canvas.getAttribute('data-corners'))!) as [number, number][];
    const at = (w: number[]) =>
      [
        box.x + w[0]! * corners[0]![0] + w[1]! * corners[1]![0] + w[2]! * corners[2]![0],
        box.y + w[0]! * corners[0]![1] + w[1]! * corners[1]![1] + w[2]! * corners[2]![1],
      ] as const;

    const dragTo = async (target: number[]) => {
      const before = evaluated.length;
      const [sx, sy] = at([1 / 3, 1 / 3, 1 / 3]);
      const [tx, ty] = at(target);
      await page.mouse.move(sx, sy);
      await page.mouse.down();
      await page.mouse.move(tx, ty, { steps: 8 });
      await page.mouse.up();
      await page.waitForFunction(
        () => document.querySelector('#simplex-values')?.getAttribute('data-state') === 'ready',
      );
      assert.ok(evaluated.length > before, 'the page queried the server');
      const shown = await simplexValues(page);
      const last = evaluated.at(-1)!;
      const expected = syntheticAccuracy(last);
      // The numbers on the page are the server's answer for the preference it last sent.
      assert.equal(shown.few, (100 * expected.few).toFixed(2));
      assert.equal(shown.many, (100 * expected.many).toFixed(2));
      assert.equal(shown.backward50, (100 * expected.distributions.backward50!).toFixed(2));
      const pref = ((await page.getAttribute('#simplex-values', 'data-preference')) ?? '')
        .split(',')
        .map(Number);
      pref.forEach((v, i) =>
        assert.ok(Math.abs(v - last[i]!) < 1e-3, `shown preference ${pref} vs sent ${last}`),
      );
      assert.match((await page.textContent('#simplex-status')) ?? '', /evaluated by the server/);
      return { shown, last };
    };

    const tail = await dragTo([0.05, 0.05, 0.9]);
    assert.ok(tail.last[2]! > 0.8, `dragged towards the backward corner: ${tail.last}`);
    const head = await dragTo([0.9, 0.05, 0.05]);
    assert.ok(head.last[0]! > 0.8, `dragged towards the forward corner: ${head.last}`);
    // Moving from the backward to the forward expert moves accuracy from tail to head classes.
    assert.ok(Number(head.shown.many) > Number(tail.shown.many));
    assert.ok(Number(head.shown.few) < Number(tail.shown.few));
    assert.deepEqual(index.problems, []);
  } finally {
    await page.close();
  }
});

test('served GMM run draws the scatter with ellipses and the BIC curve', { skip }, async () => {
  const { page, problems } = await open(server.url + '/runs/gmm/');
  try {
    await assertChartsDrawn(page, ['scatter', 'trace', 'bic']);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('nmr ablate report draws each figure over the variants, names on the x axis', { skip }, async () => {
  const { page, problems } = await open(pathToFileURL(join(dir, 'ablation', 'report.html')).href);
  try {
    // f1 has three points (one run's F1 is missing): too few pixels for the picture check
    await assertChartsDrawn(page, ['energy', 'f1', 'weak'], ['energy', 'weak']);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

// With a real PRL run (TAILOR_E2E_PRL_RUN=DIR, a directory written by `tailor train` with a PRL
// config), the live numbers must equal `tailor test-all --preference` for the same r.
const realRun = process.env.TAILOR_E2E_PRL_RUN;
const realSkip =
  skip || (realRun ? false : 'set TAILOR_E2E_PRL_RUN=DIR (a trained PRL run) to compare with test-all');

test('real PRL run: the live answer equals tailor test-all --preference', { skip: realSkip }, async () => {
  const { basename, dirname } = await import('node:path');
  const { execFileSync } = await import('node:child_process');
  const { repoRoot } = await import('../helpers.js');
  const run = realRun!.replace(/\/+$/, '');
  const real = await startReportServer({ runsDir: dirname(run), port: 0 });
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  try {
    await page.goto(`${real.url}/runs/${encodeURIComponent(basename(run))}/`);
    await page.waitForSelector('#simplex-values[data-state="ready"]', { timeout: 120000 });
    const canvas = page.locator('.ternary-canvas');
    await canvas.scrollIntoViewIfNeeded();
    const box = (await canvas.boundingBox())!;
    const corners = JSON.parse((await canvas.getAttribute('data-corners'))!) as [number, number][];
    const w = [0.2, 0.3, 0.5];
    const x = box.x + w.reduce((s, v, i) => s + v * corners[i]![0], 0);
    const y = box.y + w.reduce((s, v, i) => s + v * corners[i]![1], 0);
    const answer = page.waitForResponse((r) => r.url().includes('/preference?'), { timeout: 120000 });
    await page.mouse.click(x, y);
    const body = (await (await answer).json()) as {
      preference: number[];
      top1: number | null;
      many: number | null;
      medium: number | null;
      few: number | null;
      distributions: Record<string, number | null>;
    };
    await page.waitForFunction(
      () => document.querySelector('#simplex-values')?.getAttribute('data-state') === 'ready',
    );
    const shown = await simplexValues(page);
    const out = execFileSync(
      process.execPath,
      [
        join(repoRoot, 'dist/src/cli/main.js'),
        'test-all',
        '-r',
        run,
        '--preference',
        body.preference.join(','),
        '--json',
      ],
      { encoding: 'utf8', timeout: 300000 },
    );
    const cli = JSON.parse(out) as {
      distributions: Record<
        string,
        { top1: number | null; many: number | null; medium: number | null; few: number | null }
      >;
    };
    for (const [d, v] of Object.entries(cli.distributions)) {
      assert.ok(
        Math.abs((v.top1 ?? NaN) - (body.distributions[d] ?? NaN)) < 1e-9 ||
          (v.top1 === null && body.distributions[d] === null),
        `${d}: server ${body.distributions[d]} vs test-all ${v.top1}`,
      );
      assert.equal(shown[d], v.top1 === null ? '–' : (100 * v.top1).toFixed(2), `${d} on the page`);
    }
    const u = cli.distributions.uniform!;
    for (const k of ['top1', 'many', 'medium', 'few'] as const) {
      assert.equal(
        body[k] === null ? null : Number(body[k]!.toFixed(9)),
        u[k] === null ? null : Number(u[k]!.toFixed(9)),
        k,
      );
    }
  } finally {
    await page.close();
    await real.close();
  }
});

test("the Content-Security-Policy runs the report's own scripts and no injected one", { skip }, async () => {
  for (const url of [
    `${server.url}/runs/prl/files/injected.html`,
    pathToFileURL(join(dir, 'runs', 'prl', 'injected.html')).href,
  ]) {
    const page = await browser.newPage();
    try {
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.goto(url);
      // the report's own (hashed) scripts ran and drew ...
      await page.waitForSelector('body[data-ready="true"]', { timeout: 15000 });
      // ... the injected one did not, and the browser said why
      assert.equal(await page.getAttribute('body', 'data-injected'), null, url);
      assert.ok(violations.length > 0, `no CSP violation reported for ${url}`);
    } finally {
      await page.close();
    }
  }
});

test(
  'served behind a token: the printed link opens the run; a busy server is asked again',
  { skip },
  async () => {
    let calls = 0;
    const guarded = await startReportServer({
      runsDir: join(dir, 'runs'),
      port: 0,
      token: 'e2e-token-0123456789abcdef',
      evaluatePreference: async (_runDir, r) => {
        // The first evaluation finds the queue full.
        if (calls++ === 0) throw new HttpError(503, 'server busy: test', { 'retry-after': '1' });
        return syntheticAccuracy([...r.weights]);
      },
    });
    const page = await browser.newPage();
    try {
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      const bare = await page.goto(guarded.url + '/runs/prl/');
      assert.equal(bare?.status(), 401);
      const link = guarded.link.replace(/\/\?token=/, '/runs/prl/?token=');
      await page.goto(link);
      assert.equal(page.url(), guarded.url + '/runs/prl/', 'the token left the address bar');
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForFunction(() =>
        /busy/.test(document.querySelector('#simplex-status')?.textContent ?? ''),
      );
      await page.waitForFunction(
        () => /evaluated by the server/.test(document.querySelector('#simplex-status')?.textContent ?? ''),
        undefined,
        { timeout: 10000 },
      );
      assert.equal(calls, 2, 'asked again once, after Retry-After');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
      await guarded.close();
    }
  },
);
