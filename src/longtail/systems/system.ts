// What the trainer trains: a multi-expert model (and for PRL a hypernetwork) with its
// training-time and evaluation-time forward passes and the loss. `kind` tells a plain
// multi-expert system (SADE, BalPoE, LDAM, CE ...) from PRL, whose experts a preference generates.
import type { Device, Tensor, nn } from '../../torch/index.js';
import type { Rng } from '../../util/rng.js';
import type { MultiExpertOutput } from '../types/multi-expert-output.js';
import type { MultiExpertModel } from '../models/multi-expert.js';
import type { Loss, LossExtra } from '../losses/types.js';

/** The part of a system the training loop uses. */
export interface TrainableSystem {
  /** Named modules; their state dicts are saved as `<name>.<key>`. */
  readonly modules: Record<string, nn.Module>;
  /** Forward pass in training mode; may draw randomness (PRL preference) from rng. */
  trainForward(x: Tensor, rng: Rng): { out: MultiExpertOutput; extra?: LossExtra };
  /** Deterministic forward pass for evaluation. */
  evalForward(x: Tensor): MultiExpertOutput;
  readonly loss: Loss;
  /** Where its modules live: its model's device (they are built, and moved, together). */
  readonly device: Device;
  /**
   * For a trainForward that draws from rng (PRL's preferences): the same forward split into the
   * host draws and a forward that reads them from a device tensor. Graph mode writes each step's
   * draws into a tensor the captured step reads (a number would be frozen into the capture).
   */
  readonly hostDraws?: HostDraws;
  /**
   * Modules that stay frozen: in evaluation mode whatever setTraining says, and out of
   * systemParameters (so out of the optimizer). RIDE-EA freezes its trained backbone.
   */
  readonly frozen?: readonly nn.Module[];
}

/** trainForward's per-step randomness drawn on the host, and the forward that reads it from a tensor. */
export interface HostDraws {
  /** One step's draws from rng: the numbers trainForward would draw, in its order. */
  draw(rng: Rng): number[];
  /** trainForward with its draws read from `draws`, a float32 tensor [size] on the system's device. */
  forward(x: Tensor, draws: Tensor): { out: MultiExpertOutput; extra?: LossExtra };
}

interface SystemBase extends TrainableSystem {
  readonly model: MultiExpertModel;
  readonly experts: number;
}

/** A plain multi-expert model: the model alone, its own output. */
export interface PlainSystem extends SystemBase {
  readonly kind: 'plain';
}

export function systemParameters(system: TrainableSystem): Tensor[] {
  const frozen = system.frozen ?? [];
  return Object.values(system.modules)
    .filter((m) => !frozen.includes(m))
    .flatMap((m) => m.parameters());
}

/**
 * The parameters that map features to classes: every expert's classifier and, for PRL, the
 * modules besides the backbone (the hypernetwork that generates the classifiers). SGD's
 * share_lr leaves these at lr.
 */
export function headParameters(system: TrainableSystem & { model: MultiExpertModel }): Tensor[] {
  const classifiers = system.model.experts.items.flatMap((expert) => expert.classifier.parameters());
  const others = Object.entries(system.modules)
    .filter(([, m]) => m !== system.model)
    .flatMap(([, m]) => m.parameters());
  return [...classifiers, ...others];
}

export function systemStateDict(system: TrainableSystem): Record<string, Tensor> {
  const out: Record<string, Tensor> = {};
  for (const [prefix, m] of Object.entries(system.modules)) {
    for (const [k, v] of Object.entries(m.stateDict())) out[`${prefix}.${k}`] = v;
  }
  return out;
}

export function loadSystemState(system: TrainableSystem, state: Record<string, Tensor>): void {
  for (const [prefix, m] of Object.entries(system.modules)) {
    const part: Record<string, Tensor> = {};
    for (const [k, v] of Object.entries(state))
      if (k.startsWith(`${prefix}.`)) part[k.slice(prefix.length + 1)] = v;
    m.loadStateDict(part, true);
  }
}

export function setTraining(system: TrainableSystem, training: boolean): void {
  const frozen = system.frozen ?? [];
  for (const m of Object.values(system.modules)) m.train(training && !frozen.includes(m));
}

export function plainSystem(model: MultiExpertModel, loss: Loss): PlainSystem {
  return {
    kind: 'plain',
    modules: { model },
    model,
    experts: model.experts.length,
    loss,
    get device() {
      return model.device;
    },
    trainForward: (x) => ({ out: model.forward(x) }),
    evalForward: (x) => model.forward(x),
  };
}
