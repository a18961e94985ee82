// BalPoE's long-training image-list configs (configs/mixup/long_training/
// config_{imagenet_lt_resnext50,imagenet_lt_resnet50,iNaturalist_resnet50}_bs-experts.json,
// randaugm: true) end to end on a tiny synthetic list: the configs parse as published, the
// training loader runs crop, flip, jitter and then RandAugment with the image's own draws, the
// test transform is aug_plus's Resize + CenterCrop, every worker count gives the same batches,
// and a training run resumes exactly.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig, type TrainConfig } from '../../src/longtail/config/config.js';
import { buildData } from '../../src/longtail/config/experiment.js';
import { buildSession } from '../../src/longtail/config/session.js';
import { ImageListLoader, listSource } from '../../src/longtail/data/imagelist-loader.js';
import { imageRng, ListAugmenter, type ListAugmentSpec } from '../../src/longtail/data/imagelist-augment.js';
import { isLazy } from '../../src/longtail/data/source.js';
import { normalizeTable } from '../../src/longtail/data/jitter-bytes.js';
import { NORMALIZATION } from '../../src/longtail/data/pipelines.js';
import { randAugment } from '../../src/longtail/data/randaugment.js';
import { synthImageList } from '../../src/longtail/data/synth-images.js';
import { tempDir } from './data-fixtures.js';
import { trainRun } from './train-run.js';

type Published = 'imagenet_lt_resnext50' | 'imagenet_lt_resnet50' | 'iNaturalist_resnet50';

/** The long-training config as BalPoE publishes it. */
function published(name: Published): Record<string, unknown> {
  const inat = name === 'iNaturalist_resnet50';
  return {
    name: inat
      ? 'iNaturalist_ResNet50'
      : name === 'imagenet_lt_resnet50'
        ? 'ImageNet_LT_ResNet50'
        : 'ImageNet_LT_ResNeXt50',
    n_gpu: inat ? 4 : 2,
    arch: {
      type: name === 'imagenet_lt_resnext50' ? 'ResNeXt50Model' : 'ResNet50Model',
      args: {
        num_classes: inat ? 8142 : 1000,
        reduce_dimension: false,
        use_norm: true,
        returns_feat: true,
        num_experts: 3,
      },
    },
    data_loader: {
      type: inat ? 'iNaturalistDataLoader' : 'ImageNetLTDataLoader',
      args: {
        data_dir: inat ? './data/iNaturalist' : './data/imagenet',
        batch_size: inat ? 512 : 64,
        shuffle: true,
        num_workers: inat ? 16 : 12,
        randaugm: true,
      },
    },
    optimizer: {
      type: 'SGD',
      args: { lr: inat ? 0.2 : 0.025, weight_decay: inat ? 2e-4 : 5e-4, momentum: 0.9, nesterov: true },
    },
    add_extra_info: true,
    loss: {
      type: 'BSExpertLoss',
      tau_min: inat ? -1.0 : 0,
      tau_max: inat ? 3.0 : 2.5,
      args: { tau_list: inat ? [-1.0, 1.0, 3.0] : [0, 1.25, 2.5] },
    },
    metrics: ['accuracy'],
    lr_scheduler: { type: 'CosineAnnealingLR', args: { T_max: 400, eta_min: 0.0 } },
    trainer: {
      epochs: 400,
      save_dir: 'saved/x',
      save_period: 100,
      verbosity: 2,
      monitor: 'max val_accuracy',
    },
    combiner: { type: 'Combiner', mode: 'mixup', mixup: { alpha: inat ? 0.2 : 0.3 } },
  };
}

let dir = '';
let imagenet = '';
let inat = '';

