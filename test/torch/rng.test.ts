import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';

test('Rng is reproducible from a seed and from a saved state', () => {
  const a = new Rng(42);
  const b = new Rng(42);
  const xs = Array.from({ length: 5 }, () => a.uniform());
  assert.deepEqual(
    xs,
    Array.from({ length: 5 }, () => b.uniform()),
  );
  const saved = a.state();
  const next = a.uniform();
  assert.equal(new Rng(saved).uniform(), next);
  assert.notDeepEqual(new Rng(1).permutation(20), new Rng(2).permutation(20));
});

test('Rng moments: uniform, normal, gamma and Dirichlet (means and variances per component)', () => {
  const rng = new Rng(7);
  const n = 20000;
  let su = 0;
  let sn = 0;
  let sn2 = 0;
  let sg = 0;
  for (let i = 0; i < n; i++) {
    su += rng.uniform();
    const z = rng.normal();
    sn += z;
    sn2 += z * z;
    sg += rng.gamma(1.2);
  }
  assert.ok(Math.abs(su / n - 0.5) < 0.01);
  assert.ok(Math.abs(sn / n) < 0.03);
  assert.ok(Math.abs(sn2 / n - 1) < 0.04);
  assert.ok(Math.abs(sg / n - 1.2) < 0.04);
  assert.equal(rng.dirichlet(1.2, 3).length, 3);
  // Dirichlet(a): E[x_i] = a_i / a0 and Var[x_i] = a_i (a0 - a_i) / (a0^2 (a0 + 1)); any other
  // normalised draw (uniforms, equal shares) has other moments.
  const alpha = [0.5, 2, 4.5];
  const a0 = 7;
  const m = [0, 0, 0];
  const m2 = [0, 0, 0];
  for (let i = 0; i < n; i++) {
    rng.dirichlet(alpha).forEach((v, j) => {
      m[j]! += v / n;
      m2[j]! += (v * v) / n;
    });
  }
  alpha.forEach((a, j) => {
    const variance = (a * (a0 - a)) / (a0 * a0 * (a0 + 1));
    assert.ok(Math.abs(m[j]! - a / a0) < 0.005, `E[x_${j}] = ${m[j]} vs ${a / a0}`);
    const measured = m2[j]! - m[j]! ** 2;
    assert.ok(Math.abs(measured / variance - 1) < 0.08, `Var[x_${j}] = ${measured} vs ${variance}`);
  });
});
