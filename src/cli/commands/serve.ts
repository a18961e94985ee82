// `tailor serve`: browse the runs under a directory in a local web app (read-only; the one
// query endpoint evaluates a PRL run at a preference).
import { existsSync, statSync } from 'node:fs';
import { CliError } from '../errors.js';
import { defineCommand } from '../command.js';
import { numberArg } from '../args.js';
import { startReportServer } from '../../report/server.js';

const HELP = `usage: tailor serve [--runs DIR] [--port P] [--host ADDRESS]

Serves the runs under DIR (every folder with a results.json, up to 4 levels deep) as web pages:
a list of runs, each run's report (the pages of 'tailor report': training curves, per-class
accuracy, the eleven test distributions, the confusion matrix, the test-time methods SADE
aggregation, PRL preference search, prior matching, EM-adjusted scores and the oracle prior;
Gaussian mixtures, subgroup models and NMR evaluations too), and for PRL runs a
preference triangle whose point you drag to see the accuracies for that preference, evaluated live.
Read-only: no path outside DIR can be read.

options:
  --runs DIR      runs directory (default: runs)
  --port P        port (default 8787; 0 picks a free one)
  --host ADDRESS  address to bind (default 127.0.0.1; use 0.0.0.0 to serve other machines)
  -h, --help      this text`;

export const run = defineCommand({
  help: HELP,
  options: {
    runs: { type: 'string', default: 'runs' },
    port: { type: 'string', default: '8787' },
    host: { type: 'string', default: '127.0.0.1' },
  },
  helpOnParseError: true,
  run: async ({ values }) => {
    const port = numberArg('--port', values.port, { integer: true, min: 0, max: 65535 })!;
    if (!existsSync(values.runs) || !statSync(values.runs).isDirectory()) {
      throw new CliError(
        `--runs ${values.runs}: not a directory (train a model with 'tailor train --out ${values.runs}/NAME' first, or pass --runs)`,
      );
    }
    let running;
    try {
      running = await startReportServer({
        runsDir: values.runs,
        port,
        host: values.host,
        log: (l) => console.error(l),
      });
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      if (e.code === 'EADDRINUSE')
        throw new CliError(
          `port ${port} is in use on ${values.host}; pick another with --port (0 = any free port)`,
        );
      if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND')
        throw new CliError(`--host ${values.host}: cannot bind that address (${e.message})`);
      throw error;
    }
    console.log(`serving ${values.runs} at ${running.url}/ (Ctrl-C to stop)`);
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        void running.close().then(resolve);
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    return 0;
  },
});
