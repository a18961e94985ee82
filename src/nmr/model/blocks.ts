// Building blocks of the 1D U-Net of seed section 4.1: a residual block (dilated Conv1d k = 9,
// GroupNorm, GELU, identity or 1x1 shortcut) and squeeze-and-excitation channel attention.
import { Tensor, nn, tidy } from '../../torch/index.js';

/** GroupNorm with the largest group count <= wanted that divides the channels (8 for 64..256). */
export function groupNorm(channels: number, wanted: number): nn.GroupNorm {
  let groups = Math.max(1, Math.min(wanted, channels));
  while (channels % groups !== 0) groups--;
  return new nn.GroupNorm(groups, channels);
}

/** Squeeze-and-excitation over channels: x * sigmoid(W2 relu(W1 mean_L(x))). */
export class SqueezeExcite1d extends nn.Module {
  readonly fc1: nn.Linear;
  readonly fc2: nn.Linear;

  constructor(
    readonly channels: number,
    reduction: number,
  ) {
    super();
    const hidden = Math.max(4, Math.floor(channels / reduction));
    this.fc1 = this.registerModule('fc1', new nn.Linear(channels, hidden));
    this.fc2 = this.registerModule('fc2', new nn.Linear(hidden, channels));
  }

  forward(x: Tensor): Tensor {
    return tidy(() => {
      const squeezed = x.mean(2); // [N, C]
      const gate = this.fc2.forward(this.fc1.forward(squeezed).relu()).sigmoid();
      return x.mul(gate.unsqueeze(2));
    });
  }
}

export interface ResBlockOptions {
  kernel: number;
  dilation: number;
  groups: number;
  se?: { reduction: number } | null;
}

/**
 * out = GELU(GN(conv_k,d(x))) [* SE] + shortcut(x). One dilated convolution per block keeps the
 * default network inside the plan's 1-3 M parameters; the shortcut is the identity when the
 * channel counts agree and a 1x1 convolution otherwise. Length is preserved ('same' padding).
 */
export class ResBlock1d extends nn.Module {
  readonly conv: nn.Conv1d;
  readonly norm: nn.GroupNorm;
  readonly act: nn.GELU;
  readonly se: SqueezeExcite1d | null;
  readonly shortcut: nn.Conv1d | null;

  constructor(inChannels: number, outChannels: number, options: ResBlockOptions) {
    super();
    if (options.kernel % 2 !== 1)
      throw new RangeError(`ResBlock1d: kernel must be odd, got ${options.kernel}`);
    const padding = (options.dilation * (options.kernel - 1)) / 2;
    this.conv = this.registerModule(
      'conv',
      new nn.Conv1d(inChannels, outChannels, options.kernel, { padding, dilation: options.dilation }),
    );
    this.norm = this.registerModule('norm', groupNorm(outChannels, options.groups));
    this.act = this.registerModule('act', new nn.GELU());
    this.se = options.se
      ? this.registerModule('se', new SqueezeExcite1d(outChannels, options.se.reduction))
      : null;
    this.shortcut =
      inChannels === outChannels
        ? null
        : this.registerModule('shortcut', new nn.Conv1d(inChannels, outChannels, 1, { bias: false }));
  }

  forward(x: Tensor): Tensor {
    return tidy(() => {
      let h = this.act.forward(this.norm.forward(this.conv.forward(x)));
      if (this.se) h = this.se.forward(h);
      const skip = this.shortcut ? this.shortcut.forward(x) : x;
      return h.add(skip);
    });
  }
}
