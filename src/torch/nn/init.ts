// Parameter initialisation with PyTorch's formulas (torch.nn.init), drawing from libtorch's
// generator in the same order as PyTorch so that the same seed gives the same weights. Every
// function runs without recording gradients and returns the tensor it filled, as PyTorch's do.
import { Tensor } from '../tensor.js';
import { noGrad } from '../autograd.js';
import * as aten from '../generated/aten.js';
import { tensorArg } from '../tensor-args.js';
import { checksOf, type ArgumentChecks } from '../../util/arguments.js';

export {
  eye_,
  dirac_,
  orthogonal_,
  sparse_,
  truncNormal_,
  type TruncNormalOptions,
} from './init-structured.js';

/** The nonlinearities calculateGain knows (torch.nn.init.calculate_gain). */
export type Nonlinearity =
  | 'linear'
  | 'conv1d'
  | 'conv2d'
  | 'conv3d'
  | 'conv_transpose1d'
  | 'conv_transpose2d'
  | 'conv_transpose3d'
  | 'sigmoid'
  | 'tanh'
  | 'relu'
  | 'leaky_relu'
  | 'selu';

// PyTorch's names with a gain of 1: the linear maps (convolutions included) and sigmoid.
const unitGain = new Set<string>([
  'linear',
  'conv1d',
  'conv2d',
  'conv3d',
  'conv_transpose1d',
  'conv_transpose2d',
  'conv_transpose3d',
  'sigmoid',
]);
const nonlinearities = [...unitGain, 'tanh', 'relu', 'leaky_relu', 'selu'];

/**
 * The recommended gain for a nonlinearity (torch.nn.init.calculate_gain); `param` is the negative
 * slope of leaky_relu (default 0.01) and is ignored by the others. An unknown name is an error.
 */
export function calculateGain(nonlinearity: Nonlinearity, param?: number): number {
  return gainOf(checksOf('calculateGain'), nonlinearity, param);
}

function gainOf(c: ArgumentChecks, nonlinearity: unknown, param: unknown, paramName = 'param'): number {
  if (typeof nonlinearity !== 'string' || !nonlinearities.includes(nonlinearity))
    c.fail('nonlinearity', `one of ${nonlinearities.map((n) => `'${n}'`).join(', ')}`, nonlinearity);
  if (unitGain.has(nonlinearity as string)) return 1;
  switch (nonlinearity) {
    case 'tanh':
      return 5.0 / 3;
    case 'relu':
      return Math.sqrt(2.0);
    case 'leaky_relu': {
      const slope = param === undefined || param === null ? 0.01 : c.number(param, paramName);
      return Math.sqrt(2.0 / (1 + slope ** 2));
    }
    default:
      return 3.0 / 4; // selu
  }
}

/** Fan in and fan out of a weight shape [out, in, ...kernel]; throws with fewer than 2 dimensions. */
export function fanInAndOut(shape: number[]): { fanIn: number; fanOut: number } {
  if (shape.length < 2)
    throw new Error(
      `fan in/out need a tensor with at least 2 dimensions, got shape [${shape.join(', ')}]; ` +
        'use uniform_ or normal_ for biases and other 1-d tensors',
    );
  const receptive = shape.slice(2).reduce((a, b) => a * b, 1);
  return { fanIn: shape[1]! * receptive, fanOut: shape[0]! * receptive };
}

/** Fills `t` in place with values uniform in [low, high) (default [0, 1)); returns it. */
export function uniform_(t: Tensor, low = 0, high = 1): Tensor {
  const c = checksOf('uniform_');
  tensorArg(c, t, 't');
  c.number(low, 'low');
  c.number(high, 'high', { min: low });
  return noGrad(() => aten.uniform_(t, low, high));
}

/** Fills `t` in place with normal values (default mean 0, std 1); returns it. */
export function normal_(t: Tensor, mean = 0, std = 1): Tensor {
  const c = checksOf('normal_');
  tensorArg(c, t, 't');
  c.number(mean, 'mean');
  c.number(std, 'std', { min: 0 });
  return noGrad(() => aten.normal_(t, mean, std));
}

