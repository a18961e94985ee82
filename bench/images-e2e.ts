// ImageNet-LT-style training end to end, tailor against PyTorch: the SADE ResNeXt-50 config
// (configs/imagenet_lt_resnext50_sade.json) trained by `tailor train` from a JPEG image list
// (its image-list pipeline with num_workers worker threads), against the same model, loss,
// transforms and SGD in plain PyTorch with a DataLoader of as many worker processes
// (bench/images_e2e_torch.py), in float32 and in bf16 autocast + channels-last. The figure is the
// images per second of the last epoch (the first one includes cuDNN's autotuning and the workers'
// start), and the GPU's utilisation over it.
//
//   npm run bench -- images-e2e [--device cuda] [--workers 8] [--batch 64] [--images 6000]
//                               [--epochs 2] [--modes float32,bf16-cl] [--python python3] [--json]
//   node dist/bench/images-e2e.js --device cpu --workers 1 --batch 4 --images 16 --epochs 1 \
//     --modes float32 --size 32 --classes 20         (a smoke run of both sides without a GPU)
//
// tailor's epoch time comes from its metrics.jsonl (the epoch's `seconds`, which also counts the
// small validation pass over one image per class); the utilisation is sampled over the whole
// `tailor train` process, so it also counts its start and first epoch.
import './lib/user-errors.js';
import { CliError } from '../src/cli/errors.js';
import { count, choices } from './lib/options.js';
import { parseDevice } from '../src/torch/device.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { synthImageSet } from './lib/images-data.js';
import { startGpuUtil, type GpuUtil } from './lib/gpu-util.js';

const { values } = parseArgs({
  options: {
    device: { type: 'string', default: 'cuda' },
    workers: { type: 'string', default: '8' },
    batch: { type: 'string', default: '64' },
    images: { type: 'string', default: '6000' },
    epochs: { type: 'string', default: '2' },
    modes: { type: 'string', default: 'float32,bf16-cl' },
    size: { type: 'string', default: '224' },
    classes: { type: 'string', default: '1000' },
    python: { type: 'string', default: 'python3' },
    json: { type: 'boolean', default: false },
  },
});

type Mode = 'float32' | 'bf16-cl';
const modes = choices('modes', values.modes, ['float32', 'bf16-cl'] as const);
const workers = count('workers', values.workers);
const batch = count('batch', values.batch);
const images = count('images', values.images);
const epochs = count('epochs', values.epochs);
const size = count('size', values.size);
const classes = count('classes', values.classes);
const device = parseDevice(values.device).name;
const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '..', '..');
const cuda = device.startsWith('cuda');

interface Side {
  images_per_s: number;
  epoch_seconds: number[];
  images: number;
  gpu_util: GpuUtil | null;
}

/** `tailor train` on the set with the config's model, these workers and batch, `epochs` epochs. */
function tailorSide(root: string, mode: Mode): Side {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-images-e2e-'));
  try {
    const config = JSON.parse(readFileSync(join(repo, 'configs', 'imagenet_lt_resnext50_sade.json'), 'utf8'));
    config.arch.args.num_classes = classes;
    Object.assign(config.data_loader.args, {
      data_dir: root,
      num_workers: workers,
      batch_size: batch,
      image_size: size,
      resize_size: Math.round((size * 256) / 224),
    });
    config.trainer.epochs = epochs;
    config.trainer.save_period = 1000;
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify(config));
    const args = [
      join(repo, 'dist', 'src', 'cli', 'main.js'),
      'train',
      '-c',
      file,
      '--out',
      join(dir, 'run'),
    ];
    args.push('--device', device);
    if (mode === 'bf16-cl') args.push('--amp', 'bf16', '--channels-last');
    const util = cuda ? startGpuUtil() : null;
    const run = spawnSync(process.execPath, args, { encoding: 'utf8' });
    const gpuUtil = util?.stop() ?? null;
    if (run.status !== 0) throw new CliError(`tailor train failed:\n${(run.stderr ?? '').slice(-2000)}`);
    const metrics = readFileSync(join(dir, 'run', 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { seconds: number });
    const list = readFileSync(join(root, 'ImageNet_LT_train.txt'), 'utf8').split('\n').filter(Boolean);
    const seconds = metrics.map((e) => e.seconds);
    return {
      images_per_s: list.length / seconds.at(-1)!,
      epoch_seconds: seconds,
      images: list.length,
      gpu_util: gpuUtil,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** bench/images_e2e_torch.py on the same set. */
function torchSide(root: string, list: string, mode: Mode): Side {
  const script = join(repo, 'bench', 'images_e2e_torch.py');
  const args = [
    script,
    root,
    list,
    '--workers',
    values.workers,
    '--batch',
    values.batch,
    '--epochs',
    String(epochs),
  ];
  args.push('--mode', mode, '--device', device, '--size', String(size), '--classes', String(classes));
  const run = spawnSync(values.python, args, { encoding: 'utf8' });
  const line = (run.stdout ?? '').trim().split('\n').pop() ?? '';
  try {
    const out = JSON.parse(line) as Side & { error?: string };
    if (out.error) throw new CliError(out.error);
    return out;
  } catch (error) {
    const why = run.error
      ? `cannot run --python '${values.python}' (${run.error.message}); give a Python with torch`
      : (error as Error).message;
    throw new CliError(`the PyTorch side failed: ${why}\n${(run.stderr ?? '').slice(-2000)}`);
  }
}

const { root, list } = await synthImageSet({
  images,
  valPerClass: 1,
  log: values.json ? undefined : console.log,
});
const rows = modes.map((mode) => {
  const tailor = tailorSide(root, mode);
  const torch = torchSide(root, list, mode);
  return { mode, tailor, torch, ratio: tailor.images_per_s / torch.images_per_s };
});
const report = {
  bench: 'images-e2e',
  model: 'SADE ResNeXt-50 32x4d, 3 experts (configs/imagenet_lt_resnext50_sade.json)',
  device,
  workers,
  batch,
  size,
  rows,
};
if (values.json) console.log(JSON.stringify(report));
else
  for (const r of rows)
    console.log(
      `${r.mode}: tailor ${r.tailor.images_per_s.toFixed(0)} images/s, PyTorch ${r.torch.images_per_s.toFixed(0)} (${r.ratio.toFixed(2)}x); ` +
        `GPU ${r.tailor.gpu_util?.mean_percent.toFixed(0) ?? '-'} % / ${r.torch.gpu_util?.mean_percent.toFixed(0) ?? '-'} %`,
    );
