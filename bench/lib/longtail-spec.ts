// What the plain-PyTorch side of the epoch benchmarks (bench/epoch_torch.py,
// bench/epoch_gpu_torch.py via bench/longtail_torch.py) needs to train exactly what a tailor
// session trains: hyperparameters, the loss's logit biases, PRL's settings and the data as raw
// files (uint8 images, int32 labels) in a directory.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Session } from '../../src/longtail/config/session.js';
import { isLazy } from '../../src/longtail/data/source.js';
import type { ImageDataset } from '../../src/longtail/data/types.js';

export function inMemory(ds: Session['data']['train']): ImageDataset {
  if (isLazy(ds)) throw new Error('the epoch benchmarks run the in-memory Fashion-MNIST-LT configs');
  return ds;
}

/** Writes the session's data and spec.json into dir (with `extra` fields merged in); returns the spec's path. */
export function exportExperiment(s: Session, dir: string, extra: Record<string, unknown>): string {
  const train = inMemory(s.data.train);
  const test = inMemory(s.data.val);
  writeFileSync(join(dir, 'train_x.u8'), train.images);
  writeFileSync(join(dir, 'train_y.i32'), train.labels);
  writeFileSync(join(dir, 'test_x.u8'), test.images);
  writeFileSync(join(dir, 'test_y.i32'), test.labels);
  const { config } = s;
  const args = config.optimizer.args as Record<string, number | boolean>;
  const spec = {
    dir,
    shape: train.shape,
    classes: train.classes,
    experts: s.model.experts.length,
    batch: s.data.batchSize,
    lr: args.lr,
    momentum: args.momentum ?? 0,
    weight_decay: args.weight_decay ?? 0,
    nesterov: args.nesterov ?? false,
    biases: s.system.loss.logitBiases,
    mean: 0.286,
    std: 0.353,
    padding: 2,
    prl: config.prl
      ? {
          alpha: config.prl.alpha ?? 1.2,
          draws: config.prl.draws_per_batch ?? 1,
          hidden: config.prl.hidden ?? [128, 128, 128],
        }
      : null,
    ...extra,
  };
  const file = join(dir, 'spec.json');
  writeFileSync(file, JSON.stringify(spec));
  return file;
}
