// nn layers and losses against PyTorch 1.13 (test/golden/torch/nn.json, from scripts/golden/nn.py):
// same-seed initialisation, forward outputs, input and parameter gradients, running statistics.
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Data {
  shape: number[];
  data: number[];
  dtype?: string;
}
interface LayerCase {
  kind: 'layer';
  name: string;
  seed: number;
  train: boolean;
  params: Record<string, Data>;
  input: Data;
  output: Data;
  upstream: number[];
  input_grad: number[];
  param_grads: Record<string, number[]>;
  buffers_after: Record<string, number[]>;
}
interface LossCase {
  kind: 'loss';
  name: string;
  extra: { weight?: number[]; label_smoothing?: number };
  input: Data;
  target: Data;
  loss: number;
  input_grad: number[];
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'nn.json'), 'utf8')) as {
  cases: (LayerCase | LossCase)[];
};

const makers: Record<string, () => nn.Module & { forward(x: torch.Tensor): torch.Tensor }> = {
  linear: () => new nn.Linear(7, 5),
  linear_nobias: () => new nn.Linear(7, 5, { bias: false }),
  conv2d: () => new nn.Conv2d(3, 4, 3, { stride: 1, padding: 1 }),
  conv2d_groups_dilation: () => new nn.Conv2d(4, 6, 3, { stride: 2, padding: 2, dilation: 2, groups: 2 }),
  conv1d: () => new nn.Conv1d(2, 4, 9, { padding: 8, dilation: 2 }),
  batchnorm2d_train: () => new nn.BatchNorm2d(3),
  batchnorm1d_train: () => new nn.BatchNorm1d(6),
  batchnorm2d_eval: () => new nn.BatchNorm2d(3),
  groupnorm: () => new nn.GroupNorm(2, 4),
  layernorm: () => new nn.LayerNorm([6]),
  gelu: () => new nn.GELU(),
  relu: () => new nn.ReLU(),
  maxpool2d: () => new nn.MaxPool2d(2),
  avgpool2d: () => new nn.AvgPool2d(2),
  adaptiveavgpool2d: () => new nn.AdaptiveAvgPool2d(1),
  leakyrelu: () => new nn.LeakyReLU(0.2),
  silu: () => new nn.SiLU(),
  elu: () => new nn.ELU(0.7),
  softplus: () => new nn.Softplus(2, 1),
  softmax: () => new nn.Softmax(1),
  logsoftmax: () => new nn.LogSoftmax(-1),
  convtranspose1d: () => new nn.ConvTranspose1d(3, 4, 3, { stride: 2, padding: 1, outputPadding: 1 }),
  convtranspose2d_groups_dilation: () =>
    new nn.ConvTranspose2d(4, 6, 3, { stride: 2, padding: 1, outputPadding: 1, groups: 2, dilation: 2 }),
  convtranspose2d_nobias: () => new nn.ConvTranspose2d(2, 3, 2, { stride: 2, bias: false }),
  upsample_nearest: () => new nn.Upsample({ scaleFactor: [2, 3] }),
  upsample_bilinear: () => new nn.Upsample({ scaleFactor: [1.5, 2], mode: 'bilinear' }),
  upsample_linear_size_aligned: () => new nn.Upsample({ size: [9], mode: 'linear', alignCorners: true }),
  sigmoid: () => new nn.Sigmoid(),
  tanh: () => new nn.Tanh(),
  maxpool1d: () => new nn.MaxPool1d(3, 2, 1),
  avgpool1d: () => new nn.AvgPool1d(2),
  adaptiveavgpool1d: () => new nn.AdaptiveAvgPool1d(1),
};

for (const c of golden.cases) {
  if (c.kind !== 'layer') continue;
  test(`nn golden: ${c.name}`, () => {
    const make = makers[c.name];
    if (!make) throw new Error(`no TypeScript maker for golden case ${c.name}`);
    torch.tidy(() => {
      torch.manualSeed(c.seed);
      const layer = make();
      const state = layer.stateDict();
      // Same seed, same draws: initialisation identical to PyTorch's.
      for (const [name, p] of Object.entries(c.params)) {
        if (name.startsWith('running_')) continue;
        assertClose(state[name]!.toFloat64Array(), p.data, 1e-6, 0, `${c.name} init ${name}`);
      }
      const loaded: Record<string, torch.Tensor> = {};
      for (const [name, p] of Object.entries(c.params))
        loaded[name] = torch.tensor(Float32Array.from(p.data), { shape: p.shape });
      layer.loadStateDict(loaded, false);
      layer.train(c.train);
      const x = torch.tensor(Float32Array.from(c.input.data), { shape: c.input.shape }).requiresGrad_();
      const y = layer.forward(x);
      assertClose(y.toFloat64Array(), c.output.data, 1e-5, 0, `${c.name} output`);
      const w = torch.tensor(Float32Array.from(c.upstream), { shape: y.shape });
      y.mul(w).sum().backward();
      assertClose(x.grad!.toFloat64Array(), c.input_grad, 1e-5, 0, `${c.name} input grad`);
      const named = Object.fromEntries(layer.namedParameters());
      for (const [name, g] of Object.entries(c.param_grads)) {
        assertClose(named[name]!.grad!.toFloat64Array(), g, 1e-4, 1e-5, `${c.name} grad ${name}`);
      }
      const buffers = Object.fromEntries(layer.namedBuffers());
      for (const [name, b] of Object.entries(c.buffers_after)) {
        assertClose(buffers[name]!.toFloat64Array(), b, 1e-5, 0, `${c.name} buffer ${name}`);
      }
      layer.dispose();
    });
  });
}

const F = nn.functional;
const losses: Record<string, (x: torch.Tensor, t: torch.Tensor, c: LossCase) => torch.Tensor> = {
  cross_entropy: (x, t) => F.crossEntropy(x, t),
  cross_entropy_weight: (x, t, c) =>
    F.crossEntropy(x, t, { weight: torch.tensor(c.extra.weight!, { dtype: 'float64' }) }),
  cross_entropy_smoothing: (x, t, c) => F.crossEntropy(x, t, { labelSmoothing: c.extra.label_smoothing! }),
  cross_entropy_soft: (x, t) => F.crossEntropy(x, t),
  mse: (x, t) => F.mseLoss(x, t),
  l1: (x, t) => F.l1Loss(x, t),
  normalize_cosine: (x, t) => F.normalize(x, 2, 1).mul(t).sum(),
};

for (const c of golden.cases) {
  if (c.kind !== 'loss') continue;
  test(`loss golden: ${c.name}`, () => {
    torch.tidy(() => {
      const x = torch.tensor(Float64Array.from(c.input.data), { shape: c.input.shape }).requiresGrad_();
      const t =
        c.target.dtype === 'torch.int64'
          ? torch.tensor(
              BigInt64Array.from(c.target.data, (v) => BigInt(v)),
              { shape: c.target.shape },
            )
          : torch.tensor(Float64Array.from(c.target.data), { shape: c.target.shape });
      const loss = losses[c.name]!(x, t, c);
      assertClose([loss.item()], [c.loss], 1e-10, 0, `${c.name} loss`);
      loss.backward();
      assertClose(x.grad!.toFloat64Array(), c.input_grad, 1e-10, 0, `${c.name} grad`);
    });
  });
}
