// BalPoE's long-training CIFAR configs end to end: a config shaped like
// configs/mixup/long_training/config_cifar{10,100}_ir100_bs-experts.json (randaugm: true) on tiny
// CIFAR data sets in the binary layout, checked for the transforms the session builds and for a
// training epoch on the host (AutoAugment is not drawn on the device).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Rng } from '../../src/util/rng.js';
import { parseConfig } from '../../src/longtail/config/config.js';
import { buildSession } from '../../src/longtail/config/session.js';
import { compose, horizontalFlip, randomCrop, type ImageView } from '../../src/longtail/data/augment.js';
import { normalize } from '../../src/longtail/data/augment-color.js';
import { cifar10Policy } from '../../src/longtail/data/autoaugment.js';
import { deviceAugmentOf, DevicePipelineUnsupportedError } from '../../src/longtail/data/device-batches.js';
import type { FusableTransform } from '../../src/longtail/data/fused.js';
import { NORMALIZATION, trainTransform } from '../../src/longtail/data/pipelines.js';
import { balancedSplit, tempDir, writeCifarBinary } from './data-fixtures.js';
import { trainRun } from './train-run.js';

/** BalPoE's long-training config as published, but for the data set's size (see below). */
function longTraining(variant: 'cifar10' | 'cifar100', dataDir: string, onDevice?: boolean): string {
  const classes = variant === 'cifar10' ? 10 : 100;
  return JSON.stringify({
    name: `Imbalance_${variant.toUpperCase()}LT_IR100`,
    n_gpu: 1,
    arch: {
      type: 'ResNet32Model',
      args: {
        num_classes: classes,
        reduce_dimension: false,
        use_norm: true,
        returns_feat: true,
        num_experts: 3,
      },
    },
    data_loader: {
      type: variant === 'cifar10' ? 'ImbalanceCIFAR10DataLoader' : 'ImbalanceCIFAR100DataLoader',
      args: {
        data_dir: dataDir,
        batch_size: 128,
        shuffle: true,
        num_workers: 4,
        // the published 0.01 would leave the tail classes of 6-image fixtures empty
        imb_factor: 0.5,
        randaugm: true,
        validation_per_class: 1,
        ...(onDevice !== undefined ? { on_device: onDevice } : {}),
      },
    },
    optimizer: { type: 'SGD', args: { lr: 0.1, weight_decay: 5e-4, momentum: 0.9, nesterov: true } },
    add_extra_info: true,
    loss: { type: 'BSExpertLoss', tau_min: 0, tau_max: 2.0, args: { tau_list: [0, 1.0, 2.0] } },
    metrics: ['accuracy'],
    lr_scheduler: { type: 'CustomLR', args: { step1: 320, step2: 360, gamma: 0.1, warmup_epoch: 10 } },
    trainer: {
      epochs: 400,
      save_dir: 'saved/x',
      save_period: 100,
      verbosity: 2,
      monitor: 'max val_accuracy',
    },
    combiner: { type: 'Combiner', mode: 'mixup', mixup: { alpha: variant === 'cifar10' ? 0.8 : 0.4 } },
  });
}

function cifarImage(seed: number): ImageView {
  const rng = new Rng(seed);
  return { data: Float32Array.from({ length: 3072 }, () => rng.int(256) * (1 / 255)), c: 3, h: 32, w: 32 };
}

const { mean, std } = NORMALIZATION.cifar;

