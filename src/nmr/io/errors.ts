import { InputError } from '../../torch/errors.js';
/** A malformed or unsupported input file: names the file, the field and what to do about it. */
export class NmrFormatError extends InputError {
  constructor(
    readonly file: string,
    readonly field: string,
    problem: string,
    remedy?: string,
  ) {
    super(`${file}: ${field}: ${problem}${remedy ? ` (${remedy})` : ''}`);
    this.name = 'NmrFormatError';
  }
}
