// torch.nn.utils.rnn (padSequence, packPaddedSequence, padPackedSequence, packSequence) and LSTM
// and GRU on packed batches against PyTorch 1.13 (test/golden/torch/nn_utils.json,
// scripts/golden/nn_utils.py): packed data, batch sizes, the sort and unsort indices, the padded
// round trip and its gradient, the layers' outputs, final states and gradients; plus the named
// errors for bad lengths and the tensors' lifetimes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { ArgumentError } from '../../src/util/arguments.js';
import { assertClose, goldenDir } from '../helpers.js';

const { rnn } = nn.utils;

interface Data {
  shape: number[];
  data: number[];
}
interface Case {
  kind: string;
  name: string;
  [key: string]: unknown;
}

const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'nn_utils.json'), 'utf8')) as { rnn: Case[] };
const byName = (name: string) => golden.rnn.find((c) => c.name === name)!;
const tensorOf = (d: Data) => torch.tensor(Float32Array.from(d.data), { shape: d.shape });
const ints = (t: Tensor | null) => (t ? t.toNumbers() : null);

function same(t: Tensor, d: Data, what: string, atol = 1e-6): void {
  assert.deepEqual(t.shape, d.shape, `${what}: shape`);
  assertClose(t.toFloat32Array(), d.data, atol, 0, what);
}

test('padSequence matches PyTorch in both layouts', () => {
  const c = byName('pad_sequence') as unknown as { sequences: Data[]; time_first: Data; batch_first: Data };
  const before = torch.liveTensors();
  torch.tidy(() => {
    const seqs = c.sequences.map(tensorOf);
    same(rnn.padSequence(seqs), c.time_first, 'time first');
    same(rnn.padSequence(seqs, { batchFirst: true, paddingValue: -1.5 }), c.batch_first, 'batch first');
  });
  assert.equal(torch.liveTensors(), before);
});

