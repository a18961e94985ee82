// Hot loops of the full / tied Gaussian mixture, generated once per feature count d with every
// loop over features unrolled: the d x d factor becomes local variables that V8 keeps in
// registers or on the stack, and the d(d+1)/2 scatter accumulators a small local Float64Array at
// constant indices (as fast, and far quicker for V8 to compile than as many locals, which
// matters on a short whole-process fit). On n = 100,000, d = 8, K = 5 this
// makes the Mahalanobis kernel about 5x faster than the equivalent nested loops over typed
// arrays (bench/gmm.ts). Only integers are spliced into the generated source; the same
// summation order as the loop versions is kept, so results are the same to the last bit.
// Above MAX_UNROLLED_FEATURES the generated functions would be too large to optimise well and
// the callers use plain loops.

export const MAX_UNROLLED_FEATURES = 24;

let unrollingEnabled = true;

/** Switches the generated kernels off (tests compare them with the loop versions). */
export function setUnrolledKernels(enabled: boolean): void {
  unrollingEnabled = enabled;
}

/**
 * out[i*k + c] = constant[c] - 0.5 * ||(x_i - mu_c) A_c||^2 for the upper-triangular factors A_c
 * stored d x d at factors[c * factorStride] (factorStride 0: one shared factor, the tied case).
 */
export type MahalanobisKernel = (
  data: Float64Array,
  n: number,
  means: Float64Array,
  factors: Float64Array,
  factorStride: number,
  constant: Float64Array,
  k: number,
  out: Float64Array,
) => void;

/**
 * scatter[c*d*d + a*d + b] (b <= a, lower triangle only) += sum_i r_ic (x_ia - mu_ca)(x_ib - mu_cb),
 * with r_ic = resp[i*k + c].
 */
export type ScatterKernel = (
  data: Float64Array,
  n: number,
  resp: Float64Array,
  k: number,
  means: Float64Array,
  scatter: Float64Array,
) => void;

/**
 * Calls of a new kernel on a two-sample input. V8 records type feedback from about the 8th call
 * on, and after some thousands of loop iterations it compiles the function with its optimising
 * compiler in the background; a thousand tiny calls (a few milliseconds in the interpreter) get
 * that far, so the first real call runs optimised code instead of interpreting the big loops
 * until an on-stack replacement is compiled, and then compiling the function a second time.
 */
const WARM_UP_CALLS = 1000;

/** The compiled kernels, by name and feature count. */
const compiledKernels = new Map<string, unknown>();

/**
 * The kernel `name` for d features: compiled once from the source lines `body` writes, over the
 * parameters `params`, and warmed up (WARM_UP_CALLS) on a two-sample input that takes both sides
 * of every branch, so that V8 optimises it with complete type feedback: code after the first
 * component's loop would otherwise have none yet, and the optimised code would be thrown away
 * and compiled again. On a short whole-process fit these compilations cost more than the EM
 * iterations. Undefined when the kernels are switched off or d is above MAX_UNROLLED_FEATURES.
 */
function compiledKernel<T>(
  name: string,
  d: number,
  params: readonly string[],
  body: () => string[],
): T | undefined {
  if (!unrollingEnabled || d > MAX_UNROLLED_FEATURES) return undefined;
  const key = `${name}/${d}`;
  let kernel = compiledKernels.get(key) as T | undefined;
  if (!kernel) {
    const compiled = new Function(...params, body().join('\n')) as (...args: unknown[]) => void;
    const args = params.map((param) => warmUpArgument(param, d));
    for (let call = 0; call < WARM_UP_CALLS; call++) compiled(...args);
    kernel = compiled as T;
    compiledKernels.set(key, kernel);
  }
  return kernel;
}

