// tailor's own batching rules (src/torch/vmap-rules.ts): every operator with one gives, inside
// vmap and through the rule (counted), what a loop over the examples gives, for mapped and
// unmapped arguments; per-example gradients of a small CNN through the rules equal a loop of
// func.grad; a call the rule does not cover runs (and fails) as without it; nested vmaps; the
// randomness option against functorch 1.13 (scripts/golden/vmap_randomness.py) and chunkSize.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { func, nn, randint, randn, stack, tensor, vmap, type Tensor } from '../../src/torch/index.js';
import * as aten from '../../src/torch/generated/aten.js';
import { batchingRules, type BatchingRule } from '../../src/torch/vmap-levels.js';
import { assertClose, goldenDir } from '../helpers.js';

const F = nn.functional;
const B = 5;

// Count the calls each rule answers (it returns undefined when it does not apply).
const answered = new Map<string, number>();
for (const [name, rule] of Object.entries(batchingRules)) {
  batchingRules[name] = ((...args: unknown[]) => {
    const out = rule!(...args);
    if (out !== undefined) answered.set(name, (answered.get(name) ?? 0) + 1);
    return out;
  }) as BatchingRule;
}

type Fn = (...args: Tensor[]) => Tensor;

/** vmap(f) over `inputs` equals the stacked per-example results, and `rule` answered. */
function check(rule: string, f: Fn, inputs: Tensor[], inDims: (number | null)[] = inputs.map(() => 0)): void {
  torch.tidy(() => {
    answered.clear();
    const got = vmap(f, inDims)(...inputs);
    assert.ok((answered.get(rule) ?? 0) > 0, `${rule}: the rule did not answer`);
    const per = Array.from({ length: B }, (_, b) =>
      f(...inputs.map((x, i) => (inDims[i] === null ? x : x.select(0, b)))),
    );
    const want = stack(per, 0);
    assert.deepEqual(got.shape, want.shape, rule);
    assertClose(got.toFloat64Array(), want.toFloat64Array(), 1e-5, 1e-5, rule);
  });
}

