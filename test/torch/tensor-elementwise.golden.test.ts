// PyTorch's elementwise math, tests, logical and bitwise functions (torch.tan, torch.erfinv,
// torch.fmod, torch.div with roundingMode, torch.frexp, torch.nanToNum, torch.bitwiseLeftShift...)
// against PyTorch 1.13 (test/golden/torch/tensor_elementwise.json, from
// scripts/golden/tensor_elementwise.py): float64 values at ordinary points and at the edges (NaN,
// the infinities and the signed zeros exactly), int64 and bool results exactly, and the gradients
// of the differentiable ones. Then the Tensor methods against the functions, the in-place methods
// (they mutate and return the tensor), the named argument errors, and leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import {
  checkGoldenCase,
  readTensorGolden,
  type Data,
  type GoldenCase,
  type Inputs,
} from './tensor-golden.js';
import { ArgumentError } from '../../src/util/arguments.js';
import { TENSOR_ELEMENTWISE_METHODS } from '../../src/torch/tensor-methods-elementwise.js';
import { TENSOR_INPLACE_METHODS } from '../../src/torch/tensor-methods-inplace.js';

type T = torch.Tensor;
type Fn = (...args: unknown[]) => unknown;
const golden = readTensorGolden<{ inputs: Record<string, Data>; cases: GoldenCase[] }>(
  'tensor_elementwise.json',
);
const TOLERANCE = 1e-12;

/** Equal values: NaN to NaN, infinities and zeros with their signs exactly, the rest to 1e-12 relative. */
function sameValues(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let k = 0; k < expected.length; k++) {
    const a = Number(actual[k]);
    const e = Number(expected[k]);
    const ok =
      Number.isNaN(e) || !Number.isFinite(e) || e === 0
        ? Object.is(a, e)
        : Math.abs(a - e) <= TOLERANCE * Math.max(1, Math.abs(e));
    assert.ok(
      ok,
      `${what}: element ${k} is ${Object.is(a, -0) ? '-0' : a}, expected ${Object.is(e, -0) ? '-0' : e}`,
    );
  }
}

function same(actual: T, expected: Data, what: string): void {
  assert.equal(actual.dtype, expected.dtype, `${what}: dtype`);
  assert.deepEqual(actual.shape, expected.shape, `${what}: shape`);
  sameValues(actual.toFloat64Array(), expected.data, what);
}

/** Runs `fn` on fresh leaves of the golden inputs and checks its outputs and gradients. */
function checkCase(c: GoldenCase, fn: (inputs: Inputs) => T[]): void {
  checkGoldenCase(golden.inputs, c, fn, same);
}

const camel = (name: string): string => name.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
/** torch.<name> by PyTorch's name. */
const fnOf = (pyName: string): Fn => (torch as unknown as Record<string, Fn>)[camel(pyName)]!;

// The golden script's tables: the functions of one tensor with the input of their ordinary points,
// the tests, and the functions of two tensors with their ordinary operands.
const UNARY: Record<string, string | null> = {
  tan: 'w',
  asin: 'u',
  acos: 'u',
  atan: 'w',
  sinh: 'w',
  cosh: 'w',
  asinh: 'w',
  acosh: null,
  atanh: 'u',
  exp2: 'w',
  expm1: 'w',
  log2: 'v',
  log10: 'v',
  erf: 'w',
  erfc: 'w',
  erfinv: 'u',
  lgamma: 'v',
  digamma: 'v',
  sinc: 'w',
  ceil: 'w',
  trunc: 'w',
  fix: 'w',
  frac: 'w',
  sgn: 'w',
  positive: 'w',
  deg2rad: 'w',
  rad2deg: 'w',
  logit: 'p',
  nan_to_num: 'w',
};
const TESTS = ['isnan', 'isinf', 'isposinf', 'isneginf', 'isfinite', 'isreal', 'signbit', 'logical_not'];
const BINARY: Record<string, [string, string]> = {
  fmod: ['w', 'y'],
  remainder: ['w', 'y'],
  true_divide: ['w', 'y'],
  xlogy: ['w', 'v'],
  float_power: ['v', 'y'],
  copysign: ['w', 'y'],
  logaddexp: ['w', 'y'],
  logaddexp2: ['w', 'y'],
  fmax: ['w', 'y'],
  fmin: ['w', 'y'],
  clamp_min: ['w', 'y'],
  clamp_max: ['w', 'y'],
  floor_divide: ['w', 'y'],
  nextafter: ['w', 'y'],
  heaviside: ['w', 'y'],
};

