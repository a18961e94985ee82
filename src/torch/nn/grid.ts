// Grid sampling (F.grid_sample) and affine sampling grids (F.affine_grid), as PyTorch's
// functions: their argument checks here, the kernels ATen's.
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { isFloatingPoint } from '../dtype.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';

/** How gridSample reads the input between pixels: PyTorch's mode. */
export type GridSampleMode = 'bilinear' | 'nearest' | 'bicubic';
/** What gridSample reads outside the input: zeros, the border's value, or the input mirrored. */
export type GridSamplePaddingMode = 'zeros' | 'border' | 'reflection';

/** Options of gridSample (PyTorch's mode, padding_mode and align_corners, camelCase). */
export interface GridSampleOptions {
  /** The interpolation (default 'bilinear'; 'bicubic' for 4-d inputs only, as PyTorch). */
  mode?: GridSampleMode;
  /** What is read outside the input (default 'zeros'). */
  paddingMode?: GridSamplePaddingMode;
  /** -1 and 1 are the centres of the corner pixels rather than the input's outer edges (default false). */
  alignCorners?: boolean;
}

// ATen's enums, in PyTorch's order (torch.nn.functional.grid_sample)
const MODES: readonly GridSampleMode[] = ['bilinear', 'nearest', 'bicubic'];
const PADDING_MODES: readonly GridSamplePaddingMode[] = ['zeros', 'border', 'reflection'];

/** An optional alignCorners, checked (default false, PyTorch's since 1.3). */
function alignCornersOf(c: ReturnType<typeof checksOf>, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean')
    c.fail('options.alignCorners', 'true or false', value);
  return value === true;
}

/**
 * Samples `input` [N, C, H, W] at the points of `grid` [N, H', W', 2] (or [N, C, D, H, W] at
 * [N, D', H', W', 3]), as F.grid_sample: each grid point holds (x, y[, z]) normalised to [-1, 1]
 * over the input's width, height (and depth); the output is [N, C, H', W'] ([N, C, D', H', W']).
 * Differentiable in the input and the grid.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * torch.tidy(() => {
 *   const image = torch.randn([1, 3, 8, 8]);
 *   const theta = torch.tensor([0.8, 0, 0.1, 0, 0.8, -0.1], { shape: [1, 2, 3] });
 *   const grid = torch.nn.functional.affineGrid(theta, [1, 3, 6, 6]);
 *   const warped = torch.nn.functional.gridSample(image, grid, { paddingMode: 'border' }); // [1, 3, 6, 6]
 * });
 * ```
 */
export function gridSample(input: Tensor, grid: Tensor, options: GridSampleOptions = {}): Tensor {
  const fn = 'gridSample';
  const c = checksOf(fn);
  if (!(input instanceof Tensor) || (input.ndim !== 4 && input.ndim !== 5))
    c.fail('input', 'a 4-d [N, C, H, W] or 5-d [N, C, D, H, W] Tensor', input);
  if (!(grid instanceof Tensor)) c.fail('grid', 'a Tensor', grid);
  const o = c.object(options, 'options');
  const mode = c.oneOf(o.mode ?? 'bilinear', 'options.mode', MODES);
  const paddingMode = c.oneOf(o.paddingMode ?? 'zeros', 'options.paddingMode', PADDING_MODES);
  const alignCorners = alignCornersOf(c, o.alignCorners);
  const spatial = input.ndim - 2;
  if (grid.ndim !== input.ndim || grid.shape[0] !== input.shape[0] || grid.shape[grid.ndim - 1] !== spatial)
    throw new ArgumentError(
      `${fn}: grid must be [N, ${spatial === 2 ? "H', W', 2" : "D', H', W', 3"}] for an input [${input.shape.join(', ')}], got [${grid.shape.join(', ')}]`,
    );
  if (mode === 'bicubic' && spatial === 3)
    throw new ArgumentError(
      `${fn}: options.mode 'bicubic' needs a 4-d input (got 5-d): use 'bilinear' or 'nearest'`,
    );
  return aten.grid_sampler(
    input,
    grid,
    MODES.indexOf(mode),
    PADDING_MODES.indexOf(paddingMode),
    alignCorners,
  );
}

/** Options of affineGrid (PyTorch's align_corners). */
export interface AffineGridOptions {
  /** -1 and 1 are the centres of the corner pixels rather than the outer edges (default false); use gridSample's same setting. */
  alignCorners?: boolean;
}

/**
 * The sampling grid of a batch of affine maps, as F.affine_grid: `theta` [N, 2, 3] with `size` [N,
 * C, H, W] gives [N, H, W, 2]; `theta` [N, 3, 4] with [N, C, D, H, W] gives [N, D, H, W, 3], the
 * points gridSample takes (Spatial Transformer Networks). Differentiable in theta.
 */
export function affineGrid(theta: Tensor, size: number[], options: AffineGridOptions = {}): Tensor {
  const fn = 'affineGrid';
  const c = checksOf(fn);
  if (!(theta instanceof Tensor) || !isFloatingPoint(theta.dtype))
    c.fail('theta', 'a floating-point Tensor [N, 2, 3] or [N, 3, 4]', theta);
  if (!Array.isArray(size) || (size.length !== 4 && size.length !== 5))
    c.fail('size', 'the output size [N, C, H, W] (2-d) or [N, C, D, H, W] (3-d)', size);
  size.forEach((v, i) => c.integer(v, `size[${i}]`, { min: 1 }));
  const alignCorners = alignCornersOf(c, c.object(options, 'options').alignCorners);
  const [rows, cols] = size.length === 4 ? [2, 3] : [3, 4];
  if (theta.ndim !== 3 || theta.shape[1] !== rows || theta.shape[2] !== cols || theta.shape[0] !== size[0])
    throw new ArgumentError(
      `${fn}: theta must be [${size[0]}, ${rows}, ${cols}] (a ${rows}-d affine map per sample) for size [${size.join(', ')}], got [${theta.shape.join(', ')}]`,
    );
  return aten.affine_grid_generator(theta, size, alignCorners);
}
