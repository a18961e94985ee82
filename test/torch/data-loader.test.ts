// torch.data: default_collate's rules and errors, and the DataLoader over map-style datasets read
// on demand: the sampler's order kept whatever order async items finish in, no more concurrent
// get() calls than prefetch allows, and every loaded item freed on an error or an early break.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { ArgumentError } from '../../src/util/arguments.js';

const { DataLoader, DatasetItemError, RandomSampler, TensorDataset, defaultCollate } = torch.data;
type Item = { x: torch.Tensor; i: number };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An async dataset of `length` items {x: [2] filled with i, i}, each after a seeded random delay. */
function slowDataset(length: number, o: { fail?: number; syncFail?: number } = {}) {
  const stats = { inFlight: 0, maxInFlight: 0, gets: 0 };
  const dataset: torch.data.Dataset<Item> = {
    length,
    async get(i) {
      stats.gets++;
      stats.maxInFlight = Math.max(stats.maxInFlight, ++stats.inFlight);
      try {
        if (i === o.syncFail) throw new Error(`unreadable item ${i}`);
        await sleep((i * 7) % 4);
        if (i === o.fail) throw new Error(`corrupt item ${i}`);
        return { x: torch.full([2], i), i };
      } finally {
        stats.inFlight--;
      }
    },
  };
  return { dataset, stats };
}

