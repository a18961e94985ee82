// Reading a run's files for a report: bounded in size, and every failure an InputError that
// names the file.
import { readFileSync, statSync } from 'node:fs';
import { InputError } from '../util/errors.js';
import { MAX_RESULTS_BYTES } from './validate.js';

export function readResultsText(path: string): string {
  try {
    const size = statSync(path).size;
    if (size > MAX_RESULTS_BYTES)
      throw new InputError(
        `${path}: ${size} bytes is far too large for a run's results (limit ${MAX_RESULTS_BYTES})`,
      );
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(
      `${path}: cannot read (${(error as Error).message}); a run directory holds the results.json its command wrote`,
      { cause: error },
    );
  }
}

export function parseResultsJson(path: string): unknown {
  const text = readResultsText(path);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError(`${path}: not valid JSON (${(error as Error).message})`, { cause: error });
  }
}