test("BalPoE's CIFAR-100 long training: crop, flip, AutoAugment, CIFAR normalization, no rotation; test: CIFAR normalization; host only", async () => {
  const root = tempDir('autoaug');
  try {
    writeCifarBinary(root, 'cifar100', balancedSplit(100, 6), balancedSplit(100, 1));
    const file = 'config_cifar100_ir100_bs-experts.json';
    const session = buildSession(parseConfig(longTraining('cifar100', root), file), file);
    assert.equal(session.data.autoAugment, true);
    const train = session.trainTransform as FusableTransform;
    assert.equal(train.fused, undefined, 'no fused (crop/flip/rotation) shortcut skips the policy');
    assert.equal(deviceAugmentOf(train), 'AutoAugment runs on the host only');
    // the same draws and values as the reference's steps composed by hand: BalPoE's cifar_aug_plus
    // normalizes with the CIFAR statistics (0.4914, 0.4822, 0.4465 / 0.2023, 0.1994, 0.2010)
    const reference = compose(randomCrop(32, 32, 4), horizontalFlip(), cifar10Policy(), normalize(mean, std));
    const a = new Rng(3);
    const b = new Rng(3);
    for (let k = 0; k < 60; k++) {
      const img = cifarImage(k);
      const got = train({ ...img, data: img.data.slice() }, a);
      const want = reference({ ...img, data: img.data.slice() }, b);
      assert.deepEqual(got.data, want.data, `image ${k}`);
    }
    const test = session.testTransform as FusableTransform;
    assert.deepEqual({ ...test.fused }, { flipP: 0, mean, std });
    const img = cifarImage(99);
    assert.deepEqual(
      test({ ...img, data: img.data.slice() }, new Rng(0)).data,
      normalize(mean, std)(img, new Rng(0)).data,
    );
    for (const m of Object.values(session.system.modules)) m.dispose();

    const dir = tempDir('autoaug-run');
    try {
      await assert.rejects(
        trainRun(parseConfig(longTraining('cifar100', root, true), file), dir, 1, { file }),
        (e: Error) =>
          e instanceof DevicePipelineUnsupportedError && /AutoAugment runs on the host only/.test(e.message),
      );
      const run = await trainRun(parseConfig(longTraining('cifar100', root), file), dir, 1, { file });
      assert.equal(run.result.history.length, 1);
      assert.ok(Number.isFinite(run.result.history[0]!.train_loss));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("BalPoE's CIFAR-10 long training, as its loader runs it: crop, flip and CIFAR normalization (no AutoAugment, no rotation)", () => {
  const root = tempDir('autoaug10');
  try {
    writeCifarBinary(root, 'cifar10', balancedSplit(10, 6), balancedSplit(10, 1));
    const file = 'config_cifar10_ir100_bs-experts.json';
    const session = buildSession(parseConfig(longTraining('cifar10', root), file), file);
    assert.equal(session.data.autoAugment, undefined);
    assert.deepEqual(
      { ...(session.trainTransform as FusableTransform).fused },
      { crop: { height: 32, width: 32, padding: 4 }, flipP: 0.5, mean, std },
    );
    assert.deepEqual(deviceAugmentOf(session.trainTransform), {
      crop: { height: 32, width: 32, padding: 4 },
      flipP: 0.5,
      mean,
      std,
    });
    for (const m of Object.values(session.system.modules)) m.dispose();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('AutoAugment is a CIFAR pipeline step only', () => {
  assert.throws(
    () => trainTransform('fmnist', { autoAugment: true }),
    /AutoAugment's CIFAR-10 policy is a 'cifar' pipeline step, not 'fmnist'/,
  );
  assert.throws(() => trainTransform('imagenet', { autoAugment: true }), /not 'imagenet'/);
});

test('the standard CIFAR recipe (SADE, BalPoE, RIDE loaders): crop, flip and RandomRotation(15), drawn on the host', () => {
  const root = tempDir('cifar-standard');
  try {
    writeCifarBinary(root, 'cifar100', balancedSplit(100, 6), balancedSplit(100, 1));
    const raw = JSON.parse(longTraining('cifar100', root)) as {
      data_loader: { args: Record<string, unknown> };
    };
    raw.data_loader.args.randaugm = false;
    const file = 'config_cifar100_ir100_bs-experts.json';
    const session = buildSession(parseConfig(JSON.stringify(raw), file), file);
    assert.equal(session.data.rotationDegrees, 15);
    assert.deepEqual(
      { ...(session.trainTransform as FusableTransform).fused },
      { crop: { height: 32, width: 32, padding: 4 }, flipP: 0.5, rotationDegrees: 15, mean, std },
    );
    assert.equal(deviceAugmentOf(session.trainTransform), 'random rotation runs on the host only');
    for (const m of Object.values(session.system.modules)) m.dispose();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
