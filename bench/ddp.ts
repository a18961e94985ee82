// npm run bench -- ddp [--json] [--steps 10] [--batch 128] [--world 2]
// Data-parallel training speed on one machine: the 3-expert ResNet-32 of the Fashion-MNIST-LT
// configs (1x28x28, batch 128, SGD) in one process with W threads against W processes with one
// thread each over Gloo (each rank half the batch; gradients all-reduced in DDP's buckets).
// Prints {single_img_s, ddp_img_s, world_size, ratio, bytes_per_step, allreduce_ms_per_step}.
import './lib/user-errors.js';
import { CliError } from '../src/cli/errors.js';
import { count, choice } from './lib/options.js';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    steps: { type: 'string', default: '10' },
    batch: { type: 'string', default: '128' },
    world: { type: 'string', default: '2' },
    role: { type: 'string', default: 'main' },
  },
});
const steps = count('steps', values.steps);
const batch = count('batch', values.batch);
const world = count('world', values.world);
const role = choice('role', values.role, ['main', 'single', 'rank'] as const);
const self = fileURLToPath(import.meta.url);

async function train(perRankBatch: number, distributed: boolean): Promise<Record<string, number>> {
  const torch = await import('../src/torch/index.js');
  const { ResNetCifar } = await import('../src/longtail/models/resnet-cifar.js');
  const { SGD } = await import('../src/torch/optim/sgd.js');
  torch.manualSeed(0);
  const model = new ResNetCifar({
    classes: 10,
    experts: 3,
    inChannels: 1,
    reduceDimension: true,
    normedClassifier: true,
  });
  model.train();
  const group = distributed ? torch.distributed.ProcessGroup.init({ timeoutMs: 120_000 }) : null;
  const ddp = group ? new torch.distributed.DistributedDataParallel(model, group) : null;
  const opt = new SGD(model.parameters(), { lr: 0.1, momentum: 0.9, weightDecay: 5e-4 });
  const x = torch.keep(torch.randn([perRankBatch, 1, 28, 28]));
  const y = torch.keep(torch.randint(0, 10, [perRankBatch]));
  let syncMs = 0;
  const step = () => {
    ddp?.syncBuffers();
    torch.tidy(() => torch.nn.functional.crossEntropy(model.forward(x).output, y).backward());
    const t = performance.now();
    ddp?.syncGradients();
    syncMs += performance.now() - t;
    opt.step();
    opt.zeroGrad();
  };
  for (let i = 0; i < 2; i++) step();
  group?.barrier();
  syncMs = 0;
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) step();
  group?.barrier();
  const seconds = (performance.now() - t0) / 1000;
  const out = {
    img_s: (steps * perRankBatch * (group?.worldSize ?? 1)) / seconds,
    bytes_per_step: ddp?.bytesPerStep ?? 0,
    allreduce_ms_per_step: syncMs / steps,
    buckets: ddp?.buckets.length ?? 0,
  };
  group?.destroy();
  return out;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

if (role === 'single' || role === 'rank') {
  const r = await train(role === 'single' ? batch : batch / world, role === 'rank');
  if (role === 'single' || process.env.RANK === '0') console.log(JSON.stringify(r));
} else {
  if (!Number.isInteger(batch / world))
    throw new CliError(`--batch ${batch} must divide by --world ${world}`);
  const args = [self, '--steps', String(steps), '--batch', String(batch), '--world', String(world)];
  const single = spawnSync(process.execPath, [...args, '--role', 'single'], {
    encoding: 'utf8',
    env: { ...process.env, TAILOR_THREADS: String(world) },
  });
  if (single.status !== 0) throw new CliError(`single-process run failed: ${single.stderr}`);
  const s = JSON.parse(single.stdout.trim().split('\n').pop()!) as Record<string, number>;
  const port = await freePort();
  const ranks = Array.from({ length: world }, (_, rank) => {
    const child = spawn(process.execPath, [...args, '--role', 'rank'], {
      env: {
        ...process.env,
        RANK: String(rank),
        LOCAL_RANK: String(rank),
        WORLD_SIZE: String(world),
        MASTER_ADDR: '127.0.0.1',
        MASTER_PORT: String(port),
        TAILOR_THREADS: '1',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    return new Promise<string>((resolve, reject) =>
      child.on('exit', (code) =>
        code === 0 ? resolve(stdout) : reject(new Error(`rank ${rank} exited ${code}`)),
      ),
    );
  });
  const outputs = await Promise.all(ranks);
  const d = JSON.parse(outputs[0]!.trim().split('\n').pop()!) as Record<string, number>;
  const result = {
    single_img_s: s.img_s,
    ddp_img_s: d.img_s,
    world_size: world,
    ratio: d.img_s! / s.img_s!,
    bytes_per_step: d.bytes_per_step,
    allreduce_ms_per_step: d.allreduce_ms_per_step,
    buckets: d.buckets,
    batch,
    steps,
  };
  if (values.json) console.log(JSON.stringify(result));
  else
    console.log(
      `3-expert ResNet-32, batch ${batch}: 1 process x ${world} threads ${s.img_s!.toFixed(1)} img/s, ` +
        `${world} processes x 1 thread ${d.img_s!.toFixed(1)} img/s (ratio ${result.ratio.toFixed(2)}); ` +
        `${(d.bytes_per_step! / 1e6).toFixed(2)} MB all-reduced per step in ${d.buckets} buckets, ` +
        `${d.allreduce_ms_per_step!.toFixed(1)} ms per step`,
    );
}
