// npm run bench -- gpu [--device cuda] [--steps 30] [--batch 128] [--amp bf16] [--torch] [--json]
// The device checks of scripts/gpu-check.sh, one JSON line:
//  - golden: the 3-expert ResNet-32 (Fashion-MNIST-LT layout) forward and backward on the device
//    against the CPU from the same weights and input; a checkpoint written on the CPU loaded on
//    the device and back; the device's generator state restored from a checkpoint; the same
//    backward with JavaScript inside the engine (a full backward hook on a conv layer whose input
//    also feeds a residual connection, a custom autograd.Function on the logits), whose calls come
//    from the CUDA engine's device threads;
//  - train images/s of that model (SGD, batch 128, 1x28x28 images; the pixel values do not change
//    the work, so they are random), optionally under autocast, side by side with the same model
//    in PyTorch on the same device (bench/gpu_torch.py, with --torch);
//  - NMR U-Net denoising spectra/s at 32k points (no-grad float32), against the 100/s target.
import './lib/user-errors.js';
import { count } from './lib/options.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as torch from '../src/torch/index.js';
import { nn } from '../src/torch/index.js';
import { SGD } from '../src/torch/optim/sgd.js';
import { saveCheckpoint, loadCheckpoint, restoreTorchRng } from '../src/torch/checkpoint.js';
import { ResNetCifar } from '../src/longtail/models/resnet-cifar.js';
import { UNet1d } from '../src/nmr/model/unet.js';

const { values } = parseArgs({
  options: {
    device: { type: 'string', default: 'cuda' },
    steps: { type: 'string', default: '30' },
    batch: { type: 'string', default: '128' },
    amp: { type: 'string' },
    torch: { type: 'boolean', default: false },
    python: { type: 'string', default: 'python3' },
    'nmr-batch': { type: 'string', default: '8' },
    json: { type: 'boolean', default: false },
  },
});
const steps = count('steps', values.steps);
const batch = count('batch', values.batch);
const nmrBatch = count('nmr-batch', values['nmr-batch']);
const device = torch.checkDevice(values.device);
const amp = values.amp ? torch.checkAmp(values.amp, device) : null;

const makeModel = () =>
  new ResNetCifar({ classes: 10, experts: 3, inChannels: 1, reduceDimension: true, normedClassifier: true });

const maxDiff = (a: Float32Array, b: Float32Array) => {
  let d = 0;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    d = Math.max(d, Math.abs(a[i]! - b[i]!));
    m = Math.max(m, Math.abs(b[i]!));
  }
  return d / Math.max(m, 1e-12);
};

