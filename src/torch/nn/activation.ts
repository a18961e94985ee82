// Parameter-free layers: activations, upsampling, reshaping and containers (pooling: pooling.ts).
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { checksOf } from '../../util/arguments.js';
import { checkTensor } from './layer-util.js';

/** Elementwise max(x, 0). */
export class ReLU extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.relu(x);
  }
}
/** The Gaussian error linear unit (exact, or the 'tanh' approximation). */
export class GELU extends Module {
  constructor(readonly approximate: 'none' | 'tanh' = 'none') {
    super();
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.gelu(x, this.approximate);
  }
}
/** Elementwise max(x, 0) + negativeSlope min(x, 0) (torch.nn.LeakyReLU; default slope 0.01). */
export class LeakyReLU extends Module {
  constructor(readonly negativeSlope = 0.01) {
    super();
    checksOf('LeakyReLU').number(negativeSlope, 'negativeSlope');
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.leaky_relu(x, this.negativeSlope);
  }
}
/** Elementwise x sigmoid(x), the sigmoid linear unit or swish (torch.nn.SiLU). */
export class SiLU extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.silu(x);
  }
}
/** Elementwise x for x > 0, alpha (exp(x) - 1) otherwise (torch.nn.ELU; default alpha 1). */
export class ELU extends Module {
  constructor(readonly alpha = 1) {
    super();
    checksOf('ELU').number(alpha, 'alpha');
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.elu(x, this.alpha);
  }
}
/** Elementwise log(1 + exp(beta x)) / beta, linear where beta x > threshold (torch.nn.Softplus; defaults 1 and 20). */
export class Softplus extends Module {
  constructor(
    readonly beta = 1,
    readonly threshold = 20,
  ) {
    super();
    const c = checksOf('Softplus');
    c.number(beta, 'beta', { above: 0 });
    c.number(threshold, 'threshold');
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.softplus(x, this.beta, this.threshold);
  }
}
/** Softmax along `dim` (torch.nn.Softmax; here `dim` defaults to -1, where PyTorch's legacy default guesses). */
export class Softmax extends Module {
  constructor(readonly dim = -1) {
    super();
    checksOf('Softmax').integer(dim, 'dim', { min: -64, max: 63 });
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.softmax_int(x, this.dim);
  }
}
/** Log-softmax along `dim` (torch.nn.LogSoftmax; `dim` defaults to -1). */
export class LogSoftmax extends Module {
  constructor(readonly dim = -1) {
    super();
    checksOf('LogSoftmax').integer(dim, 'dim', { min: -64, max: 63 });
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.log_softmax_int(x, this.dim);
  }
}
/** Elementwise logistic sigmoid. */
export class Sigmoid extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.sigmoid(x);
  }
}
/** Elementwise hyperbolic tangent. */
export class Tanh extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.tanh(x);
  }
}
/** Returns its input. */
export class Identity extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    checkTensor('Identity', x);
    return x.clone();
  }
}
/** Flattens dimensions startDim..endDim (default 1..-1) into one. */
export class Flatten extends Module {
  constructor(
    readonly startDim = 1,
    readonly endDim = -1,
  ) {
    super();
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    checkTensor('Flatten', x);
    return x.flatten(this.startDim, this.endDim);
  }
}
/** A module whose forward takes one tensor and returns one tensor. */
export type Layer = Module & {
  /** Applies the layer. */
  forward(x: Tensor): Tensor;
};

/** Applies its layers in order, freeing each intermediate output as soon as the next exists. */
export class Sequential extends Module {
  readonly layers: Layer[];
  constructor(...layers: Layer[]) {
    super();
    this.layers = layers.map((layer, i) => this.registerModule(String(i), layer));
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    let out = x;
    for (const layer of this.layers) {
      const next = layer.forward(out);
      // an intermediate is freed once used; a forward hook may have replaced it with anything
      // (PyTorch lets it), or the next layer may hand it back as its output
      if (out !== x && out !== next && out instanceof Tensor) out.dispose();
      out = next;
    }
    // an empty Sequential (or layers that pass x through) returns a copy the caller owns, as its
    // other outputs are; what is not a tensor comes back as it is (PyTorch returns the input)
    return out === x && x instanceof Tensor ? x.clone() : out;
  }
}

/** Holds submodules by index (names '0', '1', ...), as nn.ModuleList. */
export class ModuleList<M extends Module = Module> extends Module {
  readonly items: M[];
  constructor(items: M[]) {
    super();
    this.items = items.map((m, i) => this.registerModule(String(i), m));
  }
  get length(): number {
    return this.items.length;
  }
  /** The item at index i (0-based); RangeError when out of range. */
  at(i: number): M {
    const m = this.items[i];
    if (!m) throw new RangeError(`ModuleList index ${i} out of range (length ${this.items.length})`);
    return m;
  }
}
