// RIDE-EA's routers against RIDE's own ResNet_s in PyTorch 1.13 (test/golden/longtail/ride_ea.json,
// from scripts/golden/longtail_ride_ea.py, which drives the reference forward with stored
// per-expert features and logits): the BCE training loss and the routers' gradients, and the
// routed test-time output with the number of experts per image (shared and per-router final
// layers, force_all).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { ExpertRouter } from '../../src/longtail/models/expert-assignment.js';
import { assertClose, goldenDir } from '../helpers.js';

type Layer = [number[], number[]];
interface GoldenCase {
  name: string;
  experts: number;
  n: number;
  dim: number;
  classes: number;
  top_choices_num: number;
  pos_weight: number;
  share_expert_help_pred_fc: boolean;
  force_all: boolean;
  features: number[];
  logits: number[];
  target: number[];
  params: { hidden: Layer[]; fc: Layer[] };
  expected: {
    train_output: number[];
    loss: number[];
    grads: { hidden: Layer[]; fc: Layer[] };
    test_output: number[];
    experts_per_image: number[];
  };
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'longtail', 'ride_ea.json'), 'utf8')) as {
  cases: GoldenCase[];
};

function layersOf(router: ExpertRouter): torch.nn.Linear[][] {
  return [router.hiddenFcs.items, router.fc ? [router.fc] : router.fcs!.items];
}

for (const c of golden.cases) {
  test(`RIDE-EA router matches RIDE (${c.name})`, () => {
    torch.tidy(() => {
      const router = new ExpertRouter({
        experts: c.experts,
        featureDim: c.dim,
        topChoices: c.top_choices_num,
        posWeight: c.pos_weight,
        shareFc: c.share_expert_help_pred_fc,
        forceAll: c.force_all,
      });
      const [hidden, fcs] = layersOf(router);
      torch.noGrad(() => {
        const set = (layers: torch.nn.Linear[], values: Layer[]) =>
          layers.forEach((l, i) => {
            l.weight.copy_(torch.tensor(values[i]![0], { shape: l.weight.shape }));
            l.bias!.copy_(torch.tensor(values[i]![1], { shape: l.bias!.shape }));
          });
        set(hidden!, c.params.hidden);
        set(fcs!, c.params.fc);
      });
      const features = torch.tensor(c.features, { shape: [c.experts, c.n, c.dim] });
      const logits = torch.tensor(c.logits, { shape: [c.experts, c.n, c.classes] });
      const target = torch.tensor(c.target, { dtype: 'int64' });
      assertClose(logits.mean(0).toNumbers(), c.expected.train_output, 1e-5, 1e-5, 'train output');

      const loss = router.loss(features, logits, target);
      assertClose([loss.item()], c.expected.loss, 1e-5, 1e-5, 'loss');
      loss.backward();
      const check = (layers: torch.nn.Linear[], values: Layer[], what: string) =>
        layers.forEach((l, i) => {
          assertClose(l.weight.grad!.toNumbers(), values[i]![0], 1e-5, 1e-4, `${what}.${i}.weight grad`);
          assertClose(l.bias!.grad!.toNumbers(), values[i]![1], 1e-5, 1e-4, `${what}.${i}.bias grad`);
        });
      check(hidden!, c.expected.grads.hidden, 'hidden');
      check(fcs!, c.expected.grads.fc, 'fc');

      const routed = torch.noGrad(() => router.route(features, logits));
      assertClose(routed.output.toNumbers(), c.expected.test_output, 1e-5, 1e-5, 'routed output');
      assert.deepEqual(routed.expertsPerImage.toNumbers(), c.expected.experts_per_image);
    });
  });
}

test('ExpertRouter refuses bad arguments and shapes by name', () => {
  assert.throws(() => new ExpertRouter({ experts: 1, featureDim: 4 }), /at least 2 experts/);
  assert.throws(() => new ExpertRouter({ experts: 3, featureDim: 4, topChoices: 0 }), /top_choices_num/);
  assert.throws(() => new ExpertRouter({ experts: 3, featureDim: 4, posWeight: 0 }), /pos_weight/);
  torch.tidy(() => {
    const router = new ExpertRouter({ experts: 3, featureDim: 4, topChoices: 5 });
    const features = torch.zeros([3, 2, 4]);
    assert.throws(
      () => router.route(features, torch.zeros([3, 2, 4])),
      /top_choices_num 5 exceeds the 4 classes/,
    );
    assert.throws(() => router.route(torch.zeros([2, 2, 4]), torch.zeros([3, 2, 6])), /\[3, N, D\]/);
  });
});
