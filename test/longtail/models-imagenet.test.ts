// ResNet-50, ResNeXt-50 32x4d and ResNet-152 in their multi-expert form: parameter counts against
// torchvision / the SADE layout (computed in PyTorch 1.13), shapes of forward, per-expert logits
// and features at a small input, gradients reaching every part, the options, initialisation and
// that no tensor leaks. Numerical agreement with PyTorch (ResNet-152's forward/backward included)
// is in models-golden.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import {
  IMAGENET_CONFIG_TYPES,
  ResNetImageNet,
  type ImageNetArch,
  type ResNetImageNetOptions,
} from '../../src/longtail/models/resnet-imagenet.js';
import { Bottleneck } from '../../src/longtail/models/bottleneck.js';
import { NormedLinear } from '../../src/longtail/models/heads.js';
import { ResNetCifar } from '../../src/longtail/models/resnet-cifar.js';
import type { MultiExpertModel } from '../../src/longtail/models/multi-expert.js';

/** Builds, runs fn, disposes, and checks that the live tensor count is back where it started. */
function withModel(options: ResNetImageNetOptions, fn: (model: ResNetImageNet) => void): void {
  const before = torch.liveTensors();
  const model = new ResNetImageNet(options);
  try {
    fn(model);
  } finally {
    model.zeroGrad();
    model.dispose();
  }
  assert.equal(torch.liveTensors(), before, 'tensors leaked');
}

// torchvision.models.resnet50() etc.: 1000 classes, linear fc (ResNet-10: torchvision's
// ResNet(BasicBlock, [1, 1, 1, 1]), 512-d features).
const TORCHVISION: [ImageNetArch, number][] = [
  ['resnet10', 5_418_792],
  ['resnet50', 25_557_032],
  ['resnext50_32x4d', 25_028_904],
  ['resnet152', 60_192_808],
];
for (const [arch, count] of TORCHVISION) {
  test(`${arch}: one expert with a linear head has torchvision's ${count} parameters`, () => {
    withModel({ arch, classes: 1000, experts: 1, normedClassifier: false }, (m) => {
      assert.equal(m.numParameters(), count);
      assert.equal(m.featureDim, arch === 'resnet10' ? 512 : 2048);
      assert.deepEqual(m.conv1.weight.shape, [64, 3, 7, 7]);
      assert.equal(m.layer3, null);
    });
  });
}

// The same modules built in PyTorch in the layout of SADE's Expert_ResNet / Expert_ResNeXt.
const MULTI: [string, ResNetImageNetOptions, number][] = [
  [
    'resnet50, 3 experts, reduced, cosine, 1000 classes',
    { arch: 'resnet50', classes: 1000, experts: 3, reduceDimension: true },
    43_677_248,
  ],
  [
    'resnext50, 3 experts, reduced, cosine, 1000 classes',
    { arch: 'resnext50_32x4d', classes: 1000, experts: 3, reduceDimension: true },
    42_889_024,
  ],
  [
    'resnet50, 2 experts, full width, linear, 10 classes',
    { arch: 'resnet50', classes: 10, experts: 2, reduceDimension: false, normedClassifier: false },
    45_612_116,
  ],
  [
    'resnet10, 3 experts, reduced, cosine, 1000 classes (RIDE ImageNet-LT)',
    { arch: 'resnet10', classes: 1000, experts: 3, reduceDimension: true },
    9_401_792,
  ],
  [
    'resnet152, 3 experts, shared layer 3, reduced, cosine, 365 classes',
    { arch: 'resnet152', classes: 365, experts: 3, reduceDimension: true, shareLayer3: true },
    52_502_080,
  ],
];
for (const [name, options, count] of MULTI) {
  test(`parameter count: ${name}`, () => {
    withModel(options, (m) => {
      assert.equal(m.numParameters(), count);
      assert.equal(m.experts.length, options.experts);
      const expansion = options.arch === 'resnet10' ? 1 : 4;
      assert.equal(m.featureDim, (options.reduceDimension ? 384 : 512) * expansion);
    });
  });
}

test('reduce_dimension widths follow SADE: 192/384 bottleneck planes, 768/1536 channels, ResNeXt inner widths 384/768', () => {
  withModel({ arch: 'resnext50_32x4d', classes: 4, experts: 2, reduceDimension: true }, (m) => {
    const e = m.experts.at(1);
    const first3 = e.layer3!.layers[0] as Bottleneck;
    const first4 = e.layer4.layers[0] as Bottleneck;
    assert.deepEqual(first3.conv1.weight.shape, [384, 512, 1, 1]);
    assert.deepEqual(first3.conv2.weight.shape, [384, 12, 3, 3]);
    assert.deepEqual(first3.conv3.weight.shape, [768, 384, 1, 1]);
    assert.deepEqual(first4.conv1.weight.shape, [768, 768, 1, 1]);
    assert.deepEqual(first4.conv3.weight.shape, [1536, 768, 1, 1]);
    assert.ok(e.classifier instanceof NormedLinear);
    assert.deepEqual(e.classifier.weight.shape, [1536, 4]);
  });
  withModel({ arch: 'resnet50', classes: 4, experts: 2, layer3Planes: 128, layer4Planes: 256 }, (m) => {
    assert.deepEqual((m.experts.at(0).layer3!.layers[0] as Bottleneck).conv2.weight.shape, [128, 128, 3, 3]);
    assert.equal(m.featureDim, 1024);
  });
});