const cases: Record<string, (i: Inputs) => T[]> = {};
for (const [name, arg] of Object.entries(UNARY)) {
  cases[`${name}.edges`] = (i) => [fnOf(name)(i.x) as T];
  if (arg !== null) cases[name] = (i) => [fnOf(name)(i[arg]) as T];
}
for (const name of TESTS) cases[name] = (i) => [fnOf(name)(i.x) as T, fnOf(name)(i.i) as T];
for (const [name, [a, b]] of Object.entries(BINARY)) {
  cases[name] = (i) => [fnOf(name)(i[a], i[b]) as T];
  cases[`${name}.edges`] = (i) => [fnOf(name)(i.x, i.xe) as T];
}
Object.assign(cases, {
  acosh: (i: Inputs) => [torch.acosh(i.v!.add(1))],
  'logit.eps': (i: Inputs) => [torch.logit(i.p!, 0.1), torch.logit(i.x!, 0.25)],
  'nan_to_num.values': (i: Inputs) => [torch.nanToNum(i.x!, 1.5, 100, -100)],
  'nan_to_num.posinf': (i: Inputs) => [torch.nanToNum(i.x!, undefined, 9)],
  'div.trunc': (i: Inputs) => [torch.div(i.w!, i.y!, { roundingMode: 'trunc' })],
  'div.floor': (i: Inputs) => [i.w!.div(i.y!, { roundingMode: 'floor' })],
  'div.modes.edges': (i: Inputs) =>
    [null, 'trunc', 'floor'].map((m) => torch.div(i.x!, i.xe!, { roundingMode: m as 'trunc' | null })),
  frexp: (i: Inputs) => [...torch.frexp(i.x!), ...i.w!.frexp()],
  ldexp: (i: Inputs) => [torch.ldexp(i.w!, i.e!), torch.ldexp(i.x!, i.xe!)],
  'scalar.second': (i: Inputs) => [
    torch.fmod(i.w!, 1.5),
    torch.remainder(i.w!, -1.5),
    torch.xlogy(i.w!, 3),
    torch.floatPower(i.v!, 2.5),
    torch.copysign(i.w!, -1),
    torch.div(i.w!, 0.7, { roundingMode: 'floor' }),
    torch.trueDivide(i.w!, 4),
    torch.clampMin(i.w!, 0.3),
    torch.clampMax(i.w!, 0.5),
  ],
  'scalar.first': (i: Inputs) => [torch.xlogy(2, i.v!), torch.floatPower(2, i.y!)],
  'remainder.scalar.first': (i: Inputs) => [torch.remainder(3, i.y!)],
  'floor_divide.scalar': (i: Inputs) => [torch.floorDivide(i.w!, 0.8)],
  'int.arithmetic': ({ i, j }: Inputs) => [
    torch.fmod(i!, j!),
    torch.remainder(i!, j!),
    torch.floorDivide(i!, j!),
    torch.div(i!, j!, { roundingMode: 'trunc' }),
    torch.div(i!, j!, { roundingMode: 'floor' }),
    torch.div(i!, j!),
    torch.trueDivide(i!, 4),
    torch.fmod(i!, 3),
    torch.remainder(i!, -4),
    torch.floatPower(i!, 2),
    torch.gcd(i!, j!),
    torch.lcm(i!, j!),
    torch.sgn(i!),
    torch.clampMin(i!, 0),
    torch.copysign(i!, j!),
  ],
  'int.bitwise': ({ i, j, k }: Inputs) => [
    torch.bitwiseAnd(i!, j!),
    torch.bitwiseOr(i!, j!),
    torch.bitwiseXor(i!, j!),
    torch.bitwiseNot(i!),
    torch.bitwiseLeftShift(i!, k!),
    torch.bitwiseRightShift(i!, k!),
    torch.bitwiseAnd(i!, 12),
    torch.bitwiseOr(i!, 5),
    torch.bitwiseXor(i!, -1),
    torch.bitwiseLeftShift(i!, 2),
    torch.bitwiseRightShift(i!, 1),
  ],
  logical: ({ b1, b2, x, xe, i, j }: Inputs) => [
    torch.logicalAnd(b1!.bool(), b2!.bool()),
    torch.logicalOr(b1!.bool(), b2!.bool()),
    torch.logicalXor(b1!.bool(), b2!.bool()),
    torch.logicalAnd(x!, xe!),
    torch.logicalOr(i!, j!.sub(3)),
    torch.logicalXor(x!, xe!),
    torch.bitwiseAnd(b1!.bool(), b2!.bool()),
    torch.bitwiseNot(b1!.bool()),
  ],
});

