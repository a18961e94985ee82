// `tailor serve` under load, hostile HTTP and a long session, on 127.0.0.1 only. It trains a
// small PRL run (one epoch on a slice of Fashion-MNIST-LT, about half a minute) unless given one,
// serves it from a process of its own (bench/lib/serve-server.ts: default limits, the real model),
// then: (a) `clients` concurrent clients for `seconds` mixing page loads, report assets, the run
// list and preference evaluations; (b) `fuzz` seeded hostile requests (test/report/serve-harness.ts);
// (c) a soak of `soak` minutes at a steady load, sampling the server's RSS and native tensor count.
//
//   npm run bench -- serve [--json] [--run DIR] [--clients 100] [--seconds 60] [--think 0]
//                          [--fuzz 10000] [--soak 30] [--soak-clients 10]
import './lib/user-errors.js';
import { CliError } from '../src/cli/errors.js';
import { count, number } from './lib/options.js';
import { fork, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runFuzz, runLoad, type LoadReport } from '../test/report/serve-harness.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    run: { type: 'string' },
    clients: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '60' },
    think: { type: 'string', default: '0' },
    fuzz: { type: 'string', default: '10000' },
    soak: { type: 'string', default: '30' },
    'soak-clients': { type: 'string', default: '10' },
  },
});
const clients = count('clients', args.clients!);
const seconds = number('seconds', args.seconds!, { positive: true });
const thinkMs = number('think', args.think!, { min: 0 });
const fuzzCount = number('fuzz', args.fuzz!, { integer: true, min: 0 });
const soakMinutes = number('soak', args.soak!, { integer: true, min: 0 });
const soakClients = count('soak-clients', args['soak-clients']!);
const root = new URL('../../', import.meta.url).pathname;
const SECRET = 'BENCH-OUTSIDE-SECRET-7f3e';
const dir = mkdtempSync(join(tmpdir(), 'tailor-bench-serve-'));
const say = (line: string): void => void (args.json ? process.stderr : process.stdout).write(line + '\n');

