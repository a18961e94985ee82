// Special functions (torch.special): PyTorch 1.13's names in camelCase over libtorch's special_*
// kernels, so values and gradients are PyTorch's (functions without a derivative in libtorch,
// such as the Bessel functions and the polynomials, raise an error on backward as they do in
// PyTorch). Arguments that PyTorch takes by keyword only (`decimals`, `dtype`) are an options
// object here. The functions of two arguments take a number for either one, not for both.
import { Tensor } from './tensor.js';
import { tidy } from './scope.js';
import * as aten from './generated/aten.js';
import type { DType } from './dtype.js';
import { checksOf } from '../util/arguments.js';

/** `value` as a Tensor, or an error naming `special.fn` and the argument. */
function tensorArg(fn: string, value: unknown, name = 'input'): Tensor {
  if (!(value instanceof Tensor)) checksOf(`special.${fn}`).fail(name, 'a Tensor', value);
  return value as Tensor;
}

/** The three overloads of a function of two tensors, one of which may be a number. */
interface PairOps {
  both: (a: Tensor, b: Tensor) => Tensor;
  firstScalar: (a: number, b: Tensor) => Tensor;
  secondScalar: (a: Tensor, b: number) => Tensor;
}

function pair(fn: string, a: unknown, b: unknown, names: [string, string], ops: PairOps): Tensor {
  const c = checksOf(`special.${fn}`);
  const aTensor = a instanceof Tensor;
  const bTensor = b instanceof Tensor;
  if (!aTensor && typeof a !== 'number') c.fail(names[0], 'a Tensor or a number', a);
  if (!bTensor && typeof b !== 'number') c.fail(names[1], 'a Tensor or a number', b);
  if (aTensor && bTensor) return ops.both(a, b);
  if (bTensor) return ops.firstScalar(a as number, b);
  if (aTensor) return ops.secondScalar(a, b as number);
  return c.fail(names[1], `a Tensor when ${names[0]} is a number (wrap one of them in torch.tensor)`, b);
}

// ---- Error functions and the normal distribution ----

/** The error function erf(x) = 2/√π ∫₀ˣ exp(-t²) dt, elementwise (torch.special.erf). */
export function erf(input: Tensor): Tensor {
  return aten.special_erf(tensorArg('erf', input));
}
/** The complementary error function 1 - erf(x) (torch.special.erfc). */
export function erfc(input: Tensor): Tensor {
  return aten.special_erfc(tensorArg('erfc', input));
}
/** The scaled complementary error function exp(x²) erfc(x), finite for large x (torch.special.erfcx). */
export function erfcx(input: Tensor): Tensor {
  return aten.special_erfcx(tensorArg('erfcx', input));
}
/** The inverse error function on [-1, 1] (±Infinity at ±1, NaN outside) (torch.special.erfinv). */
export function erfinv(input: Tensor): Tensor {
  return aten.special_erfinv(tensorArg('erfinv', input));
}
/** The standard normal distribution function Φ(x) (torch.special.ndtr). */
export function ndtr(input: Tensor): Tensor {
  return aten.special_ndtr(tensorArg('ndtr', input));
}
/** The inverse of Φ on [0, 1], the normal quantile (±Infinity at 1 and 0) (torch.special.ndtri). */
export function ndtri(input: Tensor): Tensor {
  return aten.special_ndtri(tensorArg('ndtri', input));
}
/** log Φ(x), accurate far in the lower tail (torch.special.log_ndtr). */
export function logNdtr(input: Tensor): Tensor {
  return aten.special_log_ndtr(tensorArg('logNdtr', input));
}

// ---- Exponentials, logarithms and the logistic function ----

/** 2^x (torch.special.exp2). */
export function exp2(input: Tensor): Tensor {
  return aten.special_exp2(tensorArg('exp2', input));
}
/** exp(x) - 1, accurate near 0 (torch.special.expm1). */
export function expm1(input: Tensor): Tensor {
  return aten.special_expm1(tensorArg('expm1', input));
}
/** log(1 + x), accurate near 0 (torch.special.log1p). */
export function log1p(input: Tensor): Tensor {
  return aten.special_log1p(tensorArg('log1p', input));
}
/** The logistic sigmoid 1 / (1 + exp(-x)) (torch.special.expit). */
export function expit(input: Tensor): Tensor {
  return aten.special_expit(tensorArg('expit', input));
}
/**
 * The log-odds log(p / (1 - p)) (torch.special.logit); with `eps`, p is first clamped to
 * [eps, 1 - eps] (its gradient is 0 outside), without it 0 and 1 give -Infinity and Infinity.
 */