/** An argument for the warm-up call: two samples, two components, a zero responsibility. */
function warmUpArgument(param: string, d: number): number | Float64Array {
  if (param === 'n' || param === 'k') return 2;
  if (param === 'factorStride') return d * d;
  if (param === 'resp') return Float64Array.of(1, 0, 0.5, 0.5);
  return new Float64Array(2 * d * d).fill(0.5);
}

export function mahalanobisKernel(d: number): MahalanobisKernel | undefined {
  const params = ['data', 'n', 'means', 'factors', 'factorStride', 'constant', 'k', 'out'];
  return compiledKernel('mahalanobis', d, params, () => {
    const lines: string[] = [];
    lines.push('for (let c = 0; c < k; c++) {');
    lines.push(`  const ao = c * factorStride, mo = c * ${d}, cc = constant[c];`);
    for (let l = 0; l < d; l++) lines.push(`  const m${l} = means[mo + ${l}];`);
    for (let l = 0; l < d; l++)
      for (let j = l; j < d; j++) lines.push(`  const a${l}_${j} = factors[ao + ${l * d + j}];`);
    lines.push('  for (let i = 0; i < n; i++) {');
    lines.push(`    const xo = i * ${d};`);
    for (let l = 0; l < d; l++) lines.push(`    const t${l} = data[xo + ${l}] - m${l};`);
    lines.push('    let y = 0, sq = 0;');
    for (let j = 0; j < d; j++) {
      const terms = Array.from({ length: j + 1 }, (_, l) => `t${l} * a${l}_${j}`);
      lines.push(`    y = ${terms.join(' + ')}; sq += y * y;`);
    }
    lines.push('    out[i * k + c] = cc - 0.5 * sq;');
    lines.push('  }');
    lines.push('}');
    return lines;
  });
}

export function scatterKernel(d: number): ScatterKernel | undefined {
  const params = ['data', 'n', 'resp', 'k', 'means', 'scatter'];
  return compiledKernel('scatter', d, params, () => {
    const pairs: [number, number][] = [];
    for (let a = 0; a < d; a++) for (let b = 0; b <= a; b++) pairs.push([a, b]);
    const lines: string[] = [];
    lines.push('for (let c = 0; c < k; c++) {');
    lines.push(`  const mo = c * ${d}, so = c * ${d * d};`);
    for (let l = 0; l < d; l++) lines.push(`  const m${l} = means[mo + ${l}];`);
    lines.push(`  const acc = new Float64Array(${pairs.length});`);
    lines.push('  for (let i = 0; i < n; i++) {');
    lines.push('    const r = resp[i * k + c];');
    lines.push('    if (r === 0) continue;');
    lines.push(`    const xo = i * ${d};`);
    for (let l = 0; l < d; l++) lines.push(`    const t${l} = data[xo + ${l}] - m${l};`);
    for (let a = 0; a < d; a++) {
      lines.push(`    const r${a} = r * t${a};`);
      for (let b = 0; b <= a; b++) lines.push(`    acc[${(a * (a + 1)) / 2 + b}] += r${a} * t${b};`);
    }
    lines.push('  }');
    for (const [a, b] of pairs) lines.push(`  scatter[so + ${a * d + b}] += acc[${(a * (a + 1)) / 2 + b}];`);
    lines.push('}');
    return lines;
  });
}

/**
 * nk[c] += sum_i r_ic and sums[c*d + j] += sum_i r_ic x_ij (the weighted sums behind N_k and the
 * means), with r_ic = resp[i*k + c].
 */
export type WeightedSumKernel = (
  data: Float64Array,
  n: number,
  resp: Float64Array,
  k: number,
  nk: Float64Array,
  sums: Float64Array,
) => void;

/** vars[c*d + j] += sum_i r_ic (x_ij - mu_cj)^2 (the diagonal / spherical M step). */
export type DiagScatterKernel = (
  data: Float64Array,
  n: number,
  resp: Float64Array,
  k: number,
  means: Float64Array,
  vars: Float64Array,
) => void;