/** Fills `t` in place with `value`; returns it. */
export function constant_(t: Tensor, value: number): Tensor {
  const c = checksOf('constant_');
  tensorArg(c, t, 't');
  c.number(value, 'value');
  return noGrad(() => t.fill_(value));
}

/** Fills `t` in place with ones (torch.nn.init.ones_); returns it. */
export function ones_(t: Tensor): Tensor {
  tensorArg(checksOf('ones_'), t, 't');
  return noGrad(() => t.fill_(1));
}

/** Fills `t` in place with zeros (torch.nn.init.zeros_); returns it. */
export function zeros_(t: Tensor): Tensor {
  tensorArg(checksOf('zeros_'), t, 't');
  return noGrad(() => t.zero_());
}

/** Options of the Kaiming initialisations: `a` (negative slope, default 0), mode (default 'fan_in'), nonlinearity (default 'leaky_relu'). */
export interface KaimingOptions {
  /** The negative slope of the rectifier after this layer, used with 'leaky_relu' (default 0). */
  a?: number;
  /** 'fan_in' keeps the variance of the forward pass, 'fan_out' that of the backward pass. */
  mode?: 'fan_in' | 'fan_out';
  /** The nonlinearity after this layer (default 'leaky_relu'); see calculateGain. */
  nonlinearity?: Nonlinearity;
}

// PyTorch's std = gain / sqrt(fan), computed in the same order so that the bounds agree bit for bit.
function kaimingStd(fn: string, t: Tensor, options: KaimingOptions): number {
  const c = checksOf(fn);
  tensorArg(c, t, 't');
  c.object(options, 'options');
  const mode = options.mode ?? 'fan_in';
  if (mode !== 'fan_in' && mode !== 'fan_out') c.fail('options.mode', "'fan_in' or 'fan_out'", mode);
  const { fanIn, fanOut } = fanInAndOut(t.shape);
  const gain = gainOf(c, options.nonlinearity ?? 'leaky_relu', options.a ?? 0, 'options.a');
  return gain / Math.sqrt(mode === 'fan_in' ? fanIn : fanOut);
}

/**
 * He (Kaiming) uniform initialisation in place (torch.nn.init.kaiming_uniform_): values uniform in
 * ±√3·gain/√fan. A tensor with no elements is left as it is. Returns `t`.
 */
export function kaimingUniform_(t: Tensor, options: KaimingOptions = {}): Tensor {
  const std = kaimingStd('kaimingUniform_', t, options);
  if (t.numel === 0) return t;
  const bound = Math.sqrt(3.0) * std;
  return noGrad(() => aten.uniform_(t, -bound, bound));
}

/**
 * He (Kaiming) normal initialisation in place (torch.nn.init.kaiming_normal_): std gain/√fan. A
 * tensor with no elements is left as it is. Returns `t`.
 */
export function kaimingNormal_(t: Tensor, options: KaimingOptions = {}): Tensor {
  const std = kaimingStd('kaimingNormal_', t, options);
  if (t.numel === 0) return t;
  return noGrad(() => aten.normal_(t, 0, std));
}

// PyTorch's std = gain * sqrt(2 / (fan_in + fan_out)).
function xavierStd(fn: string, t: Tensor, gain: number): number {
  const c = checksOf(fn);
  tensorArg(c, t, 't');
  c.number(gain, 'gain');
  const { fanIn, fanOut } = fanInAndOut(t.shape);
  return gain * Math.sqrt(2.0 / (fanIn + fanOut));
}

/** Glorot (Xavier) uniform initialisation in place with `gain` (default 1): values uniform in ±√3·std; returns `t`. */
export function xavierUniform_(t: Tensor, gain = 1): Tensor {
  const bound = Math.sqrt(3.0) * xavierStd('xavierUniform_', t, gain);
  return noGrad(() => aten.uniform_(t, -bound, bound));
}

/** Glorot (Xavier) normal initialisation in place with `gain` (default 1): std gain·√(2/(fanIn+fanOut)); returns `t`. */
export function xavierNormal_(t: Tensor, gain = 1): Tensor {
  const std = xavierStd('xavierNormal_', t, gain);
  return noGrad(() => aten.normal_(t, 0, std));
}
