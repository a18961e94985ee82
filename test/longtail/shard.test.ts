import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchIndices, epochOrder } from '../../src/longtail/data/batches.js';

test('sharded epoch orders: disjoint per rank, and step k of all ranks is the single-process batch k', () => {
  const labels = Int32Array.from({ length: 20 }, (_, i) => i % 4);
  for (const sampler of ['shuffle', 'class-balanced'] as const) {
    const options = { batchSize: 8, sampler, seed: 3, epoch: 2 };
    const full = epochOrder(labels, options);
    const shards = [0, 1].map((rank) => epochOrder(labels, { ...options, shard: { rank, worldSize: 2 } }));
    assert.deepEqual(
      [...shards[0]!],
      [...full].filter((_, i) => i % 2 === 0),
    );
    assert.deepEqual(
      [...shards[1]!],
      [...full].filter((_, i) => i % 2 === 1),
    );
    const single = batchIndices(full, 8);
    const perRank = shards.map((s) => batchIndices(s, 4));
    for (let k = 0; k < single.length; k++) {
      const together = [...perRank[0]![k]!, ...perRank[1]![k]!].sort((a, b) => a - b);
      assert.deepEqual(
        together,
        [...single[k]!].sort((a, b) => a - b),
        `${sampler}: step ${k}`,
      );
    }
  }
});
