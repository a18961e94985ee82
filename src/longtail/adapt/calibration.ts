// Calibration of a model's scores on the held-out validation split, fitted after training:
// temperature scaling (softmax(s / T)) and bias-corrected temperature scaling (BCTS,
// softmax(s / T + b) with one bias per class; Alexandari, Kundaje and Shrikumar, ICML 2020), the
// calibration that makes EM prior estimation hard to beat under label shift.
//
// The validation split is balanced, but the scores may stand for another source prior (a plain
// CE model's logits carry the training prior). The NLL is therefore weighted per class by
// C * sourcePrior[c], so the calibrated probabilities are those of the source distribution that
// EM then starts from. Both fits are convex in (1/T, b); L-BFGS over (log 1/T, b).

export type CalibrationKind = 'temperature' | 'bcts';

export interface Calibration {
  kind: CalibrationKind;
  temperature: number;
  /** Per-class biases (all zero for temperature scaling), mean zero. */
  biases: number[];
  /** Weighted mean NLL on the validation split before and after. */
  nll_before: number;
  nll_after: number;
  iterations: number;
}

/** The calibrated scores s / T + b ([n x C], float64). */
export function applyCalibration(scores: ArrayLike<number>, c: { temperature: number; biases: number[] }) {
  const classes = c.biases.length;
  const out = new Float64Array(scores.length);
  for (let k = 0; k < scores.length; k++) out[k] = scores[k]! / c.temperature + c.biases[k % classes]!;
  return out;
}

/** Weighted mean NLL of softmax(a * s + b) and its gradient in (a, b). */
function nllAndGradient(
  scores: ArrayLike<number>,
  labels: ArrayLike<number>,
  weights: Float64Array,
  a: number,
  b: number[],
) {
  const classes = b.length;
  const n = labels.length;
  const gb = new Array<number>(classes).fill(0);
  let ga = 0;
  let nll = 0;
  let total = 0;
  const z = new Float64Array(classes);
  for (let i = 0; i < n; i++) {
    const y = labels[i]!;
    const w = weights[y]!;
    if (w === 0) continue;
    let max = -Infinity;
    for (let c = 0; c < classes; c++) max = Math.max(max, (z[c] = a * scores[i * classes + c]! + b[c]!));
    let sum = 0;
    for (let c = 0; c < classes; c++) sum += Math.exp(z[c]! - max);
    const logSum = max + Math.log(sum);
    nll += w * (logSum - z[y]!);
    total += w;
    for (let c = 0; c < classes; c++) {
      const g = w * (Math.exp(z[c]! - logSum) - (c === y ? 1 : 0));
      ga += g * scores[i * classes + c]!;
      gb[c]! += g;
    }
  }
  if (total === 0) throw new Error('calibration: the validation split has no images');
  return { nll: nll / total, ga: ga / total, gb: gb.map((v) => v / total) };
}

/**
 * Fits temperature scaling or BCTS to validation scores [n x C] and labels. sourcePrior: the
 * class prior the scores stand for (default uniform, i.e. balanced scores).
 */
export function fitCalibration(
  scores: ArrayLike<number>,
  labels: ArrayLike<number>,
  classes: number,
  kind: CalibrationKind,
  options: { sourcePrior?: number[]; iterations?: number } = {},
): Calibration {
  if (scores.length !== labels.length * classes)
    throw new Error(`calibration: ${scores.length} scores for ${labels.length} labels x ${classes} classes`);
  const prior = options.sourcePrior ?? new Array<number>(classes).fill(1 / classes);
  const weights = Float64Array.from(prior, (p) => p * classes);
  // parameters x = (log a, b): a = 1 / T stays positive; temperature scaling fixes b = 0
  const fit = kind === 'bcts' ? classes : 0;
  const evaluate = (x: number[]) => {
    const a = Math.exp(x[0]!);
    const b = new Array<number>(classes).fill(0).map((_, c) => (fit ? x[1 + c]! : 0));
    const r = nllAndGradient(scores, labels, weights, a, b);
    return { value: r.nll, gradient: [r.ga * a, ...r.gb.slice(0, fit)] };
  };
  const before = evaluate(new Array<number>(1 + fit).fill(0)).value;
  const { x, value, iterations } = lbfgs(
    evaluate,
    new Array<number>(1 + fit).fill(0),
    options.iterations ?? 200,
  );
  const b = fit ? x.slice(1) : new Array<number>(classes).fill(0);
  const mean = b.reduce((s, v) => s + v, 0) / classes;
  return {
    kind,
    temperature: Math.exp(-x[0]!),
    biases: b.map((v) => v - mean),
    nll_before: before,
    nll_after: value,
    iterations,
  };
}

/** Minimizes a smooth function by L-BFGS (memory 10) with a backtracking Armijo line search. */
function lbfgs(
  f: (x: number[]) => { value: number; gradient: number[] },
  x0: number[],
  maxIterations: number,
): { x: number[]; value: number; iterations: number } {
  const dot = (u: number[], v: number[]) => u.reduce((s, ui, k) => s + ui * v[k]!, 0);
  let x = x0;
  let current = f(x);
  const history: { s: number[]; y: number[]; rho: number }[] = [];
  let it = 0;
  for (; it < maxIterations; it++) {
    const g = current.gradient;
    if (Math.sqrt(dot(g, g)) < 1e-7) break;
    // two-loop recursion: d = -H g
    const q = [...g];
    const alphas: number[] = [];
    for (let k = history.length - 1; k >= 0; k--) {
      const h = history[k]!;
      const alpha = h.rho * dot(h.s, q);
      alphas[k] = alpha;
      h.y.forEach((v, j) => (q[j]! -= alpha * v));
    }
    const last = history[history.length - 1];
    const gamma = last ? dot(last.s, last.y) / dot(last.y, last.y) : 1 / Math.max(1, Math.sqrt(dot(g, g)));
    let d = q.map((v) => v * gamma);
    for (let k = 0; k < history.length; k++) {
      const h = history[k]!;
      const beta = h.rho * dot(h.y, d);
      d = d.map((v, j) => v + h.s[j]! * (alphas[k]! - beta));
    }
    d = d.map((v) => -v);
    let slope = dot(g, d);
    if (!(slope < 0)) {
      d = g.map((v) => -v);
      slope = -dot(g, g);
      history.length = 0;
    }
    let step = 1;
    let next = f(x.map((v, j) => v + step * d[j]!));
    while (!(next.value <= current.value + 1e-4 * step * slope) && step > 1e-12) {
      step /= 2;
      next = f(x.map((v, j) => v + step * d[j]!));
    }
    if (!(next.value <= current.value + 1e-4 * step * slope)) break;
    const s = d.map((v) => v * step);
    const y = next.gradient.map((v, j) => v - g[j]!);
    const sy = dot(s, y);
    if (sy > 1e-12) {
      history.push({ s, y, rho: 1 / sy });
      if (history.length > 10) history.shift();
    }
    const improvement = current.value - next.value;
    x = x.map((v, j) => v + s[j]!);
    current = next;
    if (improvement < 1e-12) break;
  }
  return { x, value: current.value, iterations: it };
}
