// Small derivative-free optimizers (golden-section line search, Nelder-Mead) for the handful of
// parameters fitted in the pipeline (phase, sub-point shifts).

/** Minimizes f on [a, b] by golden-section search. */
export function goldenSection(
  f: (x: number) => number,
  a: number,
  b: number,
  tol = 1e-4,
  maxIter = 100,
): number {
  const g = (Math.sqrt(5) - 1) / 2;
  let c = b - g * (b - a);
  let d = a + g * (b - a);
  let fc = f(c);
  let fd = f(d);
  for (let i = 0; i < maxIter && Math.abs(b - a) > tol; i++) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return (a + b) / 2;
}

/** Nelder-Mead simplex minimization from x0 with initial step sizes. */
export function nelderMead(
  f: (x: number[]) => number,
  x0: number[],
  steps: number[],
  maxIter = 300,
  tol = 1e-8,
): number[] {
  const n = x0.length;
  let simplex = [x0.slice()];
  for (let i = 0; i < n; i++) {
    const p = x0.slice();
    p[i]! += steps[i]!;
    simplex.push(p);
  }
  let values = simplex.map(f);
  for (let iter = 0; iter < maxIter; iter++) {
    const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
    simplex = order.map(([, i]) => simplex[i]!);
    values = order.map(([v]) => v);
    if (Math.abs(values[n]! - values[0]!) < tol * (Math.abs(values[0]!) + tol)) break;
    const centroid = new Array<number>(n).fill(0);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) centroid[j]! += simplex[i]![j]! / n;
    const worst = simplex[n]!;
    const at = (t: number): number[] => centroid.map((c, j) => c + t * (worst[j]! - c));
    const reflected = at(-1);
    const fr = f(reflected);
    if (fr < values[0]!) {
      const expanded = at(-2);
      const fe = f(expanded);
      if (fe < fr) {
        simplex[n] = expanded;
        values[n] = fe;
      } else {
        simplex[n] = reflected;
        values[n] = fr;
      }
    } else if (fr < values[n - 1]!) {
      simplex[n] = reflected;
      values[n] = fr;
    } else {
      const contracted = fr < values[n]! ? at(-0.5) : at(0.5);
      const fcv = f(contracted);
      if (fcv < Math.min(fr, values[n]!)) {
        simplex[n] = contracted;
        values[n] = fcv;
      } else {
        for (let i = 1; i <= n; i++) {
          simplex[i] = simplex[i]!.map((v, j) => simplex[0]![j]! + 0.5 * (v - simplex[0]![j]!));
          values[i] = f(simplex[i]!);
        }
      }
    }
  }
  let best = 0;
  for (let i = 1; i <= n; i++) if (values[i]! < values[best]!) best = i;
  return simplex[best]!;
}