test('the elementwise functions match PyTorch 1.13: values at the edges, integer results, gradients', () => {
  const before = torch.liveTensors();
  assert.deepEqual(Object.keys(cases).sort(), golden.cases.map((c) => c.label).sort(), 'one check per case');
  for (const c of golden.cases) checkCase(c, cases[c.label]!);
  assert.equal(torch.liveTensors(), before);
});

// The methods whose operands are integers, and those of two tensors (the others take none).
const INTEGER = new Set(['gcd', 'lcm', 'bitwiseAnd', 'bitwiseOr', 'bitwiseXor', 'bitwiseNot']);
const SHIFTS = new Set(['bitwiseLeftShift', 'bitwiseRightShift']);
const TWO_TENSORS = new Set([
  ...['trueDivide', 'floorDivide', 'fmod', 'remainder', 'floatPower', 'xlogy', 'copysign'],
  ...['clampMin', 'clampMax', 'nextafter', 'logaddexp', 'logaddexp2', 'heaviside', 'fmax', 'fmin'],
  ...['logicalAnd', 'logicalOr', 'logicalXor', 'gcd', 'lcm', 'bitwiseAnd', 'bitwiseOr', 'bitwiseXor'],
  ...['sub', 'div', 'pow', 'bitwiseLeftShift', 'bitwiseRightShift', 'ldexp'],
]);
const ALIASES: Record<string, string> = {
  arcsin: 'asin',
  arccos: 'acos',
  arctan: 'atan',
  arcsinh: 'asinh',
  arccosh: 'acosh',
  arctanh: 'atanh',
};

/** The operands of method `name` (without `_`): this tensor and the rest of the arguments. */
function operandsOf(name: string): [T, ...unknown[]] {
  const x = torch.tensor([-2.5, -1, -0.5, -0, 0, 0.3, 0.5, 1, 2.5, NaN, Infinity, -Infinity], {
    dtype: 'float64',
  });
  const y = torch.tensor([1.5, -0.6, 2, -3.2, 0.9, 1, -1, 0, 2, 3, NaN, 2], { dtype: 'float64' });
  const i = torch.tensor([-7, -3, 0, 4, 9, 12], { dtype: 'int64' });
  const k = torch.tensor([0, 1, 2, 3, 1, 2], { dtype: 'int64' });
  if (INTEGER.has(name))
    return TWO_TENSORS.has(name) ? [i, torch.tensor([3, -2, 5, 6, -4, 8], { dtype: 'int64' })] : [i];
  if (SHIFTS.has(name)) return [i, k];
  if (name === 'ldexp') return [x, torch.tensor([0, 1, -2, 3, 5, 0, 1, 2, 3, 4, 5, 6], { dtype: 'int64' })];
  if (name === 'logit') return [x, 0.1];
  if (name === 'nanToNum') return [x, 1, 2, 3];
  if (name === 'sub') return [x, y, 2];
  if (name === 'div') return [x, y, { roundingMode: 'floor' }];
  if (name === 'clamp') return [x, -0.5, y];
  return TWO_TENSORS.has(name) ? [x, y] : [x];
}

const asList = (r: unknown): T[] => (Array.isArray(r) ? (r as T[]) : [r as T]);

