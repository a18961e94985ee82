// RIDE's knowledge distillation: a teacher (a multi-expert model trained before, usually with more
// experts) runs on every training batch without gradients, and its combined output reaches
// RIDELossWithDistill through the loss's extras. The teacher is built for training only (test,
// predict and test-time commands never load it) and is not part of the student's checkpoints: a
// resumed run loads it again from the config's distill_checkpoint.
import { existsSync, statSync } from 'node:fs';
import { dispose, noGrad, type Tensor } from '../../torch/index.js';
import { ConfigError } from '../config/config.js';
import { InputError } from '../../util/errors.js';
import { buildModel } from '../config/experiment.js';
import type { Session } from '../config/session.js';
import type { MultiExpertModel } from '../models/multi-expert.js';
import type { System } from '../systems/index.js';
import { readWeightsFile } from './weights-file.js';
import { loadCheckpoint } from '../../torch/checkpoint.js';
import { resolveCheckpoint } from './load.js';
import { loadModelWeights } from '../models/checkpoint-layout.js';

/**
 * Whether a distill_checkpoint names a tailor run: its directory, a checkpoint sidecar (.json),
 * or a checkpoint's weights with their sidecar beside them. Those load through the checkpoint
 * reader, which checks the weights against the sidecar; anything else is a bare weights file.
 */
export function isTailorCheckpoint(checkpoint: string): boolean {
  if (statSync(checkpoint, { throwIfNoEntry: false })?.isDirectory()) return true;
  if (/\.json$/i.test(checkpoint)) return true;
  return /\.safetensors$/i.test(checkpoint) && existsSync(checkpoint.replace(/\.safetensors$/i, '.json'));
}

/**
 * The model tensors (the caller's to dispose, without the model. prefix) of a tailor run, its
 * checkpoint, or a state dict: a distill_checkpoint or RIDE-EA's stage1_checkpoint (`field`
 * names it in errors).
 */
export function readModelWeights(checkpoint: string, field = 'distill_checkpoint'): Record<string, Tensor> {
  if (isTailorCheckpoint(checkpoint)) {
    const ck = loadCheckpoint(resolveCheckpoint(checkpoint).replace(/\.json$/, ''));
    dispose([ck.optimizer?.state]);
    return modelTensors(ck.weights);
  }
  return modelTensors(readWeightsFile(checkpoint, field));
}

/** A tailor checkpoint names the model's tensors model.*; a bare state dict does not. */
function modelTensors(state: Record<string, Tensor>): Record<string, Tensor> {
  const names = Object.keys(state);
  if (!names.some((n) => n.startsWith('model.'))) return state;
  const own: Record<string, Tensor> = {};
  for (const name of names) {
    if (name.startsWith('model.')) own[name.slice('model.'.length)] = state[name]!;
    else state[name]!.dispose();
  }
  return own;
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
  let state: Record<string, Tensor> = {};
  try {
    state = readModelWeights(config.distill_checkpoint);
    loadModelWeights(teacher, state, config.distill_checkpoint, 'distill_arch');
  } catch (error) {
    teacher.dispose();
    const message =
      error instanceof InputError
        ? error.message
        : `${config.distill_checkpoint}: ${(error as Error).message} (the teacher must be a model of distill_arch, e.g. a tailor run trained with it)`;
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
