// Custom autograd Functions, hooks on non-leaf tensors and full backward hooks around a residual
// connection, against PyTorch 1.13 (scripts/golden/autograd_function.py), with the errors and
// the bookkeeping of the JavaScript calls the engine makes (autograd-hooks.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { autograd, nn, type Tensor } from '../../src/torch/index.js';
import { liveJsAutograd } from '../../src/torch/autograd-hooks.js';
import { assertClose, goldenDir } from '../helpers.js';

type Flat = number[];
const g = JSON.parse(readFileSync(join(goldenDir, 'torch', 'autograd-function.json'), 'utf8')) as {
  exp: { x: Flat; w: Flat; y: Flat; grad: Flat; grad2: Flat; grad_fn: string };
  muladd: { k: number; p: Flat; s: Flat; grad_a: Flat; grad_b: Flat };
  muladd_one: { grad_a: Flat };
  sort: Record<
    'materialize' | 'none',
    { values: Flat; indices: number[]; indices_requires_grad: boolean; grad: Flat; index_grad_none: boolean }
  >;
  broadcast: { m: Flat; grad_col: Flat; grad_m: Flat };
  dirty: { result: Flat; grad: Flat };
  nonleaf_hook: { seen: Flat[]; grad: Flat };
  residual: {
    pre: { weight: Flat; bias: Flat };
    block: { weight: Flat; bias: Flat };
    x: Flat;
    grad_input: Flat;
    grad_output: Flat;
    grad_x: Flat;
    grad_pre_weight: Flat;
    grad_block_weight: Flat;
    autograd_grad_x: Flat;
  };
};

const f64 = (data: Flat, shape?: number[], requiresGrad = false): Tensor =>
  torch.tensor(data, { dtype: 'float64', requiresGrad, ...(shape ? { shape } : {}) });
const values = (t: Tensor | null): Flat => Array.from(t!.toFloat64Array());

class Exp extends autograd.Function {
  static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
    const y = x.exp();
    ctx.saveForBackward(y);
    return y;
  }
  static backward(ctx: autograd.FunctionCtx, grad: Tensor | null): Tensor {
    const [y] = ctx.savedTensors;
    return grad!.mul(y!);
  }
}

class MulAdd extends autograd.Function {
  static forward(ctx: autograd.FunctionCtx, a: Tensor, b: Tensor, k: number): Tensor[] {
    ctx.saveForBackward(a, b);
    ctx.k = k;
    return [a.mul(b).mul(k), a.add(b)];
  }
  static backward(ctx: autograd.FunctionCtx, gp: Tensor | null, gs: Tensor | null): (Tensor | null)[] {
    const [a, b] = ctx.savedTensors;
    const k = ctx.k as number;
    return [
      ctx.needsInputGrad[0] ? gp!.mul(b!).mul(k).add(gs!) : null,
      ctx.needsInputGrad[1] ? gp!.mul(a!).mul(k).add(gs!) : null,
      null,
    ];
  }
}

test('Exp: values, gradFn, second derivative through createGraph; gradcheck (PyTorch 1.13)', () => {
  const before = torch.liveTensors();
  const x = f64(g.exp.x, undefined, true);
  torch.tidy(() => {
    const y = Exp.apply(x);
    assert.equal(y.gradFn, g.exp.grad_fn);
    assert.equal(y.isLeaf, false);
    assertClose(values(y), g.exp.y, 1e-12, 0, 'y');
    const [gx] = torch.grad([y.mul(f64(g.exp.w)).sum()], [x], { createGraph: true });
    assertClose(values(gx), g.exp.grad, 1e-12, 0, 'grad');
    const [ggx] = torch.grad([gx!.mul(gx!).sum()], [x]);
    assertClose(values(ggx), g.exp.grad2, 1e-12, 0, 'second derivative');
  });
  const err = torch.tidy(() =>
    autograd.gradcheck((t) => Exp.apply(t), [f64([0.1, -0.4, 0.3], undefined, true)]),
  );
  assert.ok(err < 1e-6, `gradcheck ${err}`);
  // Without grad mode, or with no input requiring grad, forward runs and records nothing.
  torch.tidy(() => {
    assert.equal(torch.noGrad(() => Exp.apply(x)).gradFn, null);
    assert.equal(Exp.apply(f64(g.exp.x)).requiresGrad, false);
  });
  x.dispose();
  assert.equal(liveJsAutograd(), 0);
  assert.equal(torch.liveTensors(), before);
});

