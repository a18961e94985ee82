// PyTorch's module repr: `Name(extra)` or a tree of `(name): Child(...)` lines, and the number
// formatting its extra_repr strings use (Python's repr of floats and tuples).

/**
 * A float as Python's repr writes it: `0.1`, `1e-05`, `1.0` (so `eps=1e-05` reads as in PyTorch).
 * @internal
 */
export function pyFloat(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
  const abs = Math.abs(x);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e16)) {
    const [mantissa, exponent] = x.toExponential().split('e') as [string, string];
    const e = Number(exponent);
    return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  return Number.isInteger(x) ? x.toFixed(1) : String(x);
}

/** A Python bool. @internal */
export function pyBool(b: boolean): string {
  return b ? 'True' : 'False';
}

/** A Python tuple of integers: `(3, 3)`, `(3,)`. @internal */
export function pyTuple(values: readonly number[]): string {
  return values.length === 1 ? `(${values[0]},)` : `(${values.join(', ')})`;
}

/**
 * torch.nn.Module.__repr__: the extra lines, then each child's repr indented by two spaces after
 * `(name): `; one extra line and no children stay on one line.
 * @internal
 */
export function moduleRepr(name: string, extra: string, children: [string, string][]): string {
  const extraLines = extra ? extra.split('\n') : [];
  const childLines = children.map(([key, repr]) => `(${key}): ${repr.split('\n').join('\n  ')}`);
  const lines = [...extraLines, ...childLines];
  if (lines.length === 0) return `${name}()`;
  if (extraLines.length === 1 && childLines.length === 0) return `${name}(${extraLines[0]})`;
  return `${name}(\n  ${lines.join('\n  ')}\n)`;
}