export function logit(input: Tensor, eps: number | null = null): Tensor {
  tensorArg('logit', input);
  if (eps !== null) checksOf('special.logit').number(eps, 'eps', { min: 0, max: 1 });
  return aten.special_logit(input, eps);
}
/** x log(y), 0 where x is 0 and y is not NaN (torch.special.xlogy). */
export function xlogy(input: Tensor | number, other: Tensor | number): Tensor {
  return pair('xlogy', input, other, ['input', 'other'], {
    both: aten.special_xlogy,
    firstScalar: aten.special_xlogy_self_scalar,
    secondScalar: aten.special_xlogy_other_scalar,
  });
}
/** x log(1 + y), 0 where x is 0 and y is not NaN (torch.special.xlog1py). */
export function xlog1py(input: Tensor | number, other: Tensor | number): Tensor {
  return pair('xlog1py', input, other, ['input', 'other'], {
    both: aten.special_xlog1py,
    firstScalar: aten.special_xlog1py_self_scalar,
    secondScalar: aten.special_xlog1py_other_scalar,
  });
}
/** The entropy term -x log(x): 0 at 0, -Infinity below 0 (torch.special.entr). */
export function entr(input: Tensor): Tensor {
  return aten.special_entr(tensorArg('entr', input));
}
/** The normalised sinc sin(πx) / (πx), 1 at 0 (torch.special.sinc). */
export function sinc(input: Tensor): Tensor {
  return aten.special_sinc(tensorArg('sinc', input));
}
/** Rounds half to even to `decimals` decimal places (negative: tens, hundreds...) (torch.special.round). */
export function round(input: Tensor, options: { decimals?: number } = {}): Tensor {
  tensorArg('round', input);
  const c = checksOf('special.round');
  const decimals = c.integer(c.object(options, 'options').decimals ?? 0, 'decimals');
  return aten.special_round(input, decimals);
}
/** softmax along `dim`, computed in `dtype` when given (torch.special.softmax). */
export function softmax(input: Tensor, dim: number, options: { dtype?: DType } = {}): Tensor {
  tensorArg('softmax', input);
  const c = checksOf('special.softmax');
  c.integer(dim, 'dim');
  return aten.special_softmax(input, dim, (c.object(options, 'options').dtype as DType | undefined) ?? null);
}
/** log of softmax along `dim`, computed in `dtype` when given (torch.special.log_softmax). */
export function logSoftmax(input: Tensor, dim: number, options: { dtype?: DType } = {}): Tensor {
  tensorArg('logSoftmax', input);
  const c = checksOf('special.logSoftmax');
  c.integer(dim, 'dim');
  return aten.special_log_softmax(
    input,
    dim,
    (c.object(options, 'options').dtype as DType | undefined) ?? null,
  );
}
/** log Σ exp(x) over `dim` without overflow (torch.special.logsumexp). */
export function logsumexp(input: Tensor, dim: number | number[], keepdim = false): Tensor {
  return aten.special_logsumexp(tensorArg('logsumexp', input), dim, keepdim);
}

// ---- The gamma function and its relatives ----

