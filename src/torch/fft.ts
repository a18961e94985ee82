// Discrete Fourier transforms (torch.fft): PyTorch's functions and arguments in camelCase over
// libtorch's fft_* kernels (pocketfft on the CPU, cuFFT on CUDA), so results and gradients are
// PyTorch's. Complex results are complex64/complex128 tensors (complex.ts): `viewAsReal(X)` reads
// them as [..., 2] (real, imaginary) pairs, `X.toArray()` as interleaved pairs, `X.abs()` gives
// magnitudes. ihfft returns a lazily conjugated view (as PyTorch does), which both readers resolve.
import { Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import type { DType } from './dtype.js';
import { creationDevice, type DeviceLike } from './device.js';
import { checksOf, type ArgumentChecks } from '../util/arguments.js';

/**
 * The scaling of a transform pair: 'backward' (default: the inverse divides by n), 'ortho' (both
 * by √n, unitary) or 'forward' (the forward transform divides by n).
 */
export type FftNorm = 'backward' | 'ortho' | 'forward';

const NORMS: readonly FftNorm[] = ['backward', 'ortho', 'forward'];

/** The checked arguments every transform shares: the input tensor and the norm mode. */
function checked(fn: string, input: unknown, norm: unknown): { c: ArgumentChecks; norm: FftNorm | null } {
  const c = checksOf(`fft.${fn}`);
  if (!(input instanceof Tensor)) c.fail('input', 'a Tensor', input);
  return { c, norm: norm === null || norm === undefined ? null : c.oneOf(norm, 'norm', NORMS) };
}

function length(c: ArgumentChecks, n: number | null, name: string): number | null {
  return n === null ? null : c.integer(n, name, { min: 1 });
}

function sizes(c: ArgumentChecks, s: number[] | null): number[] | null {
  if (s === null) return null;
  c.array(s, 's');
  s.forEach((v, i) => c.integer(v, `s[${i}]`, { min: -1 }));
  return s;
}

/**
 * The 1-d discrete Fourier transform along `dim` (torch.fft.fft), the input zero-padded or
 * trimmed to `n` when given. Real inputs are promoted to complex. Shape: `input`'s with `n` at `dim`.
 */
export function fft(input: Tensor, n: number | null = null, dim = -1, norm: FftNorm | null = null): Tensor {
  const a = checked('fft', input, norm);
  return aten.fft_fft(input, length(a.c, n, 'n'), dim, a.norm);
}

/** The inverse of {@link fft} along `dim` (torch.fft.ifft). Shape: `input`'s with `n` at `dim`. */
export function ifft(input: Tensor, n: number | null = null, dim = -1, norm: FftNorm | null = null): Tensor {
  const a = checked('ifft', input, norm);
  return aten.fft_ifft(input, length(a.c, n, 'n'), dim, a.norm);
}

/**
 * The FFT of a real input along `dim`, keeping the non-negative frequencies only (torch.fft.rfft).
 * Shape: `input`'s with n/2 + 1 (floor) at `dim`, n being `n` or the input's size there.
 */
export function rfft(input: Tensor, n: number | null = null, dim = -1, norm: FftNorm | null = null): Tensor {
  const a = checked('rfft', input, norm);
  return aten.fft_rfft(input, length(a.c, n, 'n'), dim, a.norm);
}

/**
 * The inverse of {@link rfft}: a real signal of length `n` along `dim` (default 2 (m - 1) for m
 * input frequencies: give `n` for odd lengths) (torch.fft.irfft). Shape: `input`'s with n at `dim`.
 */
export function irfft(input: Tensor, n: number | null = null, dim = -1, norm: FftNorm | null = null): Tensor {
  const a = checked('irfft', input, norm);
  return aten.fft_irfft(input, length(a.c, n, 'n'), dim, a.norm);
}

/**
 * The FFT of a Hermitian-symmetric signal given by its first half along `dim`: a real result of
 * length `n` (default 2 (m - 1)) (torch.fft.hfft). Shape: `input`'s with n at `dim`.
 */
export function hfft(input: Tensor, n: number | null = null, dim = -1, norm: FftNorm | null = null): Tensor {
  const a = checked('hfft', input, norm);
  return aten.fft_hfft(input, length(a.c, n, 'n'), dim, a.norm);
}

/**
 * The inverse of {@link hfft} for a real input (torch.fft.ihfft): a conjugated view, as in PyTorch
 * (`resolveConj` makes it an ordinary tensor). Shape: `input`'s with n/2 + 1 at `dim`.
 */
export function ihfft(input: Tensor, n: number | null = null, dim = -1, norm: FftNorm | null = null): Tensor {
  const a = checked('ihfft', input, norm);
  return aten.fft_ihfft(input, length(a.c, n, 'n'), dim, a.norm);
}

/**
 * The 2-d FFT over `dim` (default the last two) (torch.fft.fft2), `s` giving the signal sizes
 * there (padded or trimmed; -1 keeps one). Shape: `input`'s with `s` at `dim`.
 */
export function fft2(
  input: Tensor,
  s: number[] | null = null,
  dim: number[] = [-2, -1],
  norm: FftNorm | null = null,
): Tensor {
  const a = checked('fft2', input, norm);
  return aten.fft_fft2(input, sizes(a.c, s), dim, a.norm);
}

/** The inverse of {@link fft2} (torch.fft.ifft2). Shape: `input`'s with `s` at `dim`. */
export function ifft2(
  input: Tensor,
  s: number[] | null = null,
  dim: number[] = [-2, -1],
  norm: FftNorm | null = null,
): Tensor {
  const a = checked('ifft2', input, norm);
  return aten.fft_ifft2(input, sizes(a.c, s), dim, a.norm);
}

/** The 2-d FFT of a real input, the last of `dim` halved as in {@link rfft} (torch.fft.rfft2). */
export function rfft2(
  input: Tensor,
  s: number[] | null = null,
  dim: number[] = [-2, -1],
  norm: FftNorm | null = null,
): Tensor {
  const a = checked('rfft2', input, norm);
  return aten.fft_rfft2(input, sizes(a.c, s), dim, a.norm);
}

/** The inverse of {@link rfft2}: a real result of sizes `s` over `dim` (torch.fft.irfft2). */
export function irfft2(
  input: Tensor,
  s: number[] | null = null,
  dim: number[] = [-2, -1],
  norm: FftNorm | null = null,
): Tensor {
  const a = checked('irfft2', input, norm);
  return aten.fft_irfft2(input, sizes(a.c, s), dim, a.norm);
}

/**
 * The n-d FFT over `dim` (default all dimensions, or the last `s.length`) (torch.fft.fftn).
 * Shape: `input`'s with `s` at `dim`.
 */
export function fftn(
  input: Tensor,
  s: number[] | null = null,
  dim: number[] | null = null,
  norm: FftNorm | null = null,
): Tensor {
  const a = checked('fftn', input, norm);
  return aten.fft_fftn(input, sizes(a.c, s), dim, a.norm);
}

/** The inverse of {@link fftn} (torch.fft.ifftn). Shape: `input`'s with `s` at `dim`. */
export function ifftn(
  input: Tensor,
  s: number[] | null = null,
  dim: number[] | null = null,
  norm: FftNorm | null = null,
): Tensor {
  const a = checked('ifftn', input, norm);
  return aten.fft_ifftn(input, sizes(a.c, s), dim, a.norm);
}

/** The n-d FFT of a real input, the last of `dim` halved as in {@link rfft} (torch.fft.rfftn). */
export function rfftn(
  input: Tensor,
  s: number[] | null = null,
  dim: number[] | null = null,
  norm: FftNorm | null = null,
): Tensor {
  const a = checked('rfftn', input, norm);
  return aten.fft_rfftn(input, sizes(a.c, s), dim, a.norm);
}

/** The inverse of {@link rfftn}: a real result of sizes `s` over `dim` (torch.fft.irfftn). */
export function irfftn(
  input: Tensor,
  s: number[] | null = null,
  dim: number[] | null = null,
  norm: FftNorm | null = null,
): Tensor {
  const a = checked('irfftn', input, norm);
  return aten.fft_irfftn(input, sizes(a.c, s), dim, a.norm);
}

/** Where a frequency vector is created: its dtype (default float32) and device. */
export interface FrequencyOptions {
  /** The floating dtype of the frequencies (default float32, as PyTorch's default dtype). */
  dtype?: DType;
  /** Where the tensor is created (default the default device, see setDefaultDevice). */
  device?: DeviceLike;
}

/**
 * The sample frequencies of an `n`-point {@link fft} with sample spacing `d` (torch.fft.fftfreq):
 * [0, 1, ..., ⌈n/2⌉ - 1, -⌊n/2⌋, ..., -1] / (d n). Shape: [n].
 */
export function fftfreq(n: number, d = 1, options: FrequencyOptions = {}): Tensor {
  const c = checksOf('fft.fftfreq');
  c.integer(n, 'n', { min: 1 });
  c.number(d, 'd', { above: 0 });
  return aten.fft_fftfreq(n, d, options.dtype ?? 'float32', null, creationDevice(options.device));
}

/** The non-negative sample frequencies of an `n`-point {@link rfft} (torch.fft.rfftfreq). Shape: [⌊n/2⌋ + 1]. */
export function rfftfreq(n: number, d = 1, options: FrequencyOptions = {}): Tensor {
  const c = checksOf('fft.rfftfreq');
  c.integer(n, 'n', { min: 1 });
  c.number(d, 'd', { above: 0 });
  return aten.fft_rfftfreq(n, d, options.dtype ?? 'float32', null, creationDevice(options.device));
}

/**
 * Rolls the zero frequency to the middle of `dim` (default all dimensions) (torch.fft.fftshift),
 * as for plotting a spectrum. Shape: `input`'s.
 */
export function fftshift(input: Tensor, dim: number | number[] | null = null): Tensor {
  checked('fftshift', input, null);
  return aten.fft_fftshift(input, dim);
}

/** The inverse of {@link fftshift} (torch.fft.ifftshift). Shape: `input`'s. */
export function ifftshift(input: Tensor, dim: number | number[] | null = null): Tensor {
  checked('ifftshift', input, null);
  return aten.fft_ifftshift(input, dim);
}
