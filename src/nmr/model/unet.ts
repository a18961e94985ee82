// The residual 1D U-Net denoiser (frequency domain, real part): R^L -> R^L, or, with
// inputLevels = K + 1, R^{(K+1) x L} -> R^L (the aligned, rescaled multi-SNR stack as channels).
//   stem Conv1d(inputLevels -> c0, k) ; encoder level i: [Conv1d stride-2 down (c_{i-1} -> c_i) for i > 0]
//   + ResBlock(c_i, dilation d_i) ; the last level is the bottleneck ; decoder level i (from the
//   deepest up): ConvTranspose1d x2 up (c_{i+1} -> c_i), concat with the encoder's level-i
//   features, 1x1 fuse (2 c_i -> c_i), ResBlock(c_i, d_i) ; head Conv1d(c0 -> 1, k = 1), linear
//   or tanh, added to the input (short residual: the network predicts minus the noise). With a
//   stack input the short residual adds a learned per-level mix of the inputs instead, started
//   at inverse-variance weights for T = 2 (so the untrained network is the fusion baseline).
// Defaults: 4 levels, 64-128-256-256 channels, dilations 1/2/4/8, k = 9, GroupNorm(8), GELU,
// SE attention at the bottleneck and the shallowest decoder level: about 2.7 M parameters.
import * as torch from '../../torch/index.js';
import { Tensor, nn, tidy, aten } from '../../torch/index.js';
import { ResBlock1d, type DilatedConvMode } from './blocks.js';
import { ArgumentError } from '../../util/arguments.js';

export type SePlacement = 'none' | 'bottleneck' | 'bottleneck+shallow';

/**
 * The architecture of a {@link UNet1d}: channels and dilations per level, kernel size, input
 * levels, squeeze-excitation placement.
 */
export interface UNetConfig {
  /** Channels per level; the last one is the bottleneck (default [64, 128, 256, 256]). */
  channels: number[];
  /** Dilation of each level's convolution (default [1, 2, 4, 8]). */
  dilations: number[];
  kernel: number;
  /** GroupNorm groups (reduced to a divisor of the channel count where needed). */
  groups: number;
  /** 'group': GroupNorm(groups); 'layer': one group, i.e. LayerNorm over channels and length. */
  norm: 'group' | 'layer';
  se: SePlacement;
  seReduction: number;
  /** 'linear' or 'tanh' on the head before it is added to the input. */
  head: 'linear' | 'tanh';
  /**
   * 'max': divide each input spectrum by its largest |value| and multiply the output back, so the
   * network sees spectra of any normalization on one scale; 'none': use values as given.
   */
  inputNorm: 'max' | 'none';
  /** How dilated convolutions are computed: 'direct' (the default) or 'polyphase' (same output). */
  conv: DilatedConvMode;
  /**
   * Spectra per input: 1 = one spectrum (the low-SNR scan x^(0) alone, as at deployment); K + 1 =
   * the whole aligned and rescaled stack, level 0 (lowest SNR) first, denoised into one output. A
   * single-spectrum model cannot use the other levels at test time, so it can at best match what
   * fusing them gives; the stack model starts from the fusion and removes what noise is left.
   */
  inputLevels: number;
  /**
   * A second head, beside the spectrum, that predicts the log of a per-point Laplace scale b of the
   * output's error (trained with the Laplace negative log-likelihood, loss.nll): how sure the
   * model is of each point. Single-spectrum models only.
   */
  scaleHead: boolean;
}

export const DEFAULT_UNET: UNetConfig = {
  channels: [64, 128, 256, 256],
  dilations: [1, 2, 4, 8],
  kernel: 9,
  groups: 8,
  norm: 'group',
  se: 'bottleneck+shallow',
  seReduction: 16,
  head: 'linear',
  inputNorm: 'max',
  conv: 'direct',
  inputLevels: 1,
  scaleHead: false,
};

/**
 * Bounds of a network a config may ask for, checked before anything is allocated: 12 levels
 * halve a spectrum 2^11 times, 4,096 channels and kernel 255 are far beyond the default
 * network's 64-256 and 9, and MAX_UNET_PARAMETERS (4 GB of float32 weights) stops a product of
 * sizes that are each allowed.
 */
export const UNET_LIMITS = { levels: 12, channels: 4096, dilation: 4096, kernel: 255, inputLevels: 64 };
export const MAX_UNET_PARAMETERS = 1e9;

