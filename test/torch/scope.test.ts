// Memory scopes: what tidy, keep, TensorScope and withScope free and what they leave alone,
// including async code and tensors held inside class instances.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as torch from '../../src/torch/index.js';
import type { Tensor } from '../../src/torch/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Collects garbage until the live count drops to `target` (or about a second has passed). */
async function collectUntil(target: number): Promise<number> {
  for (let i = 0; i < 100 && torch.liveTensors() > target; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
  }
  return torch.liveTensors();
}

function makeForgotten(n: number): void {
  for (let i = 0; i < n; i++) torch.ones([2]);
}

test('tidy given an async function throws, frees what it made and leaves no scope open', async () => {
  const before = torch.liveTensors();
  let continued = false;
  assert.throws(
    () =>
      torch.tidy(async () => {
        torch.ones([3]);
        await Promise.resolve();
        continued = true;
      }),
    /tidy\(\) got an async function; use withScope/,
  );
  assert.equal(torch.liveTensors(), before, 'the tensor made before the first await was freed');
  // With a scope left on the stack, tensors made from here on would belong to it and never be
  // freed; with the stack as it was, forgotten ones go to the safety net and are collected.
  makeForgotten(20);
  assert.equal(torch.liveTensors(), before + 20);
  assert.equal(await collectUntil(before), before, 'tensors made after the refused tidy are collectable');
  assert.ok(continued, 'the abandoned async function ran to its end without an unhandled rejection');
});

test('a refused async tidy inside an open scope gives the outer scope its tensors back', () => {
  const before = torch.liveTensors();
  const kept = torch.tidy(() => {
    assert.throws(() => torch.tidy(() => Promise.resolve(torch.ones([1]))), TypeError);
    // Made in the outer scope again: returned from it, so it survives.
    return torch.ones([4]);
  });
  assert.equal(torch.liveTensors(), before + 1);
  assert.deepEqual(kept.shape, [4]);
  kept.dispose();
  assert.equal(torch.liveTensors(), before);
});

class Pair {
  readonly note = 'pair';
  constructor(
    readonly a: Tensor,
    readonly b: Tensor,
  ) {}
}

class Holder {
  constructor(readonly pairs: Pair[]) {}
}

test('tensors inside class instances returned from a scope are kept, the rest freed', () => {
  const before = torch.liveTensors();
  const pair = torch.tidy(() => {
    const x = torch.ones([2]);
    return new Pair(x.add(1), x.mul(3));
  });
  assert.equal(torch.liveTensors(), before + 2, 'the two fields survive, the temporary x is freed');
  assert.deepEqual(Array.from(pair.a.toFloat32Array()), [2, 2]);
  assert.deepEqual(Array.from(pair.b.toFloat32Array()), [3, 3]);

  const nested = torch.tidy(() => {
    const inner = torch.tidy(() => new Holder([new Pair(torch.zeros([1]), torch.full([1], 5))]));
    torch.ones([9]); // a temporary of the outer scope
    return new Map([['h', inner]]);
  });
  assert.equal(torch.liveTensors(), before + 4);
  assert.equal(nested.get('h')!.pairs[0]!.b.item(), 5);
  torch.dispose([pair.a, pair.b, nested.get('h')!.pairs[0]!.a, nested.get('h')!.pairs[0]!.b]);
  assert.equal(torch.liveTensors(), before);
});

test('keep() takes tensors in class instances out of every scope', () => {
  const before = torch.liveTensors();
  let held: Pair | undefined;
  torch.tidy(() => {
    held = torch.keep(new Pair(torch.ones([1]), torch.zeros([1])));
    torch.ones([1]);
  });
  assert.equal(torch.liveTensors(), before + 2);
  assert.equal(held!.a.item(), 1);
  torch.dispose([held!.a, held!.b]);
  assert.equal(torch.liveTensors(), before);
});

test('withScope frees what its steps made once the function settles, and keeps the result', async () => {
  const before = torch.liveTensors();
  const result = await torch.withScope(async (scope) => {
    const x = scope.run(() => torch.arange(4, undefined, 1, 'float32'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const y = scope.run(() => x.mul(2).add(1));
    assert.equal(scope.size, 3, 'x, the product and the sum');
    await Promise.resolve();
    return { y, note: 'done' };
  });
  assert.equal(torch.liveTensors(), before + 1);
  assert.deepEqual(Array.from(result.y.toFloat32Array()), [1, 3, 5, 7]);
  result.y.dispose();

  await assert.rejects(
    torch.withScope(async (scope) => {
      scope.run(() => torch.ones([8]));
      await Promise.resolve();
      throw new Error('step failed');
    }),
    /step failed/,
  );
  assert.equal(torch.liveTensors(), before, 'a rejected function frees its tensors too');
});

test('concurrent withScope calls own only their own tensors across awaits', async () => {
  const before = torch.liveTensors();
  const sizes: Record<string, number> = {};
  let open = (): void => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const slow = torch.withScope(async (scope) => {
    scope.run(() => torch.ones([1]));
    await gate; // the other function runs all its steps meanwhile
    scope.run(() => torch.ones([1]));
    sizes.slow = scope.size;
    return scope.run(() => torch.full([1], 7));
  });
  const fast = torch.withScope(async (scope) => {
    for (let i = 0; i < 5; i++) {
      scope.run(() => torch.zeros([1]));
      await Promise.resolve();
    }
    sizes.fast = scope.size;
    open();
    return 'no tensors';
  });
  const [seven, text] = await Promise.all([slow, fast]);
  assert.deepEqual(sizes, { slow: 2, fast: 5 });
  assert.equal(text, 'no tensors');
  assert.equal(seven.item(), 7);
  assert.equal(torch.liveTensors(), before + 1);
  seven.dispose();
});

test('a TensorScope works with using, refuses async steps and hands kept tensors to the caller', () => {
  const before = torch.liveTensors();
  let kept: Tensor;
  {
    using scope = new torch.TensorScope();
    const t = scope.run(() => torch.ones([2]).mul(4));
    kept = torch.keep(t); // the plain keep() finds the held scope too
    scope.run(() => torch.tidy(() => torch.zeros([3]))); // a nested tidy's result joins the scope
    assert.throws(() => scope.run(async () => torch.ones([1])), /TensorScope\.run\(\) got an async function/);
    // The ones() temporary, the tidy result and the tensor the refused step made before returning;
    // the kept tensor has left.
    assert.equal(scope.size, 3);
  }
  assert.equal(torch.liveTensors(), before + 1);
  assert.deepEqual(Array.from(kept.toFloat32Array()), [4, 4]);
  kept.dispose();
  const closed = new torch.TensorScope();
  closed.dispose();
  assert.throws(() => closed.run(() => 1), /already disposed/);
  assert.equal(torch.liveTensors(), before);
});

test('dispose() frees tensors in arrays, Maps, Sets and plain objects but leaves class instances', () => {
  const before = torch.liveTensors();
  const inside = new Pair(torch.ones([1]), torch.ones([1]));
  torch.dispose({
    list: [torch.ones([1])],
    map: new Map([['m', torch.ones([1])]]),
    set: new Set([torch.ones([1])]),
    inside,
  });
  assert.equal(torch.liveTensors(), before + 2, 'a class instance is disposed by its owner, not by a walk');
  torch.dispose([inside.a, inside.b]);
  assert.equal(torch.liveTensors(), before);
});