before(async () => {
  dir = tempDir('randaug-lists');
  imagenet = join(dir, 'imagenet');
  inat = join(dir, 'inat');
  const common = {
    classes: 3,
    imbalance: 2,
    maxPerClass: 4,
    valPerClass: 1,
    testPerClass: 1,
    width: 28,
    height: 24,
  };
  await synthImageList({ ...common, out: imagenet });
  await synthImageList({ ...common, out: inat, prefix: 'iNaturalist18', seed: 1 });
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** The published config on the tiny list: its classes, a small model at 16 pixels, one epoch. */
interface Editable {
  arch: { args: Record<string, unknown> };
  data_loader: { args: Record<string, unknown> };
  trainer: Record<string, unknown>;
  lr_scheduler: { args: Record<string, unknown> };
  [key: string]: unknown;
}

function tiny(name: Published, patch: (c: Editable) => void = () => {}): TrainConfig {
  const c = published(name) as unknown as Editable;
  c.arch = { type: 'ResNet32Model', args: { ...c.arch.args, num_classes: 3 } } as Editable['arch'];
  c.data_loader.args = {
    ...c.data_loader.args,
    data_dir: name === 'iNaturalist_resnet50' ? inat : imagenet,
    batch_size: 4,
    num_workers: 1,
    image_size: 16,
    resize_size: 18,
  };
  c.trainer = { ...c.trainer, epochs: 1, save_dir: join(dir, 'runs'), threads: 1 };
  c.lr_scheduler.args.T_max = 1;
  patch(c);
  return parseConfig(JSON.stringify(c), `config_${name}_bs-experts.json`);
}

test("BalPoE's three long-training image-list configs parse as published; randaugm stays refused by name for the Places-LT loaders", () => {
  for (const name of ['imagenet_lt_resnext50', 'imagenet_lt_resnet50', 'iNaturalist_resnet50'] as const) {
    const c = parseConfig(JSON.stringify(published(name)), `config_${name}_bs-experts.json`);
    assert.equal((c.data_loader.args as { randaugm?: boolean }).randaugm, true, name);
    assert.deepEqual(c.mixup, { alpha: name === 'iNaturalist_resnet50' ? 0.2 : 0.3 });
  }
  const places = published('imagenet_lt_resnet50') as { data_loader: { type: string } };
  places.data_loader.type = 'Places_LT';
  assert.throws(
    () => parseConfig(JSON.stringify(places), 'p.json'),
    /p\.json: data_loader\.args\.randaugm: BalPoE's randaugm recipe \(RandAugment\) is defined for its ImageNet-LT and iNaturalist loaders, and BalPoE has no Places-LT loader \(Places_LT\)/,
  );
});

test('randaugm: the training loader adds RandAugment (jitter 0.4 for iNaturalist too); the test and validation decoding and transform are those of the standard path', () => {
  for (const name of ['imagenet_lt_resnet50', 'iNaturalist_resnet50'] as const) {
    const on = buildData(tiny(name));
    const off = buildData(tiny(name, (c) => (c.data_loader.args.randaugm = false)));
    const kind = name === 'iNaturalist_resnet50' ? 'inat' : 'imagenet';
    assert.deepEqual(on.trainLoader!.spec, { stage: 'train', kind, size: 16, randAugment: true });
    assert.deepEqual(off.trainLoader!.spec, { stage: 'train', kind, size: 16 });
    // aug_plus's val_transform: Resize(resize_size) + CenterCrop(image_size), the data set's statistics
    assert.ok(isLazy(on.test) && isLazy(off.test) && isLazy(on.val) && isLazy(off.val));
    assert.deepEqual(on.test.decode, { height: 16, width: 16, mode: 'resize-crop', resizeShorter: 18 });
    assert.deepEqual(on.test.decode, off.test.decode);
    assert.deepEqual(on.val.decode, off.val.decode);
    assert.equal(on.pipeline, kind);
    const img = { data: Float32Array.from({ length: 768 }, (_, i) => (i % 256) / 255), c: 3, h: 16, w: 16 };
    const s = buildSession(tiny(name), 't.json');
    const t = buildSession(
      tiny(name, (c) => (c.data_loader.args.randaugm = false)),
      't.json',
    );
    const { mean, std } = NORMALIZATION[kind];
    const want = Float32Array.from(
      img.data,
      (v, i) => (v - mean[Math.floor(i / 256)]!) / std[Math.floor(i / 256)]!,
    );
    const got = s.testTransform({ ...img, data: img.data.slice() }, null as never).data;
    assert.deepEqual(got, t.testTransform({ ...img, data: img.data.slice() }, null as never).data);
    got.forEach((v, i) => assert.ok(Math.abs(v - want[i]!) < 1e-5, `value ${i}`));
    for (const m of [...Object.values(s.system.modules), ...Object.values(t.system.modules)]) m.dispose();
  }
});

/** The training images of the ImageNet-LT list, as paths under its root. */
function trainFiles(): string[] {
  const d = buildData(tiny('imagenet_lt_resnet50'));
  assert.ok(isLazy(d.train));
  return d.train.list.entries.map((e) => join(imagenet, e.path));
}

/** Image k of batch 0 of epoch 1 (seed 5) through `augmenter`, as the loader builds it. */
async function augmentOne(
  augmenter: ListAugmenter,
  file: string,
  rng: ReturnType<typeof imageRng>,
): Promise<Float32Array> {
  const x = new Float32Array(augmenter.imageLength);
  await augmenter.image(file, rng, x, 0);
  return x;
}

test('the RandAugment loader: each image is the standard crop, flip and jitter, then RandAugment drawn from the same generator, normalized', async () => {
  const spec: ListAugmentSpec = { stage: 'train', kind: 'imagenet', size: 16 };
  const plain = new ListAugmenter(spec);
  const withRandAugment = new ListAugmenter({ ...spec, randAugment: true });
  const lut = normalizeTable(NORMALIZATION.imagenet.mean, NORMALIZATION.imagenet.std);
  // the table is increasing per channel, so a normalized value gives its byte back
  const byteOf = (c: number, v: number) => lut.subarray(c * 256, (c + 1) * 256).indexOf(v);
  const files = trainFiles();
  let changed = 0;
  for (let k = 0; k < files.length; k++) {
    const got = await augmentOne(withRandAugment, files[k]!, imageRng(5, 1, 0, k));
    // the standard path's draws and bytes, then RandAugment's draws from where they stopped
    const rng = imageRng(5, 1, 0, k);
    const x = await augmentOne(plain, files[k]!, rng);
    const bytes = Uint8Array.from(x, (v, i) => byteOf(Math.floor(i / 256), v));
    assert.ok(bytes.every((b, i) => lut[Math.floor(i / 256) * 256 + b] === x[i]));
    const { img, draws } = randAugment({ data: bytes, h: 16, w: 16 }, rng);
    const want = Float32Array.from(img.data, (b, i) => lut[Math.floor(i / 256) * 256 + b]!);
    assert.deepEqual(got, want, `image ${k}`);
    if (draws.some((r) => r.fired)) changed++;
  }
  assert.ok(changed > 0, 'some images were changed by RandAugment');
});

test('randaugm batches are the same for every worker count and every run of a seed', async () => {
  const d = buildData(tiny('iNaturalist_resnet50'));
  const train = d.train;
  assert.ok(isLazy(train));
  const epoch = async (workers: number, seed: number) => {
    const loader = new ImageListLoader(listSource(train.list), { spec: d.trainLoader!.spec, workers });
    const xs: Float32Array[] = [];
    try {
      for await (const b of loader.epoch({ batchSize: 3, seed, epoch: 2 })) xs.push(b.x.slice());
    } finally {
      await loader.close();
    }
    return xs;
  };
  const inProcess = await epoch(0, 3);
  assert.deepEqual(await epoch(2, 3), inProcess);
  const other = await epoch(0, 4);
  assert.notDeepEqual(other, inProcess);
});

test("BalPoE's ImageNet-LT long-training config (randaugm) trains on the tiny list, and a resumed run ends exactly where an uninterrupted one does", async () => {
  const c = () => tiny('imagenet_lt_resnext50', (x) => (x.lr_scheduler.args.T_max = 2));
  const first = await trainRun(c(), join(dir, 'runs', 'b'), 1);
  assert.equal(first.result.history.length, 1);
  const [e] = first.result.history;
  assert.ok(Number.isFinite(e!.train_loss) && e!.train_loss > 0, `train loss ${e!.train_loss}`);
  assert.ok(e!.val !== null, 'validated on the val list');
  const resumed = await trainRun(c(), join(dir, 'runs', 'b'), 2, {
    resumeFrom: join(dir, 'runs', 'b', 'checkpoint-last.json'),
  });
  const straight = await trainRun(c(), join(dir, 'runs', 'a'), 2);
  assert.equal(resumed.result.history.length, 2);
  let differs = 0;
  for (const [k, v] of Object.entries(straight.weights)) {
    assert.deepEqual(resumed.weights[k], v, `weight ${k} differs after resume`);
    if (first.weights[k]!.some((x, i) => x !== v[i])) differs++;
  }
  assert.ok(differs > 0, 'the second epoch changed the weights');
  assert.equal(resumed.result.history[1]!.train_loss, straight.result.history[1]!.train_loss);
});
