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
 * Only peaks joined by a pair within tolerance can affect each other's assignment, so the
 * assignment is solved per connected group of such peaks: on a noisy spectrum picked at a low
 * threshold most predicted peaks are near no true peak, and one assignment over all of them
 * would cost O(n^2 m) for nothing.
 */
export function matchPeaks(pred: number[], truth: number[], tolerance: number[]): [number, number][] {
  if (pred.length === 0 || truth.length === 0) return [];
  const parent = Array.from({ length: pred.length + truth.length }, (_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const maxTol = Math.max(...tolerance);
  const byPos = pred.map((p, i) => [p, i] as const).sort((a, b) => a[0] - b[0]);
  const near: [number, number][] = [];
  truth.forEach((t, j) => {
    // First predicted peak at or after t - maxTol (binary search), then scan while close.
    let lo = 0;
    let hi = byPos.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (byPos[mid]![0] < t - maxTol) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < byPos.length && byPos[k]![0] <= t + maxTol; k++) {
      const [p, i] = byPos[k]!;
      if (Math.abs(p - t) > tolerance[j]!) continue;
      near.push([i, j]);
      parent[find(i)] = find(pred.length + j);
    }
  });
  const groups = new Map<number, { preds: Set<number>; truths: Set<number> }>();
  for (const [i, j] of near) {
    const root = find(i);
    let g = groups.get(root);
    if (!g) groups.set(root, (g = { preds: new Set(), truths: new Set() }));
    g.preds.add(i);
    g.truths.add(j);
  }
  const pairs: [number, number][] = [];
  for (const g of groups.values()) {
    const ps = [...g.preds];
    const ts = [...g.truths];
    if (ps.length === 1 && ts.length === 1) {
      pairs.push([ps[0]!, ts[0]!]);
      continue;
    }
    const BIG = 1e12;
    const cost = ps.map((i) =>
      ts.map((j) => (Math.abs(pred[i]! - truth[j]!) <= tolerance[j]! ? Math.abs(pred[i]! - truth[j]!) : BIG)),
    );
    hungarian(cost).forEach((c, r) => {
      if (c >= 0 && cost[r]![c]! < BIG) pairs.push([ps[r]!, ts[c]!]);
    });
  }
  return pairs.sort((a, b) => a[0] - b[0]);
}
