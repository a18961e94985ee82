// The trainer's benchmark hooks: maxBatches stops the epoch (and shortens the evaluation) and the
// phase clock sees every step; without them the epoch runs every batch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { parseConfig } from '../../src/longtail/config/config.js';
import { buildSession, trainingSetup } from '../../src/longtail/config/session.js';
import { sessionTrainOptions } from '../../src/longtail/workflows/train.js';
import { trainSystem } from '../../src/longtail/train/trainer.js';
import { PHASES, PhaseClock, type Phase } from '../../src/longtail/train/phases.js';
import { repoRoot } from '../helpers.js';

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');

class CountingClock extends PhaseClock {
  steps = 0;
  evals = 0;
  override lap(phase: Phase): void {
    if (phase === 'optimizer') this.steps++;
    if (phase === 'eval') this.evals++;
    super.lap(phase);
  }
}

async function epoch(maxBatches?: number) {
  const file = join(repoRoot, 'configs', 'fmnist_lt_ir100_sade.json');
  const c = parseConfig(readFileSync(file, 'utf8'), file);
  c.data_loader.args = { ...c.data_loader.args, batch_size: 16 };
  torch.manualSeed(0);
  const s = buildSession(c, file, { trainMaxPerClass: 12, testPerClass: 4 });
  const setup = trainingSetup(s);
  const { optimizer } = setup;
  const clock = new CountingClock();
  const dir = mkdtempSync(join(tmpdir(), 'tailor-phases-'));
  try {
    const result = await trainSystem({
      ...sessionTrainOptions(s, setup),
      epochs: 1,
      seed: 0,
      runDir: dir,
      checkpointExtra: {},
      quiet: true,
      log: () => {},
      phases: clock,
      ...(maxBatches ? { maxBatches } : {}),
    });
    return { clock, n: s.data.train.labels.length, val: result.history[0]!.val };
  } finally {
    for (const m of Object.values(s.system.modules)) m.dispose();
    optimizer.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

test(
  'maxBatches stops the epoch after N steps; the phase clock times every phase',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  async () => {
    const short = await epoch(2);
    assert.equal(short.clock.steps, 2);
    assert.equal(short.clock.evals, 1);
    assert.ok(short.val !== null);
    for (const k of PHASES) {
      assert.ok(short.clock.wall[k] >= 0 && short.clock.cpu[k] >= 0, k);
    }
    assert.ok(short.clock.wall.forward > 0 && short.clock.wall.backward > 0 && short.clock.wall.eval > 0);
    const full = await epoch();
    assert.equal(full.clock.steps, Math.ceil(full.n / 16));
  },
);
