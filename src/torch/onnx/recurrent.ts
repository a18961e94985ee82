// The ONNX forms of LSTM and GRU: one ONNX LSTM or GRU node per layer (both directions in one),
// the weights with their gates reordered from PyTorch's to ONNX's, and the batch-first layout by
// Transpose (ONNX Runtime's CPU kernels do not take the `layout` attribute).
import * as nn from '../nn/index.js';
import type { Tensor } from '../tensor.js';
import type { OnnxGraph } from './graph.js';

/** The initial states of an exported recurrent layer: graph values of [layers x directions, batch, hidden]. */
export interface OnnxRecurrentState {
  /** The initial hidden state (default zeros). */
  h0?: string;
  /** The initial cell state, LSTM only (default zeros). */
  c0?: string;
}

/** The values an exported LSTM produces, as its forward returns them. */
export interface OnnxLstmOutputs {
  /** [time, batch, directions x hidden] ([batch, time, ...] with batchFirst). */
  output: string;
  /** The final hidden state, [layers x directions, batch, hidden]. */
  h: string;
  /** The final cell state, [layers x directions, batch, hidden]. */
  c: string;
}

/** The values an exported GRU produces, as its forward returns them. */
export interface OnnxGruOutputs {
  /** [time, batch, directions x hidden] ([batch, time, ...] with batchFirst). */
  output: string;
  /** The final hidden state, [layers x directions, batch, hidden]. */
  h: string;
}

const at = (name: string, part: string) => (name ? `${name}.${part}` : part);

/**
 * The gate blocks of a [gates x hidden, ...] weight (or bias) rearranged: block i of the result
 * is block order[i] of `t`. PyTorch's LSTM stacks its gates i, f, g, o and ONNX's i, o, f, c;
 * PyTorch's GRU r, z, n and ONNX's z, r, h.
 */
function reorder(t: Tensor, order: readonly number[]): Float32Array {
  const data = t.toFloat32Array();
  const block = data.length / order.length;
  const out = new Float32Array(data.length);
  order.forEach((from, i) => out.set(data.subarray(from * block, (from + 1) * block), i * block));
  return out;
}

/** Concatenated Float32Arrays (the directions of one layer, or W's bias with R's). */
function concat(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/**
 * The layers of an LSTM or GRU as ONNX nodes of `op`, from `x` (3-d, in the layer's layout) and
 * the optional initial states; returns the output sequence and the final states, each the
 * concatenation of every layer's over the first axis as PyTorch returns them.
 */
function recurrent(
  m: nn.LSTM | nn.GRU,
  g: OnnxGraph,
  x: string,
  name: string,
  op: 'LSTM' | 'GRU',
  states: (string | undefined)[],
): { output: string; finals: string[] } {
  const gates = op === 'LSTM' ? 4 : 3;
  const order = op === 'LSTM' ? [0, 3, 1, 2] : [1, 0, 2];
  const dirs = m.bidirectional ? 2 : 1;
  const H = m.hiddenSize;
  const params = new Map(m.namedParameters());
  // ONNX's recurrent ops take [time, batch, features].
  let seq = m.batchFirst ? g.node('Transpose', [x], { perm: { ints: [1, 0, 2] } }) : x;
  const finals: string[][] = states.map(() => []);
  for (let layer = 0; layer < m.numLayers; layer++) {
    const features = layer === 0 ? m.inputSize : H * dirs;
    const suffixes = dirs === 2 ? [`_l${layer}`, `_l${layer}_reverse`] : [`_l${layer}`];
    const weight = (kind: string) => concat(suffixes.map((s) => reorder(params.get(`${kind}${s}`)!, order)));
    const prefix = at(name, `l${layer}`);
    const W = g.constant(`${prefix}.W`, { data: weight('weight_ih'), dims: [dirs, gates * H, features] });
    const R = g.constant(`${prefix}.R`, { data: weight('weight_hh'), dims: [dirs, gates * H, H] });
    // B holds each direction's input bias, then its hidden bias: [dirs, 2 x gates x hidden].
    const B = m.bias
      ? g.constant(`${prefix}.B`, {
          data: concat(
            suffixes.flatMap((s) => [
              reorder(params.get(`bias_ih${s}`)!, order),
              reorder(params.get(`bias_hh${s}`)!, order),
            ]),
          ),
          dims: [dirs, 2 * gates * H],
        })
      : '';
    // This layer's rows of the stacked initial states ('' leaves ONNX's zeros).
    const initial = states.map((s) =>
      s === undefined
        ? ''
        : g.node('Slice', [
            s,
            g.ints('state.start', [layer * dirs]),
            g.ints('state.end', [(layer + 1) * dirs]),
            g.ints('state.axes', [0]),
          ]),
    );
    const inputs = [seq, W, R, B, '', ...initial];
    while (inputs.at(-1) === '') inputs.pop();
    const outputs = g.nodeN(op, inputs, 1 + states.length, {
      hidden_size: { int: H },
      direction: { string: dirs === 2 ? 'bidirectional' : 'forward' },
      // PyTorch's GRU applies the reset gate after the hidden state's linear map.
      ...(op === 'GRU' ? { linear_before_reset: { int: 1 } } : {}),
    });
    // Y is [time, dirs, batch, hidden]: PyTorch's output puts the directions side by side.
    const y = g.node('Transpose', [outputs[0]!], { perm: { ints: [0, 2, 1, 3] } });
    seq = g.node('Reshape', [y, g.ints('rnn.shape', [0, 0, dirs * H])]);
    outputs.slice(1).forEach((v, i) => finals[i]!.push(v));
  }
  const output = m.batchFirst ? g.node('Transpose', [seq], { perm: { ints: [1, 0, 2] } }) : seq;
  const stacked = finals.map((vs) => (vs.length === 1 ? vs[0]! : g.node('Concat', vs, { axis: { int: 0 } })));
  return { output, finals: stacked };
}

/**
 * The ONNX form of an LSTM (evaluation mode: no dropout between layers) applied to `x`, a 3-d
 * value in the layer's layout, from the initial states `state` (zeros without them). Returns the
 * output sequence and the final hidden and cell states, as its forward does.
 */
export function lstmToOnnx(
  m: nn.LSTM,
  g: OnnxGraph,
  x: string,
  name = '',
  state: OnnxRecurrentState = {},
): OnnxLstmOutputs {
  const { output, finals } = recurrent(m, g, x, name, 'LSTM', [state.h0, state.c0]);
  return { output, h: finals[0]!, c: finals[1]! };
}

/**
 * The ONNX form of a GRU (evaluation mode) applied to `x`, a 3-d value in the layer's layout,
 * from the initial state `h0` (zeros without it). Returns the output sequence and the final
 * hidden state, as its forward does.
 */
export function gruToOnnx(m: nn.GRU, g: OnnxGraph, x: string, name = '', h0?: string): OnnxGruOutputs {
  const { output, finals } = recurrent(m, g, x, name, 'GRU', [h0]);
  return { output, h: finals[0]! };
}
