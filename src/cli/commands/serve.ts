// `tailor serve`: browse the runs under a directory in a local web app (read-only; the one
// query endpoint evaluates a PRL run at a preference).
import { existsSync, statSync } from 'node:fs';
import { CliError } from '../errors.js';
import { defineCommand } from '../command.js';
import { numberArg, numberOr } from '../args.js';
import { startReportServer } from '../../report/server.js';
import { DEFAULT_LIMITS } from '../../report/serve/limits.js';
import { TOKEN_ENV } from '../../report/serve/auth.js';

const HELP = `usage: tailor serve [--runs DIR] [--port P] [--host ADDRESS] [--token TOKEN]
                    [--concurrency N] [--queue N] [--max-connections N]

Serves the runs under DIR (every folder with a results.json, up to 4 levels deep) as web pages:
a list of runs, each run's report (the pages of 'tailor report': training curves, per-class
accuracy, the eleven test distributions, the confusion matrix, the test-time methods SADE
aggregation, PRL preference search, prior matching, EM-adjusted scores and the oracle prior;
Gaussian mixtures, subgroup models and NMR evaluations too), and for PRL runs a
preference triangle whose point you drag to see the accuracies for that preference, evaluated live.
Read-only: no path outside DIR can be read.

On a loopback address (127.0.0.1, localhost, ::1) no credential is asked. On any other address
every request must carry a token: the one given with --token (or ${TOKEN_ENV}), else one
generated at start and printed as a link (open it once: it sets a cookie); scripts send it as
'Authorization: Bearer TOKEN'. Requests without it are answered 401.

Live evaluations run on a thread of their own, --concurrency at a time per run; --queue more may
wait, each at most ${DEFAULT_LIMITS.queueWaitMs / 1000} s. Past that the answer is 503 with Retry-After, at once. Identical
requests in flight share one evaluation. Request bodies are limited to ${DEFAULT_LIMITS.bodyBytes / 1024} KiB (JSON nested at
most ${DEFAULT_LIMITS.jsonDepth} deep); headers and bodies must each arrive within ${DEFAULT_LIMITS.headersTimeoutMs / 1000} s. At most
--max-connections connections are open at once; one past it is closed as it arrives.

options:
  --runs DIR           runs directory (default: runs)
  --port P             port (default 8787; 0 picks a free one)
  --host ADDRESS       address to bind (default 127.0.0.1; use 0.0.0.0 to serve other machines,
                       which requires the token)
  --token TOKEN        require this token (16-256 characters of A-Z a-z 0-9 . _ ~ -), on loopback
                       too (default: ${TOKEN_ENV}; off loopback a generated one)
  --concurrency N      evaluations that run at once per run (default ${DEFAULT_LIMITS.concurrency})
  --queue N            evaluations that may wait per run (default ${DEFAULT_LIMITS.queue}; 0: none wait)
  --max-connections N  open connections at once (default ${DEFAULT_LIMITS.connections})
  -h, --help           this text`;

export const run = defineCommand({
  help: HELP,
  options: {
    runs: { type: 'string', default: 'runs' },
    port: { type: 'string', default: '8787' },
    host: { type: 'string', default: '127.0.0.1' },
    token: { type: 'string' },
    concurrency: { type: 'string' },
    queue: { type: 'string' },
    'max-connections': { type: 'string' },
  },
  helpOnParseError: true,
  run: async ({ values }) => {
    const port = numberArg('--port', values.port, { integer: true, min: 0, max: 65535 })!;
    const concurrency = numberOr('--concurrency', values.concurrency, DEFAULT_LIMITS.concurrency, {
      integer: true,
      min: 1,
      max: 64,
    });
    const queue = numberOr('--queue', values.queue, DEFAULT_LIMITS.queue, {
      integer: true,
      min: 0,
      max: 10000,
    });
    const connections = numberOr('--max-connections', values['max-connections'], DEFAULT_LIMITS.connections, {
      integer: true,
      min: 1,
      max: 100_000,
    });
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
        token: values.token ?? process.env[TOKEN_ENV] ?? null,
        limits: { concurrency, queue, connections },
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
    if (running.token !== null)
      console.log(
        running.tokenGenerated
          ? `${values.host} is not a loopback address: every request needs this token (generated now): ${running.token}`
          : 'every request needs the token',
      );
    console.log(`serving ${values.runs} at ${running.link} (Ctrl-C to stop)`);
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