test('each operator with a batching rule equals the loop over the examples, through the rule', () => {
  torch.manualSeed(3);
  const x = randn([B, 4, 6]);
  const w = randn([B, 3, 6]);
  const w1 = randn([3, 6]);
  const b = randn([B, 3]);
  const b1 = randn([3]);
  check('linear', (x) => F.linear(x, w1, b1), [x]);
  check('linear', (x, w) => F.linear(x, w, b1), [x, w]);
  check('linear', (x, w, b) => F.linear(x, w, b), [x, w, b]);
  check('linear', (w) => F.linear(x.select(0, 0), w), [w]);
  check('linear', (x, w, b) => F.linear(x, w, b), [randn([B, 6]), w, b]);
  check('linear', (b) => F.linear(x.select(0, 0), w1, b), [b]);
  check('matmul', (a, c) => a.matmul(c), [randn([B, 4, 6]), randn([B, 6, 2])]);
  check('matmul', (a, c) => a.matmul(c), [randn([B, 6]), randn([B, 6, 2])]);
  check('matmul', (a, c) => a.matmul(c), [randn([B, 4, 6]), randn([6])], [0, null]);
  check('matmul', (a, c) => a.matmul(c), [randn([B, 6]), randn([B, 6])]);
  check('matmul', (a, c) => a.matmul(c), [randn([B, 2, 4, 6]), randn([B, 6, 2])]);
  check('mean', (a) => a.mean(), [x]);
  check('sum', (a) => a.sum(), [x]);
  check('mean_dim', (a) => a.mean(-1, true), [x]);
  check('amax', (a) => a.amax(1), [x]);
  check('amin', (a) => aten.amin(a, [0]), [x]);
  check('logsumexp', (a) => a.logsumexp([0, 1]), [x]);
  check('flatten_using_ints', (a) => a.flatten(), [x]);
  check('flatten_using_ints', (a) => a.flatten(1), [randn([B, 2, 3, 4])]);
  check('log_softmax_int', (a) => F.logSoftmax(a, -1), [x]);
  check('softmax_int', (a) => F.softmax(a, 0), [x]);
  const classWeights = tensor([1, 2, 3, 1, 1, 0.5]);
  const logits = randn([B, 4, 6]);
  const targets = randint(0, 6, [B, 4]);
  for (const reduction of ['mean', 'sum', 'none'] as const) {
    check('cross_entropy_loss', (l, t) => F.crossEntropy(l, t, { reduction }), [logits, targets]);
    const options = { reduction, weight: classWeights, labelSmoothing: 0.1, ignoreIndex: 2 };
    check('cross_entropy_loss', (l, t) => F.crossEntropy(l, t, options), [logits, targets]);
    check('cross_entropy_loss', (l, t) => F.crossEntropy(l, t, { reduction }), [
      logits,
      randn([B, 4, 6]).softmax(-1),
    ]);
    check('cross_entropy_loss', (l, t) => F.crossEntropy(l, t, { reduction }), [
      randn([B, 6]),
      randint(0, 6, [B]),
    ]);
    check('nll_loss_nd', (l, t) => F.nllLoss(l, t, { reduction, weight: classWeights }), [
      F.logSoftmax(logits),
      targets,
    ]);
    check('mse_loss', (a, c) => F.mseLoss(a, c, reduction), [x, randn([B, 4, 6])]);
    check('mse_loss', (a, c) => F.mseLoss(a, c, reduction), [x, randn([4, 6])], [0, null]);
    check('l1_loss', (a, c) => F.l1Loss(a, c, reduction), [x, randn([B, 4, 6])]);
    const bce = (a: Tensor, c: Tensor) => F.binaryCrossEntropyWithLogits(a, c, { reduction });
    check('binary_cross_entropy_with_logits', bce, [x, randn([B, 4, 6]).sigmoid()]);
  }
  const images = randn([B, 2, 3, 8, 8]);
  const kernels = randn([B, 4, 3, 3, 3]);
  const kernelBias = randn([B, 4]);
  check('conv2d', (i) => aten.conv2d(i, kernels.select(0, 0), kernelBias.select(0, 0), 1, 1), [images]);
  check('conv2d', (i, k, kb) => aten.conv2d(i, k, kb, 2, 1), [images, kernels, kernelBias]);
  check('conv2d', (i, k) => aten.conv2d(i, k, null, 1, 1), [randn([B, 3, 8, 8]), kernels]);
  check('conv2d', (i, k) => aten.conv2d(i, k, null, 1, 0, 1, 3), [
    randn([B, 2, 6, 5, 5]),
    randn([B, 6, 2, 3, 3]),
  ]);
  check('conv1d', (i, k) => aten.conv1d(i, k), [randn([B, 2, 3, 9]), randn([B, 4, 3, 2])]);
  check('max_pool2d', (i) => aten.max_pool2d(i, 2), [images]);
  check('max_pool1d', (i) => aten.max_pool1d(i, 2), [x]);
  check('avg_pool2d', (i) => aten.avg_pool2d(i, 2), [images]);
  check('avg_pool1d', (i) => aten.avg_pool1d(i, 3), [x]);
  check('adaptive_avg_pool2d', (i) => aten.adaptive_avg_pool2d(i, 1), [images]);
  check('layer_norm', (i) => aten.layer_norm(i, [6]), [x]);
  const stats = [randn([4]), randn([4]), randn([4]), randn([4]).abs()] as const;
  check('batch_norm', (i) => aten.batch_norm(i, ...stats, false, 0.1, 1e-5, false), [randn([B, 2, 4, 3])]);
  check('dropout', (i) => aten.dropout(i, 0.5, false), [x]);
  for (const op of [
    'gelu',
    'softplus',
    'silu',
    'elu',
    'leaky_relu',
    'hardtanh',
    'hardswish',
    'mish',
  ] as const)
    check(op, (i) => (aten[op] as (t: Tensor) => Tensor)(i), [x]);
  check('where_self', (c, a) => torch.where(c.gt(0), a, c), [randn([B, 6]), randn([B, 4, 6])]);
  check('maximum', (c, a) => torch.maximum(c, a), [randn([B, 6]), randn([4, 6])], [0, null]);
  check('minimum', (c, a) => torch.minimum(c, a), [randn([B, 6]), randn([B, 4, 6])]);
});

