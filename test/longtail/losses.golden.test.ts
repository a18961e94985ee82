// Every long-tail loss and its gradients against PyTorch 1.13 in float64
// (test/golden/longtail/losses.json, from scripts/golden/longtail_losses.py): the loss, d/d output
// and d/d per-expert logits, including DRW switching and mixup; max abs error 1e-6.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { mixupLoss } from '../../src/longtail/losses/index.js';
import { createLoss } from '../../src/longtail/config/losses.js';
import { assertClose, goldenDir } from '../helpers.js';

interface InputSet {
  counts: number[];
  experts: number;
  N: number;
  C: number;
  output: number[];
  logits: number[];
  target: number[];
  target_b: number[];
  soft_target: number[];
}
interface GoldenCase {
  name: string;
  type: string;
  args: Record<string, unknown>;
  inputs: string;
  epoch: number | null;
  soft: boolean;
  preference: number[] | null;
  mixup: number | null;
  no_logits: boolean;
  /** RIDELossWithDistill: the teacher's output [N, C]. */
  teacher?: number[];
  loss: number;
  output_grad: number[] | null;
  logits_grad: number[] | null;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'longtail', 'losses.json'), 'utf8')) as {
  inputs: Record<string, InputSet>;
  cases: GoldenCase[];
};

const ATOL = 1e-6;

function labels(values: number[]): torch.Tensor {
  return torch.tensor(BigInt64Array.from(values.map((v) => BigInt(v))));
}

for (const c of golden.cases) {
  test(`losses golden: ${c.name} (${c.type})`, () => {
    const s = golden.inputs[c.inputs]!;
    const loss = createLoss(c.type, c.args, { classCounts: s.counts, experts: s.experts });
    if (c.epoch !== null) {
      assert.ok(loss.setEpoch, `${c.type} should have setEpoch`);
      loss.setEpoch(c.epoch);
    }
    const before = torch.liveTensors();
    const result = torch.tidy(() => {
      const output = torch.tensor(Float64Array.from(s.output), { shape: [s.N, s.C] }).requiresGrad_();
      const logits = torch
        .tensor(Float64Array.from(s.logits), { shape: [s.experts, s.N, s.C] })
        .requiresGrad_();
      const target = c.soft
        ? torch.tensor(Float64Array.from(s.soft_target), { shape: [s.N, s.C] })
        : labels(s.target);
      const out = c.no_logits ? { output } : { output, logits };
      const teacher = c.teacher
        ? torch.tensor(Float64Array.from(c.teacher), { shape: [s.N, s.C] })
        : undefined;
      const extra = c.preference ? { preference: c.preference } : teacher ? { teacher } : undefined;
      const value =
        c.mixup !== null
          ? mixupLoss(loss, out, target, labels(s.target_b), c.mixup, extra)
          : loss.forward(out, target, extra);
      assert.deepEqual(value.shape, []);
      assert.equal(value.dtype, 'float64');
      value.backward();
      return {
        loss: value.item(),
        outputGrad: output.grad?.toFloat64Array() ?? null,
        logitsGrad: logits.grad?.toFloat64Array() ?? null,
      };
    });
    assert.equal(torch.liveTensors(), before, 'the loss leaked tensors');
    assert.ok(Math.abs(result.loss - c.loss) <= ATOL, `loss ${result.loss} != ${c.loss}`);
    const zerosIfNull = (g: Float64Array | null, n: number) => g ?? new Float64Array(n);
    assertClose(
      zerosIfNull(result.outputGrad, s.N * s.C),
      c.output_grad ?? new Array<number>(s.N * s.C).fill(0),
      ATOL,
      0,
      'd/d output',
    );
    assertClose(
      zerosIfNull(result.logitsGrad, s.experts * s.N * s.C),
      c.logits_grad ?? new Array<number>(s.experts * s.N * s.C).fill(0),
      ATOL,
      0,
      'd/d logits',
    );
  });
}

test('losses golden: the file covers every loss type, DRW on both sides of the switch, mixup and PRL', () => {
  const types = new Set(golden.cases.map((c) => c.type));
  for (const t of [
    'CrossEntropyLoss',
    'BalancedSoftmaxLoss',
    'LogitAdjustLoss',
    'FocalLoss',
    'LDAMLoss',
    'DiverseExpertLoss',
    'BSExpertLoss',
    'RIDELoss',
    'RIDELossWithDistill',
    'PRLLoss',
  ]) {
    assert.ok(types.has(t), `no golden case for ${t}`);
  }
  const drw = golden.cases.filter((c) => c.name.startsWith('ldam_drw_'));
  assert.ok(drw.some((c) => c.name === 'ldam_drw_at') && drw.some((c) => c.name === 'ldam_drw_after'));
  // DRW must change the loss once it switches on, and not before.
  const byName = new Map(golden.cases.map((c) => [c.name, c]));
  assert.equal(byName.get('ldam_drw_at')!.loss, byName.get('ldam')!.loss);
  assert.notEqual(byName.get('ldam_drw_after')!.loss, byName.get('ldam')!.loss);
  assert.equal(byName.get('ce_drw_at')!.loss, byName.get('ce')!.loss);
  assert.notEqual(byName.get('ce_drw_after')!.loss, byName.get('ce')!.loss);
});
