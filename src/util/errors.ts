// The errors a user can fix, and the one base they share. A UserError's message names the
// problem and the remedy (the file, the line, record or field, the flag); the CLI prints it as one
// `tailor: message` line without a stack trace and exits with its exitCode (2 unless the class
// says otherwise: 3 for a failed rank or a diverged training). Anything else that reaches the CLI
// is a bug and is printed with its stack. Every class is named (`error.name` is the class's name).
//
// InputError is the branch of the readers and writers: a malformed or implausible file, a failed
// integrity check, an output that cannot be written. Each format keeps its own subclass
// (DataFormatError, NmrFormatError, CsvError, ...) so that callers can still tell them apart.
/**
 * The base of every error a user can fix (a bad argument, file, config or environment): its
 * message names the problem and the remedy. The CLI prints it without a stack trace and exits with
 * {@link UserError.exitCode}; library callers can catch it with `instanceof UserError`.
 */
export class UserError extends Error {
  /** The exit code of the CLI when this error ends a command. */
  readonly exitCode: number;

  constructor(message: string, options?: { cause?: unknown; exitCode?: number }) {
    super(message, options && 'cause' in options ? { cause: options.cause } : undefined);
    this.name = new.target.name;
    this.exitCode = options?.exitCode ?? 2;
  }
}

/** A file the user gave that cannot be read or used, or an output that cannot be written. */
export class InputError extends UserError {}

/** A safetensors file that is truncated, corrupt or implausible. */
export class SafetensorsError extends InputError {}

/** A PyTorch file (torch.save's zip or legacy format) that is truncated, corrupt, or holds what cannot be read safely. */
export class PytorchFileError extends InputError {}

/** A checkpoint (sidecar, weights, optimizer state, RNG state) that cannot be used. */
export class CheckpointError extends InputError {}

/** An output file or directory that cannot be written (read-only, full, no permission). */
export class OutputError extends InputError {}

const SYSTEM_ERRORS: Record<string, string> = {
  ENOSPC: 'no space left on the device (free some space or choose another --out)',
  EDQUOT: 'disk quota exceeded (free some space or choose another --out)',
  EROFS: 'the file system is read-only (choose a writable --out)',
  EACCES: 'permission denied (choose a directory you can write, or fix its permissions)',
  EPERM: 'operation not permitted (choose a directory you can write, or fix its permissions)',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a component of the path is not a directory',
  EISDIR: 'it is a directory, not a file',
  EEXIST: 'it already exists',
  EFBIG: 'the file is too large for the file system',
  EIO: 'input/output error (the disk may be failing)',
  EMFILE: 'too many open files (raise ulimit -n)',
  ENFILE: 'too many open files in the system',
  ENAMETOOLONG: 'the file name is too long',
  ELOOP: 'too many levels of symbolic links',
};

/** A Node system error (fs, child process) with an errno code, such as ENOSPC or EROFS. */
export function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    (error as NodeJS.ErrnoException).code! in SYSTEM_ERRORS
  );
}

/** One line for a system error: what failed on which path, and what to do about it. */
export function describeSystemError(error: NodeJS.ErrnoException, path = error.path): string {
  const what = SYSTEM_ERRORS[error.code ?? ''] ?? error.message;
  const op = error.syscall ? `${error.syscall} failed` : 'failed';
  return path ? `${path}: ${op}: ${what}` : `${op}: ${what}`;
}
