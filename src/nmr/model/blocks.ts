// Building blocks of the 1D U-Net denoiser (src/nmr/model/unet.ts): a residual block (dilated
// Conv1d k = 9, GroupNorm, GELU, identity or 1x1 shortcut) and squeeze-and-excitation channel
// attention.
import { Tensor, nn, tidy, aten, onnx } from '../../torch/index.js';
import { ArgumentError } from '../../util/arguments.js';

/**
 * How a dilated convolution is computed. 'direct': one aten.conv1d with dilation d. 'polyphase':
 * the same result from a dilation-1 convolution over the d interleaved subsequences x[p::d] (see
 * polyphaseConv1d), for builds whose CPU dilated path is the slow im2col kernel
 * (slow_conv_dilated). With this libtorch 1.13 (float32, large inputs) both go to mkldnn and run
 * at the same speed (bench/nmr-unet.ts), so 'direct' is the default.
 */
export type DilatedConvMode = 'polyphase' | 'direct';

/**
 * conv1d(x, weight, bias, stride 1, padding = d (k - 1) / 2, dilation d) for odd k, computed as a
 * dilation-1 convolution: output point i = p + d j (phase p = i mod d) only reads inputs of the
 * same phase, x[p + d (j + t)], so phase p is an ordinary convolution of the subsequence x[p::d]
 * with padding (k - 1) / 2. The d phases are stacked into the batch ([N, C, L] -> [N d, C, L/d]),
 * convolved once, and interleaved back. A length that d does not divide is zero-padded on the
 * right first: the 'same' convolution reads zeros there anyway, so the kept outputs are unchanged.
 */
export function polyphaseConv1d(x: Tensor, weight: Tensor, bias: Tensor | null, dilation: number): Tensor {
  const k = weight.shape[2]!;
  if (k % 2 !== 1) throw new ArgumentError(`polyphaseConv1d: kernel must be odd, got ${k}`);
  const half = (k - 1) / 2;
  if (dilation === 1) return aten.conv1d(x, weight, bias, [1], [half], [1], 1);
  return tidy(() => {
    const [n, c, length] = x.shape as [number, number, number];
    const m = Math.ceil(length / dilation);
    const padded = m * dilation === length ? x : nn.functional.pad(x, [0, m * dilation - length]);
    // [N, C, m, d] -> [N, d, C, m] -> [N d, C, m]: row (b, p) holds x[b, :, p::d].
    const phases = padded
      .reshape(n, c, m, dilation)
      .permute(0, 3, 1, 2)
      .reshape(n * dilation, c, m);
    const y = aten.conv1d(phases, weight, bias, [1], [half], [1], 1);
    const out = y
      .reshape(n, dilation, y.shape[1]!, m)
      .permute(0, 2, 3, 1)
      .reshape(n, y.shape[1]!, m * dilation);
    return m * dilation === length ? out : out.narrow(2, 0, length);
  });
}

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

  /** The ONNX form of forward. */
  toOnnx(g: onnx.OnnxGraph, x: string, name: string): string {
    const squeezed = g.node('ReduceMean', [x], { axes: { ints: [2] }, keepdims: { int: 0 } });
    const hidden = g.node('Relu', [onnx.moduleToOnnx(this.fc1, g, squeezed, `${name}.fc1`)]);
    const gate = g.node('Sigmoid', [onnx.moduleToOnnx(this.fc2, g, hidden, `${name}.fc2`)]);
    return g.node('Mul', [x, g.node('Unsqueeze', [gate, g.ints('axes', [2])])]);
  }
}

export interface ResBlockOptions {
  kernel: number;
  dilation: number;
  groups: number;
  se?: { reduction: number } | null;
  /** How the dilated convolution is computed (default 'direct'; both give the same output). */
  conv?: DilatedConvMode;
}

/**
 * out = GELU(GN(conv_k,d(x))) [* SE] + shortcut(x). One dilated convolution per block keeps the
 * default network at about 2.7 M parameters; the shortcut is the identity when the
 * channel counts agree and a 1x1 convolution otherwise. Length is preserved ('same' padding).
 */
export class ResBlock1d extends nn.Module {
  readonly conv: nn.Conv1d;
  readonly norm: nn.GroupNorm;
  readonly act: nn.GELU;
  readonly se: SqueezeExcite1d | null;
  readonly shortcut: nn.Conv1d | null;
  readonly dilation: number;
  readonly convMode: DilatedConvMode;

  constructor(inChannels: number, outChannels: number, options: ResBlockOptions) {
    super();
    this.dilation = options.dilation;
    this.convMode = options.conv ?? 'direct';
    if (options.kernel % 2 !== 1)
      throw new ArgumentError(`ResBlock1d: kernel must be odd, got ${options.kernel}`);
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
      const conv =
        this.convMode === 'polyphase'
          ? polyphaseConv1d(x, this.conv.weight, this.conv.bias, this.dilation)
          : this.conv.forward(x);
      let h = this.act.forward(this.norm.forward(conv));
      if (this.se) h = this.se.forward(h);
      const skip = this.shortcut ? this.shortcut.forward(x) : x;
      return h.add(skip);
    });
  }

  /**
   * The ONNX form of forward: the dilated convolution as one Conv with its dilation whatever
   * convMode computes it with (both give the same output).
   */
  toOnnx(g: onnx.OnnxGraph, x: string, name: string): string {
    const layer = (m: nn.Module, part: string, input: string) =>
      onnx.moduleToOnnx(m, g, input, `${name}.${part}`);
    let h = layer(this.act, 'act', layer(this.norm, 'norm', layer(this.conv, 'conv', x)));
    if (this.se) h = layer(this.se, 'se', h);
    return g.node('Add', [h, this.shortcut ? layer(this.shortcut, 'shortcut', x) : x]);
  }
}
