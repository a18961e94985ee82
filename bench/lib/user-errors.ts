// Imported first by every benchmark, so that a problem the user can fix (an unknown option, a
// missing value, a device this libtorch has not, a file that cannot be read) ends the run as the
// CLI ends a command: one `tailor: bench NAME: ...` line with the remedy and the error's exit
// code, not a stack trace. Anything else is a bug in the benchmark and keeps its stack.
import { basename } from 'node:path';
import { userFailure } from '../../src/cli/errors.js';

const name = basename(process.argv[1] ?? 'bench', '.js');

function end(error: unknown): void {
  // node:util parseArgs: a benchmark has no --help; its options head its file
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
    const message = (error as Error).message.replace(/\s*\n\s*/g, ' ');
    console.error(`tailor: bench ${name}: ${message} (the options head bench/${name}.ts)`);
    process.exit(2);
  }
  const failure = userFailure(error);
  if (failure === undefined) {
    console.error(error);
    process.exit(1);
  }
  console.error(`tailor: bench ${name}: ${failure.message}`);
  process.exit(failure.exitCode);
}

// An ES module's top-level throw and a rejected top-level await both arrive here.
process.on('uncaughtException', end);
process.on('unhandledRejection', end);
