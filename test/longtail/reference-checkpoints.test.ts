// Checkpoints of the SADE / RIDE / BalPoE trainers (test/golden/longtail/reference_checkpoints,
// from scripts/golden/longtail_reference_checkpoints.py, which saves the reference model classes
// in their trainer's format): read with the trainer's config object skipped, the name layout
// recognised, and tailor's model computes the reference's logits (RIDE-EA's routed output too). The ImageNet backbones' names
// and shapes map onto tailor's models; mismatches are named errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { ResNetCifar } from '../../src/longtail/models/resnet-cifar.js';
import { ResNetImageNet, type ImageNetArch } from '../../src/longtail/models/resnet-imagenet.js';
import {
  CheckpointLayoutError,
  loadModelWeights,
  modelWeightsMapping,
} from '../../src/longtail/models/checkpoint-layout.js';
import { loadPretrained } from '../../src/longtail/models/pretrained.js';
import { ExpertAssignmentModel, referenceRouterState } from '../../src/longtail/models/expert-assignment.js';
import { readWeightsFile } from '../../src/longtail/workflows/weights-file.js';
import { parseConfig } from '../../src/longtail/config/config.js';
import { ConfigError } from '../../src/longtail/config/schema.js';
import { buildModel } from '../../src/longtail/config/experiment.js';
import { assertClose, goldenDir, repoRoot } from '../helpers.js';

const dir = join(goldenDir, 'longtail', 'reference_checkpoints');
const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as {
  input: { shape: number[]; values: number[] };
  multi: { file: string; output: number[]; logits: number[] };
  single: { file: string; output: number[] };
  imagenet: {
    arch: ImageNetArch;
    experts: number;
    layer3: number;
    layer4: number;
    use_norm: boolean;
    share_layer3: boolean;
    names: Record<string, number[]>;
  }[];
};

const cifar = (experts: number, normed: boolean, classes = 4) =>
  new ResNetCifar({
    classes,
    experts,
    blocksPerStage: 1,
    layer2Planes: 16,
    layer3Planes: 16,
    normedClassifier: normed,
    scale: 30,
  });

/** The file's tensors, used by fn and disposed after. */
function withFile<T>(file: string, fn: (source: Record<string, torch.Tensor>) => T): T {
  const source = readWeightsFile(join(dir, file));
  try {
    return fn(source);
  } finally {
    torch.dispose(Object.values(source));
  }
}

test('the trainer checkpoint is read with its ConfigParser skipped, its epoch kept', () => {
  const ck = torch.loadPytorchCheckpoint(join(dir, expected.multi.file), { skipObjects: true });
  try {
    assert.equal(ck.skipped.get('config'), 'parse_config.ConfigParser');
    assert.equal(ck.values.get('epoch'), 3);
    assert.ok(ck.tensors.has('state_dict.module.backbone.layer3s.2.0.conv2.weight'));
  } finally {
    torch.dispose([...ck.tensors.values()]);
  }
});

test("a SADE multi-expert ResNet-32 (DataParallel) gives the reference's logits, expert for expert", () => {
  const model = cifar(3, true);
  try {
    const report = withFile(expected.multi.file, (s) => loadModelWeights(model, s, expected.multi.file));
    assert.equal(report.layout, 'reference-experts');
    assert.equal(report.prefix, 'state_dict.module.backbone.');
    assert.equal(report.loaded, Object.keys(model.stateDict()).length);
    model.eval();
    torch.tidy(() => {
      const x = torch.tensor(Float32Array.from(expected.input.values), { shape: expected.input.shape });
      const out = torch.noGrad(() => model.forward(x));
      assertClose(out.output.toFloat32Array(), expected.multi.output, 2e-4, 1e-4, 'output');
      assertClose(out.logits.toFloat32Array(), expected.multi.logits, 2e-4, 1e-4, 'per-expert logits');
    });
  } finally {
    model.dispose();
  }
});

