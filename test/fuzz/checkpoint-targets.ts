// The checkpoint targets of the fuzz campaign: one small checkpoint as the trainers write it (a
// linear layer's weights, SGD momentum state, libtorch's generator and a tailor Rng state), whose
// sidecar, weights files or generator state get mutated; loading must succeed or name the fault.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { json, type Files } from './seeds.js';
import type { FuzzTarget } from './targets.js';

export function checkpointTargets(): FuzzTarget[] {
  // One small checkpoint: a linear layer's weights, SGD momentum state, the libtorch generator
  // and a tailor Rng state, as the trainers write them.
  const make = async (): Promise<Files> => {
    const torch = await import('../../src/torch/index.js');
    const { mkdtempSync, readdirSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { Rng } = await import('../../src/util/rng.js');
    const dir = mkdtempSync(join(tmpdir(), 'tailor-fuzz-ck-'));
    try {
      torch.manualSeed(1);
      const layer = new torch.nn.Linear(3, 2);
      const opt = new torch.optim.SGD(layer.parameters(), { lr: 0.1, momentum: 0.9 });
      torch.tidy(() =>
        layer
          .forward(torch.ones([4, 3]))
          .sum()
          .backward(),
      );
      opt.step();
      torch.saveCheckpoint(join(dir, 'checkpoint-last'), {
        weights: layer.stateDict(),
        optimizer: opt.stateDict(),
        epoch: 3,
        step: 12,
        rng: { data: new Rng(5).state() },
        extra: { history: [{ epoch: 1 }], best: { epoch: 1, top1: 0.5 } },
      });
      const files: Files = {};
      for (const f of readdirSync(dir)) files[f] = new Uint8Array(readFileSync(join(dir, f)));
      return files;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const load = async (dir: string): Promise<void> => {
    const torch = await import('../../src/torch/index.js');
    const { Rng } = await import('../../src/util/rng.js');
    const ck = torch.loadCheckpoint(join(dir, 'checkpoint-last'));
    try {
      torch.restoreTorchRng(ck);
      torch.tidy(() =>
        torch
          .randn([8])
          .add(torch.rand([8]))
          .sum()
          .item(),
      );
      for (const state of Object.values(ck.rng ?? {})) new Rng(state).normal();
    } finally {
      torch.dispose([ck.weights, ck.optimizer?.state]);
    }
  };
  return [
    {
      name: 'checkpoint sidecar',
      native: true,
      kind: 'json',
      seeds: async () => [await make()],
      mutable: ['checkpoint-last.json'],
      run: load,
    },
    {
      name: 'checkpoint weights',
      native: true,
      kind: 'binary',
      seeds: async () => [await make()],
      mutable: ['checkpoint-last.safetensors', 'checkpoint-last.optim.safetensors'],
      run: load,
    },
    {
      name: 'checkpoint rng state',
      native: true,
      kind: 'binary',
      // The mutated bytes are libtorch's generator state, stored base64 in the sidecar.
      seeds: async () => {
        const files = await make();
        const sidecar = JSON.parse(Buffer.from(files['checkpoint-last.json']!).toString('utf8')) as {
          torchRngState: string;
        };
        return [{ ...files, 'rng.bin': new Uint8Array(Buffer.from(sidecar.torchRngState, 'base64')) }];
      },
      mutable: ['rng.bin'],
      run: load,
    },
  ];
}

/** Files of an input after the mutated file changed (the RNG target rewrites the sidecar). */
export function assemble(target: FuzzTarget, seed: Files, file: string, written: Uint8Array): Files {
  const files: Files = { ...seed, [file]: written };
  if (file === 'rng.bin') {
    const sidecar = JSON.parse(Buffer.from(seed['checkpoint-last.json']!).toString('utf8')) as Record<
      string,
      unknown
    >;
    sidecar.torchRngState = Buffer.from(written).toString('base64');
    files['checkpoint-last.json'] = json(sidecar);
    delete files['rng.bin'];
  }
  void target;
  return files;
}
