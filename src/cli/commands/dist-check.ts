// tailor dist-check: joins a data-parallel job (started by `tailor launch` or torchrun) and checks
// the wiring before a long training run: every rank answers, a broadcast and an allreduce give the
// right values, and the allreduce of a DDP-sized bucket takes this long (rank 0 prints one JSON line).
import { CliError } from '../errors.js';
import { defineCommand } from '../command.js';
import { numberOr } from '../args.js';
import { useDevice } from '../runtime.js';

const HELP = `usage: tailor launch --nproc-per-node N -- dist-check [--size-mb MB] [--iters K]
                     [--backend gloo|nccl] [--device cpu|cuda]

Joins the job from the torchrun variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), checks a
broadcast and an allreduce, then times K allreduces of MB megabytes (default 25, DDP's bucket).
--device cuda puts the tensors on cuda:LOCAL_RANK. Rank 0 prints
{"world_size", "backend", "device", "ok", "allreduce_ms", "allreduce_mb_s"}.`;

export const run = defineCommand({
  help: HELP,
  options: {
    'size-mb': { type: 'string' },
    iters: { type: 'string' },
    backend: { type: 'string', default: 'gloo' },
    device: { type: 'string', default: 'cpu' },
  },
  run: async ({ values }) => {
    const sizeMb = numberOr('--size-mb', values['size-mb'], 25, { positive: true, max: 4096 });
    const iters = numberOr('--iters', values.iters, 5, { integer: true, min: 1, max: 1000 });
    if (values.backend !== 'gloo' && values.backend !== 'nccl')
      throw new CliError(`dist-check: --backend must be gloo or nccl, got ${values.backend}`);
    const torch = await import('../../torch/index.js');
    const { ProcessGroup, readDistEnv } = torch.distributed;
    const env = readDistEnv();
    const device = useDevice(values.device);
    const group = ProcessGroup.init({ backend: values.backend, env });
    const result = torch.tidy(() => {
      const b = torch.full([4], env.rank === 0 ? 3 : -1, 'float32', device);
      group.broadcast(b, 0);
      const s = torch.full([4], env.rank + 1, 'float32', device);
      group.allreduce(s);
      const expectedSum = (env.worldSize * (env.worldSize + 1)) / 2;
      const ok =
        b.toFloat32Array().every((v) => v === 3) && s.toFloat32Array().every((v) => v === expectedSum);
      const big = torch.ones([Math.round((sizeMb * 1024 * 1024) / 4)], 'float32', device);
      group.allreduce(big); // warm-up (connections, buffers)
      group.barrier();
      torch.cuda.synchronize(device);
      const start = performance.now();
      for (let i = 0; i < iters; i++) group.allreduce(big);
      torch.cuda.synchronize(device);
      const ms = (performance.now() - start) / iters;
      return { ok, ms };
    });
    group.barrier();
    if (env.rank === 0) {
      console.log(
        JSON.stringify({
          world_size: env.worldSize,
          backend: values.backend,
          device: values.device,
          ok: result.ok,
          size_mb: sizeMb,
          allreduce_ms: Number(result.ms.toFixed(2)),
          allreduce_mb_s: Number(((sizeMb / result.ms) * 1000).toFixed(1)),
        }),
      );
    }
    group.destroy();
    return result.ok ? 0 : 1;
  },
});
