// Parameter-free layers: activations, pooling, reshaping and containers.
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';

export class ReLU extends Module {
  forward(x: Tensor): Tensor {
    return aten.relu(x);
  }
}
export class GELU extends Module {
  constructor(readonly approximate: 'none' | 'tanh' = 'none') {
    super();
  }
  forward(x: Tensor): Tensor {
    return aten.gelu(x, this.approximate);
  }
}
export class Sigmoid extends Module {
  forward(x: Tensor): Tensor {
    return aten.sigmoid(x);
  }
}
export class Tanh extends Module {
  forward(x: Tensor): Tensor {
    return aten.tanh(x);
  }
}
export class Identity extends Module {
  forward(x: Tensor): Tensor {
    return x.clone();
  }
}
export class Flatten extends Module {
  constructor(
    readonly startDim = 1,
    readonly endDim = -1,
  ) {
    super();
  }
  forward(x: Tensor): Tensor {
    return x.flatten(this.startDim, this.endDim);
  }
}
/** Max or average pooling: windows of kernelSize, moved by stride (default: kernelSize), padded. */
abstract class Pooling extends Module {
  constructor(
    readonly kernelSize: number,
    readonly stride: number = kernelSize,
    readonly padding = 0,
  ) {
    super();
  }
  abstract forward(x: Tensor): Tensor;
}
export class MaxPool2d extends Pooling {
  forward(x: Tensor): Tensor {
    return aten.max_pool2d(x, this.kernelSize, this.stride, this.padding);
  }
}
export class AvgPool2d extends Pooling {
  forward(x: Tensor): Tensor {
    return aten.avg_pool2d(x, this.kernelSize, this.stride, this.padding);
  }
}
export class MaxPool1d extends Pooling {
  forward(x: Tensor): Tensor {
    return aten.max_pool1d(x, this.kernelSize, this.stride, this.padding);
  }
}
export class AvgPool1d extends Pooling {
  forward(x: Tensor): Tensor {
    return aten.avg_pool1d(x, this.kernelSize, this.stride, this.padding);
  }
}
export class AdaptiveAvgPool2d extends Module {
  constructor(readonly outputSize: number | [number, number]) {
    super();
  }
  forward(x: Tensor): Tensor {
    return aten.adaptive_avg_pool2d(x, this.outputSize);
  }
}
export class AdaptiveAvgPool1d extends Module {
  constructor(readonly outputSize: number) {
    super();
  }
  forward(x: Tensor): Tensor {
    return aten.adaptive_avg_pool1d(x, this.outputSize);
  }
}

/** A module whose forward takes one tensor and returns one tensor. */
export type Layer = Module & { forward(x: Tensor): Tensor };

/** Applies its layers in order, freeing each intermediate output as soon as the next exists. */
export class Sequential extends Module {
  readonly layers: Layer[];
  constructor(...layers: Layer[]) {
    super();
    this.layers = layers.map((layer, i) => this.registerModule(String(i), layer));
  }
  forward(x: Tensor): Tensor {
    let out = x;
    for (const layer of this.layers) {
      const next = layer.forward(out);
      if (out !== x) out.dispose();
      out = next;
    }
    return out === x ? x.clone() : out;
  }
}

/** Holds submodules by index (names '0', '1', ...), as nn.ModuleList. */
export class ModuleList<M extends Module = Module> extends Module {
  readonly items: M[];
  constructor(items: M[]) {
    super();
    this.items = items.map((m, i) => this.registerModule(String(i), m));
  }
  get length(): number {
    return this.items.length;
  }
  at(i: number): M {
    const m = this.items[i];
    if (!m) throw new RangeError(`ModuleList index ${i} out of range (length ${this.items.length})`);
    return m;
  }
}
