// The public long-tail losses of tailor/longtail on plain logits against PyTorch 1.13 in float64
// (test/golden/longtail/losses_api.json, from scripts/golden/longtail_losses_api.py with the
// formulas of kaidic/LDAM-DRW, balanced softmax and logit adjustment): the loss and its gradient
// with respect to the logits, for the functions and the classes with deferred re-weighting, and
// the prior helpers; max abs error 1e-10.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import * as lt from '../../src/longtail/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface InputSet {
  counts: number[];
  N: number;
  C: number;
  logits: number[];
  target: number[];
  cotangent: number[];
}
interface GoldenCase {
  name: string;
  fn: string;
  inputs: string;
  /** The options as tailor names them; weightBeta: pass classBalancedWeights(counts, weightBeta). */
  options: Record<string, unknown>;
  epoch: number | null;
  /** A scalar, or one value per sample for reduction 'none'. */
  loss: number | number[];
  /** d loss / d logits (for 'none': d sum(cotangent * loss) / d logits). */
  grad: number[];
}
interface GoldenPrior {
  fn: 'classBalancedWeights' | 'logPrior';
  counts: number[];
  arg: number;
  values: number[];
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'longtail', 'losses_api.json'), 'utf8')) as {
  inputs: Record<string, InputSet>;
  cases: GoldenCase[];
  priors: GoldenPrior[];
};

const ATOL = 1e-10;

/** The loss of one case, computed as a user would call it. */
function lossOf(c: GoldenCase, counts: number[], logits: torch.Tensor, target: torch.Tensor): torch.Tensor {
  const { weightBeta, ...rest } = c.options;
  // Every option of every public loss: the JSON holds the ones of the case's function.
  const options = rest as lt.LdamLossOptions &
    lt.FocalLossOptions &
    lt.LogitAdjustedLossOptions &
    lt.LdamDrwOptions &
    lt.FocalLossClassOptions;
  if (weightBeta !== undefined) options.weight = lt.classBalancedWeights(counts, weightBeta as number);
  const classLoss = (loss: lt.LongTailLoss) => {
    if (c.epoch !== null) loss.setEpoch(c.epoch);
    return loss.forward(logits, target);
  };
  switch (c.fn) {
    case 'balancedSoftmaxLoss':
      return lt.balancedSoftmaxLoss(logits, target, counts, options);
    case 'logitAdjustedLoss':
      return lt.logitAdjustedLoss(logits, target, counts, options);
    case 'ldamLoss':
      return lt.ldamLoss(logits, target, counts, options);
    case 'focalLoss':
      return lt.focalLoss(logits, target, options);
    case 'CrossEntropyLoss':
      return classLoss(new lt.CrossEntropyLoss(counts, options));
    case 'FocalLoss':
      return classLoss(new lt.FocalLoss(counts, options));
    case 'LDAMLoss':
      return classLoss(new lt.LDAMLoss(counts, options));
    case 'BalancedSoftmaxLoss':
      return classLoss(new lt.BalancedSoftmaxLoss(counts));
    case 'LogitAdjustLoss':
      return classLoss(new lt.LogitAdjustLoss(counts, options));
    default:
      throw new Error(`no such public loss: ${c.fn}`);
  }
}

for (const c of golden.cases) {
  test(`public losses golden: ${c.name} (${c.fn})`, () => {
    const s = golden.inputs[c.inputs]!;
    const before = torch.liveTensors();
    const result = torch.tidy(() => {
      const logits = torch.tensor(Float64Array.from(s.logits), { shape: [s.N, s.C] }).requiresGrad_();
      const target = torch.tensor(BigInt64Array.from(s.target.map((v) => BigInt(v))));
      const value = lossOf(c, s.counts, logits, target);
      assert.equal(value.dtype, 'float64');
      if (Array.isArray(c.loss)) {
        assert.deepEqual(value.shape, [s.N]);
        value
          .mul(torch.tensor(Float64Array.from(s.cotangent)))
          .sum()
          .backward();
      } else {
        assert.deepEqual(value.shape, []);
        value.backward();
      }
      return { loss: value.toFloat64Array(), grad: logits.grad!.toFloat64Array() };
    });
    assert.equal(torch.liveTensors(), before, 'the loss leaked tensors');
    assertClose(result.loss, Array.isArray(c.loss) ? c.loss : [c.loss], ATOL, 0, 'loss');
    assertClose(result.grad, c.grad, ATOL, 0, 'd loss / d logits');
  });
}

test('public losses golden: classBalancedWeights and logPrior / logitAdjustment', () => {
  for (const p of golden.priors) {
    const what = `${p.fn}([${p.counts}], ${p.arg})`;
    if (p.fn === 'classBalancedWeights') {
      const w = lt.classBalancedWeights(p.counts, p.arg);
      assertClose(w, p.values, ATOL, 0, what);
      assert.ok(Math.abs(w.reduce((a, b) => a + b, 0) - p.counts.length) < 1e-12, `${what} sums to C`);
    } else {
      assertClose(lt.logPrior(p.counts, p.arg), p.values, ATOL, 0, what);
      const before = torch.liveTensors();
      const adjustment = lt.logitAdjustment(p.counts, { tau: p.arg, dtype: 'float64' });
      assert.deepEqual(adjustment.shape, [p.counts.length]);
      assertClose(adjustment.toFloat64Array(), p.values, ATOL, 0, `logitAdjustment ${what}`);
      adjustment.dispose();
      assert.equal(torch.liveTensors(), before);
    }
  }
});

test('public losses golden: the file covers every function and class, DRW on both sides of the switch', () => {
  const fns = new Set(golden.cases.map((c) => c.fn));
  for (const fn of [
    'balancedSoftmaxLoss',
    'logitAdjustedLoss',
    'ldamLoss',
    'focalLoss',
    'CrossEntropyLoss',
    'FocalLoss',
    'LDAMLoss',
    'BalancedSoftmaxLoss',
    'LogitAdjustLoss',
  ])
    assert.ok(fns.has(fn), `no golden case for ${fn}`);
  const byName = new Map(golden.cases.map((c) => [c.name, c]));
  // DRW changes the loss once it switches on (after reweightEpoch), and not before.
  assert.equal(byName.get('class_ldam_drw_before')!.loss, byName.get('ldam_kaidic')!.loss);
  assert.equal(byName.get('class_ldam_drw_after')!.loss, byName.get('ldam_kaidic_drw_weights')!.loss);
  assert.notEqual(byName.get('class_ce_drw_after')!.loss, byName.get('class_ce_drw_before')!.loss);
  // tau = 1 is balanced softmax.
  assert.equal(byName.get('logit_adjusted_tau1')!.loss, byName.get('balanced_softmax')!.loss);
});
