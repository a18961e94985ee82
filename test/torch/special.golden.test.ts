// torch.special against PyTorch 1.13 (test/golden/torch/autograd_functional_special.json, from
// scripts/golden/autograd_functional_special.py), in float64 to 1e-10: every function's values on
// points that include 0, negative and large values, poles and the ends of domains, the gradients
// of out.sum() where libtorch has a derivative, and the argument errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { special as S } from '../../src/torch/index.js';
import { ArgumentError } from '../../src/util/arguments.js';
import { fromData, golden, same } from './autograd-functional-golden.js';

type T = torch.Tensor;
type Args = Record<string, T>;

const unary: Record<string, (x: T) => T> = {
  erf: S.erf,
  erfc: S.erfc,
  erfcx: S.erfcx,
  erfinv: S.erfinv,
  ndtr: S.ndtr,
  ndtri: S.ndtri,
  log_ndtr: S.logNdtr,
  exp2: S.exp2,
  expm1: S.expm1,
  log1p: S.log1p,
  expit: S.expit,
  entr: S.entr,
  sinc: S.sinc,
  gammaln: S.gammaln,
  digamma: S.digamma,
  psi: S.psi,
  i0: S.i0,
  i0e: S.i0e,
  i1: S.i1,
  i1e: S.i1e,
  airy_ai: S.airyAi,
  bessel_j0: S.besselJ0,
  bessel_j1: S.besselJ1,
  bessel_y0: S.besselY0,
  bessel_y1: S.besselY1,
  modified_bessel_i0: S.modifiedBesselI0,
  modified_bessel_i1: S.modifiedBesselI1,
  modified_bessel_k0: S.modifiedBesselK0,
  modified_bessel_k1: S.modifiedBesselK1,
  scaled_modified_bessel_k0: S.scaledModifiedBesselK0,
  scaled_modified_bessel_k1: S.scaledModifiedBesselK1,
  spherical_bessel_j0: S.sphericalBesselJ0,
};

const polynomials: Record<string, (x: T | number, n: T | number) => T> = {
  chebyshev_polynomial_t: S.chebyshevPolynomialT,
  chebyshev_polynomial_u: S.chebyshevPolynomialU,
  chebyshev_polynomial_v: S.chebyshevPolynomialV,
  chebyshev_polynomial_w: S.chebyshevPolynomialW,
  shifted_chebyshev_polynomial_t: S.shiftedChebyshevPolynomialT,
  shifted_chebyshev_polynomial_u: S.shiftedChebyshevPolynomialU,
  shifted_chebyshev_polynomial_v: S.shiftedChebyshevPolynomialV,
  shifted_chebyshev_polynomial_w: S.shiftedChebyshevPolynomialW,
  hermite_polynomial_h: S.hermitePolynomialH,
  hermite_polynomial_he: S.hermitePolynomialHe,
  laguerre_polynomial_l: S.laguerrePolynomialL,
  legendre_polynomial_p: S.legendrePolynomialP,
};

// The golden script's cases by label (`a` holds its inputs by argument name).
const cases: Record<string, (a: Args) => T> = {
  logit: (a) => S.logit(a.input!),
  'logit.eps': (a) => S.logit(a.input!, 0.05),
  round: (a) => S.round(a.input!),
  'round.decimals2': (a) => S.round(a.input!, { decimals: 2 }),
  'round.decimals-2': (a) => S.round(a.input!, { decimals: -2 }),
  'polygamma.1': (a) => S.polygamma(1, a.input!),
  'polygamma.3': (a) => S.polygamma(3, a.input!),
  multigammaln: (a) => S.multigammaln(a.input!, 3),
  softmax: (a) => S.softmax(a.input!, 1),
  'softmax.dim0': (a) => S.softmax(a.input!, 0),
  log_softmax: (a) => S.logSoftmax(a.input!, 1),
  logsumexp: (a) => S.logsumexp(a.input!, 1),
  'logsumexp.keepdim': (a) => S.logsumexp(a.input!, [0, 1], true),
  xlogy: (a) => S.xlogy(a.input!, a.other!),
  'xlogy.scalarOther': (a) => S.xlogy(a.input!, 3),
  'xlogy.scalarInput': (a) => S.xlogy(2, a.other!),
  xlog1py: (a) => S.xlog1py(a.input!, a.other!),
  'xlog1py.scalarOther': (a) => S.xlog1py(a.input!, 3),
  'xlog1py.scalarInput': (a) => S.xlog1py(2, a.other!),
  zeta: (a) => S.zeta(a.input!, a.other!),
  'zeta.scalarOther': (a) => S.zeta(a.input!, 2),
  'zeta.scalarInput': (a) => S.zeta(2, a.other!),
  gammainc: (a) => S.gammainc(a.input!, a.other!),
  gammaincc: (a) => S.gammaincc(a.input!, a.other!),
};
for (const [name, f] of Object.entries(unary)) cases[name] = (a) => f(a.input!);
for (const [name, f] of Object.entries(polynomials)) {
  cases[name] = (a) => f(a.input!, a.n!);
  cases[`${name}.scalarN`] = (a) => f(a.input!, 3);
  cases[`${name}.scalarX`] = (a) => f(0.3, a.n!);
}

test('special: values and gradients as PyTorch 1.13 (float64, 1e-10)', () => {
  const before = torch.liveTensors();
  assert.equal(golden.special.length, 88);
  for (const c of golden.special) {
    const fn = cases[c.label];
    assert.ok(fn, `a case for ${c.label}`);
    torch.tidy(() => {
      const grads = c.grads;
      const args: Args = {};
      for (const [name, d] of Object.entries(c.inputs))
        args[name] = fromData(d, grads !== null && name in grads);
      const out = fn(args);
      same(out, c.output, c.label);
      if (grads === null) return;
      out.sum().backward();
      for (const [name, expected] of Object.entries(grads))
        same(args[name]!.grad!, expected, `${c.label} d/d${name}`);
    });
  }
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('special: wrong arguments are ArgumentErrors naming the function and argument', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.tensor([0.5, 1], { dtype: 'float64' });
    const bad = S as unknown as Record<string, (...a: unknown[]) => unknown>;
    const cases: [() => unknown, RegExp][] = [
      [() => bad.erf!([1, 2]), /special\.erf: input must be a Tensor, got an array of 2/],
      [() => bad.xlogy!(2, 3), /special\.xlogy: other must be a Tensor when input is a number/],
      [() => bad.zeta!(x, '2'), /special\.zeta: other must be a Tensor or a number, got '2'/],
      [
        () => bad.chebyshevPolynomialT!(null, x),
        /chebyshevPolynomialT: input must be a Tensor or a number, got null/,
      ],
      [() => S.polygamma(-1, x), /special\.polygamma: n must be an integer >= 0, got -1/],
      [() => S.multigammaln(x, 0), /special\.multigammaln: p must be an integer >= 1, got 0/],
      [() => S.logit(x, 2), /special\.logit: eps must be a finite number >= 0 and <= 1, got 2/],
      [() => S.round(x, { decimals: 1.5 }), /special\.round: decimals must be an integer, got 1\.5/],
      [() => S.softmax(x, 0.5), /special\.softmax: dim must be an integer, got 0\.5/],
      [() => bad.gammainc!(x, 1), /special\.gammainc: other must be a Tensor, got 1/],
    ];
    for (const [fn, message] of cases)
      assert.throws(fn, (e: Error) => e instanceof ArgumentError && message.test(e.message));
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
