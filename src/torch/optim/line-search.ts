// The strong Wolfe line search of LBFGS, in PyTorch 1.13's algorithm (torch/optim/lbfgs.py,
// _strong_wolfe and _cubic_interpolate, ported there from Torch7's lswolfe.lua and
// polyinterp.lua): bracket an interval that holds a point meeting the strong Wolfe conditions,
// then zoom into it by safeguarded cubic interpolation. Scalars are numbers (double precision).
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';

// Python's max/min of two: the first argument on ties and where a comparison fails (NaN)
const pyMax = (a: number, b: number): number => (b > a ? b : a);
const pyMin = (a: number, b: number): number => (b < a ? b : a);

/** The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to bounds (default [x1, x2] sorted). */
export function cubicInterpolate(
  x1: number,
  f1: number,
  g1: number,
  x2: number,
  f2: number,
  g2: number,
  bounds?: [number, number],
): number {
  const [lo, hi] = bounds ?? (x1 <= x2 ? [x1, x2] : [x2, x1]);
  const d1 = g1 + g2 - (3 * (f1 - f2)) / (x1 - x2);
  const d2Square = d1 ** 2 - g1 * g2;
  if (d2Square >= 0) {
    const d2 = Math.sqrt(d2Square);
    const minPos =
      x1 <= x2
        ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return pyMin(pyMax(minPos, lo), hi);
  }
  return (lo + hi) / 2;
}

/** The objective along the search direction: the loss and flat gradient at x + step x direction (x restored after). */
export type DirectionalObjective = (step: number, direction: Tensor) => [number, Tensor];

/** What strongWolfe found: the loss f, flat gradient g and step t of the point, and the objective's evaluations. */
export interface LineSearchResult {
  f: number;
  g: Tensor;
  t: number;
  evals: number;
}

/**
 * The strong Wolfe line search from step t along d, starting from loss f, flat gradient g and
 * directional derivative gtd (c1 1e-4, c2 0.9, at most 25 evaluations, as PyTorch's defaults).
 */
export function strongWolfe(
  objective: DirectionalObjective,
  t: number,
  d: Tensor,
  f: number,
  g: Tensor,
  gtd: number,
  toleranceChange = 1e-9,
  c1 = 1e-4,
  c2 = 0.9,
  maxLs = 25,
): LineSearchResult {
  const dNorm = d.abs().max().item();
  let [fNew, gNew] = objective(t, d);
  let evals = 1;
  let gtdNew = aten.dot(gNew, d).item();
  let tPrev = 0;
  let fPrev = f;
  let gPrev = g;
  let gtdPrev = gtd;
  let done = false;
  let lsIter = 0;
  let bracket: number[] = [];
  let bracketF: number[] = [];
  let bracketG: Tensor[] = [];
  let bracketGtd: number[] = [];
  while (lsIter < maxLs) {
    if (fNew > f + c1 * t * gtd || (lsIter > 1 && fNew >= fPrev)) {
      [bracket, bracketF, bracketG, bracketGtd] = [
        [tPrev, t],
        [fPrev, fNew],
        [gPrev, gNew],
        [gtdPrev, gtdNew],
      ];
      break;
    }
    if (Math.abs(gtdNew) <= -c2 * gtd) {
      [bracket, bracketF, bracketG] = [[t], [fNew], [gNew]];
      done = true;
      break;
    }
    if (gtdNew >= 0) {
      [bracket, bracketF, bracketG, bracketGtd] = [
        [tPrev, t],
        [fPrev, fNew],
        [gPrev, gNew],
        [gtdPrev, gtdNew],
      ];
      break;
    }
    // extrapolate by cubic interpolation, between 1.01 and 10 times the current step
    const minStep = t + 0.01 * (t - tPrev);
    const maxStep = t * 10;
    const tmp = t;
    t = cubicInterpolate(tPrev, fPrev, gtdPrev, t, fNew, gtdNew, [minStep, maxStep]);
    tPrev = tmp;
    fPrev = fNew;
    gPrev = gNew;
    gtdPrev = gtdNew;
    [fNew, gNew] = objective(t, d);
    evals += 1;
    gtdNew = aten.dot(gNew, d).item();
    lsIter += 1;
  }
  if (lsIter === maxLs)
    [bracket, bracketF, bracketG] = [
      [0, t],
      [f, fNew],
      [g, gNew],
    ];

  // zoom: refine the bracket until a point meets the conditions
  let insufficientProgress = false;
  let [low, high] = bracketF[0]! <= bracketF[bracketF.length - 1]! ? [0, 1] : [1, 0];
  while (!done && lsIter < maxLs) {
    if (Math.abs(bracket[1]! - bracket[0]!) * dNorm < toleranceChange) break;
    t = cubicInterpolate(
      bracket[0]!,
      bracketF[0]!,
      bracketGtd[0]!,
      bracket[1]!,
      bracketF[1]!,
      bracketGtd[1]!,
    );
    // a trial point too close to an end of the bracket moves 10% of its length inside
    const top = pyMax(bracket[0]!, bracket[1]!);
    const bottom = pyMin(bracket[0]!, bracket[1]!);
    const eps = 0.1 * (top - bottom);
    if (pyMin(top - t, t - bottom) < eps) {
      if (insufficientProgress || t >= top || t <= bottom) {
        t = Math.abs(t - top) < Math.abs(t - bottom) ? top - eps : bottom + eps;
        insufficientProgress = false;
      } else insufficientProgress = true;
    } else insufficientProgress = false;

    [fNew, gNew] = objective(t, d);
    evals += 1;
    gtdNew = aten.dot(gNew, d).item();
    lsIter += 1;

    if (fNew > f + c1 * t * gtd || fNew >= bracketF[low]!) {
      // Armijo's condition fails, or no lower than the lowest point: the new high end
      bracket[high] = t;
      bracketF[high] = fNew;
      bracketG[high] = gNew;
      bracketGtd[high] = gtdNew;
      [low, high] = bracketF[0]! <= bracketF[1]! ? [0, 1] : [1, 0];
    } else {
      if (Math.abs(gtdNew) <= -c2 * gtd) done = true;
      else if (gtdNew * (bracket[high]! - bracket[low]!) >= 0) {
        // the old high end becomes the new low one
        bracket[high] = bracket[low]!;
        bracketF[high] = bracketF[low]!;
        bracketG[high] = bracketG[low]!;
        bracketGtd[high] = bracketGtd[low]!;
      }
      bracket[low] = t;
      bracketF[low] = fNew;
      bracketG[low] = gNew;
      bracketGtd[low] = gtdNew;
    }
  }
  return { f: bracketF[low]!, g: bracketG[low]!, t: bracket[low]!, evals };
}
