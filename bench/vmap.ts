// vmap and the vectorized transforms side by side with PyTorch 1.13 (functorch for torch.func),
// one thread, CPU: the Jacobian of tanh(W x) for x in R^N by one backward per output element
// (autograd.functional.jacobian) against one vmapped backward (vectorize: true); and the
// per-example gradients of a small MLP's loss (32-64-10, cross-entropy, --batch examples) by a
// loop of func.grad against vmap(func.grad(loss)) over functionalCall, and those of a small CNN
// (conv 3x3 3->8, ReLU, 2x2 max pool, linear to 10, on 16x16 images) by vmap(func.grad); tailor's
// own batching rules (src/torch/vmap-rules.ts) vectorize them where libtorch 1.13's batched
// tensors would run the examples one by one; and per-example Hessians of a small energy
// (sum tanh(W x)^2, x in R^16) by vmap(hessian). Median seconds of --repeats calls after one warm-up.
//
//   npm run bench -- vmap [--json] [--n 64] [--batch 64] [--repeats 5] [--python /usr/bin/python3]
import './lib/user-errors.js';
import { count } from './lib/options.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as torch from '../src/torch/index.js';
import type { Tensor } from '../src/torch/index.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    n: { type: 'string', default: '64' },
    batch: { type: 'string', default: '64' },
    repeats: { type: 'string', default: '5' },
    python: { type: 'string', default: '/usr/bin/python3' },
  },
});
const n = count('n', args.n);
const batch = count('batch', args.batch);
const repeats = count('repeats', args.repeats);

function median(fn: () => void): number {
  torch.tidy(fn);
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    torch.tidy(fn);
    times.push((performance.now() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

function tailorSide(): Record<string, number> {
  const { nn, func, autograd } = torch;
  torch.setNumThreads(1);
  torch.manualSeed(0);
  const W = torch.keep(torch.randn([n, n]).div(Math.sqrt(n)));
  const x = torch.keep(torch.randn([n]));
  const f = (v: Tensor) => W.matmul(v).tanh();
  const model = new nn.Sequential(new nn.Linear(32, 64), new nn.ReLU(), new nn.Linear(64, 10));
  const params = Object.fromEntries(
    [...model.namedParameters()].map(([k, v]) => [k, torch.keep(v.detach())]),
  );
  const xs = torch.keep(torch.randn([batch, 32]));
  const ys = torch.keep(torch.randint(0, 10, [batch]));
  const loss = (p: Record<string, Tensor>, v: Tensor, t: Tensor) =>
    nn.functional.crossEntropy(func.functionalCall(model, p, [v.unsqueeze(0)]) as Tensor, t.unsqueeze(0));
  const cnn = new nn.Sequential(
    new nn.Conv2d(3, 8, 3, { padding: 1 }),
    new nn.ReLU(),
    new nn.MaxPool2d(2),
    new nn.Flatten(),
    new nn.Linear(8 * 8 * 8, 10),
  );
  const cnnParams = Object.fromEntries(
    [...cnn.namedParameters()].map(([k, v]) => [k, torch.keep(v.detach())]),
  );
  const images = torch.keep(torch.randn([batch, 3, 16, 16]));
  const points = torch.keep(torch.randn([batch, 16]));
  const energy = (v: Tensor) => W.narrow(0, 0, 16).narrow(1, 0, 16).matmul(v).tanh().pow(2).sum();
  const cnnLoss = (p: Record<string, Tensor>, v: Tensor, t: Tensor) =>
    nn.functional.crossEntropy(func.functionalCall(cnn, p, [v.unsqueeze(0)]) as Tensor, t.unsqueeze(0));
  return {
    jacobian_loop_s: median(() => void autograd.functional.jacobian(f, x)),
    jacobian_vectorized_s: median(() => void autograd.functional.jacobian(f, x, { vectorize: true })),
    per_example_loop_s: median(() => {
      const g = func.grad(loss);
      for (let i = 0; i < batch; i++) g(params, xs.select(0, i), ys.select(0, i));
    }),
    per_example_vmap_s: median(() => void torch.vmap(func.grad(loss), [null, 0, 0])(params, xs, ys)),
    per_example_cnn_vmap_s: median(
      () => void torch.vmap(func.grad(cnnLoss), [null, 0, 0])(cnnParams, images, ys),
    ),
    per_example_hessian_vmap_s: median(() => void torch.vmap(func.hessian(energy))(points)),
  };
}

function torchSide(): Record<string, number> | { error: string } {
  const script = fileURLToPath(new URL('../../bench/vmap_torch.py', import.meta.url));
  const r = spawnSync(args.python, [script, String(n), String(batch), String(repeats)], { encoding: 'utf8' });
  if (r.status !== 0)
    return { error: (r.stderr || String(r.error)).trim().split('\n').slice(-2).join(' | ') };
  return JSON.parse(r.stdout) as Record<string, number>;
}

const tailor = tailorSide();
const reference = torchSide();
const ratios =
  'error' in reference
    ? null
    : Object.fromEntries(
        Object.keys(tailor).map((k) => [k, tailor[k]! / (reference as Record<string, number>)[k]!]),
      );
const out = { n, batch, repeats, tailor, torch: reference, tailor_over_torch: ratios };
if (args.json) process.stdout.write(`${JSON.stringify(out)}\n`);
else console.log(JSON.stringify(out, null, 2));