test('two tensors, a number, two outputs; needsInputGrad (PyTorch 1.13)', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const a = f64(g.exp.x, undefined, true);
    const b = f64(g.exp.w, undefined, true);
    const [p, s] = MulAdd.apply(a, b, g.muladd.k) as Tensor[];
    assertClose(values(p!), g.muladd.p, 1e-12, 0, 'p');
    assertClose(values(s!), g.muladd.s, 1e-12, 0, 's');
    assert.equal(p!.gradFn, 'MulAddBackward');
    p!
      .pow(2)
      .sum()
      .add(s!.mul(f64(g.exp.w)).sum())
      .backward();
    assertClose(values(a.grad), g.muladd.grad_a, 1e-12, 0, 'grad a');
    assertClose(values(b.grad), g.muladd.grad_b, 1e-12, 0, 'grad b');
    const a2 = f64(g.exp.x, undefined, true);
    let needs: readonly boolean[] = [];
    class Probe extends MulAdd {
      static override backward(
        ctx: autograd.FunctionCtx,
        gp: Tensor | null,
        gs: Tensor | null,
      ): (Tensor | null)[] {
        needs = ctx.needsInputGrad;
        return MulAdd.backward(ctx, gp, gs);
      }
    }
    (Probe.apply(a2, f64(g.exp.w), g.muladd.k) as Tensor[])[0]!.sum().backward();
    assert.deepEqual(needs, [true, false, false]);
    assertClose(values(a2.grad), g.muladd_one.grad_a, 1e-12, 0, 'grad a alone');
  });
  assert.equal(liveJsAutograd(), 0);
  assert.equal(torch.liveTensors(), before);
});

test('markNonDifferentiable and setMaterializeGrads; a broadcast gradient summed down; markDirty (PyTorch 1.13)', () => {
  const before = torch.liveTensors();
  for (const mode of ['materialize', 'none'] as const) {
    const seenNull: boolean[] = [];
    class SortFn extends autograd.Function {
      static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor[] {
        const [v, i] = x.sort();
        ctx.markNonDifferentiable(i!);
        ctx.saveForBackward(i!);
        ctx.setMaterializeGrads(mode === 'materialize');
        return [v!, i!];
      }
      static backward(ctx: autograd.FunctionCtx, gv: Tensor | null, gi: Tensor | null): Tensor {
        seenNull.push(gi === null);
        const [i] = ctx.savedTensors;
        return torch.zerosLike(gv!).scatter(0, i!, gv!);
      }
    }
    torch.tidy(() => {
      const x = f64(g.exp.x, undefined, true);
      const [v, i] = SortFn.apply(x) as Tensor[];
      const want = g.sort[mode];
      assertClose(values(v!), want.values, 0, 0, `${mode} values`);
      assert.deepEqual(Array.from(i!.toArray() as BigInt64Array, Number), want.indices);
      assert.equal(i!.requiresGrad, want.indices_requires_grad);
      v!.mul(f64(g.exp.w)).sum().backward();
      assertClose(values(x.grad), want.grad, 1e-12, 0, `${mode} grad`);
      assert.deepEqual(seenNull, [want.index_grad_none]);
    });
  }
  class RowScale extends autograd.Function {
    static forward(ctx: autograd.FunctionCtx, col: Tensor, m: Tensor): Tensor {
      ctx.saveForBackward(col, m);
      return col.mul(m);
    }
    static backward(ctx: autograd.FunctionCtx, grad: Tensor | null): Tensor[] {
      const [col, m] = ctx.savedTensors;
      return [grad!.mul(m!), grad!.mul(col!)]; // the first is [4, 3] for a [4, 1] column
    }
  }
  torch.tidy(() => {
    const col = f64(g.exp.x, [4, 1], true);
    const m = f64(g.broadcast.m, [4, 3], true);
    RowScale.apply(col, m).pow(2).sum().backward();
    assertClose(values(col.grad), g.broadcast.grad_col, 1e-12, 0, 'column gradient summed down');
    assertClose(values(m.grad), g.broadcast.grad_m, 1e-12, 0, 'matrix gradient');
  });
  class Double_ extends autograd.Function {
    static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
      x.mul_(2);
      ctx.markDirty(x);
      return x;
    }
    static backward(_ctx: autograd.FunctionCtx, grad: Tensor | null): Tensor {
      return grad!.mul(2);
    }
  }
  torch.tidy(() => {
    const w0 = f64(g.exp.x, undefined, true);
    const h = w0.mul(1.5);
    const r = Double_.apply(h);
    assertClose(values(r), g.dirty.result, 1e-12, 0, 'in place result');
    r.mul(f64(g.exp.w)).sum().backward();
    assertClose(values(w0.grad), g.dirty.grad, 1e-12, 0, 'gradient through the in-place function');
  });
  assert.equal(liveJsAutograd(), 0);
  assert.equal(torch.liveTensors(), before);
});

