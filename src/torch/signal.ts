// Window functions and the short-time Fourier transform (torch.hann_window, ..., torch.stft,
// torch.istft): PyTorch's functions with their keyword arguments in an options object, over
// libtorch's kernels, so values and gradients are PyTorch's. The arguments are checked here so that
// a bad one names this function and the remedy instead of surfacing as a libtorch message.
import { Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import { isFloatingPoint, type DType } from './dtype.js';
import { creationDevice, type DeviceLike } from './device.js';
import { checksOf, type ArgumentChecks } from '../util/arguments.js';

/** How a window is made: periodic or symmetric, its dtype and device. */
export interface WindowOptions {
  /**
   * True (default): the window for spectral analysis, as if one sample longer with the last one
   * dropped (what stft wants); false: the symmetric window, for filter design.
   */
  periodic?: boolean;
  /** A floating dtype (default float32, as PyTorch's default dtype). */
  dtype?: DType;
  /** Where the window is created (default the default device, see setDefaultDevice). */
  device?: DeviceLike;
}

/** The coefficients of {@link hammingWindow}: w[n] = alpha - beta cos(2πn / (N - 1)). */
export interface HammingWindowOptions extends WindowOptions {
  /** The constant term (default 0.54). */
  alpha?: number;
  /** The cosine's weight (default 0.46). */
  beta?: number;
}

/** The shape parameter of {@link kaiserWindow}. */
export interface KaiserWindowOptions extends WindowOptions {
  /** The shape: 0 gives a rectangle, larger values a narrower window (default 12). */
  beta?: number;
}

interface CheckedWindow {
  c: ArgumentChecks;
  periodic: boolean;
  dtype: DType;
  device: string | undefined;
}

function windowArgs(
  fn: string,
  windowLength: unknown,
  options: WindowOptions,
): CheckedWindow & { n: number } {
  const c = checksOf(fn);
  const n = c.integer(windowLength, 'windowLength', { min: 0 });
  c.object(options, 'options');
  const periodic = options.periodic ?? true;
  if (typeof periodic !== 'boolean') c.fail('options.periodic', 'true or false', periodic);
  const dtype = options.dtype ?? 'float32';
  if (!isFloatingPoint(dtype)) c.fail('options.dtype', 'a floating dtype (float32, float64, ...)', dtype);
  return { c, n, periodic, dtype, device: creationDevice(options.device) };
}

/**
 * The Hann window (torch.hann_window): w[n] = sin²(πn / (N - 1)), N being `windowLength` + 1 when
 * periodic. Shape: [windowLength].
 */
export function hannWindow(windowLength: number, options: WindowOptions = {}): Tensor {
  const a = windowArgs('torch.hannWindow', windowLength, options);
  return aten.hann_window_periodic(a.n, a.periodic, a.dtype, null, a.device);
}

/**
 * The Hamming window (torch.hamming_window): w[n] = alpha - beta cos(2πn / (N - 1)), N being
 * `windowLength` + 1 when periodic. Shape: [windowLength].
 */
export function hammingWindow(windowLength: number, options: HammingWindowOptions = {}): Tensor {
  const a = windowArgs('torch.hammingWindow', windowLength, options);
  const alpha = a.c.number(options.alpha ?? 0.54, 'options.alpha');
  const beta = a.c.number(options.beta ?? 0.46, 'options.beta');
  return aten.hamming_window_periodic_alpha_beta(a.n, a.periodic, alpha, beta, a.dtype, null, a.device);
}

/**
 * The Blackman window (torch.blackman_window): w[n] = 0.42 - 0.5 cos(2πn / (N - 1)) + 0.08
 * cos(4πn / (N - 1)), N being `windowLength` + 1 when periodic. Shape: [windowLength].
 */
export function blackmanWindow(windowLength: number, options: WindowOptions = {}): Tensor {
  const a = windowArgs('torch.blackmanWindow', windowLength, options);
  return aten.blackman_window_periodic(a.n, a.periodic, a.dtype, null, a.device);
}

/**
 * The Bartlett (triangular) window (torch.bartlett_window): w[n] = 1 - |2n / (N - 1) - 1|, N being
 * `windowLength` + 1 when periodic. Shape: [windowLength].
 */
export function bartlettWindow(windowLength: number, options: WindowOptions = {}): Tensor {
  const a = windowArgs('torch.bartlettWindow', windowLength, options);
  return aten.bartlett_window_periodic(a.n, a.periodic, a.dtype, null, a.device);
}

/**
 * The Kaiser window (torch.kaiser_window): w[n] = I₀(beta √(1 - (2n / (N - 1) - 1)²)) / I₀(beta),
 * N being `windowLength` + 1 when periodic. Shape: [windowLength].
 */
export function kaiserWindow(windowLength: number, options: KaiserWindowOptions = {}): Tensor {
  const a = windowArgs('torch.kaiserWindow', windowLength, options);
  const beta = a.c.number(options.beta ?? 12, 'options.beta', { min: 0 });
  return aten.kaiser_window_beta(a.n, a.periodic, beta, a.dtype, null, a.device);
}

/** The framing shared by {@link stft} and {@link istft}. */
export interface FrameOptions {
  /** The step between frames (default ⌊nFft / 4⌋). */
  hopLength?: number;
  /** The window's length, at most nFft; the window is zero-padded to nFft in the middle (default nFft). */
  winLength?: number;
  /** A 1-d window of winLength samples (e.g. {@link hannWindow}); default a rectangle of ones. */
  window?: Tensor | null;
  /** Whether frame t is centred on sample t hopLength (default true): the signal is padded by ⌊nFft / 2⌋ on both sides. */
  center?: boolean;
  /** Whether the result is scaled by 1/√nFft (default false). */
  normalized?: boolean;
  /** Whether only the nFft/2 + 1 non-negative frequencies are kept (default true for a real signal and window). */
  onesided?: boolean;
}

/** The arguments of {@link stft} after the signal and nFft. */
export interface StftOptions extends FrameOptions {
  /** How the centred signal is padded: 'reflect' (default) or 'constant' (zeros). */
  padMode?: 'reflect' | 'constant';
  /**
   * Only true (default): the result is a complex tensor. PyTorch's real [..., 2] form (false) is
   * deprecated there and not offered; `viewAsReal` reads the complex result that way.
   */
  returnComplex?: true;
}

/** The arguments of {@link istft} after the spectrogram and nFft. */
export interface IstftOptions extends FrameOptions {
  /** The length of the signal returned: trims or zero-pads the end (default as many samples as the frames cover). */
  length?: number;
  /** Whether the result is complex, for a two-sided spectrogram of a complex signal (default false). */
  returnComplex?: boolean;
}

const PAD_MODES = ['reflect', 'constant'] as const;

function flag(c: ArgumentChecks, options: Record<string, unknown>, name: string): boolean | null {
  const v = options[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'boolean') c.fail(`options.${name}`, 'true or false', v);
  return v;
}

/** Checks the framing: hop, window length and the window itself; returns them for libtorch. */
function framing(c: ArgumentChecks, nFft: unknown, options: FrameOptions) {
  const n = c.integer(nFft, 'nFft', { min: 1 });
  c.object(options, 'options');
  const hop = c.integer(options.hopLength ?? Math.max(1, Math.floor(n / 4)), 'options.hopLength', { min: 1 });
  const win = c.integer(options.winLength ?? n, 'options.winLength', { min: 1, max: n });
  const window = options.window ?? null;
  if (window !== null) {
    if (!(window instanceof Tensor)) c.fail('options.window', 'a Tensor or null', window);
    if (window.ndim !== 1 || window.shape[0] !== win)
      c.fail('options.window', `a 1-d tensor of winLength = ${win} samples (see hannWindow)`, window);
  }
  const o = options as Record<string, unknown>;
  return {
    n,
    hop,
    win,
    window,
    center: flag(c, o, 'center') ?? true,
    normalized: flag(c, o, 'normalized') ?? false,
    onesided: flag(c, o, 'onesided'),
  };
}

/**
 * The short-time Fourier transform (torch.stft): the FFT of `nFft` samples of `input` every
 * hopLength samples, each frame multiplied by the window. `input`: a real or complex signal
 * [length] or a batch [batch, length]. Returns a complex tensor [(batch,) frequencies, frames],
 * frequencies nFft/2 + 1 when onesided, else nFft; frames 1 + ⌊(length - nFft) / hopLength⌋, length
 * counting the centre padding.
 */
export function stft(input: Tensor, nFft: number, options: StftOptions = {}): Tensor {
  const c = checksOf('torch.stft');
  if (!(input instanceof Tensor)) c.fail('input', 'a Tensor', input);
  if (input.ndim !== 1 && input.ndim !== 2)
    c.fail('input', 'a 1-d signal or a 2-d batch of signals [batch, length]', input);
  const f = framing(c, nFft, options);
  const padMode = c.oneOf(options.padMode ?? 'reflect', 'options.padMode', PAD_MODES);
  if (options.returnComplex !== undefined && options.returnComplex !== true)
    c.fail(
      'options.returnComplex',
      'true (the real [..., 2] form is deprecated in PyTorch: read the complex result with torch.viewAsReal)',
      options.returnComplex,
    );
  const length = input.shape[input.ndim - 1];
  const pad = f.center ? Math.floor(f.n / 2) : 0;
  if (f.center && padMode === 'reflect' && pad >= length)
    c.fail(
      'nFft',
      `below ${2 * length} for reflect padding of a ${length}-sample signal (or padMode 'constant')`,
      nFft,
    );
  if (length + 2 * pad < f.n)
    c.fail(
      'nFft',
      `at most the signal's ${length} samples${f.center ? ' plus the centre padding' : ''} (or center: true)`,
      nFft,
    );
  return aten.stft_center(
    input,
    f.n,
    f.hop,
    f.win,
    f.window,
    f.center,
    padMode,
    f.normalized,
    f.onesided,
    true,
  );
}

/**
 * The inverse of {@link stft} (torch.istft) by overlap-add, with the same nFft and framing options:
 * a complex spectrogram [(batch,) frequencies, frames] back to the signal [(batch,) length]. The
 * window's squares must not sum to zero anywhere (as for a Hann window with hopLength ≤ nFft / 2).
 */
export function istft(input: Tensor, nFft: number, options: IstftOptions = {}): Tensor {
  const c = checksOf('torch.istft');
  if (!(input instanceof Tensor)) c.fail('input', 'a Tensor', input);
  if (!input.dtype.startsWith('complex') || (input.ndim !== 2 && input.ndim !== 3))
    c.fail(
      'input',
      'a complex spectrogram [frequencies, frames] or [batch, frequencies, frames] (from stft)',
      input,
    );
  const f = framing(c, nFft, options);
  const frequencies = input.shape[input.ndim - 2];
  const onesided = f.onesided ?? frequencies !== f.n;
  const expected = onesided ? Math.floor(f.n / 2) + 1 : f.n;
  if (frequencies !== expected)
    c.fail(
      'input',
      `${expected} frequencies for nFft = ${f.n}${onesided ? ' (onesided)' : ''}; give stft's nFft and onesided`,
      input,
    );
  const length =
    options.length === undefined ? null : c.integer(options.length, 'options.length', { min: 1 });
  const returnComplex = flag(c, options as Record<string, unknown>, 'returnComplex') ?? false;
  if (returnComplex && onesided)
    c.fail('options.returnComplex', 'false for a onesided spectrogram (or onesided: false)', true);
  return aten.istft(
    input,
    f.n,
    f.hop,
    f.win,
    f.window,
    f.center,
    f.normalized,
    onesided,
    length,
    returnComplex,
  );
}