test('the tensor functions with a batching rule equal the loop over the examples, through the rule', () => {
  torch.manualSeed(5);
  const x = randn([B, 4, 6]);
  check('unflatten_int', (a) => a.unflatten(1, [2, 3]), [x]);
  check('ravel', (a) => torch.ravel(a), [x]);
  check('repeat', (a) => a.repeat(2, 1, 3), [x]);
  check('roll', (a) => torch.roll(a, [1, -2], [0, 1]), [x]);
  check('flip', (a) => torch.flip(a, [-1]), [x]);
  check('einsum', (a, c) => torch.einsum('ij,kj->ik', a, c), [x, randn([B, 3, 6])]);
  check('einsum', (a, c) => torch.einsum('ij,jk', a, c), [x, randn([6, 2])], [0, null]);
  check('einsum', (a) => torch.einsum('...j->...', a), [x]);
  check('outer', (a, c) => torch.outer(a, c), [randn([B, 3]), randn([B, 4])]);
  const index = randint(0, 4, [B, 2, 6]);
  check('gather', (a, i) => torch.gather(a, 0, i), [x, index]);
  check('gather', (a, i) => torch.gather(a, 0, i), [x, index.select(0, 0)], [0, null]);
  check('index_select', (a) => torch.indexSelect(a, 1, torch.tensor([0, 5, 2], { dtype: 'int64' })), [x]);
  const table = randn([B, 7, 3]);
  const ids = randint(0, 7, [B, 4]);
  check('embedding', (w, i) => F.embedding(i, w), [table, ids]);
  check('embedding', (i) => F.embedding(i, table.select(0, 0)), [ids]);
  check('masked_fill_Scalar', (a, m) => a.maskedFill(m.gt(0), -1), [x, randn([B, 6])]);
  check('cosine_similarity', (a, c) => F.cosineSimilarity(a, c, -1), [x, randn([B, 4, 6])]);
  check('argmax', (a) => a.argmax(-1), [x]);
  check('argmax', (a) => a.argmax(), [x]);
  check('argmin', (a) => torch.argmin(a, 0), [x]);
  check('max_dim', (a) => a.max(1)[0], [x]);
  check('min_dim', (a) => a.min(0)[1], [x]);
  check('sort', (a) => aten.sort(a, 0)[0], [x]);
  check('sort_stable', (a) => torch.sort(a, 0)[0], [x]);
  check('argsort_stable', (a) => torch.argsort(a, -1, true), [x]);
  check('topk', (a) => torch.topk(a, 2)[1], [x]);
  check('cumsum', (a) => a.cumsum(1), [x]);
  check('logcumsumexp', (a) => torch.logcumsumexp(a, 0), [x]);
  check('prod_dim_int', (a) => torch.prod(a, 1), [x]);
  check('glu', (a) => F.glu(a), [x]);
  check('var_correction', (a) => a.var(1), [x]);
  check('std_correction', (a) => a.std(), [x]);
  check('linalg_vector_norm', (a) => torch.linalg.vectorNorm(a, 2, [-1]), [x]);
  check('atan2', (a, c) => torch.atan2(a, c), [x, randn([B, 6])]);
  check('fmod_Scalar', (a) => torch.fmod(a, 0.7), [x]);
  check('remainder_Tensor', (a, c) => torch.remainder(a, c), [x, randn([6]).abs().add(0.5)], [0, null]);
  for (const op of ['erf', 'log_sigmoid', 'relu6', 'selu', 'celu'] as const)
    check(op, (i) => (aten[op] as (t: Tensor) => Tensor)(i), [x]);
  check('group_norm', (a) => aten.group_norm(a, 2), [randn([B, 3, 4, 5])]);
  check('pad', (a) => F.pad(a, [1, 2, 0, 1]), [x]);
  check('pad', (a) => F.pad(a, [2, 1], 'reflect'), [x]);
  check('constant_pad_nd', (a) => aten.constant_pad_nd(a, [1, 2, 0, 1], 0.5), [x]);
  check('kl_div', (a, c) => F.klDiv(F.logSoftmax(a), c, { reduction: 'batchmean' }), [
    x,
    randn([B, 4, 6]).softmax(-1),
  ]);
  check('huber_loss', (a, c) => F.huberLoss(a, c, { delta: 0.5 }), [x, randn([B, 4, 6])]);
  check('smooth_l1_loss', (a, c) => F.smoothL1Loss(a, c, 0.3, 'sum'), [x, randn([B, 4, 6])]);
});

