// PRL's hypernetwork cuts its head's output into each expert's classifier (and, with
// generateAffine, a feature scale and shift): the pieces are the head's output in order, and
// gradients reach the head through all of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { HyperNetwork } from '../../src/longtail/systems/hypernet.js';

for (const generateAffine of [false, true]) {
  test(`the generated experts are the head's output in order (generateAffine ${generateAffine})`, () => {
    torch.manualSeed(0);
    const experts = 3;
    const featureDim = 4;
    const classes = 5;
    const hyper = new HyperNetwork({ experts, featureDim, classes, hidden: [8], generateAffine });
    try {
      torch.tidy(() => {
        const r = torch.tensor([0.2, 0.3, 0.5]);
        const flat = hyper.head.forward(hyper.body.forward(r.reshape(1, experts))).reshape(experts, -1);
        const rows = flat.toFloat32Array();
        const per = flat.shape[1]!;
        assert.equal(per, featureDim * classes + (generateAffine ? 2 * featureDim : 0));
        const out = hyper.forward(r);
        assert.equal(out.classifiers.length, experts);
        assert.equal(out.affine?.length, generateAffine ? experts : undefined);
        let loss = torch.scalarTensor(0);
        for (let e = 0; e < experts; e++) {
          const w = out.classifiers[e]!;
          assert.deepEqual(w.shape, [featureDim, classes]);
          assert.deepEqual(
            [...w.toFloat32Array()],
            [...rows.subarray(e * per, e * per + featureDim * classes)],
          );
          loss = loss.add(w.sum().mul(e + 1));
          const a = out.affine?.[e];
          if (a) {
            const base = e * per + featureDim * classes;
            const shift = rows.subarray(base + featureDim, base + 2 * featureDim);
            assert.deepEqual([...a.shift.toFloat32Array()], [...shift]);
            a.scale.toFloat32Array().forEach((v, i) => assert.ok(Math.abs(v - (1 + rows[base + i]!)) < 1e-6));
            loss = loss.add(a.shift.sum().mul(10)).add(a.scale.sum().mul(100));
          }
        }
        loss.backward();
        // the head's bias gradient is the loss's weight on each output, expert by expert
        const grad = hyper.head.bias!.grad!.toFloat32Array();
        for (let e = 0; e < experts; e++) {
          for (let i = 0; i < per; i++) {
            const want = i < featureDim * classes ? e + 1 : i < featureDim * classes + featureDim ? 100 : 10;
            assert.equal(grad[e * per + i], want, `expert ${e} output ${i}`);
          }
        }
      });
    } finally {
      hyper.dispose();
    }
  });
}
