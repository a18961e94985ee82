// PRL's hypernetwork: an MLP on the preference vector r (one weight per expert, on the simplex)
// that generates every expert's classifier weights, and optionally a feature-wise affine
// modulation (scale, shift) of each expert's pooled features.
import * as torch from '../../torch/index.js';
import { nn, type Tensor } from '../../torch/index.js';

export interface HyperNetworkOptions {
  experts: number;
  featureDim: number;
  classes: number;
  hidden?: number[];
  /** Also generate a per-channel scale and shift of each expert's features. */
  generateAffine?: boolean;
}

export interface GeneratedExperts {
  /** One [featureDim, classes] classifier weight per expert. */
  classifiers: Tensor[];
  /** Per expert [featureDim] scale (1 + output) and shift, when generateAffine. */
  affine?: { scale: Tensor; shift: Tensor }[];
}

export class HyperNetwork extends nn.Module {
  readonly body: nn.Sequential;
  readonly head: nn.Linear;
  private readonly perExpert: number;

  constructor(readonly options: HyperNetworkOptions) {
    super();
    const hidden = options.hidden ?? [128, 128, 128];
    const layers: nn.Layer[] = [];
    let width = options.experts;
    for (const h of hidden) {
      layers.push(new nn.Linear(width, h), new nn.ReLU());
      width = h;
    }
    this.body = this.registerModule('body', new nn.Sequential(...layers));
    this.perExpert =
      options.featureDim * options.classes + (options.generateAffine ? 2 * options.featureDim : 0);
    this.head = this.registerModule('head', new nn.Linear(width, options.experts * this.perExpert));
  }

  /** The experts' parameters for one preference vector r (length = experts). */
  forward(preference: Tensor): GeneratedExperts {
    return torch.tidy(() => {
      const { experts, featureDim, classes } = this.options;
      const flat = this.head.forward(this.body.forward(preference.reshape(1, experts)));
      // One unbind: in backward, one stack of the experts' gradients (selecting and narrowing
      // per expert would add a zero-filled tensor and a copy for each, launches that count in
      // a CUDA graph at these sizes).
      if (!this.options.generateAffine)
        return { classifiers: flat.reshape(experts, featureDim, classes).unbind(0) };
      const classifiers: Tensor[] = [];
      const affine: { scale: Tensor; shift: Tensor }[] = [];
      const base = featureDim * classes;
      for (const row of flat.reshape(experts, this.perExpert).unbind(0)) {
        classifiers.push(row.narrow(0, 0, base).reshape(featureDim, classes));
        affine.push({
          scale: row.narrow(0, base, featureDim).add(1),
          shift: row.narrow(0, base + featureDim, featureDim),
        });
      }
      return { classifiers, affine };
    });
  }
}
