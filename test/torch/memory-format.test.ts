// Memory formats: contiguous('channelsLast') lays a 4-D tensor out NHWC under its NCHW shape,
// isContiguousIn tells the layouts apart by libtorch's rule, and Module.toMemoryFormat converts a
// module's 4-D parameters, gradients and buffers in place (the Tensor objects stay the same).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { nn } from '../../src/torch/index.js';
import { SGD } from '../../src/torch/optim/sgd.js';

test('contiguous(channelsLast): NHWC strides, the same values, and the row-major default untouched', () => {
  torch.tidy(() => {
    const x = torch.randn([2, 3, 4, 5]);
    assert.deepEqual(x.strides, [60, 20, 5, 1]);
    assert.equal(x.isContiguousIn('contiguous'), true);
    assert.equal(x.isContiguousIn('channelsLast'), false);
    const cl = x.contiguous('channelsLast');
    assert.deepEqual(cl.shape, [2, 3, 4, 5]);
    assert.deepEqual(cl.strides, [60, 1, 15, 3]);
    assert.equal(cl.isContiguousIn('channelsLast'), true);
    assert.equal(cl.isContiguous, false);
    assert.deepEqual(cl.toFloat32Array(), x.toFloat32Array());
    // back to row-major, and the default call is libtorch's plain contiguous
    const back = cl.contiguous();
    assert.deepEqual(back.strides, [60, 20, 5, 1]);
    assert.deepEqual(back.toFloat32Array(), x.toFloat32Array());
  });
});

test('isContiguousIn(channelsLast): only 4-D tensors, and length-1 dimensions take any stride', () => {
  torch.tidy(() => {
    assert.equal(torch.randn([3, 4]).isContiguousIn('channelsLast'), false);
    assert.equal(torch.randn([2, 3, 4]).isContiguousIn('channelsLast'), false);
    // a 1x1 kernel or a single channel is NHWC and NCHW at once (as in libtorch)
    assert.equal(torch.randn([8, 4, 1, 1]).isContiguousIn('channelsLast'), true);
    assert.equal(torch.randn([2, 1, 5, 5]).isContiguousIn('channelsLast'), true);
    assert.equal(torch.isChannelsLastContiguous([2, 3, 4, 5], [60, 1, 15, 3]), true);
    assert.equal(torch.isChannelsLastContiguous([2, 3, 4, 5], [60, 1, 3, 15]), false);
    assert.throws(() => torch.randn([3, 4]).contiguous('channelsLast'), /rank 4/);
    assert.throws(
      () => torch.randn([2, 3, 4, 5]).isContiguousIn('nhwc' as never),
      /unknown memory format 'nhwc'/,
    );
  });
});

class Tiny extends nn.Module {
  readonly conv = this.registerModule('conv', new nn.Conv2d(3, 4, 3, { padding: 1 }));
  readonly bn = this.registerModule('bn', new nn.BatchNorm2d(4));
  readonly fc = this.registerModule('fc', new nn.Linear(4, 2));
  forward(x: torch.Tensor): torch.Tensor {
    return torch.tidy(() => this.fc.forward(this.bn.forward(this.conv.forward(x)).relu().mean([2, 3])));
  }
}

test('Module.toMemoryFormat converts the 4-D tensors and their gradients in place; training keeps them NHWC', () => {
  torch.manualSeed(0);
  const m = new Tiny();
  const weight = m.conv.weight;
  const before = weight.toFloat32Array();
  // a gradient that exists before the conversion follows its parameter
  torch.tidy(() =>
    m
      .forward(torch.randn([2, 3, 6, 6]))
      .sum()
      .backward(),
  );
  assert.equal(m.toMemoryFormat('channelsLast'), 1);
  assert.equal(m.conv.weight, weight, 'the same Tensor object');
  assert.equal(weight.isContiguousIn('channelsLast'), true);
  assert.equal(weight.isContiguous, false);
  assert.deepEqual(weight.toFloat32Array(), before);
  torch.tidy(() => assert.equal(weight.grad!.isContiguousIn('channelsLast'), true));
  // other ranks are left as they are
  assert.equal(m.fc.weight.isContiguous, true);
  assert.equal(m.bn.weight!.isContiguous, true);
  // an optimizer step (momentum built from NHWC gradients) keeps the layout
  const opt = new SGD(m.parameters(), { lr: 0.1, momentum: 0.9 });
  for (let i = 0; i < 2; i++) {
    torch.tidy(() =>
      m
        .forward(torch.randn([2, 3, 6, 6]).contiguous('channelsLast'))
        .sum()
        .backward(),
    );
    opt.step();
    opt.zeroGrad();
  }
  assert.equal(weight.isContiguousIn('channelsLast'), true);
  // and back
  assert.equal(m.toMemoryFormat('contiguous'), 1);
  assert.equal(weight.isContiguous, true);
  opt.dispose();
  m.dispose();
});
