// Starting from pretrained weights: a single model's stages fill every expert, wrapper prefixes
// are found, classifiers keep their initialisation, and a checkpoint of another architecture is a
// named error. Then a training run from a config with arch.args.pretrained and SGD's share_lr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { ResNetCifar } from '../../src/longtail/models/resnet-cifar.js';
import { ResNetImageNet } from '../../src/longtail/models/resnet-imagenet.js';
import {
  loadPretrained,
  PretrainedWeightsError,
  pretrainedMapping,
} from '../../src/longtail/models/pretrained.js';
import { parseConfig } from '../../src/longtail/config/config.js';
import { buildSession, trainingSetup } from '../../src/longtail/config/session.js';
import { trainSession } from '../../src/longtail/workflows/train.js';
import { readWeightsFile } from '../../src/longtail/workflows/weights-file.js';
import { repoRoot } from '../helpers.js';

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');

/** A single model's state dict as torchvision names it: stages without experts, an fc, `module.` prefixed. */
function singleModelState(classes: number): Record<string, torch.Tensor> {
  torch.manualSeed(7);
  const single = new ResNetImageNet({
    arch: 'resnet50',
    classes,
    experts: 1,
    layer3Planes: 128,
    layer4Planes: 256,
  });
  const out: Record<string, torch.Tensor> = {};
  for (const [name, t] of Object.entries(single.stateDict())) {
    if (name.includes('classifier')) continue;
    out[`module.${name.replace(/^experts\.0\./, '')}`] = torch.keep(t.clone());
  }
  out['module.fc.weight'] = torch.keep(torch.randn([classes, 1024]));
  out['module.fc.bias'] = torch.keep(torch.zeros([classes]));
  single.dispose();
  return out;
}

test('a single model fills the trunk and every expert; the classifiers keep their initialisation', () => {
  const source = singleModelState(1000);
  torch.manualSeed(1);
  const model = new ResNetImageNet({
    arch: 'resnet50',
    classes: 5,
    experts: 3,
    layer3Planes: 128,
    layer4Planes: 256,
  });
  try {
    const classifierBefore = model.experts.at(2).classifier.stateDict().weight!.toFloat32Array();
    const report = loadPretrained(model, source, 'resnet50.pth');
    assert.equal(report.prefix, 'module.');
    assert.deepEqual(report.unused.sort(), ['module.fc.bias', 'module.fc.weight']);
    const own = model.stateDict();
    for (const e of [0, 1, 2]) {
      for (const stage of ['layer3.0.conv1.weight', 'layer4.2.bn3.running_var']) {
        assert.deepEqual(
          own[`experts.${e}.${stage}`]!.toFloat32Array(),
          source[`module.${stage}`]!.toFloat32Array(),
          `experts.${e}.${stage}`,
        );
      }
    }
    assert.deepEqual(own['conv1.weight']!.toFloat32Array(), source['module.conv1.weight']!.toFloat32Array());
    assert.deepEqual(model.experts.at(2).classifier.stateDict().weight!.toFloat32Array(), classifierBefore);
    const perExpert = Object.keys(own).filter((k) => k.startsWith('experts.0.') && !k.includes('classifier'));
    assert.equal(report.copiedIntoExperts, 3 * perExpert.length);
    assert.ok(report.kept.every((k) => k.includes('classifier')));
  } finally {
    model.dispose();
    torch.dispose(Object.values(source));
  }
});

test('weights of another architecture or stage width are named errors', () => {
  const source = singleModelState(10);
  const model = new ResNetImageNet({
    arch: 'resnet50',
    classes: 5,
    experts: 2,
    layer3Planes: 128,
    layer4Planes: 256,
  });
  const narrow = new ResNetImageNet({
    arch: 'resnet50',
    classes: 5,
    experts: 2,
    layer3Planes: 64,
    layer4Planes: 256,
  });
  const cifar = new ResNetCifar({ classes: 5, experts: 2 });
  try {
    assert.throws(
      () => pretrainedMapping(narrow, source, 'w.pth'),
      (e: Error) =>
        e instanceof PretrainedWeightsError &&
        /w\.pth: 'module\.layer3\.0\.conv1\.weight' has shape \[128, 512, 1, 1\] but the model's 'experts\.0\.layer3\.0\.conv1\.weight' is \[64, 512, 1, 1\]/.test(
          e.message,
        ),
    );
    assert.throws(
      () => pretrainedMapping(cifar, source, 'w.pth'),
      /w\.pth: 'module\.conv1\.weight' has shape \[64, 3, 7, 7\] but the model's 'conv1\.weight' is \[16, 3, 3, 3\]/,
    );
    const noLayer4 = Object.fromEntries(Object.entries(source).filter(([k]) => !k.includes('layer4')));
    assert.throws(
      () => pretrainedMapping(model, noLayer4, 'w.pth'),
      /no weights for \d+ of the model's \d+ backbone tensors \(experts\.0\.layer4\./,
    );
    assert.throws(() => pretrainedMapping(model, {}, 'w.pth'), /w\.pth: holds no tensors/);
  } finally {
    for (const m of [model, narrow, cifar]) m.dispose();
    torch.dispose(Object.values(source));
  }
});

