import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testTimeSummary } from '../../src/longtail/workflows/testtime-summary.js';
import type { DistributionTestTime } from '../../src/longtail/adapt/testtime.js';

const g = (top1: number) => ({ top1, many: top1, medium: top1, few: top1 });

test('the test-time summary reports the best method per distribution and the means of each', () => {
  const results: Record<string, DistributionTestTime> = {
    forward50: {
      n: 10,
      counts: [4, 3, 3],
      before: g(0.5),
      aggregation: { ...g(0.7), weights: [0.6, 0.3, 0.1], epochs: 2, stopped_early: false },
      oracle: g(0.9),
    },
    uniform: {
      n: 10,
      counts: [4, 3, 3],
      before: g(0.6),
      aggregation: {
        ...g(0.6),
        weights: [1 / 3, 1 / 3, 1 / 3],
        epochs: 5,
        stopped_early: true,
        kept_start: true,
        searched: [0.1, 0.1, 0.8],
        validation: { searched: 0.2, start: 0.7 },
      },
      oracle: g(0.6),
    },
  };
  const s = testTimeSummary(results, ['aggregation'], false);
  assert.deepEqual(Object.keys(s.distributions), ['forward50', 'uniform']);
  assert.equal(s.distributions.forward50!.top1, 0.7, 'the aggregation result, not the one before');
  assert.deepEqual(s.distributions.forward50!.weights, [0.6, 0.3, 0.1]);
  assert.equal(s.distributions.forward50!.before.top1, 0.5);
  assert.ok(Math.abs(s.mean_top1 - 0.65) < 1e-12);
  assert.ok(Math.abs(s.mean_top1_before - 0.55) < 1e-12);
  assert.ok(Math.abs(s.mean_top1_aggregation! - 0.65) < 1e-12);
  assert.ok(Math.abs(s.mean_top1_oracle - 0.75) < 1e-12);
  assert.equal(s.mean_top1_preference, undefined, 'no preference search on a model without one');
  assert.equal(s.mean_top1_prior, undefined);
  assert.deepEqual(
    s.distributions.uniform!.aggregation_validation,
    { searched: 0.2, start: 0.7, kept_start: true },
    'the validation check and the decision of the guard are reported',
  );
  assert.equal(s.distributions.forward50!.aggregation_validation, undefined, 'no split, no check');
});
