// The fuzz campaign: for every target, N mutated inputs run in a child process (child.ts; one
// that finished a target cleanly goes on with the next, saving a start-up of the modules); an
// input that takes longer than the time limit is a hang (the child is killed and restarted after
// it), a child that dies is a crash. Prints per parser: tried, ok, named errors, other errors
// (anything but a `tailor:` error naming the file, or markup left unescaped in a report),
// crashes, hangs. Usage:
//   npm run fuzz -- [--count 10000] [--seed 1] [--target SUBSTRING] [--timeout-ms 10000] [--jobs 1]
//   npm run fuzz -- --target 'cifar pickle' --only 123     (replays one input, with its stack)
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { numberArg, type NumberRule } from '../../src/cli/args.js';
import { CliError, userFailure } from '../../src/cli/errors.js';
import { TARGETS, isApiTarget, type AnyTarget } from './targets.js';
import type { InputResult } from './child.js';

export interface TargetReport {
  target: string;
  tried: number;
  ok: number;
  named: number;
  other: number;
  crashes: number;
  hangs: number;
  seconds: number;
  /** The first findings (index and what happened), for replay with --only. */
  findings: { i: number; kind: 'other' | 'crash' | 'hang'; detail: string }[];
}

export interface CampaignOptions {
  count: number;
  seed?: number;
  /** Only targets whose name contains one of these. */
  filter?: string[];
  /** Only the targets this accepts (after `filter`). */
  accept?: (name: string) => boolean;
  timeoutMs?: number;
  jobs?: number;
  log?: (line: string) => void;
}

const CHILD = fileURLToPath(new URL('./child.js', import.meta.url));
const MAX_FINDINGS = 5;

function workRoot(): string {
  // tmpfs keeps thousands of small writes off the disk
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

/**
 * Runs a target's inputs in a child, a fresh one after each crash or hang. `idle` is a child that
 * finished the previous target cleanly: it gets this target as its next job instead of a new
 * process starting. Resolves with the report and, when this target's child also finished
 * cleanly (and ran no API target, whose calls may change process-wide switches), that child.
 */
function runTarget(
  target: AnyTarget,
  o: Required<Omit<CampaignOptions, 'filter' | 'accept' | 'log'>>,
  idle?: ChildProcess,
): Promise<{ report: TargetReport; child?: ChildProcess }> {
  const report: TargetReport = {
    target: target.name,
    tried: 0,
    ok: 0,
    named: 0,
    other: 0,
    crashes: 0,
    hangs: 0,
    seconds: 0,
    findings: [],
  };
  const started = performance.now();
  const work = mkdtempSync(join(workRoot(), 'tailor-fuzz-'));
  const finding = (i: number, kind: 'other' | 'crash' | 'hang', detail: string): void => {
    // keep the first few of each kind: crashes and hangs must not hide behind other errors
    if (report.findings.filter((f) => f.kind === kind).length < MAX_FINDINGS)
      report.findings.push({ i, kind, detail });
  };
  const reusable = !isApiTarget(target);
  return new Promise((resolveReport) => {
    let next = 0;
    const done = (child?: ChildProcess): void => {
      rmSync(work, { recursive: true, force: true });
      report.seconds = (performance.now() - started) / 1000;
      resolveReport(child ? { report, child } : { report });
    };
    const startChild = (): void => {
      if (next >= o.count) return done();
      let stderr = '';
      let finished = false;
      const job = [target.name, String(next), String(o.count), String(o.seed), work];
      let child: ChildProcess;
      // (a child that died while idle cannot take the job: a fresh one does)
      if (idle && idle.connected && idle.exitCode === null && idle.signalCode === null) {
        child = idle;
        idle = undefined;
        // should it die before the job arrives, its exit is a crash as ever (or the start-up limit)
        child.send({ job }, (error) => error && child.kill('SIGKILL'));
      } else
        child = fork(CHILD, [...job, '--more'], {
          execArgv: ['--max-old-space-size=1024'],
          stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        });
      const onStderr = (d: Buffer): void => {
        stderr = (stderr + d.toString()).slice(-2000);
      };
      child.stderr!.on('data', onStderr);
      let timer: NodeJS.Timeout | undefined;
      // Start-up (modules, native libraries, seeds) may take long on a loaded machine; it is
      // not an input's time, so the per-input limit starts with the child's 'ready'.
      timer = setTimeout(() => {
        finished = true;
        child.kill('SIGKILL');
        report.findings.push({ i: next, kind: 'crash', detail: 'the child did not start within 180 s' });
        report.crashes++;
        report.tried++;
        next++;
      }, 180_000);
      const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          finished = true;
          report.tried++;
          report.hangs++;
          finding(next, 'hang', `no answer within ${o.timeoutMs} ms`);
          next++;
          child.kill('SIGKILL');
        }, o.timeoutMs);
      };
      const onMessage = (m: InputResult | { ready: true }): void => {
        if ('ready' in m) return arm();
        if (m.i !== next) return;
        report.tried++;
        report[m.outcome]++;
        if (m.outcome === 'other') finding(m.i, 'other', m.detail ?? '');
        next++;
        if (next >= o.count) {
          finished = true;
          clearTimeout(timer);
          if (!reusable) return void child.kill('SIGKILL');
          // the child waits for its next job: hand it on, without this target's listeners
          child.stderr!.off('data', onStderr);
          child.off('message', onMessage);
          child.off('exit', onExit);
          done(child);
        } else arm();
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        clearTimeout(timer);
        if (!finished) {
          report.tried++;
          report.crashes++;
          const last = stderr.trim().split('\n').slice(-3).join(' | ');
          finding(next, 'crash', `exit ${signal ?? code}: ${last.slice(0, 400)}`);
          next++;
        }
        startChild();
      };
      child.on('message', onMessage);
      child.on('exit', onExit);
    };
    startChild();
  });
}

