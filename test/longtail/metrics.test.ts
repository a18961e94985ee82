import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  argmaxRows,
  confusionMatrix,
  evaluateLogits,
  expectedCalibrationError,
  perClassAccuracy,
  shotAccuracy,
  shotGroup,
  shotGroups,
  top1,
} from '../../src/longtail/metrics/metrics.js';
import { longTailCounts } from '../../src/longtail/data/longtail.js';

test('shot groups: many > 100, medium 20..100, few < 20; CIFAR-100 IR100 has 35/35/30', () => {
  assert.equal(shotGroup(101), 'many');
  assert.equal(shotGroup(100), 'medium');
  assert.equal(shotGroup(20), 'medium');
  assert.equal(shotGroup(19), 'few');
  const g = shotGroups(longTailCounts(100, 500, 100));
  assert.deepEqual([g.many.length, g.medium.length, g.few.length], [35, 35, 30]);
  const g10 = shotGroups(longTailCounts(100, 500, 10));
  assert.equal(g10.few.length, 0);
});

test('top-1 and per-class accuracy; classes without test images are null', () => {
  const labels = [0, 0, 1, 1, 1, 3];
  const pred = [0, 1, 1, 1, 0, 3];
  assert.equal(top1(pred, labels), 4 / 6);
  assert.deepEqual(perClassAccuracy(pred, labels, 4), [0.5, 2 / 3, null, 1]);
  assert.equal(top1([], []), null);
  assert.throws(() => top1([1], [1, 2]), /1 predictions for 2 labels/);
});

test('group averages leave absent groups null instead of 0', () => {
  // IR10-like: no class with fewer than 20 training images
  const trainCounts = [500, 300, 50, 50];
  const acc = shotAccuracy([1, 0.5, 0.25, null], trainCounts);
  assert.deepEqual(acc, { many: 0.75, medium: 0.25, few: null });
  const all = shotAccuracy([0, 0, 0], [5, 200, 30]);
  assert.deepEqual(all, { many: 0, medium: 0, few: 0 });
});

test('confusion matrix rows are true classes', () => {
  const m = confusionMatrix([0, 1, 1, 2], [0, 0, 1, 2], 3);
  assert.deepEqual([...m], [1, 1, 0, 0, 1, 0, 0, 0, 1]);
  assert.throws(() => confusionMatrix([5], [0], 3), /out of range/);
});

test('expected calibration error by hand', () => {
  // bins of width 0.5: (0, .5] holds 0.2 (wrong) and 0.4 (right) -> |0.5 - 0.3| = 0.2, weight 2/4;
  // (.5, 1] holds 0.9 (right), 1.0 (right) -> |1 - 0.95| = 0.05, weight 2/4
  const ece = expectedCalibrationError([0.2, 0.4, 0.9, 1.0], [false, true, true, true], 2)!;
  assert.ok(Math.abs(ece - (0.5 * 0.2 + 0.5 * 0.05)) < 1e-12, `ece ${ece}`);
  assert.equal(expectedCalibrationError([1, 1], [1, 1]), 0);
  assert.equal(expectedCalibrationError([], []), null);
  assert.throws(() => expectedCalibrationError([1.5], [1]), /not a probability/);
});

test('evaluateLogits puts it together', () => {
  const logits = [5, 0, 0, 0, 5, 0, 0, 0, 5, 5, 0, 0];
  const labels = [0, 1, 2, 2];
  assert.deepEqual([...argmaxRows(logits, 4, 3)], [0, 1, 2, 0]);
  const r = evaluateLogits(logits, labels, 3, [500, 50, 5]);
  assert.equal(r.top1, 0.75);
  assert.deepEqual(r.perClass, [1, 1, 0.5]);
  assert.deepEqual(r.groups, { many: 1, medium: 1, few: 0.5 });
  assert.deepEqual(r.groupClasses, { many: 1, medium: 1, few: 1 });
  const conf = Math.exp(5) / (Math.exp(5) + 2);
  assert.ok(Math.abs(r.ece! - Math.abs(0.75 - conf)) < 1e-9);
  assert.equal(r.confusion[2 * 3 + 0], 1);
});
