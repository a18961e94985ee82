// The named error of the mixture API's argument checks. The CLI validates its flags before it
// calls the models, so these reach JavaScript callers above all (no compiler checks their types).
import { ArgumentError, describeValue } from '../util/arguments.js';

/**
 * An invalid argument to the public mixture API: an option out of range (`nComponents: 0`,
 * `tol: -1`, an unknown `covarianceType`), a value of the wrong type from a JavaScript caller
 * (a string where a number is expected, nested arrays where a {@link DenseMatrix} is expected),
 * mis-shaped or non-finite data, fewer samples than components, a method called before `fit()`.
 * Its message names the argument and the value; `exitCode` is 2. It is an {@link ArgumentError},
 * the class of every system's argument checks.
 *
 * Errors of the fit itself keep their own classes ({@link SingularCovarianceError},
 * {@link CollinearityError}), and so do the file readers ({@link CsvError},
 * {@link GaussianModelError}).
 *
 * @example
 * ```ts
 * import { GaussianMixture, MixtureArgumentError } from 'tailor/mixture';
 * try {
 *   new GaussianMixture({ nComponents: 0 });
 * } catch (error) {
 *   if (error instanceof MixtureArgumentError) console.error(error.message);
 *   // nComponents must be an integer >= 1, got 0
 * }
 * ```
 */
export class MixtureArgumentError extends ArgumentError {}

/** Throws unless `value` is a number (of any value: the range checks follow), naming `name`. */
export function requireNumber(value: unknown, name: string): void {
  if (typeof value !== 'number')
    throw new MixtureArgumentError(`${name} must be a number, got ${describeValue(value)}`);
}

/** Throws unless `value` is absent or a number. */
export function optionalNumber(value: unknown, name: string): void {
  if (value !== undefined) requireNumber(value, name);
}

/** Throws unless `value` is an object, naming `name`. */
export function requireObject(value: unknown, name: string): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new MixtureArgumentError(`${name} must be an object, got ${describeValue(value)}`);
}

/** Throws unless `value` is an array (or typed array), naming `name`. */
export function requireArray(value: unknown, name: string): void {
  if (!Array.isArray(value) && !ArrayBuffer.isView(value))
    throw new MixtureArgumentError(`${name} must be an array, got ${describeValue(value)}`);
}

/**
 * Throws unless `x` is a DenseMatrix: `{ rows, cols, data }` with integer sizes and a
 * Float64Array. Nested arrays get the remedy (`fromRows`).
 */
export function requireDenseMatrix(x: unknown, name = 'data'): void {
  if (Array.isArray(x))
    throw new MixtureArgumentError(
      `${name} must be a DenseMatrix { rows, cols, data: Float64Array }, got an array (convert nested arrays with fromRows)`,
    );
  const m = x as { rows?: unknown; cols?: unknown; data?: unknown } | null;
  if (
    m === null ||
    typeof m !== 'object' ||
    !Number.isInteger(m.rows) ||
    !Number.isInteger(m.cols) ||
    (m.rows as number) < 0 ||
    (m.cols as number) < 0 ||
    !(m.data instanceof Float64Array)
  )
    throw new MixtureArgumentError(
      `${name} must be a DenseMatrix { rows, cols, data: Float64Array }, got ${describeValue(x)}`,
    );
}