test("a single ResNet-32 with a linear classifier gives the reference's logits as a one-expert model", () => {
  const model = cifar(1, false);
  try {
    const report = withFile(expected.single.file, (s) => loadModelWeights(model, s, expected.single.file));
    assert.equal(report.layout, 'reference-single');
    assert.equal(report.prefix, 'state_dict.backbone.');
    model.eval();
    torch.tidy(() => {
      const x = torch.tensor(Float32Array.from(expected.input.values), { shape: expected.input.shape });
      const out = torch.noGrad(() => model.forward(x));
      assertClose(out.output.toFloat32Array(), expected.single.output, 2e-4, 1e-4, 'output');
    });
  } finally {
    model.dispose();
  }
});

test("a RIDE-EA checkpoint of RIDE's trainer: backbone and routers load, and route as RIDE's model does", () => {
  // scripts/golden/longtail_ride_ea_checkpoint.py: RIDE's own ea_resnet_cifar.ResNet_s, saved by
  // its trainer's format, with the routed output and experts per image of a batch of 16.
  const ea = JSON.parse(readFileSync(join(dir, 'ride_ea_expected.json'), 'utf8')) as {
    file: string;
    input: { shape: number[]; values: number[] };
    output: number[];
    experts_per_image: number[];
  };
  const model = new ExpertAssignmentModel(cifar(3, true), { topChoices: 3, shareFc: false, posWeight: 20 });
  try {
    withFile(ea.file, (source) => {
      // The path loadRun takes for `tailor test -c RIDE_EA_CONFIG -r FILE`: the backbone by the
      // name mapping (the routers' tensors left over and listed), then the routers by RIDE's names.
      const report = loadModelWeights(model.backbone, source, ea.file);
      assert.equal(report.layout, 'reference-experts');
      assert.equal(report.prefix, 'state_dict.module.backbone.');
      assert.equal(report.ignored.length, 8); // 2 hidden + 2 final layers, weight and bias
      model.router.loadStateDict(referenceRouterState(source, report.prefix)!, true);
    });
    model.eval();
    torch.tidy(() => {
      const x = torch.tensor(Float32Array.from(ea.input.values), { shape: ea.input.shape });
      const routed = torch.noGrad(() => model.route(x));
      assert.deepEqual(routed.expertsPerImage.toNumbers(), ea.experts_per_image);
      assertClose(routed.output.toFloat32Array(), ea.output, 2e-4, 1e-4, 'routed output');
    });
  } finally {
    model.dispose();
  }
});

