// RIDE's distillation end to end: the config's checks, a teacher trained by tailor loaded from its
// run directory, the teacher's output reaching the loss, and a teacher that does not fit named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { ConfigError, parseConfig, type TrainConfig } from '../../src/longtail/config/config.js';
import { buildSession } from '../../src/longtail/config/session.js';
import { trainSession } from '../../src/longtail/workflows/train.js';
import { buildTeacher, isTailorCheckpoint, withTeacher } from '../../src/longtail/workflows/distill.js';
import { repoRoot } from '../helpers.js';

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');
const rideFile = join(repoRoot, 'configs', 'fmnist_lt_ir100_ride.json');

function rideConfig(edit: (raw: Record<string, unknown>) => void = () => {}): TrainConfig {
  const raw = JSON.parse(readFileSync(rideFile, 'utf8')) as Record<string, unknown>;
  edit(raw);
  return parseConfig(JSON.stringify(raw), 'ride.json');
}

const studentOf = (teacherDir: string, experts: number) => (raw: Record<string, unknown>) => {
  const arch = raw.arch as { args: Record<string, unknown> };
  raw.distill = true;
  raw.distill_arch = { ...arch, args: { ...arch.args, num_experts: experts } };
  raw.distill_checkpoint = teacherDir;
  raw.loss = {
    type: 'RIDELossWithDistill',
    args: { additional_diversity_factor: -0.45, distill_temperature: 1.5, reweight_epoch: 1 },
  };
};

test('distillation config: RIDELossWithDistill and distill go together, with a teacher arch and weights; EA needs its stage-1 weights', () => {
  const named = (edit: (raw: Record<string, unknown>) => void, pattern: RegExp) =>
    assert.throws(
      () => rideConfig(edit),
      (e: unknown) => e instanceof ConfigError && pattern.test((e as Error).message),
    );
  named((raw) => {
    raw.loss = { type: 'RIDELossWithDistill', args: {} };
  }, /ride\.json: distill: RIDELossWithDistill needs "distill": true/);
  named((raw) => {
    raw.distill = true;
  }, /ride\.json: loss\.type: distillation uses the teacher through RIDELossWithDistill, not RIDELoss/);
  named((raw) => {
    studentOf('run', 6)(raw);
    delete raw.distill_arch;
  }, /distill_arch: the teacher's arch section is missing/);
  named((raw) => {
    studentOf('run', 6)(raw);
    delete raw.distill_checkpoint;
  }, /distill_checkpoint: the teacher's weights/);
  named((raw) => {
    raw.arch = { type: 'ResNet32EAModel', args: { num_classes: 10 } };
  }, /stage1_checkpoint: ResNet32EAModel trains routers over a trained ResNet32Model/);
  assert.equal(rideConfig(studentOf('run', 6)).distill_arch?.args.num_experts, 6);
  assert.equal(isTailorCheckpoint('a/checkpoint-last.json'), true);
  assert.equal(isTailorCheckpoint('w.safetensors'), false, 'no sidecar beside it: a bare state dict');
  assert.equal(isTailorCheckpoint(repoRoot), true, 'a directory is a run');
});

test(
  'a student distils from a teacher trained by tailor; a teacher of another arch is named',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-distill-'));
    // LDAM's margins need an image of every class: 100 head images leave the tail one.
    const overrides = { trainMaxPerClass: 100, testPerClass: 4 };
    const quiet = { seed: 0, quiet: true, log: () => {} };
    try {
      const teacherDir = join(dir, 'teacher');
      torch.manualSeed(0);
      const teacherSession = buildSession(
        rideConfig((raw) => {
          (raw.arch as { args: Record<string, unknown> }).args.num_experts = 4;
        }),
        rideFile,
        overrides,
      );
      await trainSession(teacherSession, { ...quiet, epochs: 1, runDir: teacherDir });
      const teacherWeights = teacherSession.model.stateDict();

      const student = buildSession(rideConfig(studentOf(teacherDir, 4)), rideFile, overrides);
      const teacher = buildTeacher(student)!;
      assert.equal(teacher.experts.length, 4);
      assert.ok(teacher.training, "the teacher runs in training mode, as RIDE's trainer leaves it");
      assert.deepEqual(
        teacher.stateDict()['experts.3.classifier.weight']!.toFloat32Array(),
        teacherWeights['experts.3.classifier.weight']!.toFloat32Array(),
      );
      // The teacher's output reaches the loss's extras.
      torch.tidy(() => {
        const x = torch.randn([2, 1, 28, 28]);
        const { extra } = withTeacher(student.system, teacher).trainForward(x, undefined as never);
        assert.deepEqual(extra?.teacher?.shape, [2, 10]);
      });
      teacher.dispose();
      const lines: string[] = [];
      await trainSession(student, {
        ...quiet,
        log: (l) => lines.push(l),
        epochs: 1,
        runDir: join(dir, 'student'),
      });
      assert.ok(
        lines.some((l) => /^distill: teacher ResNet32Model with 4 experts from .*teacher$/.test(l)),
        lines.join('\n'),
      );
      for (const s of [teacherSession, student]) for (const m of Object.values(s.system.modules)) m.dispose();

      const wrong = buildSession(rideConfig(studentOf(teacherDir, 3)), rideFile, overrides);
      assert.throws(
        () => buildTeacher(wrong),
        (e: unknown) =>
          e instanceof ConfigError &&
          /distill_checkpoint: .*teacher: holds 4 experts .* set distill_arch\.args\.num_experts to 4/.test(
            (e as Error).message,
          ),
      );
      const missing = buildSession(rideConfig(studentOf(join(dir, 'nowhere'), 4)), rideFile, overrides);
      assert.throws(() => buildTeacher(missing), /distill_checkpoint: .*does not exist/);
      for (const s of [wrong, missing]) for (const m of Object.values(s.system.modules)) m.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