test('each method is the torch function applied to the tensor, non-enumerable', () => {
  const before = torch.liveTensors();
  const proto = torch.Tensor.prototype as unknown as Record<string, unknown>;
  const fns = torch as unknown as Record<string, Fn>;
  assert.ok(TENSOR_ELEMENTWISE_METHODS.length >= 70);
  for (const name of TENSOR_ELEMENTWISE_METHODS) {
    assert.equal(typeof fns[name], 'function', `torch.${name}`);
    assert.equal(Object.getOwnPropertyDescriptor(proto, name)!.enumerable, false, `Tensor.${name}`);
    torch.tidy(() => {
      const [self, ...rest] = operandsOf(name);
      const viaMethod = asList((self as unknown as Record<string, Fn>)[name]!(...rest));
      const viaFunction = asList(fns[ALIASES[name] ?? name]!(self, ...rest));
      assert.equal(viaMethod.length, viaFunction.length, name);
      viaMethod.forEach((m, k) => {
        assert.equal(m.dtype, viaFunction[k]!.dtype, `${name}: dtype`);
        sameValues(m.toFloat64Array(), viaFunction[k]!.toFloat64Array(), `Tensor.${name}`);
      });
    });
  }
  torch.tidy(() => {
    const x = torch.tensor([0.5], { dtype: 'float64' });
    assert.equal(Object.keys(x).includes('tan'), false);
    // positive is a view of the same data, as in PyTorch
    const p = x.positive();
    x.fill_(2);
    assert.deepEqual(p.toNumbers(), [2]);
  });
  assert.equal(torch.liveTensors(), before);
});

test('the in-place methods write the out-of-place result into the tensor and return it', () => {
  const before = torch.liveTensors();
  const proto = torch.Tensor.prototype as unknown as Record<string, unknown>;
  assert.ok(TENSOR_INPLACE_METHODS.length >= 75);
  for (const name of TENSOR_INPLACE_METHODS) {
    assert.equal(Object.getOwnPropertyDescriptor(proto, name)!.enumerable, false, `Tensor.${name}`);
    const base = name.slice(0, -1);
    torch.tidy(() => {
      const [self, ...rest] = operandsOf(base);
      const expected = (self as unknown as Record<string, Fn>)[base]!(...rest) as T;
      const target = self.clone();
      const returned = (target as unknown as Record<string, Fn>)[name]!(...rest);
      assert.equal(returned, target, `Tensor.${name} returns this`);
      assert.equal(target.dtype, self.dtype, `Tensor.${name} keeps the dtype`);
      sameValues(target.toFloat64Array(), expected.toFloat64Array(), `Tensor.${name}`);
    });
  }
  torch.tidy(() => {
    // a tensor bound and a number bound, and libtorch's refusal of a float result in an int tensor
    const x = torch.tensor([-2, 0.2, 3], { dtype: 'float64' });
    x.clamp_(torch.tensor([-1, 0.5, 0], { dtype: 'float64' }), 1);
    assert.deepEqual(x.toNumbers(), [-1, 0.5, 1]);
    assert.throws(() => torch.tensor([1, 2], { dtype: 'int64' }).tan_());
  });
  torch.tidy(() => {
    // gradients flow through the in-place forms as through the out-of-place ones (where no
    // later in-place operation overwrites a value the backward needs: libtorch refuses that)
    const values = [0.3, -0.7, 1.1, 0.05];
    const a = torch.tensor(values, { dtype: 'float64', requiresGrad: true });
    const b = torch.tensor(values, { dtype: 'float64', requiresGrad: true });
    a.mul(1).sub_(a, 2).fmod_(0.4).tan_().sum().backward();
    b.sub(b, 2).fmod(0.4).tan().sum().backward();
    sameValues(a.grad!.toFloat64Array(), b.grad!.toFloat64Array(), 'gradient through the in-place forms');
    assert.ok(a.grad!.toNumbers().some((g) => g !== 0));
  });
  assert.equal(torch.liveTensors(), before);
});

