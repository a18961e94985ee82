// npm run bench -- suite-compare A_DIR B_DIR [--names graph,eager] [--methods best|all] [--json]
// Two outputs of the same benchmark suite (`tailor benchmark --out`, or gpu-suite.sh's OUTDIR)
// side by side, B the reference: for each model both hold and each method, the mean top-1 over
// the eleven test distributions per seed (from runs/MODEL/seed-S/benchmark-methods.json), B's
// mean +- sample sd [min, max] over its seeds, A's per-seed values and mean, A - B in points and
// in B's sd, whether A's mean lies within B's seed range, and the same-seed differences. It is
// the graph-vs-eager accuracy comparison of graph mode (GRAPH=auto against GRAPH=off on the same
// machine), and any two training set-ups of one suite. --methods best (the default) shows plain
// and, per model, B's best method other than the oracle; all shows every method.
import './lib/user-errors.js';
import { parseArgs } from 'node:util';
import { compareSuites, comparisonTable, readSuiteRuns } from './lib/suite-compare.js';

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      names: { type: 'string', default: 'A,B' },
      methods: { type: 'string', default: 'best' },
      json: { type: 'boolean', default: false },
    },
  });
  const names = values.names.split(',');
  if (positionals.length !== 2 || names.length !== 2 || !['best', 'all'].includes(values.methods)) {
    console.error(
      'usage: npm run bench -- suite-compare A_DIR B_DIR [--names a,b] [--methods best|all] [--json]',
    );
    process.exit(2);
  }
  try {
    const rows = compareSuites(
      readSuiteRuns(positionals[0]!),
      readSuiteRuns(positionals[1]!),
      values.methods as 'best' | 'all',
    );
    if (values.json) console.log(JSON.stringify({ names, rows }));
    else console.log(comparisonTable(rows, names as [string, string]));
  } catch (error) {
    console.error(`tailor: bench suite-compare: ${(error as Error).message}`);
    process.exit(2);
  }
}

main();
