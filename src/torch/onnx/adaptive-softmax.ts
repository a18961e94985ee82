// The ONNX form of AdaptiveLogSoftmaxWithLoss's inference outputs: the full log-probabilities
// (its logProb) and their ArgMax (its predict). The forward's per-target gathering needs the
// targets and rows picked at run time, and is the training loss: it is not exported.
import type * as nn from '../nn/index.js';
import type { OnnxGraph } from './graph.js';
import { checksOf } from '../../util/arguments.js';
import { moduleToOnnx } from './modules.js';

/** Options of adaptiveLogSoftmaxToOnnx: which of the layer's inference outputs the graph computes. */
export interface OnnxAdaptiveLogSoftmaxOptions {
  /**
   * 'logProb' (default): float32 [N, nClasses], as `logProb(input)`; 'predict': the most probable
   * class of each row, int64 [N], as `predict(input)` (declare the graph output int64).
   */
  output?: 'logProb' | 'predict';
}

const at = (name: string, part: string) => (name ? `${name}.${part}` : part);

/**
 * The ONNX form of an AdaptiveLogSoftmaxWithLoss's `logProb` or `predict` applied to `x`, of
 * shape [N, inFeatures]. The head's LogSoftmax gives the shortlist's log-probabilities, and each
 * cluster's tail projection and LogSoftmax, plus the head's log-probability of the cluster, give
 * its classes'; a Concat puts them in class order. predict is their ArgMax, which is PyTorch's
 * predict (a row whose best head entry is a shortlist class has that class as its best overall,
 * a tail's log-probabilities being at most 0).
 *
 * @example
 * ```ts
 * import { nn, onnx } from 'tailor/torch';
 * const asm = new nn.AdaptiveLogSoftmaxWithLoss(16, 50, [10, 30]);
 * const g = new onnx.OnnxGraph();
 * const x = g.input('x', ['batch', 16]);
 * g.output('classes', onnx.adaptiveLogSoftmaxToOnnx(asm, g, x, 'asm', { output: 'predict' }), ['batch'], 'int64');
 * ```
 */
export function adaptiveLogSoftmaxToOnnx(
  m: nn.AdaptiveLogSoftmaxWithLoss,
  g: OnnxGraph,
  x: string,
  name = '',
  options: OnnxAdaptiveLogSoftmaxOptions = {},
): string {
  const output = checksOf('onnx.adaptiveLogSoftmaxToOnnx').oneOf(
    options.output ?? 'logProb',
    'options.output',
    ['logProb', 'predict'] as const,
  );
  const head = g.node('LogSoftmax', [moduleToOnnx(m.head, g, x, at(name, 'head'))], { axis: { int: 1 } });
  const columns = (from: number, to: number) =>
    g.node('Slice', [head, g.ints('asm.start', [from]), g.ints('asm.end', [to]), g.ints('asm.axis', [1])]);
  const parts = [columns(0, m.shortlistSize)];
  m.tail.items.forEach((tail, i) => {
    const local = moduleToOnnx(tail, g, x, at(name, `tail.${i}`));
    const cluster = columns(m.shortlistSize + i, m.shortlistSize + i + 1);
    parts.push(g.node('Add', [g.node('LogSoftmax', [local], { axis: { int: 1 } }), cluster]));
  });
  const logProb = g.node('Concat', parts, { axis: { int: 1 } });
  if (output === 'logProb') return logProb;
  return g.node('ArgMax', [logProb], { axis: { int: 1 }, keepdims: { int: 0 } });
}
