// RIDE-EA's wrapper on a tiny CIFAR ResNet: only the routers train (backbone weights and batch-norm
// statistics unchanged by a training step), and the routed output is the mean of the consulted
// experts' logits of the backbone's own evaluation forward.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { ResNetCifar } from '../../src/longtail/models/resnet-cifar.js';
import {
  ExpertAssignmentModel,
  ExpertRouter,
  referenceRouterState,
} from '../../src/longtail/models/expert-assignment.js';
import { assertClose } from '../helpers.js';

test('ExpertAssignmentModel trains the routers only and routes as the backbone predicts', () => {
  torch.manualSeed(3);
  torch.tidy(() => {
    const backbone = new ResNetCifar({ classes: 5, experts: 3, inChannels: 1, blocksPerStage: 1 });
    const ea = new ExpertAssignmentModel(backbone, { topChoices: 3, posWeight: 4 });
    assert.equal(ea.routerParameters().length, 2 * 2 + 2);
    const before = Object.fromEntries(
      Object.entries(backbone.stateDict()).map(([k, v]) => [k, v.toNumbers()]),
    );
    const routerBefore = ea.routerParameters().map((p) => p.toNumbers());
    const opt = new torch.optim.SGD(ea.routerParameters(), { lr: 0.5 });
    ea.train(true);
    assert.equal(backbone.training, false);
    const x = torch.randn([6, 1, 8, 8]);
    const target = torch.tensor([0, 1, 2, 3, 4, 0], { dtype: 'int64' });
    const loss = ea.loss(x, target);
    assert.ok(Number.isFinite(loss.item()));
    loss.backward();
    opt.step();
    for (const [k, v] of Object.entries(backbone.stateDict()))
      assert.deepEqual(v.toNumbers(), before[k], `${k} changed`);
    assert.ok(ea.routerParameters().some((p, i) => p.toNumbers().some((v, j) => v !== routerBefore[i]![j])));

    ea.eval();
    const routed = torch.noGrad(() => ea.route(x));
    const own = torch.noGrad(() => backbone.forward(x));
    const counts = routed.expertsPerImage.toNumbers();
    const logits = own.logits.toNumbers();
    const expected: number[] = [];
    for (let n = 0; n < 6; n++) {
      assert.ok(counts[n]! >= 1 && counts[n]! <= 3);
      for (let c = 0; c < 5; c++) {
        let s = 0;
        for (let e = 0; e < counts[n]!; e++) s += logits[(e * 6 + n) * 5 + c]!;
        expected.push(s / counts[n]!);
      }
    }
    assertClose(routed.output.toNumbers(), expected, 1e-5, 1e-5, 'routed output');
    assertClose(routed.logits.toNumbers(), logits, 1e-5, 1e-5, 'expert logits');
  });
});

test("a RIDE trainer's router tensors load under the router's names", () => {
  torch.tidy(() => {
    for (const share of [true, false]) {
      const router = new ExpertRouter({ experts: 3, featureDim: 4, topChoices: 2, shareFc: share });
      const prefix = 'state_dict.module.backbone.';
      const source: Record<string, torch.Tensor> = { [`${prefix}linears.0.weight`]: torch.zeros([4, 5]) };
      for (let i = 0; i < 2; i++) {
        source[`${prefix}expert_help_pred_hidden_fcs.${i}.weight`] = torch.full([16, 4], i + 1);
        source[`${prefix}expert_help_pred_hidden_fcs.${i}.bias`] = torch.full([16], -i);
      }
      const fcs = share ? ['expert_help_pred_fc'] : ['expert_help_pred_fcs.0', 'expert_help_pred_fcs.1'];
      for (const fc of fcs) {
        source[`${prefix}${fc}.weight`] = torch.full([1, 18], 3);
        source[`${prefix}${fc}.bias`] = torch.full([1], 4);
      }
      const state = referenceRouterState(source, prefix)!;
      router.loadStateDict(state, true);
      assert.deepEqual(router.hiddenFcs.at(1).weight.toNumbers().slice(0, 2), [2, 2]);
      assert.deepEqual((router.fc ?? router.fcs!.at(1)).bias!.toNumbers(), [4]);
      assert.equal(referenceRouterState({ 'linears.0.weight': torch.zeros([1]) }, ''), null);
    }
  });
});
