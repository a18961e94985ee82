// PRL as a trainable system: per batch a preference r ~ Dirichlet(alpha) on the simplex, the
// hypernetwork generates the experts' classifiers for r, and the loss scalarizes the experts'
// losses with r (smooth Tchebycheff by default). The 'released' variant reproduces the released
// code instead: alpha 0.5, one hypernetwork call per expert with its own draw, min-max
// normalised preferences with a learnable offset (not on the simplex), and a loss the
// preference never reaches.
import * as torch from '../../torch/index.js';
import { nn, type Tensor } from '../../torch/index.js';
import type { Rng } from '../../torch/rng.js';
import { createPrlLoss } from '../losses/index.js';
import type { PrlSection } from '../config/config.js';
import type { MultiExpertOutput } from '../models/resnet_cifar.js';
import type { MultiExpertBackbone } from '../models/resnet_imagenet.js';
import { NormedLinear } from '../models/heads.js';
import { ConfigError } from '../config/config.js';
import type { TrainableSystem } from '../system.js';
import { HyperNetwork, type GeneratedExperts } from './hypernet.js';
import { aggregateByPreference } from './features.js';

class ReleasedOffset extends nn.Module {
  readonly offset: Tensor;
  constructor(experts: number) {
    super();
    this.offset = this.registerParameter('offset', torch.zeros([experts]));
  }
}

export interface PrlSystem extends TrainableSystem {
  readonly hyper: HyperNetwork;
  readonly model: MultiExpertBackbone;
  readonly experts: number;
  /** The preference used by evalForward (default: uniform). */
  preference: number[];
  /** Forward with the experts generated for a given preference. */
  /** Forward with generated experts; the output weights the experts by the preference if given. */
  forwardWith(x: Tensor, generated: GeneratedExperts, preference?: number[] | Tensor): MultiExpertOutput;
  generate(preference: number[] | Tensor): GeneratedExperts;
}

export function buildPrlSystem(
  model: MultiExpertBackbone,
  prl: PrlSection,
  trainCounts: number[],
  file: string,
): PrlSystem {
  const experts = model.experts.length;
  if (model.experts.items.some((e) => !(e.classifier instanceof NormedLinear))) {
    throw new ConfigError(
      file,
      'arch.args.use_norm',
      'PRL generates cosine classifiers: set use_norm to true',
    );
  }
  const variant = prl.variant ?? 'paper';
  const alpha = prl.alpha ?? (variant === 'released' ? 0.5 : 1.2);
  const drawsPerBatch = prl.draws_per_batch ?? 1;
  if (variant === 'released' && drawsPerBatch !== 1) {
    throw new ConfigError(
      file,
      'prl.draws_per_batch',
      'the released variant draws one preference per expert call; draws_per_batch applies to the paper variant',
    );
  }
  const hyper = new HyperNetwork({
    experts,
    featureDim: model.featureDim,
    classes: model.options.classes,
    hidden: prl.hidden ?? [128, 128, 128],
    generateAffine: prl.generate_norm_affine ?? false,
  });
  const released = variant === 'released' ? new ReleasedOffset(experts) : null;
  const loss = createPrlLoss(prl, { classCounts: trainCounts, experts, file });

  const generate = (preference: number[] | Tensor): GeneratedExperts =>
    torch.tidy(() =>
      hyper.forward(preference instanceof torch.Tensor ? preference : torch.tensor(preference)),
    );

  // The experts' pooled features do not depend on the preference: computed once per batch.
  const pooledFeatures = (x: Tensor): Tensor[] =>
    torch.tidy(() => {
      const shared = model.shared(x);
      return model.experts.items.map((expert) => expert.features(shared));
    });

  const classifyWith = (
    features: Tensor[],
    generated: GeneratedExperts,
    preference?: number[] | Tensor,
  ): MultiExpertOutput =>
    torch.tidy(() => {
      const logits = torch.stack(
        model.experts.items.map((expert, e) => {
          let f = features[e]!;
          const a = generated.affine?.[e];
          if (a) f = f.mul(a.scale).add(a.shift);
          return expert.classify(f, generated.classifiers[e]);
        }),
        0,
      );
      return { output: preference ? aggregateByPreference(logits, preference) : logits.mean(0), logits };
    });

  const forwardWith = (
    x: Tensor,
    generated: GeneratedExperts,
    preference?: number[] | Tensor,
  ): MultiExpertOutput => torch.tidy(() => classifyWith(pooledFeatures(x), generated, preference));

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
    modules,
    hyper,
    model,
    experts,
    loss,
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
          out: classifyWith(features, generate(preference), preference),
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