/** Checks a (possibly partial, user-given) configuration; errors name the field. */
export function resolveUNetConfig(partial: Partial<UNetConfig> = {}, where = 'model'): UNetConfig {
  const c: UNetConfig = { ...DEFAULT_UNET, ...partial };
  const positiveInts = (v: unknown, field: string, max: number): void => {
    if (!Array.isArray(v) || v.length === 0 || v.some((x) => !Number.isInteger(x) || x < 1 || x > max))
      throw new ArgumentError(
        `${where}.${field}: expected a non-empty list of integers in [1, ${max}], got ${JSON.stringify(v).slice(0, 200)}`,
      );
  };
  positiveInts(c.channels, 'channels', UNET_LIMITS.channels);
  positiveInts(c.dilations, 'dilations', UNET_LIMITS.dilation);
  if (c.channels.length < 2) throw new ArgumentError(`${where}.channels: need at least 2 levels`);
  if (c.channels.length > UNET_LIMITS.levels)
    throw new ArgumentError(
      `${where}.channels: at most ${UNET_LIMITS.levels} levels, got ${c.channels.length}`,
    );
  if (c.dilations.length !== c.channels.length)
    throw new ArgumentError(
      `${where}.dilations: ${c.dilations.length} values for ${c.channels.length} levels (give one per level)`,
    );
  if (!Number.isInteger(c.kernel) || c.kernel < 1 || c.kernel % 2 === 0 || c.kernel > UNET_LIMITS.kernel)
    throw new ArgumentError(
      `${where}.kernel: expected an odd integer in [1, ${UNET_LIMITS.kernel}], got ${JSON.stringify(c.kernel)}`,
    );
  if (!Number.isInteger(c.groups) || c.groups < 1)
    throw new ArgumentError(`${where}.groups: expected a positive integer, got ${c.groups}`);
  if (c.norm !== 'group' && c.norm !== 'layer')
    throw new ArgumentError(`${where}.norm: expected group or layer, got ${String(c.norm)}`);
  if (!['none', 'bottleneck', 'bottleneck+shallow'].includes(c.se))
    throw new ArgumentError(
      `${where}.se: expected none, bottleneck or bottleneck+shallow, got ${String(c.se)}`,
    );
  if (!(c.seReduction >= 1))
    throw new ArgumentError(`${where}.seReduction: expected >= 1, got ${c.seReduction}`);
  if (c.head !== 'linear' && c.head !== 'tanh')
    throw new ArgumentError(`${where}.head: expected linear or tanh, got ${String(c.head)}`);
  if (c.inputNorm !== 'max' && c.inputNorm !== 'none')
    throw new ArgumentError(`${where}.inputNorm: expected max or none, got ${String(c.inputNorm)}`);
  if (!Number.isInteger(c.inputLevels) || c.inputLevels < 1 || c.inputLevels > UNET_LIMITS.inputLevels)
    throw new ArgumentError(
      `${where}.inputLevels: expected an integer in [1, ${UNET_LIMITS.inputLevels}], got ${String(c.inputLevels)}`,
    );
  if (typeof c.scaleHead !== 'boolean')
    throw new RangeError(`${where}.scaleHead: expected true or false, got ${String(c.scaleHead)}`);
  if (c.scaleHead && c.inputLevels > 1)
    throw new RangeError(`${where}.scaleHead: only single-spectrum models (inputLevels 1) have a scale head`);
  if (c.conv !== 'polyphase' && c.conv !== 'direct')
    throw new ArgumentError(`${where}.conv: expected polyphase or direct, got ${String(c.conv)}`);
  const parameters = unetParameterBound(c);
  if (parameters > MAX_UNET_PARAMETERS)
    throw new ArgumentError(
      `${where}: about ${parameters.toExponential(2)} parameters, over the limit of ${MAX_UNET_PARAMETERS.toExponential(0)}; use fewer channels or a smaller kernel`,
    );
  return c;
}

/** An upper bound of the parameter count: two k-wide convolutions per level and direction, plus the links. */
function unetParameterBound(c: UNetConfig): number {
  let total = c.inputLevels * c.channels[0]! * c.kernel;
  for (let i = 0; i < c.channels.length; i++) {
    const ch = c.channels[i]!;
    total += 4 * ch * ch * c.kernel + 8 * ch;
    if (i > 0) total += 4 * c.channels[i - 1]! * ch;
  }
  return total;
}

/**
 * Multiply-adds x 2 of one forward pass over a spectrum of length points (convolutions, transposed
 * convolutions and 1x1 layers; norms, activations and SE are a few per value and left out). It
 * says how fast a network can be at best on a machine of known FLOP/s.
 */
export function unetFlops(config: UNetConfig, points: number): number {
  const ch = config.channels;
  const k = config.kernel;
  let macs = points * config.inputLevels * ch[0]! * k; // stem
  for (let i = 0; i < ch.length; i++) {
    const len = points / 2 ** i;
    macs += len * ch[i]! * ch[i]! * k; // encoder block
    if (i > 0) macs += len * ch[i - 1]! * ch[i]! * 2; // stride-2 down, k = 2
    if (i < ch.length - 1) {
      macs += len * ch[i]! * ch[i]! * k; // decoder block
      macs += len * ch[i + 1]! * ch[i]!; // transposed conv x2 up (k = 2 over len / 2 inputs)
      macs += len * 2 * ch[i]! * ch[i]!; // 1x1 fuse
    }
  }
  macs += points * ch[0]!; // head
  return 2 * macs;
}

