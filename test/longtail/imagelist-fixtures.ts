// A tiny long-tailed image-list data set in the ImageNet-LT layout: a root with class folders of
// small PNG/JPEG images and the ImageNet_LT_{train,val,test}.txt lists beside them. Each class
// has its own colour (plus seeded noise), so a few epochs of a small model learn something.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { Rng } from '../../src/util/rng.js';

export interface TinyImageList {
  root: string;
  classes: number;
  trainCounts: number[];
}

const COLOURS = [
  [220, 40, 40],
  [40, 200, 60],
  [50, 70, 230],
  [230, 210, 40],
  [200, 60, 210],
];

async function writeImage(file: string, colour: number[], rng: Rng, w: number, h: number): Promise<void> {
  const pixels = Buffer.alloc(w * h * 3);
  for (let p = 0; p < w * h; p++)
    for (let c = 0; c < 3; c++)
      pixels[p * 3 + c] = Math.max(0, Math.min(255, colour[c]! + Math.round((rng.uniform() - 0.5) * 80)));
  const img = sharp(pixels, { raw: { width: w, height: h, channels: 3 } });
  await (file.endsWith('.png') ? img.png() : img.jpeg({ quality: 95 })).toFile(file);
}

/**
 * Writes the data set under `root`: train counts `trainCounts` (long-tailed), `valPerClass` and
 * `testPerClass` balanced images per class; images are 20x16 (not square, as photos are).
 */
export async function writeTinyImageList(
  root: string,
  trainCounts = [12, 6, 3, 2],
  valPerClass = 2,
  testPerClass = 4,
): Promise<TinyImageList> {
  const rng = new Rng(7);
  const classes = trainCounts.length;
  const splits: [string, (c: number) => number][] = [
    ['train', (c) => trainCounts[c]!],
    ['val', () => valPerClass],
    ['test', () => testPerClass],
  ];
  for (const [split, count] of splits) {
    const lines: string[] = [];
    for (let c = 0; c < classes; c++) {
      const dir = join(root, split, `n0${c}`);
      mkdirSync(dir, { recursive: true });
      for (let i = 0; i < count(c); i++) {
        const name = `${split}/n0${c}/img_${i}.${i % 2 ? 'JPEG' : 'png'}`;
        await writeImage(join(root, name), COLOURS[c % COLOURS.length]!, rng, 20, 16);
        lines.push(`${name} ${c}`);
      }
    }
    writeFileSync(join(root, `ImageNet_LT_${split}.txt`), lines.join('\n') + '\n');
  }
  return { root, classes, trainCounts };
}

/** A config training a small CIFAR-style 3-expert model on the tiny list at 16x16. */
export function tinyListConfig(root: string, patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'tiny_list_sade',
    seed: 0,
    arch: {
      type: 'ResNet32Model',
      args: { num_classes: 4, reduce_dimension: true, use_norm: true, returns_feat: true, num_experts: 3 },
    },
    data_loader: {
      type: 'ImageNetLTDataLoader',
      args: { data_dir: root, batch_size: 8, shuffle: true, num_workers: 2, image_size: 16, resize_size: 18 },
    },
    optimizer: { type: 'SGD', args: { lr: 0.05, weight_decay: 5e-4, momentum: 0.9, nesterov: true } },
    add_extra_info: true,
    loss: { type: 'DiverseExpertLoss', args: { tau: 2 } },
    metrics: ['accuracy'],
    lr_scheduler: { type: 'CosineAnnealingLR', args: { T_max: 2, eta_min: 0 } },
    trainer: { epochs: 2, save_dir: join(root, 'runs'), save_period: 2, threads: 1 },
    ...patch,
  };
}