/**
 * out[i*k + c] = constant[c] - 0.5 * sum_j (x_ij - mu_cj)^2 prec[c*d + j] (diag), or with the
 * sum multiplied by prec[c] (spherical).
 */
export type DiagMahalanobisKernel = (
  data: Float64Array,
  n: number,
  means: Float64Array,
  prec: Float64Array,
  constant: Float64Array,
  k: number,
  out: Float64Array,
) => void;

export function weightedSumKernel(d: number): WeightedSumKernel | undefined {
  const params = ['data', 'n', 'resp', 'k', 'nk', 'sums'];
  return compiledKernel('weightedSum', d, params, () => {
    const lines: string[] = [];
    lines.push('for (let c = 0; c < k; c++) {');
    lines.push(`  let w = 0, ${Array.from({ length: d }, (_, j) => `s${j} = 0`).join(', ')};`);
    lines.push('  for (let i = 0; i < n; i++) {');
    lines.push('    const r = resp[i * k + c];');
    lines.push('    if (r === 0) continue;');
    lines.push(`    const xo = i * ${d};`);
    lines.push('    w += r;');
    for (let j = 0; j < d; j++) lines.push(`    s${j} += r * data[xo + ${j}];`);
    lines.push('  }');
    lines.push('  nk[c] += w;');
    for (let j = 0; j < d; j++) lines.push(`  sums[c * ${d} + ${j}] += s${j};`);
    lines.push('}');
    return lines;
  });
}

export function diagScatterKernel(d: number): DiagScatterKernel | undefined {
  const params = ['data', 'n', 'resp', 'k', 'means', 'vars'];
  return compiledKernel('diagScatter', d, params, () => {
    const lines: string[] = [];
    lines.push('for (let c = 0; c < k; c++) {');
    lines.push(`  const mo = c * ${d};`);
    for (let j = 0; j < d; j++) lines.push(`  const m${j} = means[mo + ${j}];`);
    lines.push(`  let ${Array.from({ length: d }, (_, j) => `v${j} = 0`).join(', ')};`);
    lines.push('  for (let i = 0; i < n; i++) {');
    lines.push('    const r = resp[i * k + c];');
    lines.push('    if (r === 0) continue;');
    lines.push(`    const xo = i * ${d};`);
    for (let j = 0; j < d; j++)
      lines.push(`    const t${j} = data[xo + ${j}] - m${j}; v${j} += r * t${j} * t${j};`);
    lines.push('  }');
    for (let j = 0; j < d; j++) lines.push(`  vars[mo + ${j}] += v${j};`);
    lines.push('}');
    return lines;
  });
}

export function diagMahalanobisKernel(d: number, spherical: boolean): DiagMahalanobisKernel | undefined {
  const params = ['data', 'n', 'means', 'prec', 'constant', 'k', 'out'];
  return compiledKernel(spherical ? 'sphericalMahalanobis' : 'diagMahalanobis', d, params, () => {
    const lines: string[] = [];
    lines.push('for (let c = 0; c < k; c++) {');
    lines.push(`  const mo = c * ${d}, cc = constant[c];`);
    for (let j = 0; j < d; j++) lines.push(`  const m${j} = means[mo + ${j}];`);
    if (spherical) lines.push('  const p = prec[c];');
    else for (let j = 0; j < d; j++) lines.push(`  const p${j} = prec[mo + ${j}];`);
    lines.push('  for (let i = 0; i < n; i++) {');
    lines.push(`    const xo = i * ${d};`);
    lines.push('    let t = 0, sq = 0;');
    for (let j = 0; j < d; j++) {
      lines.push(`    t = data[xo + ${j}] - m${j}; sq += ${spherical ? 't * t' : `t * t * p${j}`};`);
    }
    if (spherical) lines.push('    sq *= p;');
    lines.push('    out[i * k + c] = cc - 0.5 * sq;');
    lines.push('  }');
    lines.push('}');
    return lines;
  });
}
