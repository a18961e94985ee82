// The public long-tail losses from a JavaScript caller: bad class counts, logits that do not match
// them, bad targets and options are an ArgumentError naming the function, the argument and the
// value, before any work; the losses free what they make; DRW switches with setEpoch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { ArgumentError } from '../../src/util/arguments.js';
import {
  BalancedSoftmaxLoss,
  CrossEntropyLoss,
  FocalLoss,
  LDAMLoss,
  LogitAdjustLoss,
  balancedSoftmaxLoss,
  classBalancedWeights,
  focalLoss,
  ldamLoss,
  logitAdjustedLoss,
  logitAdjustment,
  logPrior,
} from '../../src/longtail/index.js';

const COUNTS = [500, 50, 5];
const loose = <T extends (...a: never[]) => unknown>(f: T) => f as unknown as (...a: unknown[]) => unknown;
const construct = (C: unknown, ...args: unknown[]) => new (C as new (...a: unknown[]) => unknown)(...args);

function named(error: unknown, pattern: RegExp): true {
  assert.ok(error instanceof ArgumentError, `${String(error)}`);
  assert.match((error as Error).message, pattern);
  return true;
}

function batch(N = 4, C = 3): { logits: torch.Tensor; target: torch.Tensor } {
  return {
    logits: torch.randn([N, C]),
    target: torch.tensor(BigInt64Array.from({ length: N }, (_, i) => BigInt(i % C))),
  };
}

test('public losses: class counts must be whole numbers >= 1', () => {
  torch.tidy(() => {
    const { logits, target } = batch();
    for (const [counts, pattern] of [
      [[500, 0, 5], /^ldamLoss: classCounts\[1\] must be a whole number >= 1 .*, got 0$/],
      [[500, 2.5, 5], /^ldamLoss: classCounts\[1\] must be a whole number >= 1 .*, got 2\.5$/],
      [[500, -3, 5], /classCounts\[1\] .* got -3$/],
      [[], /^ldamLoss: classCounts must be at least 1 long, got an array of 0$/],
      ['500,50,5', /^ldamLoss: classCounts must be an array or typed array of numbers, got '500,50,5'$/],
      [[500, NaN, 5], /^ldamLoss: classCounts\[1\] must be a finite number, got NaN$/],
    ] as const)
      assert.throws(
        () => loose(ldamLoss)(logits, target, counts),
        (e) => named(e, pattern),
      );
    assert.throws(
      () => loose(balancedSoftmaxLoss)(logits, target, [1, 0, 1]),
      (e) => named(e, /^balancedSoftmaxLoss: classCounts\[1\]/),
    );
    assert.throws(
      () => construct(LDAMLoss, [10, 0.5, 1]),
      (e) => named(e, /^LDAMLoss: classCounts\[1\] .* got 0\.5$/),
    );
    assert.throws(
      () => construct(CrossEntropyLoss, null),
      (e) => named(e, /^CrossEntropyLoss: classCounts must be an array .* got null$/),
    );
    assert.throws(
      () => loose(classBalancedWeights)([3, 0]),
      (e) => named(e, /^classBalancedWeights: classCounts\[1\]/),
    );
    assert.throws(
      () => loose(logPrior)([3, 1.5]),
      (e) => named(e, /^logPrior: classCounts\[1\]/),
    );
    assert.throws(
      () => loose(logitAdjustment)([]),
      (e) => named(e, /^logitAdjustment: classCounts must be at least 1 long/),
    );
  });
});

