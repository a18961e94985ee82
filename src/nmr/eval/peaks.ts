// Peak picking, line width and integrals on real spectra (used by the metrics).

export interface PickedPeak {
  /** Fractional index from a parabola through the maximum and its neighbours. */
  index: number;
  height: number;
  /** The sample value at the maximum (what the threshold is compared with). */
  value: number;
}

/** Local maxima above threshold that are the largest value within +-halfWindow points. */
export function pickPeaks(x: ArrayLike<number>, threshold: number, halfWindow = 2): PickedPeak[] {
  const n = x.length;
  const out: PickedPeak[] = [];
  for (let i = 1; i < n - 1; i++) {
    const v = x[i]!;
    if (v < threshold || v < x[i - 1]! || v <= x[i + 1]!) continue;
    let isMax = true;
    for (let d = -halfWindow; d <= halfWindow && isMax; d++) {
      const j = i + d;
      if (d !== 0 && j >= 0 && j < n && (x[j]! > v || (x[j]! === v && j < i))) isMax = false;
    }
    if (!isMax) continue;
    const a = x[i - 1]!;
    const c = x[i + 1]!;
    const denom = a - 2 * v + c;
    const off = denom < 0 ? (0.5 * (a - c)) / denom : 0;
    out.push({ index: i + off, height: v - 0.25 * (a - c) * off, value: v });
  }
  return out;
}

/** Full width at half maximum (points) of the peak whose top is near index; NaN if no half crossing. */
export function fwhmAt(x: ArrayLike<number>, index: number, baseline = 0): number {
  const n = x.length;
  let top = Math.round(index);
  // Climb to the local maximum (the output may be slightly offset).
  for (let guard = 0; guard < 10; guard++) {
    if (top > 0 && x[top - 1]! > x[top]!) top--;
    else if (top < n - 1 && x[top + 1]! > x[top]!) top++;
    else break;
  }
  const half = baseline + (x[top]! - baseline) / 2;
  if (!(x[top]! > baseline)) return NaN;
  let l = top;
  while (l > 0 && x[l]! > half) l--;
  let r = top;
  while (r < n - 1 && x[r]! > half) r++;
  if (x[l]! > half || x[r]! > half) return NaN;
  const left = l + (half - x[l]!) / (x[l + 1]! - x[l]!);
  const right = r - (half - x[r]!) / (x[r - 1]! - x[r]!);
  return right - left;
}

/** Sum of x over [from, to] (inclusive). */
export function integral(x: ArrayLike<number>, from: number, to: number): number {
  let s = 0;
  for (let i = Math.max(0, from); i <= Math.min(x.length - 1, to); i++) s += x[i]!;
  return s;
}