/** log |Γ(x)| (torch.special.gammaln; Infinity at 0 and the negative integers). */
export function gammaln(input: Tensor): Tensor {
  return aten.special_gammaln(tensorArg('gammaln', input));
}
/** The digamma function ψ(x) = d/dx log Γ(x) (torch.special.digamma). */
export function digamma(input: Tensor): Tensor {
  return aten.special_digamma(tensorArg('digamma', input));
}
/** The digamma function ψ(x): digamma's other name (torch.special.psi). */
export function psi(input: Tensor): Tensor {
  return aten.special_psi(tensorArg('psi', input));
}
/** The n-th derivative of the digamma function, n ≥ 0 (torch.special.polygamma). */
export function polygamma(n: number, input: Tensor): Tensor {
  checksOf('special.polygamma').integer(n, 'n', { min: 0 });
  return aten.special_polygamma(n, tensorArg('polygamma', input));
}
/** The multivariate log-gamma function of dimension p ≥ 1; every element must exceed (p - 1) / 2 (torch.special.multigammaln). */
export function multigammaln(input: Tensor, p: number): Tensor {
  tensorArg('multigammaln', input);
  checksOf('special.multigammaln').integer(p, 'p', { min: 1 });
  return aten.special_multigammaln(input, p);
}
/** The regularised lower incomplete gamma function P(a, x) (torch.special.gammainc; no gradient in libtorch). */
export function gammainc(input: Tensor, other: Tensor): Tensor {
  return aten.special_gammainc(tensorArg('gammainc', input), tensorArg('gammainc', other, 'other'));
}
/** The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x) (torch.special.gammaincc; no gradient in libtorch). */
export function gammaincc(input: Tensor, other: Tensor): Tensor {
  return aten.special_gammaincc(tensorArg('gammaincc', input), tensorArg('gammaincc', other, 'other'));
}
/** The Hurwitz zeta function ζ(x, q) = Σₖ (k + q)^(-x) (torch.special.zeta; a gradient for q only). */
export function zeta(input: Tensor | number, other: Tensor | number): Tensor {
  return pair('zeta', input, other, ['input', 'other'], {
    both: aten.special_zeta,
    firstScalar: aten.special_zeta_self_scalar,
    secondScalar: aten.special_zeta_other_scalar,
  });
}

// ---- Bessel functions ----

/** The modified Bessel function of the first kind of order 0, I₀(x) (torch.special.i0). */
export function i0(input: Tensor): Tensor {
  return aten.special_i0(tensorArg('i0', input));
}
/** The exponentially scaled I₀: exp(-|x|) I₀(x) (torch.special.i0e). */
export function i0e(input: Tensor): Tensor {
  return aten.special_i0e(tensorArg('i0e', input));
}
/** The modified Bessel function of the first kind of order 1, I₁(x) (torch.special.i1). */
export function i1(input: Tensor): Tensor {
  return aten.special_i1(tensorArg('i1', input));
}
/** The exponentially scaled I₁: exp(-|x|) I₁(x) (torch.special.i1e). */
export function i1e(input: Tensor): Tensor {
  return aten.special_i1e(tensorArg('i1e', input));
}
/** The Airy function Ai(x) (torch.special.airy_ai; no gradient in libtorch). */
export function airyAi(input: Tensor): Tensor {
  return aten.special_airy_ai(tensorArg('airyAi', input));
}
/** The Bessel function of the first kind of order 0, J₀(x) (torch.special.bessel_j0; no gradient in libtorch). */
export function besselJ0(input: Tensor): Tensor {
  return aten.special_bessel_j0(tensorArg('besselJ0', input));
}
/** The Bessel function of the first kind of order 1, J₁(x) (torch.special.bessel_j1; no gradient in libtorch). */
export function besselJ1(input: Tensor): Tensor {
  return aten.special_bessel_j1(tensorArg('besselJ1', input));
}
/** The Bessel function of the second kind of order 0, Y₀(x) (torch.special.bessel_y0; no gradient in libtorch). */
export function besselY0(input: Tensor): Tensor {
  return aten.special_bessel_y0(tensorArg('besselY0', input));
}
/** The Bessel function of the second kind of order 1, Y₁(x) (torch.special.bessel_y1; no gradient in libtorch). */
export function besselY1(input: Tensor): Tensor {
  return aten.special_bessel_y1(tensorArg('besselY1', input));
}
/** I₀(x) (torch.special.modified_bessel_i0; no gradient in libtorch, unlike i0). */
export function modifiedBesselI0(input: Tensor): Tensor {
  return aten.special_modified_bessel_i0(tensorArg('modifiedBesselI0', input));
}
/** I₁(x) (torch.special.modified_bessel_i1; no gradient in libtorch, unlike i1). */
export function modifiedBesselI1(input: Tensor): Tensor {
  return aten.special_modified_bessel_i1(tensorArg('modifiedBesselI1', input));
}
/** The modified Bessel function of the second kind of order 0, K₀(x) (torch.special.modified_bessel_k0; no gradient in libtorch). */
export function modifiedBesselK0(input: Tensor): Tensor {
  return aten.special_modified_bessel_k0(tensorArg('modifiedBesselK0', input));
}
/** The modified Bessel function of the second kind of order 1, K₁(x) (torch.special.modified_bessel_k1; no gradient in libtorch). */
export function modifiedBesselK1(input: Tensor): Tensor {
  return aten.special_modified_bessel_k1(tensorArg('modifiedBesselK1', input));
}
/** exp(x) K₀(x) (torch.special.scaled_modified_bessel_k0; no gradient in libtorch). */
export function scaledModifiedBesselK0(input: Tensor): Tensor {
  return aten.special_scaled_modified_bessel_k0(tensorArg('scaledModifiedBesselK0', input));
}
/** exp(x) K₁(x) (torch.special.scaled_modified_bessel_k1; no gradient in libtorch). */
export function scaledModifiedBesselK1(input: Tensor): Tensor {
  return aten.special_scaled_modified_bessel_k1(tensorArg('scaledModifiedBesselK1', input));
}
/** The spherical Bessel function of the first kind of order 0, sin(x) / x (torch.special.spherical_bessel_j0; no gradient in libtorch). */
export function sphericalBesselJ0(input: Tensor): Tensor {
  return aten.special_spherical_bessel_j0(tensorArg('sphericalBesselJ0', input));
}

