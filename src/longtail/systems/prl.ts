// PRL as a trainable system: per batch a preference r ~ Dirichlet(alpha) on the simplex, the
// hypernetwork generates the experts' classifiers for r, and the loss scalarizes the experts'
// losses with r (smooth Tchebycheff by default). The 'released' variant reproduces the released
// code instead: alpha 0.5, one hypernetwork call per expert with its own draw, min-max
// normalised preferences with a learnable offset (not on the simplex), and a loss the
// preference never reaches.
import * as torch from '../../torch/index.js';
import { nn, type Tensor } from '../../torch/index.js';
import type { Rng } from '../../util/rng.js';
import type { PreferenceLoss } from '../losses/prl.js';
import type { MultiExpertOutput } from '../types/multi-expert-output.js';
import { Preference, PreferenceError } from '../types/preference.js';
import type { MultiExpertModel } from '../models/multi-expert.js';
import type { HostDraws, TrainableSystem } from './system.js';
import { HyperNetwork, type GeneratedExperts } from './hypernet.js';

class ReleasedOffset extends nn.Module {
  readonly offset: Tensor;
  constructor(experts: number) {
    super();
    this.offset = this.registerParameter('offset', torch.zeros([experts]));
  }
}

/**
 * A preference as PRL takes it: weights (checked and normalised by Preference.of), a Preference,
 * or a tensor r [E] on the simplex that gradients reach (the test-time search's softmax), used as
 * it is.
 */
export type PreferenceInput = Preference | readonly number[] | Tensor;

/**
 * A PRL system: the multi-expert model whose experts a hypernetwork generates from a preference over them (see {@link Preference}).
 */
export interface PrlSystem extends TrainableSystem {
  readonly kind: 'prl';
  readonly hyper: HyperNetwork;
  readonly model: MultiExpertModel;
  readonly experts: number;
  readonly loss: PreferenceLoss;
  /** The preference evalForward generates the experts for (uniform unless `at` chose another). */
  readonly preference: Preference;
  /**
   * The same system (the same modules) at another preference, checked and normalised once
   * (PreferenceError): its evalForward, and so every evaluation of it, weights the experts
   * generated for that preference.
   */
  at(preference: Preference | readonly number[]): PrlSystem;
  /**
   * The experts generated for a preference (one hypernetwork call) applied to per-expert features
   * [E, N, D] (cached, e.g. by computeExpertFeatures), for each features tensor given: the
   * experts' logits [E, N, C] and their output [N, C] weighted by the preference.
   */
  logitsAt(preference: PreferenceInput, ...features: Tensor[]): MultiExpertOutput[];
}

/** How PRL trains (the config's `prl` section, defaults applied and checked by config/). */
export interface PrlOptions {
  variant: 'paper' | 'released';
  /** Dirichlet concentration of the preferences drawn in training. */
  alpha: number;
  /** Preferences drawn per batch (the released variant draws one per expert call instead). */
  drawsPerBatch: number;
  hidden: number[];
  generateAffine: boolean;
}

/** The model needs cosine classifiers (the hypernetwork generates their weights). */
export function buildPrlSystem(model: MultiExpertModel, o: PrlOptions, loss: PreferenceLoss): PrlSystem {
  const experts = model.experts.length;
  const { variant, alpha, drawsPerBatch } = o;
  if (variant === 'released' && drawsPerBatch !== 1)
    throw new Error('the released variant draws one preference per expert call, not several per batch');
  const hyper = new HyperNetwork({
    experts,
    featureDim: model.featureDim,
    classes: model.options.classes,
    hidden: o.hidden,
    generateAffine: o.generateAffine,
  });
  const released = variant === 'released' ? new ReleasedOffset(experts) : null;

  const generate = (preference: readonly number[] | Tensor): GeneratedExperts =>
    torch.tidy(() =>
      hyper.forward(preference instanceof torch.Tensor ? preference : torch.tensor([...preference])),
    );

  const pooledFeatures = (x: Tensor): Tensor[] => expertPooledFeatures(model, x);

  /**
   * The one place experts are generated for a preference and their logits weighted by it: one
   * hypernetwork call, then for each set of per-expert features ([E, N, D], or one [N, D] per
   * expert) the experts' logits and the weighted output.
   */
  const outputsAt = (r: readonly number[] | Tensor, features: (Tensor | Tensor[])[]): MultiExpertOutput[] =>
    torch.tidy(() => {
      const generated = generate(r);
      return features.map((f) => preferenceOutput(logitsFromFeatures(model, f, generated), r));
    });

  const logitsAt = (preference: PreferenceInput, ...features: Tensor[]): MultiExpertOutput[] =>
    outputsAt(weightsOf(preference, experts), features);

  const modules: Record<string, nn.Module> = { model, hyper };
  if (released) modules.released = released;
  // The online ideal point is training state: the checkpoint carries it for an exact resume.
  if (loss.ideal) modules.ideal = loss.ideal;
  // A training step's preferences, each [E]: one per expert call (released) or drawsPerBatch.
  const drawsPerStep = released ? experts : drawsPerBatch;
  const forwardAt = (
    x: Tensor,
    preferences: (number[] | Tensor)[],
  ): ReturnType<PrlSystem['trainForward']> => {
    if (released) {
      // expert e generated for preference e, after the learnable offset
      const generated = releasedGenerate(hyper, released, (e) => {
        const r = preferences[e]!;
        return r instanceof torch.Tensor ? r : torch.tensor(r);
      });
      return {
        out: torch.tidy(() => preferenceOutput(logitsFromFeatures(model, pooledFeatures(x), generated))),
      };
    }
    return torch.tidy(() => {
      const features = pooledFeatures(x);
      const draws = drawOutputs(model.device, preferences, (r) => outputsAt(r, [features])[0]!);
      return { out: draws[0]!.out, extra: { preference: preferences[0]!, draws } };
    });
  };
  const drawAll = (rng: Rng) => Array.from({ length: drawsPerStep }, () => rng.dirichlet(alpha, experts));
  const trainForward = (x: Tensor, rng: Rng) => forwardAt(x, drawAll(rng));
  // Graph mode's form of trainForward: the same draws, in the same order, read from a tensor.
  const hostDraws: HostDraws = {
    draw: (rng) => drawAll(rng).flat(),
    forward: (x, draws) =>
      forwardAt(
        x,
        Array.from({ length: drawsPerStep }, (_, i) => draws.narrow(0, i * experts, experts)),
      ),
  };

  const systemAt = (preference: Preference): PrlSystem => ({
    kind: 'prl',
    modules,
    hyper,
    model,
    experts,
    loss,
    get device() {
      return model.device;
    },
    preference,
    at: (other) => systemAt(Preference.of(other, experts)),
    logitsAt,
    trainForward,
    hostDraws,
    evalForward: (x: Tensor) => torch.tidy(() => outputsAt(preference.weights, [pooledFeatures(x)])[0]!),
  });
  return systemAt(Preference.uniform(experts));
}