test('backward after the scope of the inputs ended (their handles freed, the graph keeps them)', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = f64(g.exp.x, undefined, true);
    // the intermediate fed to Exp is freed with the inner scope, before backward runs
    const y = torch.tidy(() => Exp.apply(x.mul(1)));
    y.mul(f64(g.exp.w)).sum().backward();
    assertClose(values(x.grad), g.exp.grad, 1e-12, 0, 'grad');
  });
  assert.equal(liveJsAutograd(), 0);
  assert.equal(torch.liveTensors(), before);
});

test('a hook on a non-leaf tensor sees its total gradient once and may replace it (PyTorch 1.13)', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = f64(g.exp.x, undefined, true);
    const y = x.mul(2);
    const seen: Flat[] = [];
    const handle = y.registerHook((grad) => {
      seen.push(values(grad));
      return grad.mul(3);
    });
    y.pow(2)
      .sum()
      .add(y.mul(f64(g.exp.w)).sum())
      .backward();
    assert.deepEqual(seen.length, 1);
    assertClose(seen[0]!, g.nonleaf_hook.seen[0]!, 1e-12, 0, 'hook gradient');
    assertClose(values(x.grad), g.nonleaf_hook.grad, 1e-12, 0, 'x.grad');
    handle.remove();
  });
  assert.equal(liveJsAutograd(), 0);
  assert.equal(torch.liveTensors(), before);
});

test('a full backward hook on a block inside a residual connection; autograd.grad through it (PyTorch 1.13)', () => {
  const before = torch.liveTensors();
  const r = g.residual;
  const make = (p: { weight: Flat; bias: Flat }): nn.Linear => {
    const lin = new nn.Linear(3, 3).double();
    torch.tidy(() =>
      torch.noGrad(() => {
        lin.weight.copy_(f64(p.weight, [3, 3]));
        lin.bias!.copy_(f64(p.bias));
      }),
    );
    return lin;
  };
  const pre = make(r.pre);
  const block = make(r.block);
  const recorded: Flat[] = [];
  block.registerFullBackwardHook((_m, gin, gout) => {
    recorded.push(values(gin[0]!), values(gout[0]!));
    return [gin[0]!.mul(2)];
  });
  const x = f64(r.x, [2, 3], true);
  torch.tidy(() => {
    const a = pre.forward(x);
    block.forward(a).add(a).pow(2).sum().backward();
  });
  assertClose(recorded[0]!, r.grad_input, 1e-12, 0, 'gradInput');
  assertClose(recorded[1]!, r.grad_output, 1e-12, 0, 'gradOutput');
  torch.tidy(() => assertClose(values(x.grad), r.grad_x, 1e-12, 0, 'x.grad'));
  torch.tidy(() => assertClose(values(pre.weight.grad), r.grad_pre_weight, 1e-12, 0, 'pre.weight.grad'));
  torch.tidy(() =>
    assertClose(values(block.weight.grad), r.grad_block_weight, 1e-12, 0, 'block.weight.grad'),
  );
  torch.tidy(() => {
    const loss = block.forward(pre.forward(x)).add(pre.forward(x)).pow(2).sum();
    const [gx] = torch.grad([loss], [x]);
    assertClose(values(gx!), r.autograd_grad_x, 1e-12, 0, 'autograd.grad through the hooked block');
  });
  x.dispose();
  pre.dispose();
  block.dispose();
  assert.equal(liveJsAutograd(), 0);
  assert.equal(torch.liveTensors(), before);
});

