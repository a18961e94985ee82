import { InputError, describeSystemError, isSystemError } from '../util/errors.js';

/** An error meant for the user: printed without a stack trace, with the given exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * The one-line message the CLI prints (after `tailor: `) for an error the user can act on: a
 * CliError, any reader's InputError, a config error, or a system error such as ENOSPC or EROFS.
 * Undefined for anything else (a bug: printed with its stack trace).
 */
export function userMessage(error: unknown): string | undefined {
  if (error instanceof CliError || error instanceof InputError) return error.message;
  if (error instanceof Error && error.name === 'ConfigError') return error.message;
  if (isSystemError(error)) return describeSystemError(error);
  // node:util parseArgs: an unknown option or a missing value ("see --help" is the remedy)
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof Error && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_'))
    return `${error.message} (see --help)`;
  return undefined;
}