for (const name of ['pack_sorted_time_first', 'pack_unsorted_batch_first_ties_total_length']) {
  test(`${name}: pack, unpack and the gradient through both match PyTorch`, () => {
    const c = byName(name) as unknown as {
      lengths: number[];
      batch_first: boolean;
      enforce_sorted: boolean;
      total_length: number | null;
      input: Data;
      data: Data;
      batch_sizes: number[];
      sorted_indices: number[] | null;
      unsorted_indices: number[] | null;
      padded: Data;
      out_lengths: number[];
      upstream: number[];
      input_grad: number[];
    };
    const before = torch.liveTensors();
    torch.tidy(() => {
      const x = tensorOf(c.input).requiresGrad_();
      const packed = rnn.packPaddedSequence(x, c.lengths, {
        batchFirst: c.batch_first,
        enforceSorted: c.enforce_sorted,
      });
      same(packed.data, c.data, 'packed data');
      assert.deepEqual(ints(packed.batchSizes), c.batch_sizes);
      assert.equal(packed.batchSizes.dtype, 'int64');
      assert.deepEqual(ints(packed.sortedIndices), c.sorted_indices);
      assert.deepEqual(ints(packed.unsortedIndices), c.unsorted_indices);
      const [padded, lengths] = rnn.padPackedSequence(packed, {
        batchFirst: c.batch_first,
        paddingValue: 0.25,
        ...(c.total_length !== null ? { totalLength: c.total_length } : {}),
      });
      same(padded, c.padded, 'padded');
      assert.deepEqual(lengths.toNumbers(), c.out_lengths);
      padded
        .mul(torch.tensor(Float32Array.from(c.upstream), { shape: padded.shape }))
        .sum()
        .backward();
      assertClose(x.grad!.toFloat32Array(), c.input_grad, 1e-6, 0, 'input gradient');
    });
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}

test('packSequence of unsorted sequences matches PyTorch; a lengths tensor works as an array', () => {
  const c = byName('pack_sequence_unsorted') as unknown as {
    sequences: Data[];
    data: Data;
    batch_sizes: number[];
    sorted_indices: number[];
    unsorted_indices: number[];
  };
  const before = torch.liveTensors();
  torch.tidy(() => {
    const packed = rnn.packSequence(c.sequences.map(tensorOf), { enforceSorted: false });
    same(packed.data, c.data, 'packed data');
    assert.deepEqual(ints(packed.batchSizes), c.batch_sizes);
    assert.deepEqual(ints(packed.sortedIndices), c.sorted_indices);
    assert.deepEqual(ints(packed.unsortedIndices), c.unsorted_indices);
    const padded = rnn.padSequence(c.sequences.map(tensorOf));
    const again = rnn.packPaddedSequence(padded, torch.tensor([2, 4, 3], { dtype: 'int64' }), {
      enforceSorted: false,
    });
    same(again.data, c.data, 'packed from a lengths tensor');
  });
  assert.equal(torch.liveTensors(), before);
});

const layers: Record<string, () => nn.LSTM | nn.GRU> = {
  lstm_packed_unsorted_bidirectional_2layer_state: () =>
    new nn.LSTM(3, 4, { numLayers: 2, bidirectional: true }),
  gru_packed_sorted_batch_first: () => new nn.GRU(3, 2),
  lstm_packed_unsorted_batch_first: () => new nn.LSTM(2, 3, { batchFirst: true }),
};

for (const [name, make] of Object.entries(layers)) {
  test(`${name}: packed output, final states and gradients match PyTorch`, () => {
    const c = byName(name) as unknown as {
      lengths: number[];
      batch_first: boolean;
      enforce_sorted: boolean;
      seed: number;
      params: Record<string, Data>;
      input: Data;
      state: Data[];
      output: Data;
      batch_sizes: number[];
      sorted_indices: number[] | null;
      unsorted_indices: number[] | null;
      finals: Data[];
      upstream: number[][];
      input_grad: number[];
      state_grads: number[][];
      param_grads: Record<string, number[]>;
    };
    const before = torch.liveTensors();
    torch.manualSeed(c.seed);
    const layer = make();
    torch.tidy(() => {
      for (const [n, p] of layer.namedParameters())
        assertClose(p.toFloat32Array(), c.params[n]!.data, 1e-6, 0, `initial ${n}`);
      const x = tensorOf(c.input).requiresGrad_();
      const states = c.state.map((s) => tensorOf(s).requiresGrad_());
      const packed = rnn.packPaddedSequence(x, c.lengths, {
        batchFirst: c.batch_first,
        enforceSorted: c.enforce_sorted,
      });
      let out: nn.utils.rnn.PackedSequence;
      let finals: Tensor[];
      if (layer instanceof nn.LSTM) {
        const [o, [h, cell]] = layer.forward(packed, states.length ? [states[0]!, states[1]!] : undefined);
        [out, finals] = [o, [h, cell]];
      } else {
        const [o, h] = layer.forward(packed, states[0]);
        [out, finals] = [o, [h]];
      }
      assert.ok(out instanceof rnn.PackedSequence);
      same(out.data, c.output, 'packed output', 1e-5);
      assert.deepEqual(ints(out.batchSizes), c.batch_sizes);
      assert.deepEqual(ints(out.sortedIndices), c.sorted_indices);
      assert.deepEqual(ints(out.unsortedIndices), c.unsorted_indices);
      finals.forEach((f, i) => same(f, c.finals[i]!, `final state ${i}`, 1e-5));
      const weighted = [out.data, ...finals].map((t, i) =>
        t.mul(torch.tensor(Float32Array.from(c.upstream[i]!), { shape: t.shape })).sum(),
      );
      weighted.reduce((a, b) => a.add(b)).backward();
      assertClose(x.grad!.toFloat32Array(), c.input_grad, 1e-5, 0, 'input gradient');
      states.forEach((s, i) =>
        assertClose(s.grad!.toFloat32Array(), c.state_grads[i]!, 1e-5, 0, `state grad ${i}`),
      );
      for (const [n, p] of layer.namedParameters())
        assertClose(p.grad!.toFloat32Array(), c.param_grads[n]!, 1e-5, 0, `gradient of ${n}`);
      // the output owns its own handles: freeing it leaves the input's packed tensors usable
      out.dispose();
      assert.deepEqual(ints(packed.batchSizes), c.batch_sizes);
    });
    layer.dispose();
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}

test('PackedSequence.dispose frees its tensors; one kept out of a tidy survives it', () => {
  const before = torch.liveTensors();
  const packed = torch.tidy(() =>
    rnn.packPaddedSequence(torch.randn([3, 2, 4]), [3, 1], { enforceSorted: false }),
  );
  assert.equal(torch.liveTensors(), before + 4, 'data, batchSizes and both indices');
  assert.deepEqual(packed.batchSizes.toNumbers(), [2, 1, 1]);
  packed.dispose();
  assert.equal(torch.liveTensors(), before);
  assert.ok(packed.data.isDisposed);
});

test('bad lengths and options are named errors', () => {
  const named = (fn: () => unknown, pattern: RegExp) =>
    assert.throws(fn, (e: Error) => e instanceof ArgumentError && pattern.test(e.message));
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.zeros([4, 3, 2]);
    named(
      () => rnn.packPaddedSequence(x, [2, 4, 3]),
      /^packPaddedSequence: lengths must be non-increasing when options.enforceSorted is true, got \[2, 4, 3\]; sort the batch by length or pass enforceSorted: false/,
    );
    named(
      () => rnn.packPaddedSequence(x, [5, 4, 3], { enforceSorted: false }),
      /^packPaddedSequence: lengths\[0\] is 5, longer than the 4 time steps of input \[4, 3, 2\]/,
    );
    named(
      () => rnn.packPaddedSequence(x, [4, 2, 0]),
      /^packPaddedSequence: lengths\[2\] must be an integer >= 1 \(a sequence of length 0 cannot be packed: leave it out of the batch\), got 0/,
    );
    named(
      () => rnn.packPaddedSequence(x, [4, 2]),
      /^packPaddedSequence: lengths must give one length per sequence of the batch \(3, dimension 1/,
    );
    named(
      () => rnn.packSequence([torch.zeros([2, 2]), torch.zeros([0, 2])]),
      /^packSequence: sequences\[1\] has no time steps \(shape \[0, 2\]\); a sequence of length 0 cannot be packed/,
    );
    named(
      () => rnn.padSequence([torch.zeros([2, 2]), torch.zeros([3, 5])]),
      /^padSequence: sequences\[1\] must be of shape \[length, 2\] like sequences\[0\], got \[3, 5\]/,
    );
    named(() => rnn.padSequence([]), /^padSequence: sequences must be a non-empty array of Tensors/);
    const packed = rnn.packPaddedSequence(x, [4, 2, 1]);
    named(
      () => rnn.padPackedSequence(packed, { totalLength: 3 }),
      /^padPackedSequence: options.totalLength \(at least the longest sequence, 4\) must be an integer >= 4, got 3/,
    );
    const lstm = new nn.LSTM(3, 2);
    named(
      () => lstm.forward(packed),
      /^LSTM: the packed data must be of shape \[steps, 3\] \(inputSize\), got \[7, 2\]/,
    );
    const gru = new nn.GRU(2, 2);
    named(
      () => gru.forward(packed, torch.zeros([1, 2, 2])),
      /^GRU: h0 must be of shape \[1, 3, 2\], got \[1, 2, 2\]/,
    );
    lstm.dispose();
    gru.dispose();
  });
  assert.equal(torch.liveTensors(), before);
});
