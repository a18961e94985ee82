import { UserError, describeSystemError, isSystemError } from '../util/errors.js';

/** A problem with the command line (a flag, a missing argument) or found by a command itself. */
export class CliError extends UserError {
  constructor(message: string, exitCode = 2) {
    super(message, { exitCode });
  }
}

/**
 * What the CLI prints (after `tailor: `) and the exit code for an error the user can act on: any
 * UserError, a system error such as ENOSPC or EROFS, or an unknown option or missing value.
 * Undefined for anything else (a bug: printed with its stack trace).
 */
export function userFailure(error: unknown): { message: string; exitCode: number } | undefined {
  if (error instanceof UserError) return { message: error.message, exitCode: error.exitCode };
  if (isSystemError(error)) return { message: describeSystemError(error), exitCode: 2 };
  // node:util parseArgs: an unknown option or a missing value ("see --help" is the remedy)
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof Error && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_'))
    return { message: `${error.message} (see --help)`, exitCode: 2 };
  return undefined;
}

/**
 * Around library code that reports some of the user's problems as plain Errors: a UserError
 * passes as it is, any other Error becomes a CliError with its message. Use it as
 * `catch (error) { throw asUserError(error); }`.
 */
export function asUserError(error: unknown): unknown {
  return error instanceof Error && !(error instanceof UserError) ? new CliError(error.message) : error;
}
