// The multi-expert form shared by the CIFAR and ImageNet ResNets (RIDE/SADE): a shared trunk, then
// per expert its own stages, global pooling and a classifier. Subclasses build the trunk and the
// experts; the forward passes over them live here once.
import { Tensor, nn, tidy, aten, onnx, parallelBranches } from '../../torch/index.js';
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

  /**
   * The ONNX form of {@link features}: the pooled features' value from the shared trunk's. An
   * expert without one cannot be exported (OnnxExportError naming it).
   */
  featuresToOnnx(g: onnx.OnnxGraph, shared: string, name: string): string {
    void g;
    void shared;
    throw new onnx.OnnxExportError(
      `${this.constructor.name} ('${name}') has no ONNX mapping of its features`,
    );
  }

  /** The ONNX form of {@link classify} (with a generated weight for the cosine classifier only). */
  classifyToOnnx(g: onnx.OnnxGraph, features: string, name: string, weight?: Tensor): string {
    if (this.classifier instanceof NormedLinear)
      return this.classifier.toOnnx(g, features, `${name}.classifier`, weight);
    if (weight) throw new Error('a generated classifier weight needs the cosine classifier (use_norm: true)');
    return onnx.moduleToOnnx(this.classifier, g, features, `${name}.classifier`);
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

  /**
   * fn(expert, e) for every expert, in order: the experts are independent branches
   * (torch.parallelBranches), each on a CUDA stream of its own where the caller enabled branch
   * streams (graph mode's capture), so that the experts' kernels run side by side on the GPU.
   */
  perExpert(fn: (expert: ExpertBase, e: number) => Tensor): Tensor[] {
    return parallelBranches(
      this.device,
      this.experts.items.map((expert, e) => () => fn(expert, e)),
    );
  }

  /**
   * The ONNX form of {@link shared}: the trunk's output value from the (normalized) image's. A
   * model without one cannot be exported (OnnxExportError naming it).
   */
  sharedToOnnx(g: onnx.OnnxGraph, x: string): string {
    void g;
    void x;
    throw new onnx.OnnxExportError(`${this.constructor.name} has no ONNX mapping of its shared trunk`);
  }

  /** The experts' pooled features as ONNX values, one per expert (the trunk written once). */
  expertFeaturesToOnnx(g: onnx.OnnxGraph, x: string): string[] {
    const shared = this.sharedToOnnx(g, x);
    return this.experts.items.map((e, i) => e.featuresToOnnx(g, shared, `experts.${i}`));
  }

  /** The experts' logits as ONNX values, one per expert, as forward computes them. */
  expertLogitsToOnnx(g: onnx.OnnxGraph, x: string): string[] {
    return this.expertFeaturesToOnnx(g, x).map((f, i) =>
      this.experts.at(i).classifyToOnnx(g, f, `experts.${i}`),
    );
  }

  /** Per-expert pooled features, [E, N, D]. */
  expertFeatures(x: Tensor): Tensor {
    return tidy(() => {
      const s = this.shared(x);
      return aten.stack(
        this.perExpert((e) => e.features(s)),
        0,
      );
    });
  }

  forward(x: Tensor, classifierWeights?: Tensor[]): MultiExpertOutput {
    return tidy(() => {
      const s = this.shared(x);
      const logits = aten.stack(
        this.perExpert((e, i) => e.classify(e.features(s), classifierWeights?.[i])),
        0,
      );
      return { output: logits.mean(0), logits };
    });
  }
}