for (const arch of ['resnet50', 'resnext50_32x4d'] as const) {
  test(`${arch}: 3 experts forward/backward at 2x3x64x64 gives [N,C] output, [E,N,C] logits, [E,N,1536] features`, () => {
    withModel({ arch, classes: 6, experts: 3, reduceDimension: true }, (m) => {
      m.train();
      torch.manualSeed(1);
      torch.tidy(() => {
        const x = torch.randn([2, 3, 64, 64]);
        const { output, logits } = m.forward(x);
        assert.deepEqual(output.shape, [2, 6]);
        assert.deepEqual(logits.shape, [3, 2, 6]);
        // Output is the mean of the experts; cosine logits are bounded by s = 30.
        const diff = output.sub(logits.mean(0)).abs().max().item();
        assert.ok(diff < 1e-6, `output is not the expert mean (max diff ${diff})`);
        assert.ok(logits.abs().max().item() <= 30 + 1e-4);
        // The experts differ (independent initialisation).
        assert.ok(logits.select(0, 0).sub(logits.select(0, 1)).abs().max().item() > 1e-3);
        output
          .mul(torch.randn([2, 6]))
          .sum()
          .backward();
      });
      // p.grad returns a new handle: read it inside tidy.
      torch.tidy(() => {
        for (const [name, p] of m.namedParameters()) assert.ok(p.grad, `${name} got no gradient`);
        const nonzero = (t: torch.Tensor) => t.grad!.abs().sum().item() > 0;
        assert.ok(nonzero(m.conv1.weight), 'stem gradient is zero');
        for (const e of m.experts.items)
          assert.ok(nonzero(e.classifier.weight), 'classifier gradient is zero');
      });
      torch.noGrad(() =>
        torch.tidy(() => {
          const f = m.expertFeatures(torch.randn([2, 3, 64, 64]));
          assert.deepEqual(f.shape, [3, 2, 1536]);
          assert.ok(f.min().item() >= 0, 'pooled features follow a ReLU');
        }),
      );
    });
  });
}

test('eval mode uses running statistics and is deterministic; shared() output is [N,512,H/8,W/8]', () => {
  withModel({ arch: 'resnet50', classes: 5, experts: 2 }, (m) => {
    torch.manualSeed(2);
    torch.tidy(() => {
      const x = torch.randn([2, 3, 64, 64]);
      m.train();
      m.forward(x); // moves the running statistics
      m.eval();
      const a = torch.noGrad(() => m.forward(x).output);
      const b = torch.noGrad(() => m.forward(x).output);
      assert.equal(a.sub(b).abs().max().item(), 0);
      assert.deepEqual(torch.noGrad(() => m.shared(x)).shape, [2, 512, 8, 8]);
    });
  });
});

test('generated classifier weights (PRL) replace the cosine classifier; a linear head refuses them', () => {
  withModel({ arch: 'resnet50', classes: 4, experts: 2 }, (m) => {
    torch.noGrad(() =>
      torch.tidy(() => {
        m.eval();
        const x = torch.randn([1, 3, 64, 64]);
        const weights = [torch.randn([1536, 4]), torch.randn([1536, 4])];
        const { logits } = m.forward(x, weights);
        const f = m.expertFeatures(x);
        const manual = m.experts.at(1).classifier.forward(f.select(0, 1), weights[1]);
        assert.ok(logits.select(0, 1).sub(manual).abs().max().item() < 1e-4);
        assert.ok(logits.select(0, 0).sub(m.forward(x).logits.select(0, 0)).abs().max().item() > 1e-3);
      }),
    );
  });
  withModel({ arch: 'resnet50', classes: 4, experts: 1, normedClassifier: false }, (m) => {
    torch.tidy(() => {
      assert.throws(() => m.forward(torch.randn([1, 3, 64, 64]), [torch.randn([2048, 4])]), /use_norm/);
    });
  });
});

