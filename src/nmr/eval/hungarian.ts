// Minimum-cost assignment (Hungarian algorithm with potentials, O(n^2 m)) for rectangular cost
// matrices; used to match predicted and true peaks one to one.

/** Returns, for each row, the assigned column or -1 (when rows outnumber columns). */
export function hungarian(cost: number[][]): number[] {
  const rows = cost.length;
  if (rows === 0) return [];
  const cols = cost[0]!.length;
  const transpose = rows > cols;
  const a = transpose ? cols : rows;
  const b = transpose ? rows : cols;
  const c = (i: number, j: number): number => (transpose ? cost[j]![i]! : cost[i]![j]!);
  // 1-based arrays as in the classic e-maxx formulation; a <= b.
  const u = new Float64Array(a + 1);
  const v = new Float64Array(b + 1);
  const p = new Int32Array(b + 1);
  const way = new Int32Array(b + 1);
  for (let i = 1; i <= a; i++) {
    p[0] = i;
    let j0 = 0;
    const minv = new Float64Array(b + 1).fill(Infinity);
    const used = new Uint8Array(b + 1);
    do {
      used[j0] = 1;
      const i0 = p[j0]!;
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= b; j++) {
        if (used[j]) continue;
        const cur = c(i0 - 1, j - 1) - u[i0]! - v[j]!;
        if (cur < minv[j]!) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j]! < delta) {
          delta = minv[j]!;
          j1 = j;
        }
      }
      for (let j = 0; j <= b; j++) {
        if (used[j]) {
          u[p[j]!]! += delta;
          v[j]! -= delta;
        } else minv[j]! -= delta;
      }
      j0 = j1;
    } while (p[j0] !== 0);
    do {
      const j1 = way[j0]!;
      p[j0] = p[j1]!;
      j0 = j1;
    } while (j0);
  }
  const result = new Array<number>(rows).fill(-1);
  for (let j = 1; j <= b; j++) {
    if (p[j] === 0) continue;
    if (transpose) result[j - 1] = p[j]! - 1;
    else result[p[j]! - 1] = j - 1;
  }
  return result;
}

/**
 * Matches predicted to true positions within a tolerance (per true peak); pairs farther apart
 * than the tolerance are not matches. Returns index pairs [pred, true].
 */
export function matchPeaks(pred: number[], truth: number[], tolerance: number[]): [number, number][] {
  if (pred.length === 0 || truth.length === 0) return [];
  const BIG = 1e12;
  const cost = pred.map((p) =>
    truth.map((t, j) => (Math.abs(p - t) <= tolerance[j]! ? Math.abs(p - t) : BIG)),
  );
  const assign = hungarian(cost);
  const pairs: [number, number][] = [];
  assign.forEach((j, i) => {
    if (j >= 0 && cost[i]![j]! < BIG) pairs.push([i, j]);
  });
  return pairs;
}
