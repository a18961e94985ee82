// Parameter initialisation with PyTorch's formulas (torch.nn.init), drawing from libtorch's
// generator in the same order as PyTorch so that the same seed gives the same weights.
import { Tensor } from '../tensor.js';
import { noGrad } from '../autograd.js';
import * as aten from '../generated/aten.js';

export type Nonlinearity = 'linear' | 'conv2d' | 'sigmoid' | 'tanh' | 'relu' | 'leaky_relu' | 'selu';

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

export function fanInAndOut(shape: number[]): { fanIn: number; fanOut: number } {
  if (shape.length < 2) throw new Error('fan in/out need a tensor with at least 2 dimensions');
  const receptive = shape.slice(2).reduce((a, b) => a * b, 1);
  return { fanIn: shape[1]! * receptive, fanOut: shape[0]! * receptive };
}

export function uniform_(t: Tensor, low: number, high: number): Tensor {
  return noGrad(() => aten.uniform_(t, low, high));
}

export function normal_(t: Tensor, mean = 0, std = 1): Tensor {
  return noGrad(() => aten.normal_(t, mean, std));
}

export function constant_(t: Tensor, value: number): Tensor {
  return noGrad(() => t.fill_(value));
}

export interface KaimingOptions {
  a?: number;
  mode?: 'fan_in' | 'fan_out';
  nonlinearity?: Nonlinearity;
}

export function kaimingUniform_(t: Tensor, options: KaimingOptions = {}): Tensor {
  const { fanIn, fanOut } = fanInAndOut(t.shape);
  const fan = (options.mode ?? 'fan_in') === 'fan_in' ? fanIn : fanOut;
  const gain = calculateGain(options.nonlinearity ?? 'leaky_relu', options.a ?? 0);
  const bound = Math.sqrt(3) * (gain / Math.sqrt(fan));
  return uniform_(t, -bound, bound);
}

export function kaimingNormal_(t: Tensor, options: KaimingOptions = {}): Tensor {
  const { fanIn, fanOut } = fanInAndOut(t.shape);
  const fan = (options.mode ?? 'fan_in') === 'fan_in' ? fanIn : fanOut;
  const gain = calculateGain(options.nonlinearity ?? 'leaky_relu', options.a ?? 0);
  return normal_(t, 0, gain / Math.sqrt(fan));
}

export function xavierUniform_(t: Tensor, gain = 1): Tensor {
  const { fanIn, fanOut } = fanInAndOut(t.shape);
  const bound = gain * Math.sqrt(6 / (fanIn + fanOut));
  return uniform_(t, -bound, bound);
}

export function xavierNormal_(t: Tensor, gain = 1): Tensor {
  const { fanIn, fanOut } = fanInAndOut(t.shape);
  return normal_(t, 0, gain * Math.sqrt(2 / (fanIn + fanOut)));
}
