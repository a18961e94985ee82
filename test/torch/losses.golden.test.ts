// The losses of nn.functional and their module classes against PyTorch 1.13
// (test/golden/torch/losses_schedules.json, from scripts/golden/losses_schedules.py): the value
// for every reduction and the gradient of every differentiable argument, in float64; then the
// named errors of bad options and shapes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Data {
  shape: number[];
  dtype: 'float64' | 'int64';
  data: number[];
}
interface LossCase {
  name: string;
  fn: string;
  options: Record<string, unknown>;
  tensorOptions: Record<string, Data>;
  args: Data[];
  grad: boolean[];
  results: Record<string, { output: Data; upstream: number[]; grads: (number[] | null)[] }>;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'losses_schedules.json'), 'utf8')) as {
  losses: LossCase[];
};
const F = nn.functional;
const TOL = 1e-12;

const make = (d: Data) => torch.tensor(Float64Array.from(d.data), { shape: d.shape, dtype: d.dtype });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyFn = (...args: any[]) => torch.Tensor;
/** Each functional with its module class; the functionals that take the reduction (and beta) as arguments, not as options. */
const forms: Record<string, { fn: AnyFn; cls: new (o: never) => { forward: AnyFn } }> = {
  klDiv: { fn: F.klDiv, cls: nn.KLDivLoss },
  binaryCrossEntropy: { fn: F.binaryCrossEntropy, cls: nn.BCELoss },
  huberLoss: { fn: F.huberLoss, cls: nn.HuberLoss },
  softMarginLoss: { fn: F.softMarginLoss, cls: nn.SoftMarginLoss },
  multilabelSoftMarginLoss: { fn: F.multilabelSoftMarginLoss, cls: nn.MultiLabelSoftMarginLoss },
  cosineEmbeddingLoss: { fn: F.cosineEmbeddingLoss, cls: nn.CosineEmbeddingLoss },
  marginRankingLoss: { fn: F.marginRankingLoss, cls: nn.MarginRankingLoss },
  hingeEmbeddingLoss: { fn: F.hingeEmbeddingLoss, cls: nn.HingeEmbeddingLoss },
  tripletMarginLoss: { fn: F.tripletMarginLoss, cls: nn.TripletMarginLoss },
  poissonNllLoss: { fn: F.poissonNllLoss, cls: nn.PoissonNLLLoss },
  gaussianNllLoss: { fn: F.gaussianNllLoss, cls: nn.GaussianNLLLoss },
  multiMarginLoss: { fn: F.multiMarginLoss, cls: nn.MultiMarginLoss },
  multilabelMarginLoss: { fn: F.multilabelMarginLoss, cls: nn.MultiLabelMarginLoss },
  ctcLoss: { fn: F.ctcLoss, cls: nn.CTCLoss },
  crossEntropy: { fn: F.crossEntropy, cls: nn.CrossEntropyLoss },
  nllLoss: { fn: F.nllLoss, cls: nn.NLLLoss },
  binaryCrossEntropyWithLogits: { fn: F.binaryCrossEntropyWithLogits, cls: nn.BCEWithLogitsLoss },
  mseLoss: { fn: (a, b, o: { reduction: never }) => F.mseLoss(a, b, o.reduction), cls: nn.MSELoss },
  l1Loss: { fn: (a, b, o: { reduction: never }) => F.l1Loss(a, b, o.reduction), cls: nn.L1Loss },
  smoothL1Loss: {
    fn: (a, b, o: { beta: number; reduction: never }) => F.smoothL1Loss(a, b, o.beta, o.reduction),
    cls: nn.SmoothL1Loss,
  },
};

