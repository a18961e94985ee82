// The SADE ImageNet-LT ResNeXt-50 training step the image benchmarks time and count
// (bench/images-train.ts, bench/ops.ts): configs/imagenet_lt_resnext50_sade.json's model and SGD,
// the loss of bench/images_train_torch.py (every expert's cross-entropy, in float32), in one of
// three modes: float32, bf16 autocast, or bf16 autocast with a channels-last model and batches.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { parseConfig, type TrainConfig } from '../../src/longtail/config/config.js';
import { buildModel, buildOptimizer } from '../../src/longtail/config/experiment.js';
import type { MultiExpertModel } from '../../src/longtail/models/multi-expert.js';

export type ImagesMode = 'float32' | 'bf16' | 'bf16-cl';
export const IMAGES_MODES: readonly ImagesMode[] = ['float32', 'bf16', 'bf16-cl'];

export const imagesConfigFile = fileURLToPath(
  new URL('../../../configs/imagenet_lt_resnext50_sade.json', import.meta.url),
);

/** The config with `classes` classes. */
export function imagesConfig(classes: number): TrainConfig {
  const raw = JSON.parse(readFileSync(imagesConfigFile, 'utf8')) as {
    arch: { args: { num_classes: number } };
  };
  raw.arch.args.num_classes = classes;
  return parseConfig(JSON.stringify(raw), imagesConfigFile);
}

/** The config's model on the device, in training mode (parameters drawn from the global seed). */
export function makeImagesModel(
  config: TrainConfig,
  classes: number,
  device: torch.Device,
): MultiExpertModel {
  torch.setDefaultDevice(device);
  try {
    return buildModel(config, 3, classes, imagesConfigFile).train();
  } finally {
    torch.setDefaultDevice('cpu');
  }
}

/** images_train_torch.py's loss: the sum of every expert's cross-entropy, taken in float32. */
export function imagesLoss(model: MultiExpertModel, x: Tensor, y: Tensor) {
  const out = model.forward(x);
  let total: Tensor | null = null;
  for (let e = 0; e < out.logits.shape[0]!; e++) {
    const ce = nn.functional.crossEntropy(out.logits.select(0, e).to('float32'), y);
    total = total ? total.add(ce) : ce;
  }
  return { out, loss: total! };
}

/** A model, its SGD and one fixed host batch (pinned on CUDA): step() trains on it once. */
export interface ImagesStep {
  step(): void;
  dispose(): void;
}

export function imagesStep(o: {
  mode: ImagesMode;
  device: torch.Device;
  batch: number;
  size: number;
  classes: number;
  /** SGD's multi-tensor step (null: as the optimizer picks it for the device). */
  foreach?: boolean | null;
}): ImagesStep {
  const { mode, device, batch, size, classes } = o;
  const cuda = device.type === 'cuda';
  const config = imagesConfig(classes);
  const model = makeImagesModel(config, classes, device);
  const channelsLast = mode === 'bf16-cl';
  if (channelsLast) model.toMemoryFormat('channelsLast');
  const opt = buildOptimizer(config, model.parameters());
  if (opt instanceof torch.optim.SGD && o.foreach !== undefined) opt.foreach = o.foreach;
  const pin = (t: Tensor) => (cuda ? t.pinMemory() : t.clone());
  const [hostX, hostY] = torch.tidy(() => [
    torch.keep(pin(torch.randn([batch, 3, size, size], 'float32', 'cpu'))),
    torch.keep(pin(torch.randint(0, classes, [batch], 'int64', 'cpu'))),
  ]);
  return {
    step: () =>
      torch.tidy(() => {
        let x = hostX.toDevice(device, { nonBlocking: true });
        if (channelsLast) x = x.contiguous('channelsLast');
        const y = hostY.toDevice(device, { nonBlocking: true });
        const l =
          mode === 'float32'
            ? imagesLoss(model, x, y).loss
            : torch.autocast('bf16', device, () => imagesLoss(model, x, y).loss);
        l.backward();
        opt.step();
        opt.zeroGrad();
      }),
    dispose: () => {
      torch.dispose([hostX, hostY]);
      opt.dispose();
      model.dispose();
    },
  };
}