test('bad arguments name the function and the argument', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.tensor([1, 2, 3], { dtype: 'float64' });
    const bad = (fn: () => unknown, message: RegExp): void => {
      assert.throws(fn, (e: unknown) => e instanceof ArgumentError && message.test(e.message));
    };
    bad(() => torch.tan(3 as unknown as T), /^tan: input must be a Tensor, got 3/);
    bad(() => torch.fmod(x, 'a' as unknown as number), /^fmod: other must be a Tensor or a number/);
    bad(
      () => torch.logaddexp(x, 2 as unknown as T),
      /^logaddexp: other must be a Tensor \(wrap a number in torch.tensor\)/,
    );
    bad(() => torch.remainder(2, 3), /^remainder: other must be a Tensor when input is a number/);
    bad(
      () => torch.div(x, x, { roundingMode: 'round' as 'floor' }),
      /^div: roundingMode must be 'trunc', 'floor' or null/,
    );
    bad(() => x.div(2, { roundingMode: 'up' as 'floor' }), /^div: roundingMode/);
    bad(() => torch.nanToNum(x, NaN), /^nanToNum: nan must be a number or null, got NaN/);
    bad(() => torch.logit(x, 2), /^logit: eps must be a finite number >= 0 and <= 0.5, got 2/);
    bad(() => torch.heaviside(x, null as unknown as T), /^heaviside: values must be a Tensor, got null/);
    bad(() => x.clone().clamp_(), /^Tensor.clamp_: min must be a bound/);
    bad(() => x.clone().fmod_('2' as unknown as number), /^Tensor.fmod_: other must be a Tensor or a number/);
    bad(() => x.clone().gcd_(2 as unknown as T), /^Tensor.gcd_: other must be a Tensor \(wrap/);
    bad(() => x.clone().sub_(x, 'two' as unknown as number), /^Tensor.sub_: alpha must be a number/);
  });
  assert.equal(torch.liveTensors(), before);
});

test('the core elementwise methods have torch function forms that equal them', () => {
  const before = torch.liveTensors();
  const fns = torch as unknown as Record<string, Fn>;
  torch.tidy(() => {
    const [x, y] = operandsOf('fmod') as [T, T];
    const call = (t: T, name: string, ...rest: unknown[]): T =>
      (t as unknown as Record<string, Fn>)[name]!(...rest) as T;
    const unary = ['neg', 'exp', 'log', 'log1p', 'sqrt', 'rsqrt', 'abs', 'square', 'sign', 'reciprocal'];
    for (const name of [...unary, 'sin', 'cos', 'floor', 'round', 'relu', 'sigmoid', 'tanh'])
      sameValues((fns[name]!(x) as T).toFloat64Array(), call(x, name).toFloat64Array(), `torch.${name}`);
    for (const name of ['add', 'sub', 'mul', 'pow', 'eq', 'ne', 'lt', 'le', 'gt', 'ge'])
      for (const other of [y, 2]) {
        const viaFunction = fns[name]!(x, other) as T;
        assert.equal(viaFunction.dtype, call(x, name, other).dtype, `torch.${name}: dtype`);
        sameValues(viaFunction.toFloat64Array(), call(x, name, other).toFloat64Array(), `torch.${name}`);
      }
    for (const name of ['maximum', 'minimum'])
      sameValues(
        (fns[name]!(x, y) as T).toFloat64Array(),
        call(x, name, y).toFloat64Array(),
        `torch.${name}`,
      );
    sameValues(torch.add(x, y, { alpha: 2 }).toFloat64Array(), x.add(y, 2).toFloat64Array(), 'add alpha');
    sameValues(torch.sub(x, y, { alpha: 2 }).toFloat64Array(), x.sub(y, 2).toFloat64Array(), 'sub alpha');
    // a number base, and round's decimals (half to even)
    const k = torch.tensor([0, 1, 2, 3], { dtype: 'int64' });
    assert.deepEqual(torch.pow(2, k).toNumbers(), [1, 2, 4, 8]);
    const r = torch.tensor([1.2345, -2.5, 125, 0.125], { dtype: 'float64' });
    sameValues(torch.round(r, { decimals: 2 }).toFloat64Array(), [1.23, -2.5, 125, 0.12], 'round decimals');
    sameValues(torch.round(r, { decimals: -1 }).toFloat64Array(), [0, -0, 120, 0], 'round decimals -1');
    const bad = (fn: () => unknown, message: RegExp): void => {
      assert.throws(fn, (e: unknown) => e instanceof ArgumentError && message.test(e.message));
    };
    bad(() => torch.exp('x' as unknown as T), /^exp: input must be a Tensor, got 'x'/);
    bad(() => torch.add(x, y, { alpha: 'a' as unknown as number }), /^add: alpha must be a number/);
    bad(() => torch.eq(x, [1] as unknown as T), /^eq: other must be a Tensor or a number/);
    bad(() => torch.maximum(x, 1 as unknown as T), /^maximum: other must be a Tensor \(wrap/);
    bad(() => torch.pow('a' as unknown as T, x), /^pow: input must be a Tensor or a number/);
    bad(() => torch.round(x, { decimals: 0.5 }), /^round: decimals must be/);
  });
  assert.equal(torch.liveTensors(), before);
});
