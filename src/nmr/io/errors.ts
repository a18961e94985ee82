import { InputError } from '../../util/errors.js';
import { readBoundedFile } from '../../util/fs.js';
/** A malformed or unsupported input file: names the file, the field and what to do about it. */
export class NmrFormatError extends InputError {
  constructor(
    readonly file: string,
    readonly field: string,
    problem: string,
    remedy?: string,
  ) {
    super(`${file}: ${field}: ${problem}${remedy ? ` (${remedy})` : ''}`);
  }
}

/** An NMR data source that cannot be used: a missing data set, an experiments file or argument that
 * does not describe a multi-SNR sample, samples with different numbers of levels. */
export class NmrDataError extends InputError {}

/** NMR files are at most tens of megabytes; this bounds a corrupt one (and stays below V8's string limit). */
export const MAX_NMR_FILE_BYTES = 256 * 1024 * 1024;

/** Reads an NMR file, refusing implausible sizes; errors name the file. */
export function readNmrFile(path: string): Buffer {
  return readBoundedFile(path, MAX_NMR_FILE_BYTES, 'an NMR file', (m) => {
    const detail = m.startsWith(`${path}: `) ? m.slice(path.length + 2) : m;
    return new NmrFormatError(path, 'file', detail);
  });
}
