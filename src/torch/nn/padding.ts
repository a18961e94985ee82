// The padding layers of torch.nn (ZeroPad1d/2d/3d, ConstantPad1d/2d/3d, ReflectionPad1d/2d/3d,
// ReplicationPad1d/2d/3d, and PyTorch 2.x's CircularPad1d/2d/3d), each F.pad in one mode. Padding is one number for every side or
// PyTorch's tuple order: (left, right) of the last dimension, then (top, bottom) of the one
// before, then (front, back).
import type { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import * as aten from '../generated/aten.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
import { Module } from './module.js';
import { checkTensor } from './layer-util.js';

/**
 * How a padding layer fills: a constant, the input mirrored (without the edge), the edge
 * repeated, or the input wrapped around (the other end's values).
 */
export type PaddingMode = 'constant' | 'reflect' | 'replicate' | 'circular';

const LAYOUTS = ['', '[N, C, W]', '[N, C, H, W]', '[N, C, D, H, W]'];
const SIDES = ['left', 'right', 'top', 'bottom', 'front', 'back'];

abstract class PadNd extends Module {
  /** Per side, in PyTorch's order (left, right, top, bottom, front, back): what F.pad takes. */
  readonly padding: readonly number[];

  constructor(
    padding: number | readonly number[],
    readonly dims: 1 | 2 | 3,
    readonly mode: PaddingMode,
    readonly value = 0,
  ) {
    super();
    const fn = new.target.name;
    const c = checksOf(fn);
    const sides = 2 * dims;
    if (typeof padding === 'number')
      this.padding = new Array<number>(sides).fill(c.integer(padding, 'padding'));
    else {
      if (!Array.isArray(padding) || padding.length !== sides)
        c.fail(
          'padding',
          `an integer or an array of ${sides} (${SIDES.slice(0, sides).join(', ')})`,
          padding,
        );
      this.padding = padding.map((p, i) => c.integer(p, `padding[${i}]`));
    }
    c.number(value, 'value');
  }

  /** Pads the last `dims` dimensions of `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const fn = this.constructor.name;
    checkTensor(fn, x);
    const shape = `[${x.shape.join(', ')}]`;
    const constant = this.mode === 'constant';
    const ok = constant ? x.ndim >= this.dims : x.ndim === this.dims + 1 || x.ndim === this.dims + 2;
    if (!ok)
      throw new ArgumentError(
        `${fn}: the input must be ${constant ? `at least ${this.dims}-d` : `${this.dims + 1}-d or ${this.dims + 2}-d`} (${LAYOUTS[this.dims]}${constant ? '' : ', or without the batch dimension'}), got shape ${shape}`,
      );
    for (let i = 0; i < this.dims; i++) {
      const axis = x.ndim - 1 - i;
      const size = x.shape[axis]!;
      const [before, after] = [this.padding[2 * i]!, this.padding[2 * i + 1]!];
      const sides = `padding[${2 * i}] = ${before} and padding[${2 * i + 1}] = ${after}`;
      if (this.mode === 'reflect' && (before >= size || after >= size))
        throw new ArgumentError(
          `${fn}: ${sides} must each be smaller than the size ${size} of dimension ${axis} of the input (shape ${shape}); reflection repeats no edge`,
        );
      if (this.mode === 'circular' && (before > size || after > size))
        throw new ArgumentError(
          `${fn}: ${sides} must each be at most the size ${size} of dimension ${axis} of the input (shape ${shape}); circular padding wraps around once`,
        );
      if (size + before + after < (constant ? 0 : 1))
        throw new ArgumentError(
          `${fn}: ${sides} leave ${size + before + after} elements of dimension ${axis} of the input (shape ${shape})`,
        );
    }
    // libtorch's circular mode takes batched inputs only (PyTorch 2.x's layers take both)
    if (this.mode === 'circular' && x.ndim === this.dims + 1)
      return tidy(() => aten.pad(x.unsqueeze(0), [...this.padding], 'circular', null).squeeze(0));
    return aten.pad(x, [...this.padding], this.mode, constant ? this.value : null);
  }
}

/** Pads the last dimension with `value` (torch.nn.ConstantPad1d): padding a number or [left, right]; negative crops. */
export class ConstantPad1d extends PadNd {
  constructor(padding: number | readonly number[], value: number) {
    super(padding, 1, 'constant', value);
  }
}

/** Pads the last two dimensions with `value` (torch.nn.ConstantPad2d): padding a number or [left, right, top, bottom]. */
export class ConstantPad2d extends PadNd {
  constructor(padding: number | readonly number[], value: number) {
    super(padding, 2, 'constant', value);
  }
}

/** Pads the last three dimensions with `value` (torch.nn.ConstantPad3d): a number or [left, right, top, bottom, front, back]. */
export class ConstantPad3d extends PadNd {
  constructor(padding: number | readonly number[], value: number) {
    super(padding, 3, 'constant', value);
  }
}

/** Pads the last two dimensions with zeros (torch.nn.ZeroPad2d): padding a number or [left, right, top, bottom]. */
export class ZeroPad2d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 2, 'constant', 0);
  }
}

/** Pads the last dimension with zeros (PyTorch 2.x's torch.nn.ZeroPad1d): padding a number or [left, right]; negative crops. */
export class ZeroPad1d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 1, 'constant', 0);
  }
}

/** Pads the last three dimensions with zeros (PyTorch 2.x's torch.nn.ZeroPad3d): a number or [left, right, top, bottom, front, back]. */
export class ZeroPad3d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 3, 'constant', 0);
  }
}

/** Mirrors [N, C, W] or [C, W] at its ends, the edge not repeated (torch.nn.ReflectionPad1d); each side < W. */
export class ReflectionPad1d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 1, 'reflect');
  }
}

/** Mirrors [N, C, H, W] or [C, H, W] at its borders (torch.nn.ReflectionPad2d): [left, right, top, bottom]. */
export class ReflectionPad2d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 2, 'reflect');
  }
}

/** Mirrors [N, C, D, H, W] or [C, D, H, W] at its borders (torch.nn.ReflectionPad3d). */
export class ReflectionPad3d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 3, 'reflect');
  }
}

/** Repeats the edge of [N, C, W] or [C, W] (torch.nn.ReplicationPad1d): padding a number or [left, right]. */
export class ReplicationPad1d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 1, 'replicate');
  }
}

/** Repeats the edges of [N, C, H, W] or [C, H, W] (torch.nn.ReplicationPad2d): [left, right, top, bottom]. */
export class ReplicationPad2d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 2, 'replicate');
  }
}

/** Repeats the edges of [N, C, D, H, W] or [C, D, H, W] (torch.nn.ReplicationPad3d). */
export class ReplicationPad3d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 3, 'replicate');
  }
}

/**
 * Wraps [N, C, W] or [C, W] around (PyTorch 2.x's torch.nn.CircularPad1d): the last `left` values
 * put before the first, the first `right` after the last; padding a number or [left, right],
 * each at most W (negative crops).
 */
export class CircularPad1d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 1, 'circular');
  }
}

/** Wraps [N, C, H, W] or [C, H, W] around at its borders (PyTorch 2.x's torch.nn.CircularPad2d): [left, right, top, bottom]. */
export class CircularPad2d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 2, 'circular');
  }
}

/** Wraps [N, C, D, H, W] or [C, D, H, W] around at its borders (PyTorch 2.x's torch.nn.CircularPad3d). */
export class CircularPad3d extends PadNd {
  constructor(padding: number | readonly number[]) {
    super(padding, 3, 'circular');
  }
}
