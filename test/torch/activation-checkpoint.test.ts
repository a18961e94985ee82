// Activation checkpointing (utils.checkpoint) against PyTorch 1.13's reentrant checkpoint
// (scripts/golden/activation_checkpoint.py): a block with dropout whose gradients and the
// generator's next draw equal an uncheckpointed run's, two outputs of which the loss uses one,
// checkpointSequential; then the errors and the memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, utils, type Tensor } from '../../src/torch/index.js';
import { liveJsAutograd } from '../../src/torch/autograd-hooks.js';
import { assertClose, goldenDir } from '../helpers.js';

type Flat = number[];
interface BlockRun {
  y: Flat;
  grad_x: Flat;
  grads: Record<string, Flat>;
  rand_after: Flat;
}
const g = JSON.parse(readFileSync(join(goldenDir, 'torch', 'activation-checkpoint.json'), 'utf8')) as {
  block: { weights: Record<string, Flat>; x: Flat[]; w: Flat[]; checkpointed: BlockRun; plain: BlockRun };
  two: { p: Flat; s: Flat; grad_a: Flat; grad_b: Flat };
  sequential: { weights: Record<string, Flat>; x: Flat; y: Flat; grad_x: Flat; grads: Record<string, Flat> };
};

const f64 = (data: Flat, shape?: number[]): Tensor =>
  torch.tensor(data, { dtype: 'float64', ...(shape ? { shape } : {}) });
const values = (t: Tensor | null): Flat => torch.tidy(() => Array.from(t!.toFloat64Array()));

function load(m: nn.Module, weights: Record<string, Flat>): void {
  m.double();
  torch.tidy(() =>
    torch.noGrad(() => {
      for (const [name, p] of m.namedParameters()) p.copy_(f64(weights[name]!, p.shape));
    }),
  );
}

test('a block with dropout: PyTorch 1.13 gradients, equal to the uncheckpointed run, generator restored', () => {
  const before = torch.liveTensors();
  const block = new nn.Sequential(
    new nn.Linear(4, 8),
    new nn.ReLU(),
    new nn.Dropout(0.5),
    new nn.Linear(8, 3),
  );
  load(block, g.block.weights);
  const run = (checkpointed: boolean): BlockRun =>
    torch.tidy(() => {
      block.zeroGrad();
      const x = f64(g.block.x.flat(), [5, 4]).requiresGrad_();
      torch.manualSeed(5);
      const y = checkpointed
        ? utils.checkpoint.checkpoint((t: Tensor) => block.forward(t), [x])
        : block.forward(x);
      if (checkpointed) assert.equal(y.gradFn, 'CheckpointedBackward');
      y.mul(f64(g.block.w.flat(), [5, 3]))
        .sum()
        .backward();
      return {
        y: values(y),
        grad_x: values(x.grad),
        grads: Object.fromEntries([...block.namedParameters()].map(([k, p]) => [k, values(p.grad)])),
        rand_after: values(torch.rand([3], 'float64')),
      };
    });
  for (const [which, got] of [
    ['checkpointed', run(true)],
    ['plain', run(false)],
  ] as const) {
    const want = g.block[which];
    assertClose(got.y, want.y, 1e-12, 0, `${which} y`);
    assertClose(got.grad_x, want.grad_x, 1e-12, 0, `${which} grad x`);
    for (const [k, v] of Object.entries(want.grads)) assertClose(got.grads[k]!, v, 1e-12, 0, `${which} ${k}`);
    assertClose(got.rand_after, want.rand_after, 0, 0, `${which} generator after backward`);
  }
  block.dispose();
  assert.equal(liveJsAutograd(), 0);
  assert.equal(torch.liveTensors(), before);
});

test('two tensors, a number, two outputs of which the loss uses one (PyTorch 1.13)', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const a = f64([0.5, -1, 2]).requiresGrad_();
    const b = f64([1.5, 0.25, -0.75]).requiresGrad_();
    const [p, s] = utils.checkpoint.checkpoint(
      (x: Tensor, y: Tensor, k: number) => [x.mul(y).mul(k), x.add(y).tanh()],
      [a, b, 3],
    );
    assertClose(values(p!), g.two.p, 1e-12, 0, 'p');
    assertClose(values(s!), g.two.s, 1e-12, 0, 's');
    p!.mul(p!).sum().backward();
    assertClose(values(a.grad), g.two.grad_a, 1e-12, 0, 'grad a');
    assertClose(values(b.grad), g.two.grad_b, 1e-12, 0, 'grad b');
  });
  assert.equal(torch.liveTensors(), before);
});

