// The multi-expert form shared by the CIFAR and ImageNet ResNets (RIDE/SADE): a shared trunk, then
// per expert its own stages, global pooling and a classifier. Subclasses build the trunk and the
// experts; the forward passes over them live here once.
import { Tensor, nn, tidy, aten } from '../../torch/index.js';
import type { MultiExpertOutput } from '../types/multi-expert-output.js';
import { NormedLinear } from './heads.js';

/** One expert: its own stages (features) and classifier. */
export abstract class ExpertBase extends nn.Module {
  abstract readonly classifier: NormedLinear | nn.Linear;

  /** Pooled features [N, D] from the shared trunk's output. */
  abstract features(shared: Tensor): Tensor;

  /** Logits from features, optionally with a classifier weight generated elsewhere (PRL). */
  classify(features: Tensor, weight?: Tensor): Tensor {
    if (this.classifier instanceof NormedLinear) return this.classifier.forward(features, weight);
    if (weight) throw new Error('a generated classifier weight needs the cosine classifier (use_norm: true)');
    return this.classifier.forward(features);
  }
}

/** What the trainer, the PRL hypernetwork and test-time code use of a backbone. */
export abstract class MultiExpertModel extends nn.Module {
  abstract readonly options: { classes: number };
  /** Width of each expert's pooled features. */
  abstract readonly featureDim: number;
  abstract readonly experts: nn.ModuleList<ExpertBase>;

  /** The shared trunk's output, input of every expert. */
  abstract shared(x: Tensor): Tensor;

  /** Per-expert pooled features, [E, N, D]. */
  expertFeatures(x: Tensor): Tensor {
    return tidy(() => {
      const s = this.shared(x);
      return aten.stack(
        this.experts.items.map((e) => e.features(s)),
        0,
      );
    });
  }

  forward(x: Tensor, classifierWeights?: Tensor[]): MultiExpertOutput {
    return tidy(() => {
      const s = this.shared(x);
      const logits = aten.stack(
        this.experts.items.map((e, i) => e.classify(e.features(s), classifierWeights?.[i])),
        0,
      );
      return { output: logits.mean(0), logits };
    });
  }
}
