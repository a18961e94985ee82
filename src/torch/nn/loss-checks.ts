// What the losses share: the reduction names and their ATen codes, and the checks of tensors,
// shapes and reductions that PyTorch 1.13 makes (a mismatch PyTorch refuses is refused here by
// name, before libtorch's message about "tensor a" and "tensor b"). Not part of the public
// surface (nn/index.ts does not re-export it).
import { Tensor } from '../tensor.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';

/** How a loss reduces over the batch: 'none' (per element), 'mean' (default) or 'sum'. */
export type Reduction = 'none' | 'mean' | 'sum';
const REDUCTIONS: readonly Reduction[] = ['none', 'mean', 'sum'];
const CODES: Record<Reduction, number> = { none: 0, mean: 1, sum: 2 };

/** The ATen code of options.reduction (default 'mean'), refusing a name PyTorch does not know. */
export function reductionCode(c: ArgumentChecks, value: unknown): number {
  return CODES[c.oneOf(value ?? 'mean', 'options.reduction', REDUCTIONS)];
}

/** The options object of a loss (undefined: none given). */
export function lossOptions<O extends object>(c: ArgumentChecks, options: O | undefined): O {
  if (options === undefined) return {} as O;
  return c.object(options, 'options') as O;
}

/** A Tensor argument. */
export function tensorArg(c: ArgumentChecks, value: unknown, name: string): Tensor {
  if (!(value instanceof Tensor)) c.fail(name, 'a Tensor', value);
  return value as Tensor;
}

/** An optional Tensor option (undefined or null: none). */
export function optionalTensor(c: ArgumentChecks, value: unknown, name: string): Tensor | null {
  if (value === undefined || value === null) return null;
  return tensorArg(c, value, name);
}

/** A true/false option with its default. */
export function flag(c: ArgumentChecks, value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') c.fail(name, 'true or false', value);
  return value as boolean;
}

export const show = (shape: readonly number[]) => `[${shape.join(', ')}]`;

/** The broadcast of the tensors' shapes (NumPy's rules), or an error naming the two that disagree. */
export function broadcastShapes(c: ArgumentChecks, ...named: [Tensor, string][]): number[] {
  let out: number[] = [];
  let outName = '';
  for (const [t, name] of named) {
    const s = t.shape;
    const n = Math.max(out.length, s.length);
    const next: number[] = [];
    for (let i = 0; i < n; i++) {
      const a = out[out.length - n + i] ?? 1;
      const b = s[s.length - n + i] ?? 1;
      if (a !== b && a !== 1 && b !== 1)
        throw new ArgumentError(
          `${c.fn}: ${name} ${show(s)} does not broadcast with ${outName} ${show(out)}: give sizes that are equal, or 1, from the last dimension on`,
        );
      next.push(a === 1 ? b : a);
    }
    out = next;
    outName = outName ? `${outName} and ${name}` : name;
  }
  return out;
}

/** Refuses `b` unless its shape is exactly `a`'s. */
export function sameShape(c: ArgumentChecks, a: Tensor, aName: string, b: Tensor, bName: string): void {
  const sa = a.shape;
  const sb = b.shape;
  if (sa.length !== sb.length || sa.some((v, i) => v !== sb[i]))
    throw new ArgumentError(`${c.fn}: ${bName} ${show(sb)} must have the shape of ${aName} ${show(sa)}`);
}

/** Refuses `t` for its shape: `expected` says what it must be. */
export function shapeFail(c: ArgumentChecks, name: string, expected: string, t: Tensor): never {
  throw new ArgumentError(`${c.fn}: ${name} must be ${expected}, got shape ${show(t.shape)}`);
}

/**
 * What every loss function starts with: the checks named after it, its options object, and each
 * tensor argument checked to be a Tensor (named by its key).
 */
export function lossStart<O extends object>(
  fn: string,
  options: O | undefined,
  tensors: Record<string, unknown>,
): { c: ArgumentChecks; o: O } {
  const c = checksOf(fn);
  const o = lossOptions(c, options);
  for (const [name, value] of Object.entries(tensors)) tensorArg(c, value, name);
  return { c, o };
}
