import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { FAMILIES, simulateSample } from '../../src/nmr/data/simulate.js';

const base = { points: 2048, levels: 2, ratio: 2 };

test('simulate families: default draws as before; the others change what they name', () => {
  const plain = simulateSample(new Rng(4), base);
  const def = simulateSample(new Rng(4), { ...base, ...FAMILIES.default });
  assert.deepEqual(Array.from(def.truth), Array.from(plain.truth));
  const broad = simulateSample(new Rng(4), { ...base, ...FAMILIES.broad });
  const lines = broad.multiplets.filter((m) => m.kind === 'multiplet');
  assert.ok(lines.every((m) => m.fwhmHz >= 3 && m.fwhmHz <= 8));
  assert.ok(broad.multiplets.filter((m) => m.kind === 'broad').length >= 2);
  const impure = simulateSample(new Rng(4), { ...base, ...FAMILIES.impurities });
  assert.ok(impure.multiplets.filter((m) => m.kind === 'impurity').length >= 6);
  const phase = simulateSample(new Rng(4), { ...base, ...FAMILIES.phase });
  assert.ok(Math.abs(phase.levels[0]!.phaseDeg) > 0 && phase.levels[1]!.phaseDeg === 0);
  // Ten times the drift, same lines: the difference of the truths is a smooth curve (9 x the drift).
  const drift = simulateSample(new Rng(4), { ...base, ...FAMILIES.drift });
  const d = drift.truth.map((v, i) => v - plain.truth[i]!);
  const peak = Math.max(...Array.from(d, Math.abs));
  let rough = 0;
  for (let i = 1; i + 1 < d.length; i++) rough = Math.max(rough, Math.abs(d[i + 1]! - 2 * d[i]! + d[i - 1]!));
  assert.ok(peak > 0.01 * Math.max(...plain.truth), `drift ${peak}`);
  assert.ok(rough < 1e-3 * peak, `smooth: ${rough} vs ${peak}`);
});
