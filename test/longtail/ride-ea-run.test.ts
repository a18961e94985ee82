// RIDE-EA end to end on a few Fashion-MNIST images: a RIDE run of one epoch, then one epoch of
// the shipped RIDE-EA config from that run directory (only the routers change), then the routed
// evaluation in results.json and through `tailor test`; and the config's checks by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { ConfigError, parseConfig, type TrainConfig } from '../../src/longtail/config/config.js';
import { adaptInput, buildSession } from '../../src/longtail/config/session.js';
import { trainAndEvaluate, trainSession } from '../../src/longtail/workflows/train.js';
import { repoRoot, runTailor } from '../helpers.js';

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');
const rideFile = join(repoRoot, 'configs', 'fmnist_lt_ir100_ride.json');
const eaFile = join(repoRoot, 'configs', 'fmnist_lt_ir100_ride_ea.json');

function config(file: string, edit: (raw: Record<string, unknown>) => void = () => {}): TrainConfig {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  edit(raw);
  return parseConfig(JSON.stringify(raw), 'ea.json');
}

test('RIDE-EA configs: the stage-1 weights are required and belong to an *EAModel arch', () => {
  const named = (file: string, edit: (raw: Record<string, unknown>) => void, pattern: RegExp) =>
    assert.throws(
      () => config(file, edit),
      (e: unknown) => e instanceof ConfigError && pattern.test((e as Error).message),
    );
  assert.equal(config(eaFile).arch.type, 'ResNet32EAModel');
  named(
    eaFile,
    (raw) => delete raw.stage1_checkpoint,
    /stage1_checkpoint: ResNet32EAModel trains routers over a trained ResNet32Model/,
  );
  named(
    rideFile,
    (raw) => (raw.stage1_checkpoint = 'run'),
    /stage1_checkpoint: applies to RIDE-EA .*not ResNet32Model/,
  );
  named(
    eaFile,
    (raw) => ((raw.arch as { args: Record<string, unknown> }).args.num_experts = 1),
    /num_experts: .* at least 2/,
  );
  named(eaFile, (raw) => (raw.mixup = { alpha: 1 }), /mixup: RIDE-EA's routers train on plain batches/);
  named(
    eaFile,
    (raw) => ((raw.arch as { args: Record<string, unknown> }).args.top_choices_num = 11),
    /top_choices_num: 11 exceeds the 10 classes/,
  );
});

test(
  'RIDE-EA trains the routers of a tailor RIDE run and evaluates with routing',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-ride-ea-'));
    // IR10 from 10 head images: every class keeps one (LDAM's margins need it), 40 images in all.
    const overrides = { trainMaxPerClass: 10, testPerClass: 2 };
    const ir10 = (raw: Record<string, unknown>) =>
      ((raw.data_loader as { args: Record<string, unknown> }).args.imb_factor = 0.1);
    const quiet = { seed: 0, quiet: true, log: () => {} };
    try {
      const rideDir = join(dir, 'ride');
      torch.manualSeed(0);
      const ride = buildSession(config(rideFile, ir10), rideFile, overrides);
      await trainSession(ride, { ...quiet, epochs: 1, runDir: rideDir });
      const stage1 = Object.fromEntries(
        Object.entries(ride.model.stateDict()).map(([k, v]) => [k, v.toFloat32Array()]),
      );
      for (const m of Object.values(ride.system.modules)) m.dispose();

      const ea = buildSession(
        config(eaFile, (raw) => {
          ir10(raw);
          raw.stage1_checkpoint = rideDir;
        }),
        eaFile,
        overrides,
      );
      assert.equal(ea.system.kind, 'ea');
      assert.throws(
        () => adaptInput(ea),
        /test-time methods combine every expert's logits and have no place for RIDE-EA's routing/,
      );
      const lines: string[] = [];
      const eaDir = join(dir, 'ea');
      const { results } = await trainAndEvaluate(ea, {
        ...quiet,
        log: (l) => lines.push(l),
        epochs: 1,
        runDir: eaDir,
      });
      assert.ok(
        lines.some((l) => /^stage 1: .*ride: the ResNet32Model weights loaded/.test(l)),
        lines.join('\n'),
      );
      // Every stage-1 weight (classifiers and batch-norm statistics included) is unchanged.
      for (const [k, v] of Object.entries(ea.model.stateDict()))
        assert.deepEqual(v.toFloat32Array(), stage1[k], `${k} changed`);
      assert.equal(results.method, 'RIDE-EA (expert assignment)');
      assert.ok(results.experts_per_image! >= 1 && results.experts_per_image! <= 3);
      const stored = JSON.parse(readFileSync(join(eaDir, 'results.json'), 'utf8')) as {
        experts_per_image?: number;
      };
      assert.equal(stored.experts_per_image, results.experts_per_image);
      for (const m of Object.values(ea.system.modules)) m.dispose();

      const t = runTailor(['test', '-r', eaDir, '--json']);
      assert.equal(t.code, 0, t.err);
      const out = JSON.parse(t.out) as { experts_per_image?: number; top1: number };
      assert.equal(out.experts_per_image, results.experts_per_image);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
