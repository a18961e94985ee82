// The fuzz worker process: generates inputs start..end-1 of one target, runs the reader on each
// in-process and reports every outcome to the parent (which times each input and sees an abort
// as a crash). Usage (by campaign.ts): node child.js TARGET START END SEED WORKDIR [--verbose]
// [--more] (then the next targets' jobs come as IPC messages)
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../../src/util/rng.js';
import { UserError } from '../../src/util/errors.js';
import { mutate } from './mutate.js';
import { TARGETS, assemble, checkReport, isApiTarget, type Files, type FuzzTarget } from './targets.js';
import { classifyApiError, type ApiFuzzTarget } from './api-targets.js';

export type Outcome = 'ok' | 'named' | 'other';

export interface InputResult {
  i: number;
  outcome: Outcome;
  detail?: string;
}

/** FNV-1a of a name, so that a target's inputs do not depend on its position in the list. */
function hashName(name: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < name.length; k++) h = Math.imul(h ^ name.charCodeAt(k), 0x01000193) >>> 0;
  return h;
}

/** The generator of input i: a function of the campaign seed, the target and i only. */
export function inputRng(seed: number, target: string, i: number): Rng {
  return new Rng((Math.imul(seed + 1, 0x9e3779b1) ^ hashName(target) ^ Math.imul(i + 1, 0x85ebca6b)) >>> 0);
}

/** Input i of a target: which seed file set, which file was mutated, and the files to write. */
export function makeInput(target: FuzzTarget, seeds: Files[], seed: number, i: number): Files {
  const rng = inputRng(seed, target.name, i);
  const base = seeds[rng.int(seeds.length)]!;
  const candidates = target.mutable.filter((f) => f in base);
  const file = candidates[rng.int(candidates.length)]!;
  const donors = seeds.filter((s) => s !== base && file in s).map((s) => s[file]!);
  const mutated = mutate(base[file]!, target.kind, rng, donors, target.dictionary);
  const written = target.encode ? target.encode(mutated, file, rng.uniform() < 0.8) : mutated;
  return assemble(target, base, file, written);
}

/** A named error: one the CLI prints as a `tailor:` line, whose message names the input. */
export function classify(error: unknown, dir: string): { outcome: Outcome; detail: string } {
  const e = error as Error;
  const message = String(e?.message ?? e);
  const named = error instanceof UserError && message.includes(dir);
  const frame = (e?.stack ?? '').split('\n').find((l) => l.trim().startsWith('at ')) ?? '';
  return {
    outcome: named ? 'named' : 'other',
    detail: `${e?.name ?? typeof error}: ${message.split('\n')[0]!.slice(0, 300)}${named ? '' : ` ${frame.trim()}`}`,
  };
}

export function writeInput(dir: string, files: Files): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), bytes);
  }
}

/** Input i of an API target: one call with hostile arguments, its outcome named by the call. */
async function runApiInput(
  target: ApiFuzzTarget,
  torch: typeof import('../../src/torch/index.js'),
  seed: number,
  i: number,
  verbose: boolean,
): Promise<InputResult> {
  // every call of the input is noted first, so that the last one is known if the process dies
  let label = '';
  const note = (l: string): void => {
    label = l;
    if (verbose) console.error(`input ${i}: ${l}`);
  };
  try {
    await target.call(torch, inputRng(seed, target.name, i), note);
    return { i, outcome: 'ok' };
  } catch (error) {
    if (verbose) console.error(error);
    const e = error as Error;
    const frame = (e?.stack ?? '').split('\n').find((l) => l.trim().startsWith('at ')) ?? '';
    const outcome = classifyApiError(error);
    const message = String(e?.message ?? e)
      .split('\n')[0]!
      .slice(0, 300);
    return { i, outcome, detail: `${label} -> ${e?.name ?? typeof error}: ${message} ${frame.trim()}` };
  } finally {
    // the process-wide switches an input may have changed
    torch.setNumThreads(1);
  }
}

/** A target's inputs start..end-1: [target, start, end, seed, work directory] (argv's order). */
type Job = [name: string, start: string, end: string, seed: string, workDir: string];

/** Runs one job's inputs, reporting each to the parent. */
async function runJob([name, startText, endText, seedText, workDir]: Job, verbose: boolean): Promise<void> {
  const target = TARGETS.find((t) => t.name === name);
  if (!target) throw new Error(`unknown fuzz target '${name}'`);
  if (target.native) {
    const torch = await import('../../src/torch/index.js');
    torch.setNumThreads(1);
  }
  if (isApiTarget(target))
    return apiMain(target, Number(startText), Number(endText), Number(seedText), verbose);
  const seeds = await target.seeds();
  const seed = Number(seedText);
  const dir = join(workDir, 'input');
  const send = (r: InputResult): Promise<void> =>
    new Promise((done) => (process.send ? process.send(r, undefined, {}, () => done()) : done()));
  // Loading the modules and building the seeds is not part of any input's time.
  await new Promise<void>((done) =>
    process.send ? process.send({ ready: true }, undefined, {}, () => done()) : done(),
  );
  for (let i = Number(startText); i < Number(endText); i++) {
    writeInput(dir, makeInput(target, seeds, seed, i));
    let result: InputResult;
    try {
      const out = await target.run(dir);
      const bad = checkReport(out);
      result = bad ? { i, outcome: 'other', detail: bad } : { i, outcome: 'ok' };
    } catch (error) {
      result = { i, ...classify(error, dir) };
      if (verbose) console.error(error);
    }
    if (verbose) console.error(`input ${i}: ${result.outcome}${result.detail ? ` ${result.detail}` : ''}`);
    await send(result);
  }
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The job of argv, then with --more the jobs the parent sends ({ job }) until it disconnects:
 * a campaign hands a finished child its next target, which saves a start-up (loading the
 * modules takes most of a small campaign's time).
 */
async function main(): Promise<void> {
  const verbose = process.argv.includes('--verbose');
  const jobs: Job[] = [];
  let closed = false;
  let wake: (() => void) | null = null;
  if (process.argv.includes('--more')) {
    // listening from the start: a job sent while the last one finishes must not be lost
    process.on('message', (m: { job?: Job }) => {
      if (m?.job) jobs.push(m.job);
      wake?.();
    });
    process.on('disconnect', () => {
      closed = true;
      wake?.();
    });
  } else closed = true;
  await runJob(process.argv.slice(2, 7) as Job, verbose);
  for (;;) {
    while (jobs.length === 0 && !closed) await new Promise<void>((done) => (wake = done));
    const job = jobs.shift();
    if (!job) return;
    await runJob(job, verbose);
  }
}

/** The worker loop of an API target: no files, each input is a call. */
async function apiMain(target: ApiFuzzTarget, start: number, end: number, seed: number, verbose: boolean) {
  const torch = await import('../../src/torch/index.js');
  const send = (r: InputResult | { ready: true }): Promise<void> =>
    new Promise((done) => (process.send ? process.send(r, undefined, {}, () => done()) : done()));
  await send({ ready: true });
  for (let i = start; i < end; i++) {
    const result = await runApiInput(target, torch, seed, i, verbose);
    if (verbose) console.error(`input ${i}: ${result.outcome}${result.detail ? ` ${result.detail}` : ''}`);
    await send(result);
  }
}

const isEntryPoint =
  process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isEntryPoint) {
  main().then(
    () => {
      if (process.connected) process.disconnect?.();
    },
    (error: unknown) => {
      console.error(error);
      process.exit(70);
    },
  );
}