test('initialisation: convs kaiming normal fan_out (std sqrt(2/(k*k*out))), BN 1/0, zero-init residual', () => {
  withModel({ arch: 'resnet50', classes: 10, experts: 1, zeroInitResidual: true }, (m) => {
    const std = (t: torch.Tensor) => torch.tidy(() => t.std().item());
    const conv = (m.experts.at(0).layer3!.layers[1] as Bottleneck).conv2; // [256, 256, 3, 3]
    const expected = Math.sqrt(2 / (3 * 3 * 256));
    assert.ok(Math.abs(std(conv.weight) / expected - 1) < 0.02, `std ${std(conv.weight)} vs ${expected}`);
    const stemExpected = Math.sqrt(2 / (7 * 7 * 64));
    assert.ok(Math.abs(std(m.conv1.weight) / stemExpected - 1) < 0.05);
    let blocks = 0;
    for (const [, mod] of m.namedModules()) {
      if (!(mod instanceof Bottleneck)) continue;
      blocks++;
      assert.equal(
        torch.tidy(() => mod.bn3.weight!.abs().sum().item()),
        0,
      );
      assert.equal(
        torch.tidy(() => mod.bn1.weight!.sub(1).abs().sum().item()),
        0,
      );
      assert.equal(
        torch.tidy(() => mod.bn1.bias!.abs().sum().item()),
        0,
      );
    }
    assert.equal(blocks, 16);
    // A zero-initialised non-projecting block is the identity on non-negative input.
    const block = m.layer1.layers[1] as Bottleneck;
    torch.tidy(() => {
      const x = torch.rand([1, 256, 8, 8]);
      assert.equal(block.forward(x).sub(x).abs().max().item(), 0);
    });
  });
  withModel({ arch: 'resnet50', classes: 10, experts: 1 }, (m) => {
    assert.ok(
      torch.tidy(() => (m.layer1.layers[0] as Bottleneck).bn3.weight!.sub(1).abs().sum().item()) === 0,
    );
  });
});

test('options: reduce_first_kernel, 1-channel input, share_layer3, any number of experts', () => {
  withModel({ arch: 'resnet50', classes: 3, experts: 1, reduceFirstKernel: true, inChannels: 1 }, (m) => {
    assert.deepEqual(m.conv1.weight.shape, [64, 1, 3, 3]);
    torch.noGrad(() =>
      torch.tidy(() => assert.deepEqual(m.expertFeatures(torch.randn([2, 1, 32, 32])).shape, [1, 2, 2048])),
    );
  });
  withModel({ arch: 'resnet50', classes: 3, experts: 5, shareLayer3: true }, (m) => {
    assert.ok(m.layer3);
    assert.ok(m.experts.items.every((e) => e.layer3 === null));
    const names = [...m.namedParameters()].map(([n]) => n);
    assert.ok(names.includes('layer3.0.conv1.weight') && names.includes('experts.4.layer4.2.bn3.bias'));
    assert.ok(!names.some((n) => /^experts\.\d+\.layer3\./.test(n)));
    torch.noGrad(() =>
      torch.tidy(() => assert.deepEqual(m.forward(torch.randn([2, 3, 64, 64])).logits.shape, [5, 2, 3])),
    );
  });
});

test('bad options give errors that name the field', () => {
  assert.throws(
    () => new ResNetImageNet({ arch: 'resnet50', classes: 10, experts: 0 }),
    /experts must be a positive integer/,
  );
  assert.throws(() => new ResNetImageNet({ arch: 'resnet50', classes: 10, experts: 1.5 }), /experts/);
  assert.throws(
    () => new ResNetImageNet({ arch: 'resnet18' as ImageNetArch, classes: 10 }),
    /unknown ImageNet backbone 'resnet18'.*resnet50/,
  );
  assert.throws(() => new ResNetImageNet({ arch: 'resnet50', classes: 0 }), /classes/);
  assert.throws(
    () => new ResNetImageNet({ arch: 'resnext50_32x4d', classes: 10, layer3Planes: 8 }),
    /layer3Planes = 8 .*at least 16/,
  );
});

test('SADE and RIDE config type names map to the backbones', () => {
  assert.deepEqual(IMAGENET_CONFIG_TYPES, {
    ResNet10Model: 'resnet10',
    ResNet50Model: 'resnet50',
    ResNeXt50Model: 'resnext50_32x4d',
    ResNet152Model: 'resnet152',
  });
});

test('both backbones satisfy the MultiExpertModel base (checked by the compiler)', () => {
  const before = torch.liveTensors();
  const models: MultiExpertModel[] = [
    new ResNetCifar({ classes: 3, experts: 2 }),
    new ResNetImageNet({ arch: 'resnet50', classes: 3, experts: 2 }),
  ];
  assert.deepEqual(
    models.map((m) => [m.featureDim, m.experts.length, m.options.classes]),
    [
      [48, 2, 3],
      [1536, 2, 3],
    ],
  );
  for (const m of models) m.dispose();
  assert.equal(torch.liveTensors(), before);
});
