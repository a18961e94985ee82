// Savitzky-Golay smoothing (least-squares polynomial fit in a sliding window). Edges use the fit
// of the first/last full window evaluated at the edge points, so no padding values are invented.

const cache = new Map<string, Float64Array[]>();

/**
 * Filter weights for window (odd) and polynomial order: row j gives the fitted value at offset
 * j - half from the window's points (the centre row is the usual SG kernel).
 */
function weights(window: number, order: number): Float64Array[] {
  const key = `${window}/${order}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const half = (window - 1) / 2;
  const p = order + 1;
  // Normal matrix A^T A for the Vandermonde A[i][q] = (i - half)^q, inverted by Gauss-Jordan.
  const ata = Array.from({ length: p }, () => new Float64Array(p));
  for (let i = 0; i < window; i++) {
    const t = i - half;
    for (let a = 0; a < p; a++) for (let b = 0; b < p; b++) ata[a]![b]! += t ** (a + b);
  }
  const inv = invert(ata);
  const rows: Float64Array[] = [];
  for (let j = 0; j < window; j++) {
    const tj = j - half;
    const row = new Float64Array(window);
    for (let i = 0; i < window; i++) {
      const ti = i - half;
      let v = 0;
      for (let a = 0; a < p; a++) for (let b = 0; b < p; b++) v += tj ** a * inv[a]![b]! * ti ** b;
      row[i] = v;
    }
    rows.push(row);
  }
  cache.set(key, rows);
  return rows;
}

function invert(m: Float64Array[]): Float64Array[] {
  const n = m.length;
  const a = m.map((r) => Float64Array.from(r));
  const inv = Array.from({ length: n }, (_, i) => {
    const r = new Float64Array(n);
    r[i] = 1;
    return r;
  });
  for (let c = 0; c < n; c++) {
    let piv = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[piv]![c]!)) piv = r;
    [a[c], a[piv]] = [a[piv]!, a[c]!];
    [inv[c], inv[piv]] = [inv[piv]!, inv[c]!];
    const d = a[c]![c]!;
    for (let k = 0; k < n; k++) {
      a[c]![k]! /= d;
      inv[c]![k]! /= d;
    }
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = a[r]![c]!;
      if (f === 0) continue;
      for (let k = 0; k < n; k++) {
        a[r]![k]! -= f * a[c]![k]!;
        inv[r]![k]! -= f * inv[c]![k]!;
      }
    }
  }
  return inv;
}

/** Smooths x with a Savitzky-Golay filter of the given odd window and polynomial order. */
export function savitzkyGolay(x: ArrayLike<number>, window: number, order: number): Float64Array {
  if (!Number.isInteger(window) || window < 3 || window % 2 === 0)
    throw new RangeError(`Savitzky-Golay window must be odd and >= 3, got ${window}`);
  if (!Number.isInteger(order) || order < 0 || order >= window)
    throw new RangeError(`Savitzky-Golay order must be in [0, window), got ${order}`);
  const n = x.length;
  const out = new Float64Array(n);
  if (n < window) {
    out.set(Array.from(x));
    return out;
  }
  const rows = weights(window, order);
  const half = (window - 1) / 2;
  const centre = rows[half]!;
  for (let i = half; i < n - half; i++) {
    let s = 0;
    for (let j = 0; j < window; j++) s += centre[j]! * x[i - half + j]!;
    out[i] = s;
  }
  for (let i = 0; i < half; i++) {
    let s = 0;
    let e = 0;
    const rowStart = rows[i]!;
    const rowEnd = rows[window - half + i]!;
    for (let j = 0; j < window; j++) {
      s += rowStart[j]! * x[j]!;
      e += rowEnd[j]! * x[n - window + j]!;
    }
    out[i] = s;
    out[n - half + i] = e;
  }
  return out;
}