test('a checkpoint of another model is a named error saying which config field to change', () => {
  const cases: [ResNetCifar, RegExp][] = [
    [cifar(2, true), /holds 3 experts but the config's model has 2; set arch\.args\.num_experts to 3/],
    [cifar(3, true, 5), /classifier has 4 classes: set arch\.args\.num_classes/],
    [cifar(3, false), /has a cosine classifier: set arch\.args\.use_norm to true/],
    [
      new ResNetCifar({ classes: 4, experts: 3, blocksPerStage: 2, layer2Planes: 16, layer3Planes: 16 }),
      /no tensor for 'layer1\.1\.conv1\.weight'/,
    ],
  ];
  withFile(expected.multi.file, (source) => {
    for (const [model, message] of cases) {
      try {
        assert.throws(
          () => modelWeightsMapping(model, source, 'best.pth'),
          (e: Error) =>
            e instanceof CheckpointLayoutError && message.test(e.message) && /best\.pth/.test(e.message),
        );
      } finally {
        model.dispose();
      }
    }
    const three = cifar(3, false);
    try {
      withFile(expected.single.file, (single) =>
        assert.throws(
          () => modelWeightsMapping(three, single, 'single.pth'),
          /single\.pth: holds a single model but the config's model has 3; set arch\.args\.num_experts to 1/,
        ),
      );
    } finally {
      three.dispose();
    }
    const model = cifar(3, true);
    try {
      // A tensor the model has no place for is named, with its full name.
      const extra = {
        ...source,
        'state_dict.module.backbone.layer4s.0.weight': source['state_dict.module.backbone.conv1.weight']!,
      };
      assert.throws(
        () => modelWeightsMapping(model, extra, 'x.pth'),
        /no place in the model for 'state_dict\.module\.backbone\.layer4s\.0\.weight'/,
      );
      assert.throws(
        () =>
          modelWeightsMapping(
            model,
            { 'encoder.w': source['state_dict.module.backbone.conv1.weight']! },
            'x.pth',
          ),
        (e: Error) =>
          e instanceof CheckpointLayoutError &&
          /'encoder\.w'\) match none of the known layouts/.test(e.message),
      );
      // RIDE's expert-assignment router has no counterpart: skipped and reported, not refused.
      const router = 'state_dict.module.backbone.expert_help_pred_hidden_fcs.0.weight';
      const ea = { ...source, [router]: source['state_dict.module.backbone.conv1.weight']! };
      assert.deepEqual(modelWeightsMapping(model, ea, 'ea.pth').report.ignored, [router]);
      // As pretrained weights, each reference expert's stages fill tailor's expert of that index.
      const report = loadPretrained(model, source, 'best.pth');
      assert.equal(report.prefix, 'state_dict.module.backbone.');
      assert.equal(report.copiedIntoExperts, 0);
      assert.deepEqual(
        model.experts.at(1).layer2.stateDict()['0.conv1.weight']!.toFloat32Array(),
        source['state_dict.module.backbone.layer2s.1.0.conv1.weight']!.toFloat32Array(),
      );
    } finally {
      model.dispose();
    }
  });
});

test('the ImageNet backbones of SADE / RIDE / BalPoE map name for name, shape for shape', () => {
  for (const ref of expected.imagenet) {
    const model = new ResNetImageNet({
      arch: ref.arch,
      classes: 5,
      experts: ref.experts,
      layer3Planes: ref.layer3,
      layer4Planes: ref.layer4,
      normedClassifier: ref.use_norm,
      shareLayer3: ref.share_layer3,
    });
    const source: Record<string, torch.Tensor> = {};
    try {
      for (const [name, shape] of Object.entries(ref.names))
        source[`state_dict.${name}`] = torch.zeros(shape);
      const { report } = modelWeightsMapping(model, source, `${ref.arch}.pth`);
      const what = `${ref.arch} x${ref.experts}`;
      assert.equal(report.layout, ref.experts > 1 ? 'reference-experts' : 'reference-single', what);
      assert.equal(report.loaded, Object.keys(ref.names).length, what);
      assert.equal(report.loaded, Object.keys(model.stateDict()).length, what);
    } finally {
      model.dispose();
      torch.dispose(Object.values(source));
    }
  }
});

test("ResNet32Model's layer2/3_output_dim set the expert widths; a width option A cannot pad to is named", () => {
  const raw = JSON.parse(readFileSync(join(repoRoot, 'configs', 'fmnist_lt_ir100_sade.json'), 'utf8'));
  raw.arch.args = { ...raw.arch.args, layer2_output_dim: 16, layer3_output_dim: 20 };
  const model = buildModel(parseConfig(JSON.stringify(raw), 'sade.json'), 1, 10, 'sade.json');
  try {
    assert.deepEqual(model.stateDict()['experts.2.layer3.0.conv1.weight']!.shape, [20, 16, 3, 3]);
    assert.equal(model.featureDim, 20);
  } finally {
    model.dispose();
  }
  raw.arch.args.layer3_output_dim = 19;
  assert.throws(
    () => buildModel(parseConfig(JSON.stringify(raw), 'sade.json'), 1, 10, 'sade.json'),
    (e: Error) =>
      e instanceof ConfigError && /sade\.json: arch\.args\.layer3_output_dim: is 19/.test(e.message),
  );
});
