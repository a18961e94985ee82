// More layers of torch.nn: Bilinear, CosineSimilarity and LocalResponseNorm, with PyTorch 1.13's
// parameter names, shapes, initialisation, arguments and defaults (the functions are in
// functional-more.ts and functional.ts).
import { Tensor } from '../tensor.js';
import { empty } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { checkOptions, size } from './layer-util.js';
import { uniform_ } from './init.js';
import { pyBool, pyFloat } from './module-repr.js';
import { checksOf } from '../../util/arguments.js';
import * as F from './functional-more.js';

/**
 * The bilinear layer y_k = x1^T W_k x2 + b_k (torch.nn.Bilinear): inputs [..., in1Features] and
 * [..., in2Features], output [..., outFeatures]; parameters weight [out, in1, in2] and bias [out],
 * both drawn from U(-1/sqrt(in1), 1/sqrt(in1)) as PyTorch's.
 */
export class Bilinear extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;

  constructor(
    readonly in1Features: number,
    readonly in2Features: number,
    readonly outFeatures: number,
    options: { bias?: boolean } = {},
  ) {
    super();
    const c = checksOf('Bilinear');
    size(c, in1Features, 'in1Features');
    size(c, in2Features, 'in2Features');
    size(c, outFeatures, 'outFeatures');
    checkOptions(c, options, {});
    this.weight = this.registerParameter('weight', empty([outFeatures, in1Features, in2Features]));
    this.bias = options.bias === false ? null : this.registerParameter('bias', empty([outFeatures]));
    const bound = 1 / Math.sqrt(in1Features);
    uniform_(this.weight, -bound, bound);
    if (this.bias) uniform_(this.bias, -bound, bound);
  }

  /** Applies the layer to `x1` and `x2` (shapes: see the class). */
  forward(x1: Tensor, x2: Tensor): Tensor {
    return F.bilinearOf('Bilinear', x1, x2, this.weight, this.bias);
  }

  /** PyTorch's `in1_features=..., in2_features=..., out_features=..., bias=...`. */
  override extraRepr(): string {
    return `in1_features=${this.in1Features}, in2_features=${this.in2Features}, out_features=${this.outFeatures}, bias=${pyBool(this.bias !== null)}`;
  }
}

/** Options of CosineSimilarity (PyTorch's defaults). */
export interface CosineSimilarityOptions {
  /** The dimension along which the vectors lie (default 1). */
  dim?: number;
  /** The smallest norm divided by, against division by zero (default 1e-8). */
  eps?: number;
}

/** The cosine similarity of x1 and x2 along `dim` (torch.nn.CosineSimilarity; the inputs broadcast). */
export class CosineSimilarity extends Module {
  readonly dim: number;
  readonly eps: number;
  constructor(options: CosineSimilarityOptions = {}) {
    super();
    const c = checksOf('CosineSimilarity');
    checkOptions(c, options, { eps: { above: 0 } });
    this.dim = c.integer(options.dim ?? 1, 'options.dim', { min: -64, max: 63 });
    this.eps = options.eps ?? 1e-8;
  }
  /** Applies the layer to `x1` and `x2` (shapes: see the class). */
  forward(x1: Tensor, x2: Tensor): Tensor {
    const c = checksOf('CosineSimilarity');
    if (!(x1 instanceof Tensor)) c.fail('x1', 'a Tensor', x1);
    if (!(x2 instanceof Tensor)) c.fail('x2', 'a Tensor', x2);
    return aten.cosine_similarity(x1, x2, this.dim, this.eps);
  }
}

/**
 * Local response normalisation across channels (torch.nn.LocalResponseNorm): x / (k + alpha /
 * size * the sum of x^2 over `size` neighbouring channels)^beta, for inputs [N, C, ...] of at
 * least 3 dimensions. Defaults alpha 1e-4, beta 0.75, k 1.
 */
export class LocalResponseNorm extends Module {
  readonly alpha: number;
  readonly beta: number;
  readonly k: number;
  constructor(
    readonly size: number,
    options: F.LocalResponseNormOptions = {},
  ) {
    super();
    ({ alpha: this.alpha, beta: this.beta, k: this.k } = F.lrnOptions('LocalResponseNorm', size, options));
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const { alpha, beta, k } = this;
    return F.localResponseNormOf('LocalResponseNorm', x, this.size, { alpha, beta, k });
  }
  /** PyTorch's `size, alpha=..., beta=..., k=...`. */
  override extraRepr(): string {
    return `${this.size}, alpha=${pyFloat(this.alpha)}, beta=${pyFloat(this.beta)}, k=${pyFloat(this.k)}`;
  }
}