test('defaultCollate stacks tensors, makes tensors of numbers, booleans and typed arrays, keeps strings, recurses into tuples and objects', () => {
  const before = torch.liveTensors();
  const items = [0, 1, 2].map((i) => ({
    x: torch.full([2, 3], i),
    pair: [i, i + 0.5] as [number, number],
    flag: i % 2 === 0,
    name: `s${i}`,
    raw: Float32Array.of(i, -i),
    big: { id: 2 ** 40 + i },
  }));
  const batch = defaultCollate(items);
  assert.deepEqual(batch.x.shape, [3, 2, 3]);
  assert.deepEqual(
    torch.tidy(() => batch.x.select(1, 1).select(1, 2).toNumbers()),
    [0, 1, 2],
  );
  assert.equal(batch.pair[0].dtype, 'int64');
  assert.deepEqual(batch.pair[0].toNumbers(), [0, 1, 2]);
  assert.equal(batch.pair[1].dtype, 'float64');
  assert.deepEqual(batch.pair[1].toNumbers(), [0.5, 1.5, 2.5]);
  assert.equal(batch.flag.dtype, 'bool');
  assert.deepEqual(batch.flag.toNumbers(), [1, 0, 1]);
  assert.deepEqual(batch.name, ['s0', 's1', 's2']);
  assert.equal(batch.raw.dtype, 'float32');
  assert.deepEqual(batch.raw.shape, [3, 2]);
  assert.deepEqual(batch.raw.toNumbers(), [0, -0, 1, -1, 2, -2]);
  assert.deepEqual(
    batch.big.id.toNumbers(),
    [2 ** 40, 2 ** 40 + 1, 2 ** 40 + 2],
    'int64 keeps integers exactly',
  );
  torch.dispose([items, batch]);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('defaultCollate names the item and the mismatch, and frees what it made before the error', () => {
  const before = torch.liveTensors();
  const a = { ok: torch.zeros([2]), x: torch.zeros([3, 4]) };
  const b = { ok: torch.zeros([2]), x: torch.zeros([3, 5]) };
  assert.throws(
    () => defaultCollate([a, a, b]),
    (e: unknown) =>
      e instanceof ArgumentError &&
      /defaultCollate: items\[2\]\.x has shape \[3, 5\] and items\[0\]\.x \[3, 4\]; stacking needs one shape/.test(
        e.message,
      ),
  );
  assert.equal(torch.liveTensors(), before + 4, 'the stacked `ok` was freed');
  torch.dispose([a, b]);
  assert.throws(() => defaultCollate([]), /items must be a non-empty array/);
  assert.throws(() => defaultCollate([[1, 2], [3]]), /items\[1\] has 1 fields and items\[0\] 2/);
  assert.throws(
    () => defaultCollate([{ a: 1, b: 2 }, { a: 1 }]),
    /items\[1\] lacks the key 'b' that items\[0\] has; every item needs the same keys/,
  );
  assert.throws(
    () => defaultCollate([{ a: 1 }, { a: 1, c: 2 }]),
    /items\[1\] has the key 'c' that items\[0\] lacks/,
  );
  assert.throws(
    () => defaultCollate([{ a: 1 }, { a: 'x' }]),
    /items\[1\]\.a is a string and items\[0\]\.a a number/,
  );
  assert.throws(() => defaultCollate([[null]]), /items\[0\]\[0\] is null; an item is collated from tensors/);
  assert.throws(() => defaultCollate([new Map()]), /items\[0\] is an instance of Map/);
  assert.throws(
    () => defaultCollate([Float32Array.of(1), Float64Array.of(1)]),
    /items\[1\] is a Float64Array and items\[0\] a Float32Array/,
  );
  assert.throws(() => defaultCollate([Int32Array.of(1), Int32Array.of(1, 2)]), /items\[1\] has length 2/);
  assert.throws(() => defaultCollate([Uint16Array.of(1)]), /items\[0\] is a Uint16Array/);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('for await keeps the sampler order with random delays and starts at most prefetch x batchSize items ahead', async () => {
  const before = torch.liveTensors();
  for (const prefetch of [1, 2]) {
    const { dataset, stats } = slowDataset(23);
    const loader = new DataLoader(dataset, { batchSize: 4, shuffle: true, seed: 3, prefetch });
    const seen: number[] = [];
    for await (const batch of loader) {
      const ids = batch.i.toNumbers();
      assert.equal(batch.i.dtype, 'int64');
      assert.deepEqual(
        torch.tidy(() => batch.x.select(1, 1).toNumbers()),
        ids,
        'every field of an item stays with it',
      );
      seen.push(...ids);
      torch.dispose(batch);
      await sleep(1);
    }
    assert.deepEqual(seen, new RandomSampler(23, 3).indices(0), 'the sampler order, batch after batch');
    assert.equal(stats.maxInFlight, prefetch * 4, `concurrent get() calls with prefetch ${prefetch}`);
    assert.equal(stats.gets, 23);
    assert.equal(loader.length, 6);
  }
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('a failing get() ends the epoch with DatasetItemError naming the index, after the batches before it, and frees every loaded item', async () => {
  const before = torch.liveTensors();
  for (const o of [{ fail: 9 }, { syncFail: 9 }]) {
    const { dataset, stats } = slowDataset(20, o);
    const loader = new DataLoader(dataset, { batchSize: 4, prefetch: 2 });
    const seen: number[] = [];
    await assert.rejects(
      async () => {
        for await (const batch of loader) {
          seen.push(...batch.i.toNumbers());
          torch.dispose(batch);
        }
      },
      (e: unknown) =>
        e instanceof DatasetItemError &&
        e.index === 9 &&
        /DataLoader: dataset\.get\(9\) failed: (corrupt|unreadable) item 9/.test(e.message) &&
        e.cause instanceof Error,
    );
    assert.deepEqual(seen, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(stats.inFlight, 0, 'the loads in flight settled before the loop ended');
    assert.equal(torch.liveTensors(), before, `the loaded items were freed (${JSON.stringify(o)})`);
  }
});

test('breaking out of for await frees the prefetched items; the epoch counter moves on as for a TensorDataset', async () => {
  const before = torch.liveTensors();
  const { dataset, stats } = slowDataset(30);
  const loader = new DataLoader(dataset, { batchSize: 3, shuffle: true, seed: 5, prefetch: 3 });
  for await (const batch of loader) {
    assert.deepEqual(batch.i.toNumbers(), new RandomSampler(30, 5).indices(0).slice(0, 3));
    torch.dispose(batch);
    break;
  }
  assert.ok(stats.gets > 3, 'items were loaded ahead');
  assert.equal(stats.inFlight, 0);
  assert.equal(torch.liveTensors(), before, 'the prefetched items were freed');
  assert.equal(loader.epoch, 1);
  const second: number[] = [];
  for await (const batch of loader) {
    second.push(...batch.i.toNumbers());
    torch.dispose(batch);
  }
  assert.deepEqual(second, new RandomSampler(30, 5).indices(1), 'the next epoch has the next order');
  assert.equal(loader.epoch, 2);
  assert.equal(torch.liveTensors(), before);
});

test('dropLast leaves the short batch unloaded; a collate error frees the items', async () => {
  const before = torch.liveTensors();
  const { dataset, stats } = slowDataset(10);
  const loader = new DataLoader(dataset, { batchSize: 4, dropLast: true });
  const sizes: number[] = [];
  for await (const batch of loader) {
    sizes.push(batch.x.shape[0]!);
    torch.dispose(batch);
  }
  assert.deepEqual(sizes, [4, 4]);
  assert.equal(loader.length, 2);
  assert.equal(stats.gets, 8, 'the dropped items are never read');

  const ragged: torch.data.Dataset<torch.Tensor> = { length: 4, get: (i) => torch.zeros([i === 2 ? 3 : 2]) };
  await assert.rejects(async () => {
    for await (const batch of new DataLoader(ragged, { batchSize: 4 })) torch.dispose(batch);
  }, /defaultCollate: items\[2\] has shape \[3\] and items\[0\] \[2\]/);
  assert.throws(() => [...new DataLoader(ragged, { batchSize: 4 })], /items\[2\] has shape \[3\]/);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('a synchronous dataset iterates with for...of; a promise from get() there is a named error', async () => {
  const before = torch.liveTensors();
  const dataset: torch.data.Dataset<[torch.Tensor, number]> = {
    length: 5,
    get: (i) => [torch.full([3], i), i * 10],
  };
  const loader = new DataLoader(dataset, { batchSize: 2 });
  const labels: number[][] = [];
  torch.tidy(() => {
    for (const [x, y] of loader) {
      assert.deepEqual(x.shape[1], 3);
      labels.push(y.toNumbers());
    }
  });
  assert.deepEqual(labels, [[0, 10], [20, 30], [40]]);
  assert.equal(torch.liveTensors(), before, 'the scope around the loop freed the batches and items');

  const { dataset: slow } = slowDataset(4);
  assert.throws(
    () => [...new DataLoader(slow, { batchSize: 2 })],
    (e: unknown) =>
      e instanceof ArgumentError &&
      /dataset\.get\(0\) returned a promise.*iterate with `for await \(const batch of loader\)`/.test(
        e.message,
      ),
  );
  await sleep(10);
  assert.equal(torch.liveTensors(), before, 'the item it resolved to was freed');
});

test('a collate function that keeps item tensors keeps them; TensorDataset items are rows, for await works on it', async () => {
  const before = torch.liveTensors();
  const { dataset } = slowDataset(5);
  const lists = new DataLoader(dataset, {
    batchSize: 5,
    collate: (items) => ({ xs: items.map((it) => it.x), ids: items.map((it) => it.i) }),
  });
  for await (const batch of lists) {
    assert.deepEqual(batch.ids, [0, 1, 2, 3, 4]);
    assert.deepEqual(
      batch.xs.map((x) => x.toNumbers()[0]),
      [0, 1, 2, 3, 4],
      'the tensors the batch holds stay alive',
    );
    torch.dispose(batch);
  }
  assert.equal(torch.liveTensors(), before);

  const { x, y } = torch.tidy(() => ({ x: torch.arange(0, 12).reshape(6, 2), y: torch.arange(0, 6) }));
  const rows = new TensorDataset(x, y);
  const [r0, r1] = rows.get(4);
  assert.deepEqual([r0!.toNumbers(), r1!.item()], [[8, 9], 4]);
  torch.dispose([r0, r1]);
  assert.throws(() => rows.get(6), /TensorDataset.get: index must be an integer >= 0 and <= 5, got 6/);
  const fast: number[][] = [];
  for await (const batch of new DataLoader(rows, { batchSize: 4, shuffle: true })) {
    fast.push(batch[1]!.toNumbers());
    torch.dispose(batch);
  }
  const general: number[][] = [];
  const identity = new DataLoader(rows, {
    batchSize: 4,
    shuffle: true,
    collate: (items) => defaultCollate(items),
  });
  for (const batch of identity) {
    general.push(batch[1]!.toNumbers());
    torch.dispose(batch);
  }
  assert.deepEqual(general, fast, 'index_select and stacked rows agree');
  torch.dispose([x, y]);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('bad datasets and loader options are named errors', () => {
  const dataset = { length: 3, get: (i: number) => i };
  assert.throws(
    () => new DataLoader(dataset, { prefetch: 0 }),
    /DataLoader: options.prefetch must be an integer >= 1, got 0/,
  );
  assert.throws(
    () => new DataLoader({ length: 3 } as unknown as torch.data.Dataset<number>),
    /DataLoader: dataset must be a Dataset \(a length and a get\(index\) method\)/,
  );
  assert.throws(() => new DataLoader({ length: -1, get: () => 0 }), /dataset.length must be an integer >= 0/);
  assert.throws(
    () => new DataLoader(dataset, { collate: 3 as unknown as () => number }),
    /options.collate must be a function of the items, got 3/,
  );
  const batches = [...new DataLoader(dataset, { batchSize: 2 })];
  assert.deepEqual(
    batches.map((b) => b.toNumbers()),
    [[0, 1], [2]],
  );
  torch.dispose(batches);
});
