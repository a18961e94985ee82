// File output that never leaves a half-written file behind: write a temporary file in the same
// directory, flush it, then rename it over the target (rename is atomic on POSIX filesystems).
// Failures (full disk, read-only file system, no permission) become OutputErrors that name the
// path and the real cause.
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, basename, join, resolve } from 'node:path';
import { InputError, OutputError, describeSystemError, isSystemError } from './errors.js';

function outputError(error: unknown, path: string): unknown {
  if (error instanceof OutputError || !isSystemError(error)) return error;
  return new OutputError(`cannot write ${describeSystemError(error, path)}`, { cause: error });
}

/**
 * Creates `dir` and its parents. Node's recursive mkdir reports ENOENT when a parent cannot be
 * created (on a read-only file system, say); this retries from the nearest existing ancestor so
 * the error names the directory that failed and the real cause (EROFS, EACCES, ENOSPC).
 */
export function ensureDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    return;
  } catch (error) {
    if (!isSystemError(error) || error.code !== 'ENOENT') throw outputError(error, dir);
  }
  const missing: string[] = [];
  let p = resolve(dir);
  while (!existsSync(p) && dirname(p) !== p) {
    missing.push(p);
    p = dirname(p);
  }
  for (const m of missing.reverse()) {
    try {
      mkdirSync(m);
    } catch (error) {
      throw outputError(error, m);
    }
  }
}

export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  ensureDir(dirname(path));
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  let fd: number;
  try {
    fd = openSync(temp, 'w');
  } catch (error) {
    throw outputError(error, path);
  }
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw outputError(error, path);
  }
  closeSync(fd);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw outputError(error, path);
  }
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, JSON.stringify(value, null, 2) + '\n');
}

/** Appends one line to a log such as metrics.jsonl; a failure names the file and the cause. */
export function appendLine(path: string, line: string): void {
  try {
    appendFileSync(path, line.endsWith('\n') ? line : line + '\n');
  } catch (error) {
    throw outputError(error, path);
  }
}

/**
 * Reads an input file whose plausible size is known: larger files are refused before any
 * allocation (a corrupt or hostile file must not take the memory), and a read failure names the
 * file. `makeError` builds the reader's own error type from a message that starts with the path.
 */
export function readBoundedFile(
  path: string,
  maxBytes: number,
  what: string,
  makeError: (message: string) => Error = (m) => new InputError(m),
): Buffer {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (error) {
    throw makeError(isSystemError(error) ? describeSystemError(error, path) : `${path}: cannot read`);
  }
  if (size > maxBytes)
    throw makeError(`${path}: ${size} bytes is far too large for ${what} (at most ${maxBytes})`);
  try {
    return readFileSync(path);
  } catch (error) {
    throw makeError(
      isSystemError(error) ? describeSystemError(error, path) : `${path}: ${(error as Error).message}`,
    );
  }
}