interface Stats {
  rss: number;
  heapUsed: number;
  liveTensors: number;
  queue: Record<string, number>;
  errors: number;
  firstError: string | null;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

const mib = (b: number): number => Math.round((b / 2 ** 20) * 10) / 10;

try {
  const runsDir = join(dir, 'runs');
  const runDir = join(runsDir, 'prl');
  mkdirSync(runsDir);
  writeFileSync(join(dir, 'secret.txt'), SECRET);
  if (args.run) cpSync(args.run, runDir, { recursive: true });
  else {
    say('training a small PRL run (1 epoch, 50 images per class at most)...');
    const r = spawnSync(
      join(root, 'bin/tailor'),
      [
        'train',
        '-c',
        join(root, 'configs/fmnist_lt_ir100_prl.json'),
        '--epochs',
        '1',
        '--train-max-per-class',
        '50',
        '--test-per-class',
        '20',
        '--out',
        runDir,
        '--quiet',
      ],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new CliError(`tailor train failed (${r.status}): ${r.stderr}`);
  }
  const child = fork(join(root, 'dist/bench/lib/serve-server.js'), [runsDir], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const replies: ((m: unknown) => void)[] = [];
  child.on('message', (m) => replies.shift()?.(m));
  const nextMessage = (): Promise<unknown> => new Promise((r) => replies.push(r));
  let crashed = false;
  child.on('exit', (code, signal) => {
    if (code !== 0) crashed = true;
    if (code !== 0) say(`server exited: ${code ?? signal}`);
  });
  const { port } = (await nextMessage()) as { port: number };
  const stats = async (): Promise<Stats> => {
    const m = nextMessage();
    child.send('stats');
    return (await m) as Stats;
  };
  const base = `http://127.0.0.1:${port}`;
  const atStart = await stats();

  // Warm-up: the first evaluation loads the model and computes the test features.
  const t0 = performance.now();
  const first = await fetch(`${base}/api/runs/prl/preference?r=1,1,1`);
  if (first.status !== 200) throw new CliError(`warm-up evaluation: ${first.status} ${await first.text()}`);
  const firstSeconds = (performance.now() - t0) / 1000;
  for (const p of ['/', '/runs/prl/', '/runs/prl/files/results.json']) await (await fetch(base + p)).text();
  const warm = await fetch(`${base}/api/runs/prl/preference?r=1,2,3`);
  const evalSeconds = ((await warm.json()) as { seconds: number }).seconds;
  const afterWarmup = await stats();
  say(
    `warm: first evaluation ${firstSeconds.toFixed(2)} s, then ${(evalSeconds * 1000).toFixed(1)} ms; RSS ${mib(afterWarmup.rss)} MiB, ${afterWarmup.liveTensors} tensors`,
  );

  const assets = ['results.json', 'metrics.jsonl', 'config.json', 'report.html'];
  const load = await runLoad({
    port,
    clients,
    seconds,
    thinkMs,
    runId: 'prl',
    experts: 3,
    assets,
    seed: 1,
  });
  const afterLoad = await stats();
  say(
    `server event loop during the load: p99 ${afterLoad.loopDelayP99Ms.toFixed(1)} ms late, max ${afterLoad.loopDelayMaxMs.toFixed(1)} ms`,
  );
  say(`load: ${load.requests} requests in ${load.seconds} s ${JSON.stringify(load.statuses)}`);
  for (const [route, s] of Object.entries(load.routes))
    say(
      `  ${route}: ${s.count} p50 ${s.p50} ms p99 ${s.p99} ms max ${s.max} ms ${JSON.stringify(s.statuses)}`,
    );

  const fuzz = await runFuzz({
    port,
    runId: 'prl',
    experts: 3,
    count: fuzzCount,
    seed: 20240611,
    concurrency: 32,
    secret: SECRET,
    deadlineMs: 20_000,
  });
  const afterFuzz = await stats();
  say(
    `fuzz: ${fuzz.requests} requests in ${fuzz.seconds} s ${JSON.stringify(fuzz.statuses)}; ${fuzz.hangs} hangs, ${fuzz.noAnswer} without answer, ${fuzz.violations.length} violations`,
  );
  for (const v of fuzz.violations.slice(0, 10)) say(`  ${v}`);

  // Soak: a steady load in one-minute slices, sampling after each.
  const samples: { minute: number; rssMiB: number; liveTensors: number; requests: number }[] = [];
  const soakStatuses: Record<string, number> = {};
  let soakRequests = 0;
  const soakRoutes: LoadReport['routes'][] = [];
  for (let m = 1; m <= soakMinutes; m++) {
    const slice = await runLoad({
      port,
      clients: soakClients,
      seconds: 60,
      thinkMs: 50,
      runId: 'prl',
      experts: 3,
      assets,
      seed: 100 + m,
    });
    soakRequests += slice.requests;
    for (const [k, v] of Object.entries(slice.statuses)) soakStatuses[k] = (soakStatuses[k] ?? 0) + v;
    soakRoutes.push(slice.routes);
    const s = await stats();
    samples.push({ minute: m, rssMiB: mib(s.rss), liveTensors: s.liveTensors, requests: slice.requests });
    say(
      `soak ${m}/${soakMinutes} min: RSS ${mib(s.rss)} MiB, ${s.liveTensors} tensors, ${slice.requests} requests`,
    );
  }
  const end = await stats();
  const alive = !crashed && (await fetch(`${base}/api/runs`)).status === 200;
  const soakBase = samples[0];
  const rssDrift = soakBase ? (mib(end.rss) - soakBase.rssMiB) / soakBase.rssMiB : 0;
  const row = {
    machine: { cores: cpus().length, load1: loadavg()[0] },
    warmup: { firstEvaluationSeconds: firstSeconds, evaluationMs: evalSeconds * 1000 },
    memory: {
      rssStartMiB: mib(atStart.rss),
      rssAfterWarmupMiB: mib(afterWarmup.rss),
      rssAfterLoadMiB: mib(afterLoad.rss),
      rssAfterFuzzMiB: mib(afterFuzz.rss),
      rssEndMiB: mib(end.rss),
      tensorsAfterWarmup: afterWarmup.liveTensors,
      tensorsAfterLoad: afterLoad.liveTensors,
      tensorsAfterFuzz: afterFuzz.liveTensors,
      tensorsEnd: end.liveTensors,
    },
    load: {
      ...load,
      serverLoopDelayP99Ms: afterLoad.loopDelayP99Ms,
      serverLoopDelayMaxMs: afterLoad.loopDelayMaxMs,
    },
    fuzz: { ...fuzz, violations: fuzz.violations.slice(0, 20), violationCount: fuzz.violations.length },
    soak: {
      minutes: soakMinutes,
      requests: soakRequests,
      statuses: soakStatuses,
      samples,
      rssDriftFromFirstMinute: rssDrift,
    },
    queue: end.queue,
    serverErrorsLogged: end.errors,
    firstServerError: end.firstError,
    alive,
  };
  if (args.json) console.log(JSON.stringify(row));
  else
    say(
      `end: RSS ${row.memory.rssStartMiB} -> ${row.memory.rssAfterWarmupMiB} (warm) -> ${row.memory.rssEndMiB} MiB, tensors ${row.memory.tensorsAfterWarmup} -> ${row.memory.tensorsEnd}; ` +
        `${end.errors} errors logged; server ${alive ? 'alive' : 'DOWN'}`,
    );
  const stopped = new Promise((r) => child.once('exit', r));
  child.send('stop');
  await stopped;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
