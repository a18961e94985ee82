// tailor benchmark -c SUITE.json [--out DIR] [--json] [--max-runs N]
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../torch/index.js';
import {
  BENCHMARK_METHOD_NAMES,
  loadSuite,
  parseGraphMode,
  resolveGraphMode,
  runBenchmark,
} from '../../longtail/index.js';
import { benchmarkMarkdown, writeBenchmarkReport } from '../../report/index.js';
import { CliError } from '../errors.js';
import { JSON_OPTION, RUNTIME_OPTIONS, defineCommand } from '../command.js';
import { listArg, numberArg, numberListArg } from '../args.js';
import { useDevice } from '../runtime.js';

function pickModels<M extends { name: string }>(models: M[], flag: string): M[] {
  const names = listArg('--models', flag) ?? [];
  const unknown = names.filter((n) => !models.some((m) => m.name === n));
  if (unknown.length > 0)
    throw new CliError(
      `--models: ${unknown.join(', ')} not in the suite (its models: ${models.map((m) => m.name).join(', ')})`,
    );
  return models.filter((m) => names.includes(m.name));
}

function pickSeeds(seeds: number[], flag: string): number[] {
  const picked = numberListArg('--seeds', flag, { integer: true, min: 0 }) ?? [];
  const unknown = picked.filter((s) => !seeds.includes(s));
  if (unknown.length > 0)
    throw new CliError(`--seeds: ${unknown.join(', ')} not in the suite (its seeds: ${seeds.join(', ')})`);
  return seeds.filter((s) => picked.includes(s));
}

const HELP = `usage: tailor benchmark -c SUITE.json [--out DIR] [--json] [--max-runs N] [--threads N]
                        [--models A,B] [--seeds S,T] [--device D] [--graph auto|on|off]
                        [--no-branch-streams]

Runs a benchmark suite: trains every model of the suite once per seed (as 'tailor train' does,
with the seed overridden), evaluates the suite's test-time methods on the eleven test
distributions, and writes one table (benchmark.json, benchmark.md, benchmark.html in DIR):
per model and method, each distribution's top-1 and many/medium/few, and the mean top-1, as the
mean over seeds with the standard deviation and the 95 % t-interval.
Rerunning the same command resumes: finished runs and methods are skipped, an interrupted
training continues from its last checkpoint. Runs live in DIR/runs/<model>/seed-<s>.

methods: ${BENCHMARK_METHOD_NAMES.join(', ')} (oracle uses the true test prior and is labelled so)
  plain: no test-time step; aggregation: SADE's expert aggregation; preference: PRL's preference
  search (PRL models); prior: prior matching; prior_adjusted: prior matching's EM prior added to
  the balanced scores; em, em_ts, em_bcts: EM (MLLS) on raw, temperature-scaled and BCTS-
  calibrated scores; bbse: black-box shift estimation; oracle: the log of the true test prior
  added. The searches' objectives and steps come from the suite's "test_time" config (see
  'tailor test-time-train --help'). The models are training configs (CE, LDAM-DRW, SADE, BalPoE,
  PRL, ...: 'tailor train --help').

options:
  -c, --config SUITE   the suite file (configs/suites/*.json)
      --out DIR        output directory (default: runs/benchmark/<suite name>)
      --json           print the table as JSON on stdout (default: markdown)
      --max-runs N     train at most N runs in this call; the next call continues
                       (0: check the suite and write the table of what is finished)
      --threads N      libtorch threads (default: the suite's threads or 2)
      --models A,B     only these models of the suite (several processes sharing one --out
                       can each take some; a last call without --models tables them all)
      --seeds S,T      only these seeds of the suite (the same sharing as --models)
      --device D       cpu, cuda or cuda:N for training and the test-time methods (default cpu)
      --graph MODE     auto, on or off: capture each training step in a CUDA graph, as
                       'tailor train --graph' (default auto: on a CUDA device where it can)
      --no-branch-streams  in graph mode, keep the step on one CUDA stream instead of running
                       each expert (and PRL draw) on its own ('tailor train --no-branch-streams')
      --progress       show the per-epoch progress bars
  -h, --help`;

export const run = defineCommand({
  help: HELP,
  options: {
    config: { type: 'string', short: 'c' },
    out: { type: 'string' },
    ...JSON_OPTION,
    'max-runs': { type: 'string' },
    ...RUNTIME_OPTIONS,
    progress: { type: 'boolean', default: false },
    models: { type: 'string' },
    seeds: { type: 'string' },
    graph: { type: 'string' },
    'no-branch-streams': { type: 'boolean' },
  },
  run: async ({ values }) => {
    if (!values.config) throw new CliError(`give the suite with -c SUITE.json\n\n${HELP}`);
    // --max-runs 0: check the suite and table what exists
    const maxRuns = numberArg('--max-runs', values['max-runs'], { integer: true, min: 0 });
    const threads = numberArg('--threads', values.threads, { integer: true, min: 1 });
    const suite = loadSuite(values.config);
    if (values.models !== undefined) suite.models = pickModels(suite.models, values.models);
    if (values.seeds !== undefined) suite.seeds = pickSeeds(suite.seeds, values.seeds);
    const device = useDevice(values.device);
    const graphMode = parseGraphMode(values.graph);
    const graph = resolveGraphMode(graphMode, device);
    torch.setNumThreads(threads ?? suite.threads ?? 2);
    if (threads) suite.threads = threads;
    const outDir = values.out ?? join('runs', 'benchmark', suite.name);
    mkdirSync(outDir, { recursive: true });
    const log = (line: string) => console.error(`tailor benchmark: ${line}`);
    log(
      `${suite.name}: ${suite.models.length} model(s) x ${suite.seeds.length} seed(s), methods ${suite.methods.join(', ')}; output ${outDir}`,
    );
    const result = await runBenchmark(suite, {
      outDir,
      ...(maxRuns !== undefined ? { maxRuns } : {}),
      quiet: !values.progress,
      log,
      graph,
      graphRequired: graphMode === 'on',
      ...(values['no-branch-streams'] ? { branchStreams: false } : {}),
    });
    const paths = writeBenchmarkReport(outDir, result.table);
    log(
      `trained ${result.trained}, skipped ${result.skipped} finished run(s)` +
        (result.pending ? `, ${result.pending} left: run the same command again to continue` : '') +
        `\n  table: ${paths.markdown}\n  page:  ${paths.html}\n  json:  ${paths.json}`,
    );
    console.log(values.json ? JSON.stringify(result.table) : benchmarkMarkdown(result.table));
    return 0;
  },
});
