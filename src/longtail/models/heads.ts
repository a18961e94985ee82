// The cosine ("normed") classifier of LDAM/RIDE/SADE; it can also run with externally generated
// weights (PRL).
import { Tensor, aten, noGrad, nn, empty, tidy, onnx } from '../../torch/index.js';

/**
 * s * normalize(x) . normalize(W) with W stored [inFeatures, classes] as in the reference code
 * (initialised uniform(-1, 1), renormalised per column).
 */
export class NormedLinear extends nn.Module {
  readonly weight: Tensor;

  constructor(
    readonly inFeatures: number,
    readonly classes: number,
    readonly scale = 30,
  ) {
    super();
    this.weight = this.registerParameter('weight', empty([inFeatures, classes]));
    noGrad(() =>
      tidy(() => {
        aten.uniform_(this.weight, -1, 1);
        // renorm_(2, 1, 1e-5).mul_(1e5): every column gets unit norm (up to the reference's scaling).
        const norms = this.weight.norm(2, 0, true).clamp(1e-12);
        this.weight.copy_(this.weight.div(norms));
      }),
    );
  }

  forward(x: Tensor, weight: Tensor = this.weight): Tensor {
    return tidy(() => {
      const xn = nn.functional.normalize(x, 2, 1);
      const wn = nn.functional.normalize(weight, 2, 0);
      return xn.matmul(wn).mul(this.scale);
    });
  }

  /**
   * The ONNX form: the input normalized in the graph, the weight (its own, or one generated
   * elsewhere, such as PRL's at a preference) normalized here by the same libtorch code as
   * forward and stored normalized.
   */
  toOnnx(g: onnx.OnnxGraph, x: string, name: string, weight: Tensor = this.weight): string {
    const wn = noGrad(() => tidy(() => g.tensor(`${name}.weight`, nn.functional.normalize(weight, 2, 0))));
    const logits = g.node('MatMul', [onnx.l2NormalizeOnnx(g, x, 1), wn]);
    return g.node('Mul', [logits, g.scalar(`${name}.scale`, this.scale)]);
  }
}
