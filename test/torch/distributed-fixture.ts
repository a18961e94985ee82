// One rank of the two-process c10d tests (test/torch/distributed.test.ts starts two of these with
// the torchrun variables set). Prints one JSON line of results; a RankFailureError exits 3.
import * as torch from '../../src/torch/index.js';
import { BatchNorm1d, Linear } from '../../src/torch/nn/layers.js';
import { ReLU, Sequential } from '../../src/torch/nn/activation.js';
import { crossEntropy } from '../../src/torch/nn/functional.js';
import { SGD } from '../../src/torch/optim/sgd.js';

const { ProcessGroup, DistributedDataParallel, DistributedSampler, RankFailureError } = torch.distributed;

/** A small net without BatchNorm, initialised from `seed`. */
export function makeModel(seed: number): Sequential {
  torch.manualSeed(seed);
  return new Sequential(new Linear(6, 16), new ReLU(), new Linear(16, 4));
}

/** A fixed batch of 8 samples. */
export function makeBatch(): { x: torch.Tensor; y: torch.Tensor } {
  const xs = Float32Array.from({ length: 8 * 6 }, (_, i) => Math.sin(i * 0.37) + 0.1 * (i % 5));
  const ys = BigInt64Array.from({ length: 8 }, (_, i) => BigInt((i * 3) % 4));
  return { x: torch.tensor(xs, { shape: [8, 6] }), y: torch.tensor(ys) };
}

export function sgdStep(
  model: Sequential,
  x: torch.Tensor,
  y: torch.Tensor,
  ddp?: { syncGradients(): void },
): number[] {
  const opt = new SGD(model.parameters(), { lr: 0.5, momentum: 0.9 });
  torch.tidy(() => {
    crossEntropy(model.forward(x), y).backward();
  });
  ddp?.syncGradients();
  opt.step();
  opt.dispose();
  return model.parameters().flatMap((p) => [...p.toFloat32Array()]);
}

function main(): void {
  const mode = process.argv[2];
  const rank = Number(process.env.RANK);
  const group = ProcessGroup.init({ timeoutMs: Number(process.env.FIXTURE_TIMEOUT_MS ?? 20000) });
  const out: Record<string, unknown> = { rank, world: group.worldSize };
  try {
    if (mode === 'collectives') {
      torch.tidy(() => {
        const b = torch.tensor([rank === 0 ? 42 : -1, rank === 0 ? 7 : -1]);
        group.broadcast(b, 0);
        out.broadcast = [...b.toFloat32Array()];
        const s = torch.tensor([rank + 1, 10 * (rank + 1)], { dtype: 'float64' });
        group.allreduce(s);
        out.allreduce = [...s.toFloat64Array()];
        const m = torch.tensor([rank]);
        group.allreduce(m, 'max');
        out.max = m.item();
        const gathered = [torch.zeros([1]), torch.zeros([1])];
        group.allgather(torch.tensor([rank * 5]), gathered);
        out.allgather = gathered.map((t) => t.item());
        group.barrier();
        out.barrier = true;
      });
      // Buffers (running statistics) follow rank 0's before each forward, as DDP's broadcast_buffers.
      const bn = new BatchNorm1d(3);
      torch.noGrad(() => {
        for (const b of bn.buffers()) b.fill_(rank === 0 ? 5 : -2);
      });
      const ddp = new DistributedDataParallel(bn, group);
      torch.noGrad(() => bn.buffers()[0]!.fill_(rank === 0 ? 6 : -3));
      ddp.syncBuffers();
      out.buffers = bn.buffers().map((b) => [...b.toFloat64Array()]);
    } else if (mode === 'ddp') {
      // Different initial weights per rank: the wrapper must broadcast rank 0's.
      const model = makeModel(rank === 0 ? 1 : 99);
      const ddp = new DistributedDataParallel(model, group);
      const { x, y } = makeBatch();
      const shard = new DistributedSampler(
        { length: 8, indices: () => Int32Array.from({ length: 8 }, (_, i) => i) },
        { rank, worldSize: 2 },
      ).indices(0);
      const idx = torch.tensor(BigInt64Array.from(shard, (i) => BigInt(i)));
      const xs = x.indexSelect(0, idx);
      const ys = y.indexSelect(0, idx);
      out.params = sgdStep(model, xs, ys, ddp);
      out.buckets = ddp.buckets.length;
    } else if (mode === 'die') {
      group.barrier();
      console.log(JSON.stringify({ rank, ready: true }));
      if (rank === 1) {
        // Stay alive without taking part (the test kills this process, or leaves it silent).
        setInterval(() => {}, 1000);
        return;
      }
      group.barrier();
      out.unexpected = 'the barrier completed';
    }
  } catch (error) {
    if (error instanceof RankFailureError) {
      console.error(`tailor: ${error.message}`);
      process.exit(3);
    }
    throw error;
  }
  console.log(JSON.stringify(out));
  group.destroy();
}

if (process.argv[1]?.endsWith('distributed-fixture.js')) main();