test('public losses: logits and target must match the class counts and each other', () => {
  torch.tidy(() => {
    const { logits, target } = batch(4, 5);
    assert.throws(
      () => logitAdjustedLoss(logits, target, COUNTS),
      (e) =>
        named(
          e,
          /^logitAdjustedLoss: logits have 5 classes \(columns\) but classCounts has 3; give one count per class$/,
        ),
    );
    assert.throws(
      () => new LDAMLoss(COUNTS).forward(logits, target),
      (e) => named(e, /^LDAMLoss\.forward: logits have 5 classes/),
    );
    const ok = batch();
    assert.throws(
      () => balancedSoftmaxLoss(ok.logits.flatten(), ok.target, COUNTS),
      (e) => named(e, /^balancedSoftmaxLoss: logits must be a Tensor \[N, C\], got shape \[12\]$/),
    );
    assert.throws(
      () => loose(balancedSoftmaxLoss)([[1, 2, 3]], ok.target, COUNTS),
      (e) => named(e, /^balancedSoftmaxLoss: logits must be a Tensor \[N, C\], got an array of 1$/),
    );
    assert.throws(
      () => focalLoss(ok.logits.to('int64'), ok.target),
      (e) => named(e, /^focalLoss: logits must be a floating-point Tensor, got int64$/),
    );
    assert.throws(
      () => focalLoss(ok.logits, ok.target.to('float32')),
      (e) =>
        named(
          e,
          /^focalLoss: target must hold class indices as int64, got float32 \(convert with target\.to\('int64'\)\)$/,
        ),
    );
    assert.throws(
      () => ldamLoss(ok.logits, ok.target.narrow(0, 0, 3), COUNTS),
      (e) =>
        named(
          e,
          /^ldamLoss: target must be \[4\] \(one class index per row of the logits\), got shape \[3\]$/,
        ),
    );
  });
});

test('public losses: bad options name the option and the value', () => {
  torch.tidy(() => {
    const { logits, target } = batch();
    const cases: [() => unknown, RegExp][] = [
      [
        () => focalLoss(logits, target, { gamma: -1 }),
        /^focalLoss: options\.gamma must be a finite number >= 0, got -1$/,
      ],
      [
        () => construct(FocalLoss, COUNTS, { gamma: -0.5 }),
        /^FocalLoss: options\.gamma must be a finite number >= 0, got -0\.5$/,
      ],
      [
        () => ldamLoss(logits, target, COUNTS, { s: 0 }),
        /^ldamLoss: options\.s must be a finite number > 0, got 0$/,
      ],
      [
        () => ldamLoss(logits, target, COUNTS, { maxMargin: -1 }),
        /^ldamLoss: options\.maxMargin must be a finite number > 0, got -1$/,
      ],
      [
        () => ldamLoss(logits, target, COUNTS, { weight: [1, 2] }),
        /^ldamLoss: options\.weight must be of length 3, got an array of 2$/,
      ],
      [
        () => focalLoss(logits, target, { weight: [1, -2, 1] }),
        /^focalLoss: options\.weight\[1\] must be a number >= 0, got -2$/,
      ],
      [
        () => loose(logitAdjustedLoss)(logits, target, COUNTS, { reduction: 'avg' }),
        /^logitAdjustedLoss: options\.reduction must be one of 'mean', 'sum', 'none', got 'avg'$/,
      ],
      [
        () => loose(logitAdjustedLoss)(logits, target, COUNTS, { tau: '1' }),
        /^logitAdjustedLoss: options\.tau must be a finite number, got '1'$/,
      ],
      [
        () => loose(balancedSoftmaxLoss)(logits, target, COUNTS, 'mean'),
        /^balancedSoftmaxLoss: options must be an object, got 'mean'$/,
      ],
      [
        () => classBalancedWeights(COUNTS, 1),
        /^classBalancedWeights: beta must be a finite number >= 0 and < 1, got 1$/,
      ],
      [
        () => construct(CrossEntropyLoss, COUNTS, { reweight: true, reweightEpoch: 3 }),
        /^CrossEntropyLoss: give options\.reweight .* or options\.reweightEpoch .*, not both$/,
      ],
      [
        () => construct(LDAMLoss, COUNTS, { reweightEpoch: 2.5 }),
        /^LDAMLoss: options\.reweightEpoch must be an integer >= -1, got 2\.5$/,
      ],
      [
        () => construct(LDAMLoss, COUNTS, { beta: 1.5 }),
        /^LDAMLoss: options\.beta must be a finite number >= 0 and < 1, got 1\.5$/,
      ],
      [
        () => construct(LogitAdjustLoss, COUNTS, { tau: NaN }),
        /^LogitAdjustLoss: options\.tau must be a finite number, got NaN$/,
      ],
      [
        () => loose(logitAdjustment)(COUNTS, { dtype: 'int64' }),
        /^logitAdjustment: options\.dtype must be one of 'float32', 'float64', 'float16', 'bfloat16', got 'int64'$/,
      ],
      [
        () => (new BalancedSoftmaxLoss(COUNTS) as unknown as { setEpoch(e: unknown): void }).setEpoch('2'),
        /^BalancedSoftmaxLoss\.setEpoch: epoch must be an integer >= 0, got '2'$/,
      ],
    ];
    for (const [call, pattern] of cases) assert.throws(call, (e) => named(e, pattern));
  });
});

