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
import type { MultiExpertModel } from '../models/multi-expert.js';
import type { TrainableSystem } from './system.js';
import { HyperNetwork, type GeneratedExperts } from './hypernet.js';

class ReleasedOffset extends nn.Module {
  readonly offset: Tensor;
  constructor(experts: number) {
    super();
    this.offset = this.registerParameter('offset', torch.zeros([experts]));
  }
}

export interface PrlSystem extends TrainableSystem {
  readonly kind: 'prl';
  readonly hyper: HyperNetwork;
  readonly model: MultiExpertModel;
  readonly experts: number;
  readonly loss: PreferenceLoss;
  /** The preference used by evalForward (default: uniform). */
  preference: number[];
  /** Forward with generated experts; the output weights the experts by the preference if given. */
  forwardWith(x: Tensor, generated: GeneratedExperts, preference?: number[] | Tensor): MultiExpertOutput;
  generate(preference: number[] | Tensor): GeneratedExperts;
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

  const generate = (preference: number[] | Tensor): GeneratedExperts =>
    torch.tidy(() =>
      hyper.forward(preference instanceof torch.Tensor ? preference : torch.tensor(preference)),
    );

  // The experts' pooled features do not depend on the preference: computed once per batch.
  // Kept per expert (not stacked) so training runs the same kernels on the same memory as the
  // multi-expert forward pass.
  const pooledFeatures = (x: Tensor): Tensor[] =>
    torch.tidy(() => {
      const shared = model.shared(x);
      return model.experts.items.map((expert) => expert.features(shared));
    });

  const forwardWith = (
    x: Tensor,
    generated: GeneratedExperts,
    preference?: number[] | Tensor,
  ): MultiExpertOutput =>
    torch.tidy(() => preferenceOutput(logitsFromFeatures(model, pooledFeatures(x), generated), preference));

  const releasedGenerate = (rng: Rng): GeneratedExperts =>
    torch.tidy(() => {
      // One call per expert, each with its own draw, min-max normalised after a learnable offset.
      const classifiers: Tensor[] = [];
      for (let e = 0; e < experts; e++) {
        const r = torch.tensor(rng.dirichlet(alpha, experts)).add(released!.offset);
        const min = r.min();
        const max = r.max();
        const normalised = r.sub(min).div(max.sub(min).add(1e-8));
        classifiers.push(hyper.forward(normalised).classifiers[e]!);
      }
      return { classifiers };
    });

  const modules: Record<string, nn.Module> = { model, hyper };
  if (released) modules.released = released;
  // The online ideal point is training state: the checkpoint carries it for an exact resume.
  if (loss.ideal) modules.ideal = loss.ideal;
  const system: PrlSystem = {
    kind: 'prl',
    modules,
    hyper,
    model,
    experts,
    loss,
    get device() {
      return model.device;
    },
    preference: new Array<number>(experts).fill(1 / experts),
    generate,
    forwardWith,
    trainForward(x: Tensor, rng: Rng) {
      if (released) return { out: forwardWith(x, releasedGenerate(rng)) };
      const preferences = Array.from({ length: drawsPerBatch }, () => rng.dirichlet(alpha, experts));
      return torch.tidy(() => {
        const features = pooledFeatures(x);
        const draws = preferences.map((preference) => ({
          preference,
          out: preferenceOutput(logitsFromFeatures(model, features, generate(preference)), preference),
        }));
        return { out: draws[0]!.out, extra: { preference: preferences[0]!, draws } };
      });
    },
    evalForward(x: Tensor) {
      return torch.tidy(() => forwardWith(x, generate(system.preference), system.preference));
    },
  };
  return system;
}

/**
 * Expert logits [E, N, C] for generated experts, from per-expert features: a tensor [E, N, D]
 * (cached features) or one [N, D] tensor per expert (a forward pass).
 */
export function logitsFromFeatures(
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
export function aggregateByPreference(expertLogits: Tensor, preference: number[] | Tensor): Tensor {
  return torch.tidy(() => {
    const r =
      preference instanceof torch.Tensor
        ? preference
        : torch.tensor(preference, { dtype: expertLogits.dtype });
    return expertLogits.mul(r.reshape(-1, 1, 1)).sum(0);
  });
}

function preferenceOutput(logits: Tensor, preference?: number[] | Tensor): MultiExpertOutput {
  return { output: preference ? aggregateByPreference(logits, preference) : logits.mean(0), logits };
}
