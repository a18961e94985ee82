#!/usr/bin/env node
// The `tailor` command: dispatches to one module per subcommand, loaded lazily so that
// commands which do not need libtorch start fast and work without the native addon.
import { availableParallelism } from 'node:os';
import { defineSubcommands } from './command.js';
import { userFailure } from './errors.js';

// sharp decodes image lists on libuv's thread pool (4 threads by default), shared by every worker
// thread of the image-list loader: size it to the machine unless the user did. libuv reads the
// variable when the pool first starts, which is later than this.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, availableParallelism()));

interface CommandEntry {
  summary: string;
  load: () => Promise<{ run: (argv: string[]) => Promise<number> }>;
}

const commands: Record<string, CommandEntry> = {
  train: {
    summary: 'train a long-tail model from a JSON config (CE, LDAM-DRW, SADE, BalPoE, PRL, ...)',
    load: () => import('./commands/train.js'),
  },
  test: {
    summary: 'evaluate a long-tail checkpoint on the uniform test set',
    load: () => import('./commands/test.js'),
  },
  'test-all': {
    summary: 'evaluate a long-tail checkpoint on the eleven test distributions',
    load: () => import('./commands/test-all.js'),
  },
  'test-time-train': {
    summary: 'test-time methods: SADE aggregation, PRL preference search, prior matching, EM, BBSE',
    load: () => import('./commands/test-time-train.js'),
  },
  predict: {
    summary:
      'classify unlabeled images with a run, adapted to their class prior (none, em, em-bcts, bbse, prior, aggregation, preference)',
    load: () => import('./commands/predict.js'),
  },
  export: {
    summary: 'write a run as an ONNX model with its expert combination baked in (PRL at a preference)',
    load: () => import('./commands/export.js'),
  },
  'tune-test-time': {
    summary: "choose a test-time method's settings on the validation split (never the test set)",
    load: () => import('./commands/tune-test-time.js'),
  },
  benchmark: {
    summary: 'run a suite (models x seeds x test-time methods) into one table with the spread over seeds',
    load: () => import('./commands/benchmark.js'),
  },
  compare: {
    summary: 'compare long-tail runs over the eleven test distributions',
    load: () => import('./commands/compare.js'),
  },
  launch: {
    summary: 'start the ranks of a data-parallel job: launch --nproc-per-node N -- train ...',
    load: () => import('./commands/launch.js'),
  },
  'dist-check': {
    summary: 'check a data-parallel job: ranks answer, collectives are right, allreduce speed',
    load: () => import('./commands/dist-check.js'),
  },
  version: { summary: 'print the version and the engine build', load: () => import('./commands/version.js') },
  data: {
    summary: 'long-tailed data sets: per-class counts, shot groups, test-set sizes, synthetic image lists',
    load: () => import('./commands/data.js'),
  },
  gmm: {
    summary: 'Gaussian mixtures by EM: fit, predict, score, select (BIC), sample',
    load: () => import('./commands/gmm.js'),
  },
  subgroup: {
    summary: 'latent-subgroup mixed model by EM: fit, lrt (membership), select (BIC over K)',
    load: () => import('./commands/subgroup.js'),
  },
  nmr: {
    summary: 'multi-SNR NMR: simulate, evaluate, train, denoise, yardstick, ablate, process, stack',
    load: () => import('./commands/nmr.js'),
  },
  report: {
    summary: 'write the HTML report of a run directory (long-tail, mixture, subgroup, NMR) or of predictions',
    load: () => import('./commands/report.js'),
  },
  serve: {
    summary: 'browse run reports in a local web app, with a live PRL preference control',
    load: () => import('./commands/serve.js'),
  },
};

function usage(): string {
  const lines = ['usage: tailor <command> [options]', '', 'commands:'];
  for (const [name, entry] of Object.entries(commands)) lines.push(`  ${name.padEnd(18)} ${entry.summary}`);
  lines.push('', "Run 'tailor <command> --help' for the options of a command.");
  return lines.join('\n');
}

export function registeredCommands(): string[] {
  return Object.keys(commands);
}

const main = defineSubcommands({
  help: usage(),
  commands: Object.fromEntries(
    Object.entries(commands).map(([name, entry]) => [
      name,
      async (argv: string[]) => (await entry.load()).run(argv),
    ]),
  ),
  unknown: (name) => {
    const suggestion = closest(name, Object.keys(commands));
    return `unknown command '${name}'${suggestion ? `; did you mean '${suggestion}'?` : ''}\n\n${usage()}`;
  },
});

function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = levenshtein(word, c);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

export function levenshtein(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const saved = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = saved;
    }
  }
  return row[b.length]!;
}

const isEntryPoint =
  process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop()!);
if (isEntryPoint) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      const failure = userFailure(error);
      if (failure) {
        console.error(`tailor: ${failure.message}`);
        process.exitCode = failure.exitCode;
      } else {
        console.error(error);
        process.exitCode = 1;
      }
    },
  );
}
