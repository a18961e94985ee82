// The shrink activations, RReLU, Softmax2d and alpha dropout of torch.nn: each the layer form of
// its function in functional-more.ts, with PyTorch 1.13's arguments and defaults.
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { checkRank } from './layer-util.js';
import { pyFloat } from './module-repr.js';
import * as F from './functional-more.js';

/** Elementwise x - tanh(x) (torch.nn.Tanhshrink). */
export class Tanhshrink extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.tanhshrink(x);
  }
}

/** Elementwise x - lambd above lambd, x + lambd below -lambd, 0 between (torch.nn.Softshrink; lambd >= 0, default 0.5). */
export class Softshrink extends Module {
  constructor(readonly lambd = 0.5) {
    super();
    F.checkSoftshrink('Softshrink', lambd);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.softshrink(x, this.lambd);
  }
  /** PyTorch's `lambd`. */
  override extraRepr(): string {
    return pyFloat(this.lambd);
  }
}

/** Elementwise x where |x| > lambd, 0 elsewhere (torch.nn.Hardshrink; default lambd 0.5). */
export class Hardshrink extends Module {
  constructor(readonly lambd = 0.5) {
    super();
    F.checkHardshrink('Hardshrink', lambd);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.hardshrink(x, this.lambd);
  }
  /** PyTorch's `lambd`. */
  override extraRepr(): string {
    return pyFloat(this.lambd);
  }
}

/**
 * Randomized leaky ReLU (torch.nn.RReLU): in training mode each negative element is scaled by a
 * slope drawn from U(lower, upper) (the global generator's draws, as PyTorch's), in evaluation
 * mode by (lower + upper) / 2. Defaults 1/8 and 1/3.
 */
export class RReLU extends Module {
  constructor(
    readonly lower = 1 / 8,
    readonly upper = 1 / 3,
  ) {
    super();
    F.checkRrelu('RReLU', lower, upper);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.rreluOf('RReLU', x, this.lower, this.upper, this.training);
  }
  /** PyTorch's `lower=..., upper=...`. */
  override extraRepr(): string {
    return `lower=${pyFloat(this.lower)}, upper=${pyFloat(this.upper)}`;
  }
}

/** Softmax over the channels of [N, C, H, W] or [C, H, W] at each place (torch.nn.Softmax2d: softmax along dimension -3). */
export class Softmax2d extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    checkRank('Softmax2d', x, 4, '[N, C, H, W]');
    return aten.softmax_int(x, -3);
  }
}

/**
 * Alpha dropout (torch.nn.AlphaDropout): in training mode, elements set to SELU's negative
 * saturation with probability p (default 0.5) and the result scaled and shifted to keep zero mean
 * and unit variance; the identity in evaluation mode.
 */
export class AlphaDropout extends Module {
  constructor(readonly p = 0.5) {
    super();
    F.checkDropoutP(new.target.name, p);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.alphaDropoutOf('AlphaDropout', x, this.p, this.training, false);
  }
  /** PyTorch's `p=..., inplace=False`. */
  override extraRepr(): string {
    return `p=${pyFloat(this.p)}, inplace=False`;
  }
}

/**
 * Alpha dropout of whole channels (torch.nn.FeatureAlphaDropout): as {@link AlphaDropout}, one draw
 * per channel of [N, C, ...].
 */
export class FeatureAlphaDropout extends Module {
  constructor(readonly p = 0.5) {
    super();
    F.checkDropoutP(new.target.name, p);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.alphaDropoutOf('FeatureAlphaDropout', x, this.p, this.training, true);
  }
  /** PyTorch's `p=..., inplace=False`. */
  override extraRepr(): string {
    return `p=${pyFloat(this.p)}, inplace=False`;
  }
}