test(
  'train from a config with arch.args.pretrained and share_lr: the backbone starts from the file, two learning rates',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-pretrained-'));
    try {
      // The "pretrained" weights: another seed's model, saved with a DataParallel prefix.
      torch.manualSeed(3);
      const donor = new ResNetCifar({
        classes: 10,
        experts: 3,
        inChannels: 1,
        reduceDimension: true,
        normedClassifier: true,
      });
      const weights = join(dir, 'donor.safetensors');
      torch.saveSafetensors(
        weights,
        Object.fromEntries(Object.entries(donor.stateDict()).map(([k, v]) => [`module.${k}`, v])),
      );
      const donorStem = donor.stateDict()['conv1.weight']!.toFloat32Array();
      const donorExpert = donor.stateDict()['experts.1.layer2.0.conv1.weight']!.toFloat32Array();
      donor.dispose();

      const file = join(repoRoot, 'configs', 'fmnist_lt_ir100_sade.json');
      const c = parseConfig(readFileSync(file, 'utf8'), file);
      c.arch.args = { ...c.arch.args, pretrained: weights };
      c.optimizer.args = { ...c.optimizer.args, share_lr: 0.01 } as typeof c.optimizer.args;
      c.data_loader.args = { ...c.data_loader.args, batch_size: 16 };
      torch.manualSeed(0);
      const s = buildSession(c, file, { trainMaxPerClass: 12, testPerClass: 4 });
      const { optimizer } = trainingSetup(s);
      assert.deepEqual(
        optimizer.paramGroups.map((g) => g.lr),
        [0.01, 0.1],
        'share_lr for the backbone, lr for the classifiers',
      );
      assert.equal(optimizer.paramGroups[1]!.params.length, 3, "the three experts' cosine classifiers");
      const lines: string[] = [];
      // Zero epochs of training would not show the load; one epoch at lr 0 keeps the weights.
      c.optimizer.args = { ...c.optimizer.args, lr: 0, share_lr: 0 } as typeof c.optimizer.args;
      await trainSession(s, { epochs: 1, seed: 0, runDir: join(dir, 'run'), log: (l) => lines.push(l) });
      const line = lines.find((l) => l.startsWith('pretrained: '));
      assert.ok(line, lines.join('\n'));
      assert.match(
        line,
        /tensors loaded, \d+ of them copied into the experts' stages; 3 kept as initialised/,
      );
      // At lr 0 the weights stay what the file gave (batch norm's statistics still move).
      const trained = s.model.stateDict();
      assert.deepEqual(trained['conv1.weight']!.toFloat32Array(), donorStem);
      assert.deepEqual(trained['experts.1.layer2.0.conv1.weight']!.toFloat32Array(), donorExpert);
      for (const m of Object.values(s.system.modules)) m.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('weights files: safetensors, or a PyTorch checkpoint with its other objects left out; anything else is named', () => {
  const pth = join(repoRoot, 'test', 'golden', 'torch', 'pth');
  // objects.pth: a state dict saved beside objects of other classes, as trainers save a config
  const tensors = readWeightsFile(join(pth, 'objects.pth'), 'arch.args.pretrained');
  try {
    assert.deepEqual(Object.keys(tensors).sort(), [
      'state_dict.0.bias',
      'state_dict.0.weight',
      'state_dict.2.bias',
      'state_dict.2.weight',
    ]);
  } finally {
    torch.dispose(Object.values(tensors));
  }
  assert.throws(
    () => readWeightsFile(join(pth, 'nowhere.pth'), 'arch.args.pretrained'),
    /nowhere\.pth' does not exist \(arch\.args\.pretrained is relative to the working directory\)/,
  );
  assert.throws(
    () => readWeightsFile(join(pth, 'expected.json'), 'distill_checkpoint'),
    /expected\.json: distill_checkpoint must be a \.safetensors file or a PyTorch checkpoint/,
  );
  // a pickled call of os.system is never run: it is an object left out, the tensor beside it stays
  const beside = readWeightsFile(join(pth, 'os-system.pth'));
  assert.deepEqual(Object.keys(beside), ['weight']);
  torch.dispose(Object.values(beside));
});
