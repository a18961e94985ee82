// The NMR U-Net as an ONNX model: UNet1d's forward pass node by node (the blocks export
// themselves), with what forward does around the network kept in the graph: the edge padding of
// a length the levels do not divide, the max-abs input normalization and its inverse, and the
// crop back to the input's length. Batch and length are dynamic axes.
import { onnx } from '../../torch/index.js';
import { writeFileAtomic } from '../../util/fs.js';
import { loadDenoiserInfo } from './denoise.js';
import type { UNet1d } from './unet.js';
import type { TrainingDomain } from './domain.js';

/**
 * The denoised value [N, 1, L] of the U-Net applied to the value `x` [N, levels, L] in `g`
 * (evaluation mode), as UNet1d.forward computes it for a 3-d input.
 */
export function unetToOnnx(model: UNet1d, g: onnx.OnnxGraph, x: string): string {
  const c = model.config;
  const levels = c.inputLevels;
  const m = model.lengthMultiple;
  // The input's length [1] (int64), and the edge padding up to a multiple of m.
  const length = g.node('Shape', [x], { start: { int: 2 }, end: { int: 3 } });
  const multiple = g.ints('length_multiple', [m]);
  const pad = g.node('Mod', [g.node('Sub', [multiple, g.node('Mod', [length, multiple])]), multiple]);
  const pads = g.node('Concat', [g.ints('pads.head', [0, 0, 0, 0, 0]), pad], { axis: { int: 0 } });
  let h = m > 1 ? g.node('Pad', [x, pads], { mode: { string: 'edge' } }) : x;
  let scale: string | null = null;
  if (c.inputNorm === 'max') {
    // A stack is scaled by its last (highest-SNR) level, as forward does.
    const ref = levels > 1 ? slice(g, h, levels - 1, levels, 1) : h;
    const peak = g.node('ReduceMax', [g.node('Abs', [ref])], { axes: { ints: [2] }, keepdims: { int: 1 } });
    scale = g.node('Max', [peak, g.scalar('scale.floor', 1e-12)]);
    h = g.node('Div', [h, scale]);
  }
  const input = h;
  const n = c.channels.length;
  const skips: string[] = [];
  h = onnx.moduleToOnnx(model.stem, g, h, 'stem');
  for (let i = 0; i < n; i++) {
    if (i > 0) h = onnx.moduleToOnnx(model.down.at(i - 1), g, h, `down.${i - 1}`);
    h = onnx.moduleToOnnx(model.encoder.at(i), g, h, `encoder.${i}`);
    skips.push(h);
  }
  for (let i = n - 2; i >= 0; i--) {
    const up = onnx.moduleToOnnx(model.up.at(i), g, h, `up.${i}`);
    const joined = g.node('Concat', [up, skips[i]!], { axis: { int: 1 } });
    h = onnx.moduleToOnnx(model.fuse.at(i), g, joined, `fuse.${i}`);
    h = onnx.moduleToOnnx(model.decoder.at(i), g, h, `decoder.${i}`);
  }
  let correction = onnx.moduleToOnnx(model.head, g, h, 'head');
  if (c.head === 'tanh') correction = g.node('Tanh', [correction]);
  const base = model.mix ? onnx.moduleToOnnx(model.mix, g, input, 'mix') : input;
  let out = g.node('Add', [base, correction]);
  if (scale) out = g.node('Mul', [out, scale]);
  return m > 1 ? g.node('Slice', [out, g.ints('crop.start', [0]), length, g.ints('crop.axes', [2])]) : out;
}

function slice(g: onnx.OnnxGraph, x: string, start: number, end: number, axis: number): string {
  return g.node('Slice', [x, g.ints('start', [start]), g.ints('end', [end]), g.ints('axes', [axis])]);
}

/** The exported denoiser and what it holds. */
export interface DenoiserOnnx {
  bytes: Uint8Array;
  /** The ONNX metadata_props, before encoding (values that are not strings become JSON). */
  metadata: Record<string, unknown>;
  model: UNet1d;
}

/**
 * A checkpoint of `tailor nmr train` as an ONNX model (opset 17): input `spectra` [batch,
 * levels, points] (levels 1, or the K + 1 aligned and rescaled levels of a stack model, level 0
 * first), output `denoised` [batch, 1, points]. CheckpointError for a file that is not one.
 */
export function denoiserToOnnx(checkpoint: string, version: string): DenoiserOnnx {
  const { model, domain } = loadDenoiserInfo(checkpoint);
  return { ...unetModelToOnnx(model, version, domain), model };
}

/** {@link denoiserToOnnx} for a model in memory (its training domain, if known, goes into the metadata). */
export function unetModelToOnnx(
  model: UNet1d,
  version: string,
  domain: TrainingDomain | null = null,
): { bytes: Uint8Array; metadata: Record<string, unknown> } {
  model.eval();
  const levels = model.config.inputLevels;
  const g = new onnx.OnnxGraph();
  const x = g.input('spectra', ['batch', levels, 'points']);
  g.output('denoised', unetToOnnx(model, g, x), ['batch', 1, 'points']);
  const metadata: Record<string, unknown> = {
    tailor_version: version,
    model: model.config,
    input: `spectra: float32 [batch, ${levels}, points], real spectra${levels > 1 ? ' (the aligned and rescaled levels, level 0 first)' : ''}; any length`,
    output: 'denoised: float32 [batch, 1, points], in the units of the input',
    normalization:
      model.config.inputNorm === 'max'
        ? 'in the graph: each input is divided by its largest |value| (a stack by its last level) and the output multiplied back'
        : 'none: values as given',
    ...(domain ? { training_domain: domain } : {}),
  };
  const bytes = g.encode({
    producerVersion: version,
    graphName: 'tailor-nmr-unet',
    docString: 'tailor NMR U-Net denoiser: spectra -> denoised',
    metadata,
  });
  return { bytes, metadata };
}

/** {@link denoiserToOnnx}, written to `out` atomically. */
export function exportDenoiserOnnx(checkpoint: string, out: string, version: string): DenoiserOnnx {
  const exported = denoiserToOnnx(checkpoint, version);
  writeFileAtomic(out, exported.bytes);
  return exported;
}