test('per-example gradients of a small CNN go through the rules and equal a loop of func.grad', () => {
  torch.manualSeed(4);
  torch.tidy(() => {
    const net = new nn.Sequential(
      new nn.Conv2d(3, 4, 3, { padding: 1 }),
      new nn.ReLU(),
      new nn.MaxPool2d(2),
      new nn.Flatten(),
      new nn.Linear(64, 5),
    );
    const params = Object.fromEntries(net.namedParameters());
    const loss = (p: Record<string, Tensor>, xi: Tensor, ti: Tensor) =>
      F.crossEntropy(func.functionalCall(net, p, [xi.unsqueeze(0)]) as Tensor, ti.unsqueeze(0));
    const X = randn([B, 3, 8, 8]);
    const T = randint(0, 5, [B]);
    answered.clear();
    const grads = vmap(func.grad(loss), [null, 0, 0])(params, X, T) as Record<string, Tensor>;
    for (const op of ['conv2d', 'max_pool2d', 'flatten_using_ints', 'linear', 'cross_entropy_loss'])
      assert.ok((answered.get(op) ?? 0) > 0, `${op} answered`);
    for (const [name, g] of Object.entries(grads)) {
      const loop = Array.from(
        { length: B },
        (_, b) => (func.grad(loss)(params, X.select(0, b), T.select(0, b)) as Record<string, Tensor>)[name]!,
      );
      assertClose(g.toFloat64Array(), stack(loop, 0).toFloat64Array(), 1e-5, 1e-5, name);
    }
    net.dispose();
  });
});

test("a call the rule does not cover runs as without it, with libtorch's error", () => {
  torch.tidy(() => {
    const x = randn([B, 4, 6]);
    const w = randn([3, 5]);
    let outside = '';
    try {
      F.linear(x.select(0, 0), w);
    } catch (error) {
      outside = (error as Error).message.split('\n')[0]!;
    }
    assert.ok(outside.length > 0);
    assert.throws(
      () => vmap((xi: Tensor) => F.linear(xi, w))(x),
      (error: Error) => error.message.includes(outside),
    );
    // Junk where a rule reads its arguments: the operator's own named error (fuzz input 1286).
    assert.throws(
      () => vmap((xi: Tensor) => xi.std({ dim: 0 } as unknown as number[]))(x),
      /std\.correction: argument 'dim' \(int\[\]\?\) expects an array of integers/,
    );
    // Batch norm in training uses each example's own statistics: no rule, the loop's values.
    answered.clear();
    const normed = vmap((xi: Tensor) => aten.batch_norm(xi, null, null, null, null, true, 0.1, 1e-5, false))(
      randn([B, 3, 2, 4]),
    );
    assert.equal(answered.get('batch_norm'), undefined);
    assert.deepEqual(normed.shape, [B, 3, 2, 4]);
  });
});

test('nested vmaps: a rule at the inner level with a weight mapped only by the outer one', () => {
  torch.tidy(() => {
    const W = randn([3, 2, 6]);
    const Y = randn([4, 6]);
    const out = vmap((w: Tensor) => vmap((y: Tensor) => F.linear(y, w))(Y))(W);
    const want = torch.einsum('bod,nd->bno', W, Y);
    assert.deepEqual(out.shape, [3, 4, 2]);
    assertClose(out.toFloat64Array(), want.toFloat64Array(), 1e-5, 1e-5, 'nested linear');
  });
});