test('checkpointSequential: six layers in three segments (PyTorch 1.13)', () => {
  const before = torch.liveTensors();
  const seq = new nn.Sequential(
    new nn.Linear(3, 6),
    new nn.Tanh(),
    new nn.Linear(6, 6),
    new nn.Sigmoid(),
    new nn.Linear(6, 2),
    new nn.Tanh(),
  );
  load(seq, g.sequential.weights);
  torch.tidy(() => {
    const x = f64(g.sequential.x, [4, 3]).requiresGrad_();
    const y = utils.checkpoint.checkpointSequential([...seq.children()], 3, x);
    assertClose(values(y), g.sequential.y, 1e-12, 0, 'y');
    y.pow(2).sum().backward();
    assertClose(values(x.grad), g.sequential.grad_x, 1e-12, 0, 'grad x');
    for (const [k, p] of seq.namedParameters())
      assertClose(values(p.grad), g.sequential.grads[k]!, 1e-12, 0, k);
  });
  seq.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('no input requiring grad: the segment runs, records nothing, and a warning says so once', async () => {
  const before = torch.liveTensors();
  const warnings: string[] = [];
  const listen = (w: Error) => warnings.push(w.message);
  process.on('warning', listen);
  try {
    torch.tidy(() => {
      const lin = new nn.Linear(2, 2);
      const y = utils.checkpoint.checkpoint((t: Tensor) => lin.forward(t), [torch.ones([1, 2])]);
      assert.equal(y.requiresGrad, false);
      utils.checkpoint.checkpoint((t: Tensor) => lin.forward(t), [torch.ones([1, 2])]);
      lin.dispose();
    });
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  } finally {
    process.off('warning', listen);
  }
  assert.equal(warnings.filter((m) => /no tensor argument requires grad/.test(m)).length, 1);
  assert.equal(utils.data, torch.data, 'utils.data is the data namespace');
  assert.equal(torch.liveTensors(), before);
});

test('named errors: autograd.grad through a checkpoint, a function returning no tensor, bad arguments', () => {
  const before = torch.liveTensors();
  const x = f64([1, 2, 3]).requiresGrad_();
  assert.throws(
    () => torch.tidy(() => torch.grad([utils.checkpoint.checkpoint((t: Tensor) => t.exp(), [x]).sum()], [x])),
    /tailor: utils\.checkpoint\.checkpoint: a checkpointed segment cannot be differentiated by autograd\.grad/,
  );
  assert.throws(
    () => torch.tidy(() => utils.checkpoint.checkpoint((() => 5) as unknown as () => Tensor, [x])),
    /tailor: utils\.checkpoint\.checkpoint: the function must return a Tensor or a non-empty array of Tensors, got 5/,
  );
  assert.throws(() => utils.checkpoint.checkpoint(3 as never, [x]), /utils\.checkpoint\.checkpoint.*fn/);
  assert.throws(
    () => utils.checkpoint.checkpoint((t: Tensor) => t, x as never),
    /utils\.checkpoint\.checkpoint.*args/,
  );
  assert.throws(
    () => utils.checkpoint.checkpoint((t: Tensor) => t, [x], { preserveRngState: 'yes' as never }),
    /options\.preserveRngState/,
  );
  assert.throws(() => utils.checkpoint.checkpointSequential([], 1, x), /checkpointSequential.*functions/);
  assert.throws(
    () => utils.checkpoint.checkpointSequential([(t: Tensor) => t], 0, x),
    /checkpointSequential.*segments/,
  );
  assert.throws(
    () => utils.checkpoint.checkpointSequential([{}], 1, x),
    /checkpointSequential.*functions\[0\]/,
  );
  x.dispose();
  assert.equal(liveJsAutograd(), 0);
  assert.equal(torch.liveTensors(), before);
});