export async function runCampaign(options: CampaignOptions): Promise<TargetReport[]> {
  const o = {
    count: options.count,
    seed: options.seed ?? 1,
    timeoutMs: options.timeoutMs ?? 10_000,
    jobs: Math.max(1, options.jobs ?? 1),
  };
  const targets = TARGETS.filter(
    (t) =>
      (!options.filter?.length || options.filter.some((f) => t.name.includes(f))) &&
      (options.accept?.(t.name) ?? true),
  );
  const reports: TargetReport[] = new Array(targets.length);
  let cursor = 0;
  const worker = async (): Promise<void> => {
    let idle: ChildProcess | undefined;
    while (cursor < targets.length) {
      const k = cursor++;
      const { report, child } = await runTarget(targets[k]!, o, idle);
      idle = child;
      reports[k] = report;
      options.log?.(formatRow(report));
    }
    idle?.kill('SIGKILL');
  };
  await Promise.all(Array.from({ length: Math.min(o.jobs, targets.length) }, worker));
  return reports;
}

const HEADER = ['parser', 'tried', 'ok', 'named errors', 'other errors', 'crashes', 'hangs', 'seconds'];

function formatRow(r: TargetReport): string {
  return `| ${[r.target, r.tried, r.ok, r.named, r.other, r.crashes, r.hangs, r.seconds.toFixed(1)].join(' | ')} |`;
}

export function formatTable(reports: TargetReport[]): string {
  const total = reports.reduce(
    (a, r) => ({
      ...a,
      tried: a.tried + r.tried,
      ok: a.ok + r.ok,
      named: a.named + r.named,
      other: a.other + r.other,
      crashes: a.crashes + r.crashes,
      hangs: a.hangs + r.hangs,
      seconds: a.seconds + r.seconds,
    }),
    {
      ...reports[0]!,
      target: '**all**',
      tried: 0,
      ok: 0,
      named: 0,
      other: 0,
      crashes: 0,
      hangs: 0,
      seconds: 0,
    },
  );
  return [
    `| ${HEADER.join(' | ')} |`,
    `|${HEADER.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...reports.map(formatRow),
    formatRow(total),
  ].join('\n');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '200' },
      seed: { type: 'string', default: '1' },
      target: { type: 'string', multiple: true },
      only: { type: 'string' },
      'timeout-ms': { type: 'string', default: '10000' },
      jobs: { type: 'string', default: '1' },
      json: { type: 'string' },
      list: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(
      'usage: npm run fuzz -- [--count 200] [--seed 1] [--target NAME]... [--only I] [--timeout-ms 10000] [--jobs 1] [--json FILE] [--list]',
    );
    return 0;
  }
  if (values.list) {
    for (const t of TARGETS) console.log(`${t.name}${t.native ? ' (native)' : ''}`);
    return 0;
  }
  if (values.only !== undefined) {
    const target = TARGETS.find((t) => values.target?.some((f) => t.name.includes(f)));
    if (!target) throw new CliError('--only needs --target naming one parser (see --list)');
    const work = mkdtempSync(join(workRoot(), 'tailor-fuzz-'));
    const i = numberArg('--only', values.only, { integer: true, min: 0 })!;
    const child = fork(CHILD, [target.name, String(i), String(i + 1), values.seed!, work, '--verbose'], {
      execArgv: ['--max-old-space-size=1024'],
    });
    const code = await new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
    rmSync(work, { recursive: true, force: true });
    return code ?? 1;
  }
  const int = (flag: string, text: string, rule: NumberRule) =>
    numberArg(flag, text, { integer: true, ...rule })!;
  const count = int('--count', values.count!, { min: 1 });
  const seed = int('--seed', values.seed!, {});
  const timeoutMs = int('--timeout-ms', values['timeout-ms']!, { min: 1 });
  const jobs = int('--jobs', values.jobs!, { min: 1 });
  const started = performance.now();
  console.log(
    `fuzzing ${count} inputs per parser (seed ${values.seed}, limit ${values['timeout-ms']} ms per input)`,
  );
  const reports = await runCampaign({
    count,
    seed,
    ...(values.target ? { filter: values.target } : {}),
    timeoutMs,
    jobs,
    log: (line) => console.error(line),
  });
  console.log(formatTable(reports));
  for (const r of reports)
    for (const f of r.findings)
      console.log(
        `${r.target} #${f.i} ${f.kind}: ${f.detail}  (replay: --target '${r.target}' --only ${f.i})`,
      );
  console.log(`${((performance.now() - started) / 1000).toFixed(0)} s in all`);
  if (values.json) writeFileSync(values.json, JSON.stringify(reports, null, 2) + '\n');
  return reports.some((r) => r.other + r.crashes + r.hangs > 0) ? 1 : 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      // a bad option is one named line (parseArgs' own errors included); anything else a bug
      const failure = userFailure(error);
      if (failure) console.error(`tailor: fuzz: ${failure.message.replace(/\s*\n\s*/g, ' ')}`);
      else console.error(error);
      process.exitCode = failure?.exitCode ?? 1;
    },
  );
}