test("vmap's randomness 'different' and 'same' draw what functorch 1.13's do after the same seed", () => {
  type Case = { shape: number[]; data: number[] };
  const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'vmap-randomness.json'), 'utf8')) as Record<
    string,
    Case
  >;
  const cases: Record<string, [Fn, Tensor]> = {
    randn: [(v) => v.add(randn([3])), torch.zeros([4, 3])],
    dropout: [(v) => F.dropout(v, 0.5, true), torch.ones([4, 6])],
    rand_like: [(v) => torch.randLike(v), torch.zeros([4, 2])],
    randint: [(v) => v.add(randint(0, 10, [5])), torch.zeros([4, 5], 'int64')],
    feature_dropout: [(v) => F.dropout2d(v, 0.5, true), torch.ones([4, 2, 3, 2, 2])],
  };
  torch.tidy(() => {
    for (const [name, [fn, x]] of Object.entries(cases))
      for (const randomness of ['different', 'same'] as const) {
        torch.manualSeed(0);
        const y = vmap(fn, 0, 0, { randomness })(x);
        const want = golden[`${name}_${randomness}`]!;
        assert.deepEqual(y.shape, want.shape, `${name} ${randomness}`);
        assertClose(y.toFloat64Array(), want.data, 1e-6, 0, `${name} ${randomness}`);
      }
    // 'error' (the default) refuses, naming the option.
    assert.throws(
      () => vmap((v: Tensor) => v.add(randn([3])))(torch.zeros([2, 3])),
      /randomness: 'different'/,
    );
    // Alpha dropout is not a mask: 'same' leaves it refused.
    assert.throws(
      () =>
        vmap((v: Tensor) => F.alphaDropout(v, 0.5, true), 0, 0, { randomness: 'same' })(torch.ones([2, 3])),
      /random operations/,
    );
  });
});

test("vmap's chunkSize maps the batch a chunk at a time, with the same results", () => {
  torch.tidy(() => {
    const x = randn([7, 3]);
    const w = randn([3, 2]);
    const f = (v: Tensor) => [v.matmul(w), { sq: v.mul(v).sum() }] as [Tensor, { sq: Tensor }];
    const whole = vmap(f, 0, [1, 0])(x) as unknown as [Tensor, { sq: Tensor }];
    for (const chunkSize of [1, 3, 7, 50]) {
      const chunked = vmap(f, 0, [1, 0], { chunkSize })(x) as unknown as [Tensor, { sq: Tensor }];
      assert.deepEqual(chunked[0].shape, [2, 7]);
      assertClose(chunked[0].toFloat64Array(), whole[0].toFloat64Array(), 1e-6, 0, `chunk ${chunkSize}`);
      assertClose(
        chunked[1].sq.toFloat64Array(),
        whole[1].sq.toFloat64Array(),
        1e-6,
        0,
        `chunk ${chunkSize}`,
      );
    }
    // With 'same', every chunk shares the one draw.
    const same = vmap((v: Tensor) => v.add(torch.rand([2])), 0, 0, { chunkSize: 2, randomness: 'same' })(
      torch.zeros([5, 2]),
    );
    for (let b = 1; b < 5; b++)
      assert.deepEqual(
        Array.from(same.select(0, b).toFloat64Array()),
        Array.from(same.select(0, 0).toFloat64Array()),
      );
    assert.throws(() => vmap(f, 0, 0, { chunkSize: 0 }), /options\.chunkSize must be a positive integer/);
    // A structure that contains itself, or a bigint, is described, not serialized (fuzz seed 1 #141).
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    assert.throws(
      () => vmap(f, 0, 0, { randomness: loop as never }),
      /options\.randomness must be .* not object/,
    );
    assert.throws(() => vmap(f, 0, 0, { randomness: 3n as never }), /options\.randomness must be/);
    assert.throws(
      () => vmap(f, 0, 0, { randomness: 'sometimes' as never }),
      /options\.randomness must be 'error', 'different' or 'same'/,
    );
  });
});