/**
 * The experts' pooled features, which do not depend on the preference: computed once per batch.
 * Kept per expert (not stacked) so training runs the same kernels on the same memory as the
 * multi-expert forward pass.
 */
function expertPooledFeatures(model: MultiExpertModel, x: Tensor): Tensor[] {
  return torch.tidy(() => {
    const shared = model.shared(x);
    return model.perExpert((expert) => expert.features(shared));
  });
}

/**
 * Each draw's output for its preference: the draws are independent branches (on CUDA streams of
 * their own under branch streams; they share the hypernetwork's parameters).
 */
function drawOutputs<P>(
  device: torch.Device,
  preferences: P[],
  outputAt: (preference: P) => MultiExpertOutput,
): { preference: P; out: MultiExpertOutput }[] {
  const outs = torch.parallelBranches(
    device,
    preferences.map((preference) => () => {
      const out = outputAt(preference);
      return [out.output, out.logits];
    }),
    { sharedParameters: true },
  );
  return preferences.map((preference, i) => ({
    preference,
    out: { output: outs[i]![0]!, logits: outs[i]![1]! },
  }));
}

/** The weights to generate for: a Preference's (checked once, by Preference.of), or a simplex tensor as it is. */
function weightsOf(preference: PreferenceInput, experts: number): readonly number[] | Tensor {
  if (!(preference instanceof torch.Tensor)) return Preference.of(preference, experts).weights;
  if (preference.shape.length !== 1 || preference.shape[0] !== experts)
    throw new PreferenceError(`is a tensor of shape [${preference.shape.join(', ')}], not [${experts}]`);
  return preference;
}

/**
 * The released code's experts: one hypernetwork call per expert, each with its own draw (`drawOf(e)`,
 * a Dirichlet draw [E]), min-max normalised after a learnable offset.
 */
function releasedGenerate(
  hyper: HyperNetwork,
  released: ReleasedOffset,
  drawOf: (expert: number) => Tensor,
): GeneratedExperts {
  const experts = released.offset.shape[0]!;
  return torch.tidy(() => {
    // the experts' hypernetwork calls are independent branches (streams under branch streams)
    const classifiers = torch.parallelBranches(
      released.offset.device,
      Array.from({ length: experts }, (_, e) => () => {
        const r = drawOf(e).add(released.offset);
        const min = r.min();
        const max = r.max();
        const normalised = r.sub(min).div(max.sub(min).add(1e-8));
        return hyper.forward(normalised).classifiers[e]!;
      }),
      { sharedParameters: true },
    );
    return { classifiers };
  });
}

/**
 * Expert logits [E, N, C] for generated experts, from per-expert features: a tensor [E, N, D]
 * (cached features) or one [N, D] tensor per expert (a forward pass).
 */
function logitsFromFeatures(
  model: MultiExpertModel,
  features: Tensor | Tensor[],
  generated: GeneratedExperts,
): Tensor {
  return torch.tidy(() =>
    torch.stack(
      model.experts.items.map((expert, e) => {
        let f = Array.isArray(features) ? features[e]! : features.select(0, e);
        const a = generated.affine?.[e];
        if (a) f = f.mul(a.scale).add(a.shift);
        return expert.classify(f, generated.classifiers[e]);
      }),
      0,
    ),
  );
}

/**
 * The model output for a preference: the experts' logits [E, N, C] weighted by r (r = 1/E each
 * gives the plain mean), so the preference controls the head/tail balance at inference.
 */
export function aggregateByPreference(expertLogits: Tensor, preference: readonly number[] | Tensor): Tensor {
  return torch.tidy(() => {
    const r =
      preference instanceof torch.Tensor
        ? preference
        : torch.tensor([...preference], { dtype: expertLogits.dtype });
    return expertLogits.mul(r.reshape(-1, 1, 1)).sum(0);
  });
}

function preferenceOutput(logits: Tensor, preference?: readonly number[] | Tensor): MultiExpertOutput {
  return { output: preference ? aggregateByPreference(logits, preference) : logits.mean(0), logits };
}