test('public losses: nothing leaks, whatever the reduction; the results are what tidy keeps', () => {
  const { logits, target } = batch();
  torch.keep(logits);
  torch.keep(target);
  const before = torch.liveTensors();
  for (const reduction of ['mean', 'sum', 'none'] as const) {
    const outs = [
      balancedSoftmaxLoss(logits, target, COUNTS, { reduction }),
      logitAdjustedLoss(logits, target, COUNTS, { tau: 1.5, reduction }),
      ldamLoss(logits, target, COUNTS, { weight: classBalancedWeights(COUNTS), reduction }),
      focalLoss(logits, target, { gamma: 2, weight: [1, 2, 3], reduction }),
    ];
    // One tensor per call: the loss itself, nothing left of the constants or the steps.
    assert.equal(torch.liveTensors(), before + outs.length, reduction);
    for (const o of outs) assert.deepEqual(o.shape, reduction === 'none' ? [4] : []);
    outs.forEach((o) => o.dispose());
  }
  const losses = [
    new CrossEntropyLoss(COUNTS, { reweightEpoch: 1 }),
    new FocalLoss(COUNTS, { gamma: 1, reweight: true }),
    new LDAMLoss(COUNTS, { reweightEpoch: 1 }),
    new BalancedSoftmaxLoss(COUNTS),
    new LogitAdjustLoss(COUNTS, { tau: 2 }),
  ];
  for (const loss of losses)
    for (const epoch of [1, 2]) {
      loss.setEpoch(epoch);
      loss.forward(logits, target).dispose();
    }
  assert.equal(torch.liveTensors(), before);
  logits.dispose();
  target.dispose();
});

test('public losses: DRW switches on after reweightEpoch, and setEpoch can switch it back', () => {
  torch.tidy(() => {
    const { logits, target } = batch();
    const loss = new LDAMLoss(COUNTS, { reweightEpoch: 160 });
    assert.equal(loss.classes, 3);
    assert.deepEqual(
      loss.margins.map((m) => +m.toFixed(12)),
      [+(0.5 * Math.pow(5 / 500, 0.25)).toFixed(12), +(0.5 * Math.pow(5 / 50, 0.25)).toFixed(12), 0.5],
    );
    const value = (epoch: number) => {
      loss.setEpoch(epoch);
      return loss.forward(logits, target).item();
    };
    const plain = ldamLoss(logits, target, COUNTS).item();
    const weighted = ldamLoss(logits, target, COUNTS, { weight: classBalancedWeights(COUNTS) }).item();
    assert.equal(loss.reweighting, false);
    assert.equal(value(1), plain);
    assert.equal(value(160), plain);
    assert.equal(loss.reweighting, false);
    assert.equal(value(161), weighted);
    assert.equal(loss.reweighting, true);
    assert.equal(value(3), plain);
    assert.equal(new CrossEntropyLoss(COUNTS, { reweight: true }).reweighting, true);
    assert.equal(new BalancedSoftmaxLoss(COUNTS).reweighting, false);
  });
});

test('public losses: post-hoc logit adjustment subtracts tau log pi', () => {
  torch.tidy(() => {
    const adjustment = logitAdjustment(COUNTS, { tau: 0.5 });
    assert.equal(adjustment.dtype, 'float32');
    const total = 555;
    const expected = COUNTS.map((n) => 0.5 * Math.log(n / total + 1e-9));
    adjustment
      .toFloat64Array()
      .forEach((v, c) => assert.ok(Math.abs(v - expected[c]!) < 1e-6, `class ${c}: ${v}`));
    // Equal logits: the adjusted prediction is the rarest class.
    const adjusted = torch.zeros([1, 3]).sub(adjustment);
    assert.equal(adjusted.argmax(1).item(), 2);
  });
});
