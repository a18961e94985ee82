// RIDE's knowledge distillation: a teacher (a multi-expert model trained before, usually with more
// experts) runs on every training batch without gradients, and its combined output reaches
// RIDELossWithDistill through the loss's extras. The teacher is built for training only (test,
// predict and test-time commands never load it) and is not part of the student's checkpoints: a
// resumed run loads it again from the config's distill_checkpoint.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { dispose, noGrad, type Tensor } from '../../torch/index.js';
import { ConfigError } from '../config/config.js';
import { InputError } from '../../util/errors.js';
import { buildModel } from '../config/experiment.js';
import type { Session } from '../config/session.js';
import type { MultiExpertModel } from '../models/multi-expert.js';
import type { System } from '../systems/index.js';
import { readWeightsFile } from './weights-file.js';

/** The weights file a distill_checkpoint names: a run directory, a checkpoint sidecar or a weights file. */
export function teacherWeightsFile(checkpoint: string): string {
  if (existsSync(checkpoint) && statSync(checkpoint).isDirectory()) {
    return join(checkpoint, 'checkpoint-last.safetensors');
  }
  return checkpoint.replace(/\.json$/i, '.safetensors');
}

/**
 * The teacher of a session whose config distils (null otherwise), on the student's device, with
 * the weights of its distill_checkpoint. It stays in training mode, as RIDE's trainer leaves it:
 * its batch norm uses each batch's statistics.
 * @throws ConfigError naming distill_checkpoint when the weights do not fit distill_arch.
 */
export function buildTeacher(session: Session): MultiExpertModel | null {
  const { config, file } = session;
  if (!config.distill || !config.distill_arch || !config.distill_checkpoint) return null;
  const teacher = buildModel(
    { ...config, arch: config.distill_arch },
    session.data.train.shape[0]!,
    session.data.train.classes,
    file,
  );
  const weightsFile = teacherWeightsFile(config.distill_checkpoint);
  let state: Record<string, Tensor> = {};
  try {
    state = readWeightsFile(weightsFile, 'distill_checkpoint');
    // A tailor checkpoint names the model's tensors model.*; a bare state dict does not.
    const names = Object.keys(state);
    const prefixed = names.some((n) => n.startsWith('model.'));
    const own: Record<string, Tensor> = {};
    for (const name of names) {
      if (!prefixed) own[name] = state[name]!;
      else if (name.startsWith('model.')) own[name.slice('model.'.length)] = state[name]!;
    }
    teacher.loadStateDict(own, true);
  } catch (error) {
    teacher.dispose();
    const message =
      error instanceof InputError
        ? error.message
        : `${weightsFile}: ${(error as Error).message} (the teacher must be a model of distill_arch, e.g. a tailor run trained with it)`;
    throw new ConfigError(file, 'distill_checkpoint', message);
  } finally {
    dispose(Object.values(state));
  }
  if (teacher.device.name !== session.system.device.name) teacher.to(session.system.device);
  return teacher.train(true);
}

/** The system with the teacher's output added to every training forward's loss extras. */
export function withTeacher(system: System, teacher: MultiExpertModel): System {
  if (system.kind !== 'plain') {
    throw new Error('distillation applies to plain multi-expert systems (RIDE), not PRL');
  }
  return {
    ...system,
    trainForward: (x, rng) => {
      const { out, extra } = system.trainForward(x, rng);
      const output = noGrad(() => teacher.forward(x).output);
      return { out, extra: { ...extra, teacher: output } };
    },
  };
}
