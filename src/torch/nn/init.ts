// Parameter initialisation with PyTorch's formulas (torch.nn.init), drawing from libtorch's
// generator in the same order as PyTorch so that the same seed gives the same weights.
import { Tensor } from '../tensor.js';
import { noGrad } from '../autograd.js';
import * as aten from '../generated/aten.js';

/** The nonlinearities calculateGain knows (torch.nn.init.calculate_gain). */
export type Nonlinearity = 'linear' | 'conv2d' | 'sigmoid' | 'tanh' | 'relu' | 'leaky_relu' | 'selu';

/** The recommended gain for a nonlinearity (torch.nn.init.calculate_gain); `param` is the negative slope of leaky_relu. */
export function calculateGain(nonlinearity: Nonlinearity, param?: number): number {
  switch (nonlinearity) {
    case 'tanh':
      return 5 / 3;
    case 'relu':
      return Math.SQRT2;
    case 'leaky_relu': {
      const slope = param ?? 0.01;
      return Math.sqrt(2 / (1 + slope * slope));
    }
    case 'selu':
      return 3 / 4;
    default:
      return 1;
  }
}

/** Fan in and fan out of a weight shape [out, in, ...kernel]; throws with fewer than 2 dimensions. */
export function fanInAndOut(shape: number[]): { fanIn: number; fanOut: number } {
  if (shape.length < 2) throw new Error('fan in/out need a tensor with at least 2 dimensions');
  const receptive = shape.slice(2).reduce((a, b) => a * b, 1);
  return { fanIn: shape[1]! * receptive, fanOut: shape[0]! * receptive };
}

/** Fills `t` in place with values uniform in [low, high); returns it. */
export function uniform_(t: Tensor, low: number, high: number): Tensor {
  return noGrad(() => aten.uniform_(t, low, high));
}

/** Fills `t` in place with normal values (default mean 0, std 1); returns it. */
export function normal_(t: Tensor, mean = 0, std = 1): Tensor {
  return noGrad(() => aten.normal_(t, mean, std));
}

/** Fills `t` in place with `value`; returns it. */
export function constant_(t: Tensor, value: number): Tensor {
  return noGrad(() => t.fill_(value));
}

/** Options of the Kaiming initialisations: `a` (negative slope, default 0), mode (default 'fan_in'), nonlinearity (default 'leaky_relu'). */
export interface KaimingOptions {
  a?: number;
  mode?: 'fan_in' | 'fan_out';
  nonlinearity?: Nonlinearity;
}

/** He (Kaiming) uniform initialisation in place (torch.nn.init.kaiming_uniform_); returns `t`. */
export function kaimingUniform_(t: Tensor, options: KaimingOptions = {}): Tensor {
  const { fanIn, fanOut } = fanInAndOut(t.shape);
  const fan = (options.mode ?? 'fan_in') === 'fan_in' ? fanIn : fanOut;
  const gain = calculateGain(options.nonlinearity ?? 'leaky_relu', options.a ?? 0);
  const bound = Math.sqrt(3) * (gain / Math.sqrt(fan));
  return uniform_(t, -bound, bound);
}

/** He (Kaiming) normal initialisation in place (torch.nn.init.kaiming_normal_); returns `t`. */
export function kaimingNormal_(t: Tensor, options: KaimingOptions = {}): Tensor {
  const { fanIn, fanOut } = fanInAndOut(t.shape);
  const fan = (options.mode ?? 'fan_in') === 'fan_in' ? fanIn : fanOut;
  const gain = calculateGain(options.nonlinearity ?? 'leaky_relu', options.a ?? 0);
  return normal_(t, 0, gain / Math.sqrt(fan));
}

/** Glorot (Xavier) uniform initialisation in place with `gain` (default 1); returns `t`. */
export function xavierUniform_(t: Tensor, gain = 1): Tensor {
  const { fanIn, fanOut } = fanInAndOut(t.shape);
  const bound = gain * Math.sqrt(6 / (fanIn + fanOut));
  return uniform_(t, -bound, bound);
}

/** Glorot (Xavier) normal initialisation in place with `gain` (default 1); returns `t`. */
export function xavierNormal_(t: Tensor, gain = 1): Tensor {
  const { fanIn, fanOut } = fanInAndOut(t.shape);
  return normal_(t, 0, gain * Math.sqrt(2 / (fanIn + fanOut)));
}