/**
 * The 1D U-Net denoiser (a `tailor/torch` module): input [batch, levels, points] multi-SNR stacks
 * or [batch, 1, points] single spectra, output [batch, 1, points]. Load a trained one with
 * {@link loadDenoiser}; apply it with {@link denoiseSpectra} or {@link denoiseStacks}.
 */
export class UNet1d extends nn.Module {
  readonly config: UNetConfig;
  readonly stem: nn.Conv1d;
  readonly down: nn.ModuleList<nn.Conv1d>;
  readonly encoder: nn.ModuleList<ResBlock1d>;
  readonly up: nn.ModuleList<nn.ConvTranspose1d>;
  readonly fuse: nn.ModuleList<nn.Conv1d>;
  readonly decoder: nn.ModuleList<ResBlock1d>;
  readonly head: nn.Conv1d;
  /** Stack input only: the learned mix of the input levels the head's correction is added to. */
  readonly mix: nn.Conv1d | null;
  /** The log-scale head (config.scaleHead), or null. */
  readonly scale: nn.Conv1d | null;

  constructor(partial: Partial<UNetConfig> = {}) {
    super();
    const c = resolveUNetConfig(partial);
    this.config = c;
    const ch = c.channels;
    const n = ch.length;
    const se = { reduction: c.seReduction };
    const block = (i: number, withSe: boolean) =>
      new ResBlock1d(ch[i]!, ch[i]!, {
        kernel: c.kernel,
        dilation: c.dilations[i]!,
        groups: c.norm === 'layer' ? 1 : c.groups,
        se: withSe ? se : null,
        conv: c.conv,
      });
    this.stem = this.registerModule(
      'stem',
      new nn.Conv1d(c.inputLevels, ch[0]!, c.kernel, { padding: (c.kernel - 1) / 2 }),
    );
    this.down = this.registerModule(
      'down',
      new nn.ModuleList(ch.slice(1).map((out, i) => new nn.Conv1d(ch[i]!, out, 2, { stride: 2 }))),
    );
    this.encoder = this.registerModule(
      'encoder',
      new nn.ModuleList(ch.map((_, i) => block(i, i === n - 1 && c.se !== 'none'))),
    );
    // Decoder modules are indexed by the level they produce (0 = full resolution).
    this.up = this.registerModule(
      'up',
      new nn.ModuleList(
        ch.slice(0, n - 1).map((out, i) => new nn.ConvTranspose1d(ch[i + 1]!, out, 2, { stride: 2 })),
      ),
    );
    this.fuse = this.registerModule(
      'fuse',
      new nn.ModuleList(ch.slice(0, n - 1).map((out) => new nn.Conv1d(2 * out, out, 1))),
    );
    this.decoder = this.registerModule(
      'decoder',
      new nn.ModuleList(ch.slice(0, n - 1).map((_, i) => block(i, i === 0 && c.se === 'bottleneck+shallow'))),
    );
    this.head = this.registerModule('head', new nn.Conv1d(ch[0]!, 1, 1));
    // A zero head makes the untrained network the identity (output = input), so training starts
    // from the raw spectrum instead of the raw spectrum plus a random correction.
    torch.noGrad(() => {
      this.head.weight.zero_();
      this.head.bias!.zero_();
    });
    this.mix = null;
    if (c.inputLevels > 1) {
      this.mix = this.registerModule('mix', new nn.Conv1d(c.inputLevels, 1, 1, { bias: false }));
      // Inverse-variance weights for T = 2 (sigma_k ~ 2^-k, weight ~ 4^k), summing to 1.
      const w = Array.from({ length: c.inputLevels }, (_, k) => 4 ** k);
      const total = w.reduce((a, b) => a + b, 0);
      const init = torch.tensor(
        Float32Array.from(w, (v) => v / total),
        { shape: [1, c.inputLevels, 1] },
      );
      torch.noGrad(() => this.mix!.weight.copy_(init));
      init.dispose();
    }
    this.scale = null;
    if (c.scaleHead) {
      // Registered last, so that the other modules start as without it. A zero weight and a bias
      // of log(0.05) start every point at a scale of 5 % of the input's maximum.
      this.scale = this.registerModule('scale', new nn.Conv1d(ch[0]!, 1, 1));
      torch.noGrad(() => {
        this.scale!.weight.zero_();
        this.scale!.bias!.fill_(Math.log(0.05));
      });
    }
  }