// ---- Orthogonal polynomials: degree n (a tensor or a number, at most 100,000), no gradients in libtorch ----

/**
 * The highest degree the polynomials take. libtorch evaluates the recurrence in n steps for each
 * element, so a degree of 2^53 (a typo, or a value from an untrusted caller) would keep the
 * process busy for years; in float64 no recurrence of 100,000 steps keeps a useful digit anyway.
 */
const MAX_POLYNOMIAL_DEGREE = 100_000;

function polynomial(fn: string, input: unknown, n: unknown, ops: PairOps): Tensor {
  const degree =
    typeof n === 'number'
      ? Math.abs(n)
      : n instanceof Tensor && n.numel > 0 && n.dtype !== 'bool'
        ? tidy(() => n.abs().max().item())
        : 0;
  // NaN passes (libtorch answers NaN at once); the comparison also catches Infinity
  if (degree > MAX_POLYNOMIAL_DEGREE)
    checksOf(`special.${fn}`).fail(
      'n',
      `a degree of at most ${MAX_POLYNOMIAL_DEGREE}`,
      n instanceof Tensor ? degree : n,
    );
  return pair(fn, input, n, ['input', 'n'], ops);
}

/** The Chebyshev polynomial of the first kind Tₙ(x) (torch.special.chebyshev_polynomial_t). */
export function chebyshevPolynomialT(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('chebyshevPolynomialT', input, n, {
    both: aten.special_chebyshev_polynomial_t,
    firstScalar: aten.special_chebyshev_polynomial_t_x_scalar,
    secondScalar: aten.special_chebyshev_polynomial_t_n_scalar,
  });
}
/** The Chebyshev polynomial of the second kind Uₙ(x) (torch.special.chebyshev_polynomial_u). */
export function chebyshevPolynomialU(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('chebyshevPolynomialU', input, n, {
    both: aten.special_chebyshev_polynomial_u,
    firstScalar: aten.special_chebyshev_polynomial_u_x_scalar,
    secondScalar: aten.special_chebyshev_polynomial_u_n_scalar,
  });
}
/** The Chebyshev polynomial of the third kind Vₙ(x) (torch.special.chebyshev_polynomial_v). */
export function chebyshevPolynomialV(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('chebyshevPolynomialV', input, n, {
    both: aten.special_chebyshev_polynomial_v,
    firstScalar: aten.special_chebyshev_polynomial_v_x_scalar,
    secondScalar: aten.special_chebyshev_polynomial_v_n_scalar,
  });
}
/** The Chebyshev polynomial of the fourth kind Wₙ(x) (torch.special.chebyshev_polynomial_w). */
export function chebyshevPolynomialW(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('chebyshevPolynomialW', input, n, {
    both: aten.special_chebyshev_polynomial_w,
    firstScalar: aten.special_chebyshev_polynomial_w_x_scalar,
    secondScalar: aten.special_chebyshev_polynomial_w_n_scalar,
  });
}
/** Tₙ on [0, 1]: Tₙ(2x - 1) (torch.special.shifted_chebyshev_polynomial_t). */
export function shiftedChebyshevPolynomialT(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('shiftedChebyshevPolynomialT', input, n, {
    both: aten.special_shifted_chebyshev_polynomial_t,
    firstScalar: aten.special_shifted_chebyshev_polynomial_t_x_scalar,
    secondScalar: aten.special_shifted_chebyshev_polynomial_t_n_scalar,
  });
}
/** Uₙ on [0, 1]: Uₙ(2x - 1) (torch.special.shifted_chebyshev_polynomial_u). */
export function shiftedChebyshevPolynomialU(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('shiftedChebyshevPolynomialU', input, n, {
    both: aten.special_shifted_chebyshev_polynomial_u,
    firstScalar: aten.special_shifted_chebyshev_polynomial_u_x_scalar,
    secondScalar: aten.special_shifted_chebyshev_polynomial_u_n_scalar,
  });
}
/** Vₙ on [0, 1]: Vₙ(2x - 1) (torch.special.shifted_chebyshev_polynomial_v). */
export function shiftedChebyshevPolynomialV(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('shiftedChebyshevPolynomialV', input, n, {
    both: aten.special_shifted_chebyshev_polynomial_v,
    firstScalar: aten.special_shifted_chebyshev_polynomial_v_x_scalar,
    secondScalar: aten.special_shifted_chebyshev_polynomial_v_n_scalar,
  });
}
/** Wₙ on [0, 1]: Wₙ(2x - 1) (torch.special.shifted_chebyshev_polynomial_w). */
export function shiftedChebyshevPolynomialW(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('shiftedChebyshevPolynomialW', input, n, {
    both: aten.special_shifted_chebyshev_polynomial_w,
    firstScalar: aten.special_shifted_chebyshev_polynomial_w_x_scalar,
    secondScalar: aten.special_shifted_chebyshev_polynomial_w_n_scalar,
  });
}
/** The physicists' Hermite polynomial Hₙ(x) (torch.special.hermite_polynomial_h). */
export function hermitePolynomialH(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('hermitePolynomialH', input, n, {
    both: aten.special_hermite_polynomial_h,
    firstScalar: aten.special_hermite_polynomial_h_x_scalar,
    secondScalar: aten.special_hermite_polynomial_h_n_scalar,
  });
}
/** The probabilists' Hermite polynomial Heₙ(x) (torch.special.hermite_polynomial_he). */
export function hermitePolynomialHe(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('hermitePolynomialHe', input, n, {
    both: aten.special_hermite_polynomial_he,
    firstScalar: aten.special_hermite_polynomial_he_x_scalar,
    secondScalar: aten.special_hermite_polynomial_he_n_scalar,
  });
}
/** The Laguerre polynomial Lₙ(x) (torch.special.laguerre_polynomial_l). */
export function laguerrePolynomialL(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('laguerrePolynomialL', input, n, {
    both: aten.special_laguerre_polynomial_l,
    firstScalar: aten.special_laguerre_polynomial_l_x_scalar,
    secondScalar: aten.special_laguerre_polynomial_l_n_scalar,
  });
}
/** The Legendre polynomial Pₙ(x) (torch.special.legendre_polynomial_p). */
export function legendrePolynomialP(input: Tensor | number, n: Tensor | number): Tensor {
  return polynomial('legendrePolynomialP', input, n, {
    both: aten.special_legendre_polynomial_p,
    firstScalar: aten.special_legendre_polynomial_p_x_scalar,
    secondScalar: aten.special_legendre_polynomial_p_n_scalar,
  });
}