/** Runs one form on fresh leaves; returns the output and the gradients of the upstream-weighted sum. */
function run(
  c: LossCase,
  reduction: string,
  call: (args: torch.Tensor[], options: Record<string, unknown>) => torch.Tensor,
) {
  return torch.tidy(() => {
    const args = c.args.map((d, i) => (c.grad[i] ? make(d).requiresGrad_() : make(d)));
    const options: Record<string, unknown> = { ...c.options, reduction };
    for (const [k, d] of Object.entries(c.tensorOptions)) options[k] = make(d);
    const out = call(args, options);
    const r = c.results[reduction]!;
    const up = torch.tensor(Float64Array.from(r.upstream), { shape: out.shape });
    out.mul(up).sum().backward();
    return {
      shape: out.shape,
      output: Array.from(out.toFloat64Array()),
      grads: args.map((a, i) => (c.grad[i] ? Array.from(a.grad!.toFloat64Array()) : null)),
    };
  });
}

for (const c of golden.losses) {
  test(`${c.fn} matches PyTorch 1.13 (functional and module): ${c.name}`, () => {
    const before = torch.liveTensors();
    const form = forms[c.fn]!;
    for (const [reduction, r] of Object.entries(c.results)) {
      const functional = run(c, reduction, (args, o) => form.fn(...args, o));
      const module = run(c, reduction, (args, o) => {
        const loss = new form.cls(o as never);
        const out = loss.forward(...args);
        (loss as unknown as nn.Module).dispose();
        return out;
      });
      for (const [what, got] of [
        ['functional', functional],
        ['module', module],
      ] as const) {
        const label = `${c.name} ${reduction} (${what})`;
        assert.deepEqual(got.shape, r.output.shape, `${label}: output shape`);
        assertClose(got.output, r.output.data, TOL, TOL, `${label}: output`);
        got.grads.forEach((g, i) => {
          if (r.grads[i]) assertClose(g!, r.grads[i]!, TOL, TOL, `${label}: gradient of argument ${i}`);
        });
      }
    }
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}

test('ctcLoss takes the lengths as arrays or as int64 tensors alike', () => {
  const c = golden.losses.find((x) => x.name === 'ctc')!;
  torch.tidy(() => {
    const [lp, targets] = [make(c.args[0]!), make(c.args[1]!)];
    const asArrays = F.ctcLoss(lp, targets, c.args[2]!.data, c.args[3]!.data, { reduction: 'sum' });
    assertClose([asArrays.item()], c.results.sum!.output.data, TOL, TOL, 'ctc with array lengths');
  });
});

test('the module classes keep their options, own a copy of their weight, and PyTorch buffer names', () => {
  const before = torch.liveTensors();
  const w = torch.keep(torch.tensor([1, 2, 3]));
  const loss = new nn.BCEWithLogitsLoss({ weight: w, posWeight: w, reduction: 'sum' });
  w.dispose();
  assert.deepEqual(Object.keys(loss.stateDict()).sort(), ['pos_weight', 'weight']);
  assert.deepEqual(Array.from(loss.weight!.toFloat64Array()), [1, 2, 3]);
  assert.equal(loss.reduction, 'sum');
  loss.dispose();
  assert.equal(torch.liveTensors(), before, 'the module frees its copies, and only them');
  assert.deepEqual(Object.keys(new nn.MSELoss().stateDict()), []);
  assert.equal(new nn.TripletMarginLoss({ swap: true }).margin, 1);
  assert.equal(new nn.KLDivLoss({ reduction: 'batchmean' }).reduction, 'batchmean');
});

test('bad options and shapes are named errors with the remedy', () => {
  torch.tidy(() => {
    const x = torch.randn([4, 3]);
    const y = torch.randn([4, 3]);
    const s = torch.ones([4]);
    const cases: [() => unknown, RegExp][] = [
      [
        () => F.mseLoss(x, y, 'avg' as never),
        /^ArgumentError: mseLoss: options.reduction must be one of 'none', 'mean', 'sum', got 'avg'/,
      ],
      [() => new nn.L1Loss({ reduction: 'batchmean' as never }), /L1Loss: options.reduction must be one of/],
      [() => F.klDiv(x, y, { reduction: 'avg' as never }), /klDiv: options.reduction must be one of/],
      [() => new nn.HuberLoss({ delta: 0 }), /HuberLoss: options.delta must be a finite number > 0, got 0/],
      [() => F.huberLoss(x, y, { delta: -1 }), /huberLoss: options.delta must be a finite number > 0/],
      [() => F.smoothL1Loss(x, y, -1), /smoothL1Loss: beta must be a finite number >= 0/],
      [
        () => F.huberLoss(x, torch.randn([4, 2])),
        /huberLoss: target \[4, 2\] does not broadcast with input \[4, 3\]/,
      ],
      [
        () => F.binaryCrossEntropy(x.sigmoid(), torch.rand([4, 1])),
        /binaryCrossEntropy: target \[4, 1\] must have the shape of input \[4, 3\]/,
      ],
      [
        () => F.cosineEmbeddingLoss(x, torch.randn([4, 2]), s),
        /cosineEmbeddingLoss: input2 \[4, 2\] must have the shape of input1 \[4, 3\]/,
      ],
      [
        () => F.cosineEmbeddingLoss(x, y, torch.ones([3])),
        /target \[3\] must hold one value per row of input1 \[4, 3\]/,
      ],
      [
        () => F.marginRankingLoss(x, y.select(1, 0), s),
        /marginRankingLoss: input1 \[4, 3\], input2 \[4\] and target \[4\] must have one number of dimensions/,
      ],
      [
        () => F.tripletMarginLoss(x, y, x.select(0, 0)),
        /tripletMarginLoss: .* must have one number of dimensions/,
      ],
      [
        () => F.tripletMarginLoss(x, y, x, { margin: Number.NaN }),
        /tripletMarginLoss: options.margin must be a finite number/,
      ],
      [
        () => new nn.CosineEmbeddingLoss({ margin: '1' as never }),
        /CosineEmbeddingLoss: options.margin must be a finite number, got '1'/,
      ],
      [() => new nn.MultiMarginLoss({ p: 3 as never }), /MultiMarginLoss: options.p must be 1 or 2/],
      [
        () =>
          F.multiMarginLoss(x, torch.tensor([0, 1, 2, 0], { dtype: 'int64' }), { weight: torch.ones([4]) }),
        /options.weight \[4\] must be 1-d with one weight per class \(3\)/,
      ],
      [
        () => F.gaussianNllLoss(x, y, torch.ones([4, 2])),
        /gaussianNllLoss: variance \[4, 2\] must have the input's shape \[4, 3\]/,
      ],
      [
        () => F.gaussianNllLoss(x, y, torch.ones([4, 3]).neg()),
        /gaussianNllLoss: variance has negative entries: give variances >= 0/,
      ],
      [
        () => F.multilabelMarginLoss(x, torch.zeros([4, 2], 'int64')),
        /target \[4, 2\] must have the shape of input \[4, 3\]/,
      ],
      [
        () => F.ctcLoss(torch.randn([5, 2, 3]), torch.ones([2, 2], 'int64'), [5], [2, 2]),
        /ctcLoss: inputLengths must hold one length per sample \(2\)/,
      ],
      [
        () => F.ctcLoss(torch.randn([5, 2, 3]), torch.ones([2, 2], 'int64'), [5, 5], [2, 2], { blank: 3 }),
        /ctcLoss: options.blank must be an integer >= 0 and <= 2, got 3/,
      ],
      [() => F.softMarginLoss(x, 'y' as never), /softMarginLoss: target must be a Tensor, got 'y'/],
      [
        () => F.binaryCrossEntropy(x.sigmoid(), y.sigmoid(), { weight: torch.ones([2, 4, 3]) }),
        /binaryCrossEntropy: options.weight must be broadcastable to the target's shape \[4, 3\], got shape \[2, 4, 3\]/,
      ],
      [
        () => F.multiMarginLoss(torch.randn([2, 3, 4]), torch.zeros([2], 'int64')),
        /multiMarginLoss: input must be a 1-d \[C\] or 2-d \[N, C\] Tensor, got shape \[2, 3, 4\]/,
      ],
      [
        () => F.ctcLoss(torch.randn([5]), torch.ones([2], 'int64'), [5], [2]),
        /ctcLoss: logProbs must be a \[T, N, C\] or \[T, C\] Tensor, got shape \[5\]/,
      ],
    ];
    for (const [fn, pattern] of cases) assert.throws(fn, pattern);
  });
});