  /** Lengths must be multiples of this (forward pads by edge replication otherwise). */
  get lengthMultiple(): number {
    return 2 ** (this.config.channels.length - 1);
  }

  /**
   * [N, L] or [N, 1, L] spectra -> denoised spectra of the same shape; a stack model takes
   * [N, K+1, L] (level 0 first) and returns [N, 1, L].
   */
  forward(input: Tensor): Tensor {
    return tidy(() => this.run(input, false).mean);
  }

  /**
   * The denoised spectra and the log of the per-point Laplace scale of their error, in the
   * output's units (the input normalization is undone on both); needs config.scaleHead.
   */
  forwardWithScale(input: Tensor): { mean: Tensor; logScale: Tensor } {
    if (!this.scale) throw new RangeError('UNet1d: this model has no scale head (model.scaleHead)');
    return tidy(() => {
      const r = this.run(input, true);
      return { mean: r.mean, logScale: r.logScale! };
    });
  }

  private run(input: Tensor, withScale: boolean): { mean: Tensor; logScale: Tensor | null } {
    {
      const levels = this.config.inputLevels;
      const flat = input.ndim === 2 && levels === 1;
      if (!flat && !(input.ndim === 3 && input.shape[1] === levels))
        throw new ArgumentError(
          levels === 1
            ? `UNet1d: expected [N, L] or [N, 1, L], got [${input.shape}]`
            : `UNet1d: this model takes stacks of ${levels} levels, [N, ${levels}, L]; got [${input.shape}]`,
        );
      let x = flat ? input.unsqueeze(1) : input;
      const length = x.shape[2]!;
      const m = this.lengthMultiple;
      const padded = Math.ceil(length / m) * m;
      if (padded !== length) x = nn.functional.pad(x, [0, padded - length], 'replicate');
      let scale: Tensor | null = null;
      if (this.config.inputNorm === 'max') {
        // Detached: the scale is a fixed property of the input, not something to learn through.
        // A stack is scaled by its last (highest-SNR) level, whose maximum noise moves least.
        const ref = levels > 1 ? x.narrow(1, levels - 1, 1) : x;
        scale = ref.detach().abs().amax(2, true).clamp(1e-12);
        x = x.div(scale);
      }
      const n = this.config.channels.length;
      const skips: Tensor[] = [];
      let h = this.stem.forward(x);
      for (let i = 0; i < n; i++) {
        if (i > 0) h = this.down.at(i - 1).forward(h);
        h = this.encoder.at(i).forward(h);
        skips.push(h);
      }
      for (let i = n - 2; i >= 0; i--) {
        const upsampled = this.up.at(i).forward(h);
        h = this.decoder.at(i).forward(this.fuse.at(i).forward(torchCat([upsampled, skips[i]!])));
      }
      let correction = this.head.forward(h);
      if (this.config.head === 'tanh') correction = correction.tanh();
      let out = (this.mix ? this.mix.forward(x) : x).add(correction);
      if (scale) out = out.mul(scale);
      if (padded !== length) out = out.narrow(2, 0, length);
      let logScale: Tensor | null = null;
      if (withScale && this.scale) {
        logScale = this.scale.forward(h);
        if (scale) logScale = logScale.add(scale.log());
        if (padded !== length) logScale = logScale.narrow(2, 0, length);
        if (flat) logScale = logScale.squeeze(1);
      }
      return { mean: flat ? out.squeeze(1) : out, logScale };
    }
  }
}

function torchCat(parts: Tensor[]): Tensor {
  return aten.cat(parts, 1);
}

export interface ParameterRow {
  name: string;
  parameters: number;
}

/** Parameter counts per top-level part and in total. */
export function parameterSummary(model: nn.Module): { rows: ParameterRow[]; total: number } {
  const byPart = new Map<string, number>();
  for (const [name, p] of model.namedParameters()) {
    const parts = name.split('.');
    const key = /^\d+$/.test(parts[1] ?? '') ? `${parts[0]}.${parts[1]}` : parts[0]!;
    byPart.set(key, (byPart.get(key) ?? 0) + p.numel);
  }
  const rows = [...byPart].map(([name, parameters]) => ({ name, parameters }));
  return { rows, total: rows.reduce((a, r) => a + r.parameters, 0) };
}

/** A printable table of parameterSummary. */
export function formatParameterSummary(model: nn.Module): string {
  const { rows, total } = parameterSummary(model);
  const width = Math.max(10, ...rows.map((r) => r.name.length));
  const lines = rows.map(
    (r) => `  ${r.name.padEnd(width)} ${r.parameters.toLocaleString('en-US').padStart(12)}`,
  );
  lines.push(`  ${'total'.padEnd(width)} ${total.toLocaleString('en-US').padStart(12)}`);
  return lines.join('\n');
}