test('named errors: wrong gradient count or shape, a gradient for a number, a throwing backward, a saved tensor modified in place', () => {
  const before = torch.liveTensors();
  const x = f64(g.exp.x, undefined, true);
  class Count extends autograd.Function {
    static forward(_ctx: autograd.FunctionCtx, t: Tensor): Tensor {
      return t.mul(2);
    }
    static backward(_ctx: autograd.FunctionCtx, grad: Tensor | null): Tensor[] {
      return [grad!, grad!];
    }
  }
  assert.throws(
    () => torch.tidy(() => Count.apply(x).sum().backward()),
    /tailor: Count\.backward returned 2 gradients, expected 1/,
  );
  class Shape extends autograd.Function {
    static forward(_ctx: autograd.FunctionCtx, t: Tensor): Tensor {
      return t.sum();
    }
    static backward(_ctx: autograd.FunctionCtx, grad: Tensor | null): Tensor {
      return grad!.expand(3);
    }
  }
  assert.throws(
    () => torch.tidy(() => Shape.apply(x).backward()),
    /tailor: Shape\.backward returned an invalid gradient at index 0: got \[3\] but expected shape compatible with \[4\]/,
  );
  class Scaled extends autograd.Function {
    static forward(_ctx: autograd.FunctionCtx, t: Tensor, k: number): Tensor {
      return t.mul(k);
    }
    static backward(_ctx: autograd.FunctionCtx, grad: Tensor | null): Tensor[] {
      return [grad!, grad!];
    }
  }
  assert.throws(
    () => torch.tidy(() => Scaled.apply(x, 2).sum().backward()),
    /tailor: Scaled\.backward returned a gradient for argument 1, which is not a tensor/,
  );
  class Throws extends autograd.Function {
    static forward(_ctx: autograd.FunctionCtx, t: Tensor): Tensor {
      return t.mul(2);
    }
    static backward(): Tensor {
      throw new RangeError('the backward of my own');
    }
  }
  assert.throws(
    () => torch.tidy(() => Throws.apply(x).sum().backward()),
    (e: unknown) => e instanceof RangeError && /my own/.test(e.message),
  );
  assert.throws(
    () =>
      torch.tidy(() => {
        const y = Exp.apply(x);
        torch.noGrad(() => y.add_(1)); // Exp saved y: libtorch's version check catches it
        y.sum().backward();
      }),
    /modified by an inplace operation/,
  );
  assert.throws(() => (autograd.Function as unknown as { apply(): void }).apply(), /call it on a subclass/);
  class NoForward extends autograd.Function {}
  assert.throws(
    () => (NoForward.apply as (this: unknown, ...a: unknown[]) => unknown).call(NoForward, x),
    /tailor: autograd\.Function: NoForward must define static forward/,
  );
  torch.tidy(() => {
    const y = x.mul(2);
    y.registerHook(() => torch.zeros([2], 'float64'));
    assert.throws(
      () => y.sum().backward(),
      /tailor: registerHook: the hook returned a gradient of shape \[2\] for a tensor of shape \[4\]/,
    );
  });
  x.dispose();
  assert.equal(liveJsAutograd(), 0);
  assert.equal(torch.liveTensors(), before);
});