// ---- golden: device against CPU ----
function golden(): Record<string, number | boolean> {
  torch.manualSeed(1);
  const cpuModel = makeModel();
  const devModel = makeModel().to(device);
  devModel.loadStateDict(cpuModel.stateDict());
  const x = torch.keep(torch.randn([16, 1, 28, 28], 'float32', 'cpu'));
  const y = torch.keep(torch.randint(0, 10, [16], 'int64', 'cpu'));
  const run = (m: ResNetCifar, dev: torch.DeviceLike) =>
    torch.tidy(() => {
      m.train();
      m.zeroGrad();
      const out = m.forward(x.toDevice(dev)).output;
      nn.functional.crossEntropy(out, y.toDevice(dev)).backward();
      return {
        logits: out.toFloat32Array(),
        grads: Float32Array.from(m.parameters().flatMap((p) => [...p.grad!.toFloat32Array()])),
      };
    });
  const a = run(cpuModel, 'cpu');
  const b = run(devModel, device);
  const result: Record<string, number | boolean> = {
    logits_rel_diff: maxDiff(b.logits, a.logits),
    grads_rel_diff: maxDiff(b.grads, a.grads),
  };
  // A CPU checkpoint resumes on the device and back.
  const dir = mkdtempSync(join(tmpdir(), 'tailor-gpu-'));
  try {
    saveCheckpoint(join(dir, 'cpu'), { weights: cpuModel.stateDict() });
    const onDevice = loadCheckpoint(join(dir, 'cpu'), { mapLocation: device });
    result.checkpoint_on_device = Object.values(onDevice.weights).every((t) => t.device.type === 'cuda');
    saveCheckpoint(join(dir, 'dev'), { weights: onDevice.weights });
    const back = loadCheckpoint(join(dir, 'dev'), { mapLocation: 'cpu' });
    const k = Object.keys(back.weights)[0]!;
    result.checkpoint_round_trip =
      maxDiff(back.weights[k]!.toFloat32Array(), cpuModel.stateDict()[k]!.toFloat32Array()) === 0;
    torch.dispose([onDevice.weights, back.weights]);
    // The device generator's state in a checkpoint resumes the same stream.
    torch.manualSeed(7);
    saveCheckpoint(join(dir, 'rng'), { weights: {} });
    const first = torch.tidy(() => torch.rand([5], 'float32', device).toFloat32Array());
    restoreTorchRng(loadCheckpoint(join(dir, 'rng')));
    const again = torch.tidy(() => torch.rand([5], 'float32', device).toFloat32Array());
    result.cuda_rng_resume_exact = maxDiff(again, first) === 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  result.js_autograd_grads_rel_diff = jsAutogradDiff(cpuModel, devModel, x, y);
  torch.dispose([x, y]);
  cpuModel.dispose();
  devModel.dispose();
  torch.cuda.emptyCache();
  return result;
}

/** Halves the logits with a JavaScript backward (autograd.Function). */
class HalfLogits extends torch.autograd.Function {
  static forward(_ctx: torch.autograd.FunctionCtx, t: torch.Tensor): torch.Tensor {
    return t.mul(0.5);
  }
  static backward(_ctx: torch.autograd.FunctionCtx, grad: torch.Tensor | null): torch.Tensor {
    return grad!.mul(0.5);
  }
}

/** The golden backward again with JavaScript hooks and a custom Function: device against CPU. */
function jsAutogradDiff(
  cpuModel: ResNetCifar,
  devModel: ResNetCifar,
  x: torch.Tensor,
  y: torch.Tensor,
): number {
  const hooks = [cpuModel, devModel].map((m) =>
    m.getSubmodule('layer1.1.conv1').registerFullBackwardHook((_m, gin) => gin.map((g) => g && g.mul(2))),
  );
  const run = (m: ResNetCifar, dev: torch.DeviceLike) =>
    torch.tidy(() => {
      m.zeroGrad();
      const out = HalfLogits.apply(m.forward(x.toDevice(dev)).output);
      nn.functional.crossEntropy(out, y.toDevice(dev)).backward();
      return Float32Array.from(m.parameters().flatMap((p) => [...p.grad!.toFloat32Array()]));
    });
  const diff = maxDiff(run(devModel, device), run(cpuModel, 'cpu'));
  for (const h of hooks) h.remove();
  return diff;
}

// ---- training throughput ----
function trainImgS(): number {
  torch.manualSeed(0);
  torch.setDefaultDevice(device);
  const model = makeModel().train();
  const opt = new SGD(model.parameters(), { lr: 0.1, momentum: 0.9, weightDecay: 5e-4 });
  const scaler = amp === 'fp16' ? new torch.GradScaler() : null;
  // Host batches in pinned memory, copied without blocking, as a data loader would.
  const pin = (t: torch.Tensor) => (device.type === 'cpu' ? t.clone() : t.pinMemory());
  const [hostX, hostY] = torch.tidy(() => [
    torch.keep(pin(torch.randn([batch, 1, 28, 28], 'float32', 'cpu'))),
    torch.keep(pin(torch.randint(0, 10, [batch], 'int64', 'cpu'))),
  ]);
  const step = () =>
    torch.tidy(() => {
      const x = hostX.toDevice(device, { nonBlocking: true });
      const y = hostY.toDevice(device, { nonBlocking: true });
      const loss = amp
        ? torch.autocast(amp, device, () => nn.functional.crossEntropy(model.forward(x).output, y))
        : nn.functional.crossEntropy(model.forward(x).output, y);
      if (scaler) {
        scaler.scaleLoss(loss).backward();
        scaler.step(opt);
      } else {
        loss.backward();
        opt.step();
      }
      opt.zeroGrad();
    });
  for (let i = 0; i < 5; i++) step();
  torch.cuda.synchronize(device);
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) step();
  torch.cuda.synchronize(device);
  const imgS = (steps * batch) / ((performance.now() - t0) / 1000);
  torch.setDefaultDevice('cpu');
  torch.dispose([hostX, hostY]);
  opt.dispose();
  model.dispose();
  return imgS;
}

// ---- NMR denoising throughput at 32k points ----
function nmrSpectraS(): number {
  torch.setDefaultDevice(device);
  const model = new UNet1d({ channels: [64, 128, 256, 256], kernel: 9, dilations: [1, 2, 4, 8] }).eval();
  const nb = nmrBatch;
  const x = torch.keep(torch.randn([nb, 1, 32768]));
  const run = () => torch.noGrad(() => torch.tidy(() => void model.forward(x).toFloat32Array()));
  run();
  const reps = 5;
  const t0 = performance.now();
  for (let r = 0; r < reps; r++) run();
  const s = (reps * nb) / ((performance.now() - t0) / 1000);
  torch.setDefaultDevice('cpu');
  x.dispose();
  model.dispose();
  return s;
}

const result: Record<string, unknown> = { device, devices: torch.cudaInfo().devices, amp, batch, steps };
result.golden = golden();
result.tailor_train_img_s = trainImgS();
if (values.torch) {
  const script = fileURLToPath(new URL('../../bench/gpu_torch.py', import.meta.url));
  const py = spawnSync(values.python, [script, device.name, String(steps), String(batch), amp ?? 'none'], {
    encoding: 'utf8',
  });
  if (py.status !== 0) {
    result.torch_error = (py.stderr || String(py.error)).trim().split('\n').slice(-3).join(' | ');
  } else {
    const ref = JSON.parse(py.stdout.trim().split('\n').pop()!) as { train_img_s: number; torch: string };
    result.torch_train_img_s = ref.train_img_s;
    result.torch_version = ref.torch;
    result.ratio = (result.tailor_train_img_s as number) / ref.train_img_s;
  }
}
result.nmr_spectra_s_32k = nmrSpectraS();
result.nmr_target_met = (result.nmr_spectra_s_32k as number) >= 100;
console.log(values.json ? JSON.stringify(result) : JSON.stringify(result, null, 2));
