// npm run bench -- resnet32 [--json] [--steps N] [--threads T] [--batch B] [--rss-steps N]
// CIFAR ResNet-32 (3x5 basic blocks, 16/32/64 channels, 100 classes) training and inference
// images/s, side by side with the same model in PyTorch (Debian's python3-torch), plus the
// per-op overhead of a tiny add and the RSS over a long training run.
import './lib/user-errors.js';
import { CliError } from '../src/cli/errors.js';
import { count, number } from './lib/options.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import * as torch from '../src/torch/index.js';
import { nn, aten } from '../src/torch/index.js';
import { ResNetCifar } from '../src/longtail/models/resnet-cifar.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    steps: { type: 'string', default: '20' },
    threads: { type: 'string', default: '2' },
    batch: { type: 'string', default: '128' },
    'rss-steps': { type: 'string', default: '0' },
    'rss-batch': { type: 'string', default: '16' },
  },
});
const steps = count('steps', values.steps);
const threads = count('threads', values.threads);
const batch = count('batch', values.batch);
const rssSteps = number('rss-steps', values['rss-steps'], { integer: true, min: 0 });
const rssBatch = count('rss-batch', values['rss-batch']);
const log = (s: string) => {
  if (!values.json) console.log(s);
};

torch.setNumThreads(threads);
torch.manualSeed(0);

function rssMb(): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  const m = /VmRSS:\s+(\d+)/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

function makeTrainer(b: number) {
  const model = new ResNetCifar({
    classes: 100,
    experts: 1,
    inChannels: 3,
    reduceDimension: false,
    normedClassifier: false,
  });
  const params = model.parameters();
  const momentum = params.map(() => null as torch.Tensor | null);
  const x = torch.keep(torch.randn([b, 3, 32, 32]));
  const y = torch.keep(torch.randint(0, 100, [b]));
  const lr = 0.1;
  const wd = 5e-4;
  const mu = 0.9;
  // SGD with Nesterov momentum and weight decay, in PyTorch 1.13's order of operations.
  function step(): void {
    torch.tidy(() => {
      const loss = nn.functional.crossEntropy(model.forward(x).output, y);
      loss.backward();
    });
    torch.noGrad(() =>
      torch.tidy(() => {
        params.forEach((p, i) => {
          const g = p.grad!;
          const d = g.add(p, wd);
          let buf = momentum[i];
          if (!buf) {
            buf = torch.keep(d.clone());
            momentum[i] = buf;
          } else {
            buf.mul_(mu).add_(d);
          }
          const update = d.add(buf, mu);
          aten.add__Tensor(p, update, -lr);
        });
      }),
    );
    model.zeroGrad();
  }
  return { model, x, step };
}

const { model, x, step } = makeTrainer(batch);
model.train();
for (let i = 0; i < 3; i++) step();
let t0 = performance.now();
for (let i = 0; i < steps; i++) step();
const trainImgS = (steps * batch) / ((performance.now() - t0) / 1000);
model.eval();
torch.noGrad(() => {
  for (let i = 0; i < 2; i++) torch.tidy(() => model.forward(x));
  t0 = performance.now();
  for (let i = 0; i < steps; i++) torch.tidy(() => model.forward(x));
});
const inferImgS = (steps * batch) / ((performance.now() - t0) / 1000);

const a = torch.keep(torch.ones([1]));
const b = torch.keep(torch.ones([1]));
const n = 100000;
t0 = performance.now();
for (let i = 0; i < n; i++) aten.add_Tensor(a, b).dispose();
const tinyOpUs = ((performance.now() - t0) / n) * 1000;
const rssAfterSpeed = rssMb();

const rss: number[] = [];
if (rssSteps > 0) {
  const small = makeTrainer(rssBatch);
  small.model.train();
  for (let i = 0; i < rssSteps; i++) {
    small.step();
    if (i % Math.max(1, Math.floor(rssSteps / 20)) === 0 || i === rssSteps - 1) rss.push(rssMb());
  }
}

const script = fileURLToPath(new URL('../../bench/resnet32_torch.py', import.meta.url));
const env = { ...process.env };
delete env.LD_PRELOAD; // the reference runs as users run it: stock Python, glibc malloc
const py = spawnSync('/usr/bin/python3', [script, String(steps), String(threads), String(batch)], {
  encoding: 'utf8',
  env,
});
if (py.status !== 0) throw new CliError(`PyTorch reference failed: ${py.stderr}`);
const ref = JSON.parse(py.stdout.trim().split('\n').pop()!) as {
  train_img_s: number;
  infer_img_s: number;
  tiny_op_us: number;
};
let refRss: number[] = [];
if (rssSteps > 0) {
  const r = spawnSync(
    '/usr/bin/python3',
    [script, String(rssSteps), String(threads), values['rss-batch']!, 'rss'],
    { encoding: 'utf8', env },
  );
  refRss = (JSON.parse(r.stdout.trim().split('\n').pop()!) as { rss_mb: number[] }).rss_mb;
}

const growth = (s: number[]) => (s.length > 2 ? (s[s.length - 1]! - s[1]!) / s[1]! : NaN);
const result = {
  tailor_train_img_s: trainImgS,
  torch_train_img_s: ref.train_img_s,
  tailor_infer_img_s: inferImgS,
  torch_infer_img_s: ref.infer_img_s,
  ratio: trainImgS / ref.train_img_s,
  infer_ratio: inferImgS / ref.infer_img_s,
  tailor_tiny_op_us: tinyOpUs,
  torch_tiny_op_us: ref.tiny_op_us,
  tiny_op_ratio: tinyOpUs / ref.tiny_op_us,
  tailor_rss_mb_after_speed: rssAfterSpeed,
  rss_steps: rssSteps,
  tailor_rss_mb: rss,
  torch_rss_mb: refRss,
  tailor_rss_growth: growth(rss),
  torch_rss_growth: growth(refRss),
  jemalloc: (process.env.LD_PRELOAD ?? '').includes('jemalloc'),
  threads,
  batch,
  steps,
};
if (values.json) console.log(JSON.stringify(result));
else {
  log(`ResNet-32, batch ${batch}, ${threads} threads, ${steps} steps (jemalloc: ${result.jemalloc})`);
  log(
    `train  img/s: tailor ${trainImgS.toFixed(1)}  torch ${ref.train_img_s.toFixed(1)}  ratio ${result.ratio.toFixed(3)}`,
  );
  log(
    `infer  img/s: tailor ${inferImgS.toFixed(1)}  torch ${ref.infer_img_s.toFixed(1)}  ratio ${result.infer_ratio.toFixed(3)}`,
  );
  log(
    `tiny op   us: tailor ${tinyOpUs.toFixed(2)}  torch ${ref.tiny_op_us.toFixed(2)}  ratio ${result.tiny_op_ratio.toFixed(2)}`,
  );
  if (rssSteps > 0) {
    log(
      `RSS over ${rssSteps} steps (MB): tailor ${rss[1]?.toFixed(0)} -> ${rss.at(-1)?.toFixed(0)} (${(100 * result.tailor_rss_growth).toFixed(1)} %), torch ${refRss[1]?.toFixed(0)} -> ${refRss.at(-1)?.toFixed(0)} (${(100 * result.torch_rss_growth).toFixed(1)} %)`,
    );
  }
}
