import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/torch/rng.js';

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

test('Rng moments: uniform, normal, gamma and Dirichlet', () => {
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
  const d = rng.dirichlet(1.2, 3);
  assert.equal(d.length, 3);
  assert.ok(Math.abs(d.reduce((a, b) => a + b, 0) - 1) < 1e-12);
  assert.ok(d.every((v) => v > 0));
});
