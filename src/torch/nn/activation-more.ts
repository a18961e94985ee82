// More activation layers of torch.nn (PReLU, ReLU6, Hardtanh, ...): each the layer form of its
// function in functional-activation.ts, with PyTorch 1.13's arguments and defaults.
import { Tensor } from '../tensor.js';
import { full } from '../creation.js';
import { Module } from './module.js';
import { checkOptions, size } from './layer-util.js';
import { checksOf } from '../../util/arguments.js';
import * as F from './functional-activation.js';

/** Options of PReLU: how many slopes (1, or one per channel) and their initial value. */
export interface PReLUOptions {
  /** 1 (default, one slope shared by every channel) or the number of channels. */
  numParameters?: number;
  /** The initial slope (default 0.25). */
  init?: number;
}

/**
 * max(0, x) + a min(0, x) with learned slopes a (torch.nn.PReLU): the parameter `weight` holds
 * numParameters slopes (one, or one per channel: dimension 1 of the input),
 * all set to `init`.
 */
export class PReLU extends Module {
  readonly weight: Tensor;
  // The slope count is weight.shape[0]: Module's numParameters() counts scalars, as in tailor's other layers.
  readonly init: number;
  constructor(options: PReLUOptions = {}) {
    super();
    const c = checksOf('PReLU');
    checkOptions(c, options, { init: {} });
    const slopes = options.numParameters ?? 1;
    size(c, slopes, 'options.numParameters');
    this.init = options.init ?? 0.25;
    this.weight = this.registerParameter('weight', full([slopes], this.init));
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.preluOf('PReLU', x, this.weight);
  }
}

/** Elementwise x clipped to [minVal, maxVal] (torch.nn.Hardtanh; defaults -1 and 1). */
export class Hardtanh extends Module {
  constructor(
    readonly minVal = -1,
    readonly maxVal = 1,
  ) {
    super();
    F.checkHardtanh(new.target.name, minVal, maxVal);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.hardtanh(x, this.minVal, this.maxVal);
  }
}

/** Elementwise min(max(0, x), 6) (torch.nn.ReLU6, Hardtanh(0, 6) as in PyTorch). */
export class ReLU6 extends Hardtanh {
  constructor() {
    super(0, 6);
  }
}

/** Elementwise x relu6(x + 3) / 6 (torch.nn.Hardswish). */
export class Hardswish extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.hardswish(x);
  }
}

/** Elementwise relu6(x + 3) / 6 (torch.nn.Hardsigmoid). */
export class Hardsigmoid extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.hardsigmoid(x);
  }
}

/** Elementwise x tanh(softplus(x)) (torch.nn.Mish). */
export class Mish extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.mish(x);
  }
}

/** Elementwise log(sigmoid(x)) (torch.nn.LogSigmoid). */
export class LogSigmoid extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.logsigmoid(x);
  }
}

/** Elementwise x / (1 + |x|) (torch.nn.Softsign). */
export class Softsign extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.softsign(x);
  }
}

/** softmax(-x) along `dim` (torch.nn.Softmin; `dim` defaults to -1, where PyTorch's legacy default guesses). */
export class Softmin extends Module {
  constructor(readonly dim = -1) {
    super();
    checksOf('Softmin').integer(dim, 'dim', { min: -64, max: 63 });
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.softminOf('Softmin', x, this.dim);
  }
}

/** The gated linear unit a sigmoid(b), a and b the halves of the input along `dim` (torch.nn.GLU; default -1). */
export class GLU extends Module {
  constructor(readonly dim = -1) {
    super();
    checksOf('GLU').integer(dim, 'dim', { min: -64, max: 63 });
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.gluOf('GLU', x, this.dim);
  }
}

/** Elementwise scale (max(0, x) + min(0, alpha (exp(x) - 1))), PyTorch's fixed alpha and scale (torch.nn.SELU). */
export class SELU extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.selu(x);
  }
}

/** Elementwise max(0, x) + min(0, alpha (exp(x / alpha) - 1)) (torch.nn.CELU; default alpha 1). */
export class CELU extends Module {
  constructor(readonly alpha = 1) {
    super();
    F.checkCelu('CELU', alpha);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.celu(x, this.alpha);
  }
}

/** Elementwise x where x > threshold, `value` elsewhere (torch.nn.Threshold). */
export class Threshold extends Module {
  constructor(
    readonly threshold: number,
    readonly value: number,
  ) {
    super();
    const c = checksOf('Threshold');
    c.number(threshold, 'threshold');
    c.number(value, 'value');
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return F.threshold(x, this.threshold, this.value);
  }
}
