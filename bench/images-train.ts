// npm run bench -- images-train [--device cuda] [--steps 30] [--batch 128] [--size 224]
//                               [--classes 1000] [--modes float32,bf16,bf16-cl] [--json]
// tailor's side of bench/images_train_torch.py: training images/s of the SADE ImageNet-LT
// ResNeXt-50 32x4d (configs/imagenet_lt_resnext50_sade.json: 3 experts, reduce_dimension, cosine
// heads; its SGD with Nesterov momentum) on synthetic 224 x 224 batches (random pixels do the
// same work as photos), with the loss of the PyTorch script (cross-entropy of every expert's
// logits, in float32), in three modes on the same device:
//
//   float32   the reference
//   bf16      --amp bf16 (libtorch's autocast)
//   bf16-cl   bf16 autocast + channels-last model and batches (--channels-last)
//
// and the check that bf16 + channels-last agrees with float32 from the same weights and input:
// the relative difference of the mean logits and of the first convolution's gradient, and the
// top-1 agreement. Batches come from pinned host memory, copied without blocking, as in the
// PyTorch script, so the figure is the model's speed. Prints one JSON line with --json.
//
//   node dist/bench/images-train.js --device cpu --size 32 --steps 2 --batch 4 --classes 10
//                                   (a smoke run without a GPU)
import './lib/user-errors.js';
import { count, choices } from './lib/options.js';
import { parseArgs } from 'node:util';
import * as torch from '../src/torch/index.js';
import type { Tensor } from '../src/torch/index.js';
import type { MultiExpertModel } from '../src/longtail/models/multi-expert.js';
import type { ResNetImageNet } from '../src/longtail/models/resnet-imagenet.js';
import { startGpuUtil, type GpuUtil } from './lib/gpu-util.js';
import {
  IMAGES_MODES,
  imagesConfig,
  imagesLoss,
  imagesStep,
  makeImagesModel,
  type ImagesMode,
} from './lib/images-step.js';

const { values } = parseArgs({
  options: {
    device: { type: 'string', default: 'cuda' },
    steps: { type: 'string', default: '30' },
    batch: { type: 'string', default: '128' },
    size: { type: 'string', default: '224' },
    classes: { type: 'string', default: '1000' },
    modes: { type: 'string', default: 'float32,bf16,bf16-cl' },
    json: { type: 'boolean', default: false },
  },
});
const steps = count('steps', values.steps);
const batch = count('batch', values.batch);
const size = count('size', values.size);
const classes = count('classes', values.classes);
type Mode = ImagesMode;
const modes = choices('modes', values.modes, IMAGES_MODES);
const device = torch.checkDevice(values.device);
const cuda = device.type === 'cuda';
// as images_train_torch.py (and the trainer on a GPU): cuDNN picks each convolution's algorithm by timing
if (cuda) torch.backends.cudnn.benchmark = true;

const config = imagesConfig(classes);
const makeModel = (): MultiExpertModel => makeImagesModel(config, classes, device);
const loss = imagesLoss;

const sync = () => {
  if (cuda) torch.cuda.synchronize(device);
};

function trainRate(mode: Mode): {
  images_per_s: number;
  seconds: number;
  steps: number;
  gpu_util: GpuUtil | null;
} {
  torch.manualSeed(0);
  const { step, dispose } = imagesStep({ mode, device, batch, size, classes });
  for (let i = 0; i < (cuda ? 5 : 1); i++) step();
  sync();
  const util = cuda ? startGpuUtil(device.index ?? 0) : null;
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) step();
  sync();
  const seconds = (performance.now() - t0) / 1000;
  const gpuUtil = util?.stop() ?? null;
  dispose();
  if (cuda) torch.cuda.emptyCache();
  return { images_per_s: (steps * batch) / seconds, seconds, steps, gpu_util: gpuUtil };
}

const relDiff = (a: Float32Array, b: Float32Array) => {
  let d = 0;
  let n = 0;
  for (let i = 0; i < a.length; i++) {
    d += (a[i]! - b[i]!) ** 2;
    n += b[i]! ** 2;
  }
  return Math.sqrt(d / n);
};

/** bf16 + channels-last against float32 from the same weights and input (images_train_torch.py's agreement). */
function agreement(n: number) {
  torch.manualSeed(1);
  const ref = makeModel();
  const fast = makeModel();
  fast.loadStateDict(ref.stateDict());
  fast.toMemoryFormat('channelsLast');
  const x = torch.keep(torch.randn([n, 3, size, size], 'float32', device));
  const y = torch.keep(torch.randint(0, classes, [n], 'int64', device));
  const run = (m: MultiExpertModel, input: Tensor) =>
    torch.tidy(() => {
      const r = loss(m, input, y);
      r.loss.backward();
      return {
        logits: r.out.output.to('float32').toFloat32Array(),
        grad: (m as ResNetImageNet).conv1.weight.grad!.to('float32').toFloat32Array(),
        top1: torch.keep(r.out.output.argmax(1)),
      };
    });
  const f32 = run(ref, x);
  const bf = torch.autocast('bf16', device, () => torch.tidy(() => run(fast, x.contiguous('channelsLast'))));
  const agree = torch.tidy(() => bf.top1.eq(f32.top1).to('float32').mean().item());
  torch.dispose([x, y, f32.top1, bf.top1]);
  ref.dispose();
  fast.dispose();
  return {
    logits_rel_diff: relDiff(bf.logits, f32.logits),
    conv1_grad_rel_diff: relDiff(bf.grad, f32.grad),
    top1_agreement: agree,
  };
}

const out: Record<string, unknown> = {
  model: `SADE ResNeXt-50 32x4d, 3 experts, ${classes} classes (configs/imagenet_lt_resnext50_sade.json)`,
  batch,
  size,
  device: cuda ? (torch.cudaInfo().devices[device.index ?? 0] ?? device.name) : 'cpu',
};
for (const mode of modes) out[mode] = trainRate(mode);
out.bf16_cl_vs_float32 = agreement(Math.min(16, batch));
if (values.json) console.log(JSON.stringify(out));
else {
  console.log(`${String(out.model)}, batch ${batch} of ${size} x ${size}, on ${String(out.device)}`);
  for (const mode of modes) {
    const r = out[mode] as { images_per_s: number };
    console.log(`  ${mode.padEnd(8)} ${r.images_per_s.toFixed(1)} images/s`);
  }
  console.log(`  bf16 + channels-last vs float32: ${JSON.stringify(out.bf16_cl_vs_float32)}`);
}
