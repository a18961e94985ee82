// CIFAR ResNet-32 (He et al., option-A shortcuts) and its multi-expert form from RIDE/SADE:
// the stem and stage 1 are shared, every expert owns stages 2 and 3 (24/48 channels with
// reduce_dimension) and a classifier; the model output is the mean of the expert logits.
// inChannels = 1 gives the Fashion-MNIST (28x28 grey) variant; any number of experts works.
import { Tensor, nn, tidy, aten, onnx } from '../../torch/index.js';
import { NormedLinear } from './heads.js';
import { ExpertBase, MultiExpertModel } from './multi-expert.js';

class BasicBlock extends nn.Module {
  readonly conv1: nn.Conv2d;
  readonly bn1: nn.BatchNorm2d;
  readonly conv2: nn.Conv2d;
  readonly bn2: nn.BatchNorm2d;
  private readonly padChannels: number;

  constructor(
    inPlanes: number,
    readonly planes: number,
    readonly stride: number,
  ) {
    super();
    this.conv1 = this.registerModule(
      'conv1',
      new nn.Conv2d(inPlanes, planes, 3, { stride, padding: 1, bias: false }),
    );
    this.bn1 = this.registerModule('bn1', new nn.BatchNorm2d(planes));
    this.conv2 = this.registerModule(
      'conv2',
      new nn.Conv2d(planes, planes, 3, { stride: 1, padding: 1, bias: false }),
    );
    this.bn2 = this.registerModule('bn2', new nn.BatchNorm2d(planes));
    this.padChannels = stride !== 1 || inPlanes !== planes ? (planes - inPlanes) / 2 : -1;
  }

  forward(x: Tensor): Tensor {
    return tidy(() => {
      const out = this.bn2.forward(this.conv2.forward(this.bn1.forward(this.conv1.forward(x)).relu()));
      // Option A: subsample spatially and zero-pad the channels; no parameters.
      const shortcut =
        this.padChannels < 0
          ? x
          : aten.constant_pad_nd(x.slice(2, null, null, this.stride).slice(3, null, null, this.stride), [
              0,
              0,
              0,
              0,
              this.padChannels,
              this.padChannels,
            ]);
      return out.add(shortcut).relu();
    });
  }

  /** The ONNX form of forward (evaluation mode): the option-A shortcut as Slice and Pad. */
  toOnnx(g: onnx.OnnxGraph, x: string, name: string): string {
    const layer = (m: nn.Module, part: string, input: string) =>
      onnx.moduleToOnnx(m, g, input, `${name}.${part}`);
    const h = g.node('Relu', [layer(this.bn1, 'bn1', layer(this.conv1, 'conv1', x))]);
    const out = layer(this.bn2, 'bn2', layer(this.conv2, 'conv2', h));
    let shortcut = x;
    if (this.padChannels >= 0) {
      const s = this.stride;
      const big = 2 ** 62;
      const strided = g.node('Slice', [
        x,
        g.ints('start', [0, 0]),
        g.ints('end', [big, big]),
        g.ints('axes', [2, 3]),
        g.ints('steps', [s, s]),
      ]);
      const p = this.padChannels;
      shortcut = g.node('Pad', [strided, g.ints('pads', [0, p, 0, 0, 0, p, 0, 0])]);
    }
    return g.node('Relu', [g.node('Add', [out, shortcut])]);
  }
}

function makeStage(inPlanes: number, planes: number, blocks: number, stride: number): nn.Sequential {
  const layers: BasicBlock[] = [];
  for (let i = 0; i < blocks; i++)
    layers.push(new BasicBlock(i === 0 ? inPlanes : planes, planes, i === 0 ? stride : 1));
  return new nn.Sequential(...layers);
}

export interface ResNetCifarOptions {
  classes: number;
  experts?: number;
  inChannels?: number;
  blocksPerStage?: number;
  /** Stage-2/3 widths 24/48 instead of 32/64 per expert (RIDE/SADE reduce_dimension). */
  reduceDimension?: boolean;
  /** Stage-2 width per expert (the reference's layer2_output_dim); overrides reduceDimension. */
  layer2Planes?: number;
  /** Stage-3 width per expert (the reference's layer3_output_dim); overrides reduceDimension. */
  layer3Planes?: number;
  /** Cosine classifier with scale s (default true, s = 30) or a plain linear one. */
  normedClassifier?: boolean;
  scale?: number;
}

export class Expert extends ExpertBase {
  readonly layer2: nn.Sequential;
  readonly layer3: nn.Sequential;
  readonly classifier: NormedLinear | nn.Linear;
  constructor(
    width2: number,
    width3: number,
    blocks: number,
    classes: number,
    normed: boolean,
    scale: number,
  ) {
    super();
    this.layer2 = this.registerModule('layer2', makeStage(16, width2, blocks, 2));
    this.layer3 = this.registerModule('layer3', makeStage(width2, width3, blocks, 2));
    this.classifier = this.registerModule(
      'classifier',
      normed ? new NormedLinear(width3, classes, scale) : new nn.Linear(width3, classes),
    );
  }
  features(shared: Tensor): Tensor {
    return tidy(() =>
      aten.adaptive_avg_pool2d(this.layer3.forward(this.layer2.forward(shared)), 1).flatten(1),
    );
  }
  override featuresToOnnx(g: onnx.OnnxGraph, shared: string, name: string): string {
    const h = onnx.moduleToOnnx(this.layer2, g, shared, `${name}.layer2`);
    const pooled = g.node('GlobalAveragePool', [onnx.moduleToOnnx(this.layer3, g, h, `${name}.layer3`)]);
    return g.node('Flatten', [pooled], { axis: { int: 1 } });
  }
}

export class ResNetCifar extends MultiExpertModel {
  readonly conv1: nn.Conv2d;
  readonly bn1: nn.BatchNorm2d;
  readonly layer1: nn.Sequential;
  readonly experts: nn.ModuleList<Expert>;
  readonly featureDim: number;

  constructor(readonly options: ResNetCifarOptions) {
    super();
    const blocks = options.blocksPerStage ?? 5;
    const experts = options.experts ?? 1;
    if (!(experts >= 1 && Number.isInteger(experts)))
      throw new Error(`experts must be a positive integer, got ${experts}`);
    const reduce = options.reduceDimension ?? experts > 1;
    const width2 = options.layer2Planes ?? (reduce ? 24 : 32);
    const width3 = options.layer3Planes ?? (reduce ? 48 : 64);
    // Option-A shortcuts zero-pad the channels equally on both sides: a stage can only widen, by
    // an even number of channels.
    for (const [name, inPlanes, planes] of [
      ['layer2Planes', 16, width2],
      ['layer3Planes', width2, width3],
    ] as const) {
      if (!(Number.isInteger(planes) && planes >= inPlanes && (planes - inPlanes) % 2 === 0))
        throw new Error(
          `${name} must be an integer >= ${inPlanes} that differs from ${inPlanes} by an even number, got ${planes}`,
        );
    }
    this.featureDim = width3;
    this.conv1 = this.registerModule(
      'conv1',
      new nn.Conv2d(options.inChannels ?? 3, 16, 3, { padding: 1, bias: false }),
    );
    this.bn1 = this.registerModule('bn1', new nn.BatchNorm2d(16));
    this.layer1 = this.registerModule('layer1', makeStage(16, 16, blocks, 1));
    const list: Expert[] = [];
    for (let e = 0; e < experts; e++)
      list.push(
        new Expert(
          width2,
          width3,
          blocks,
          options.classes,
          options.normedClassifier ?? true,
          options.scale ?? 30,
        ),
      );
    this.experts = this.registerModule('experts', new nn.ModuleList(list));
    // RIDE/SADE initialise conv and linear weights with kaiming_normal_.
    this.apply((m) => {
      if (m instanceof nn.Conv2d || m instanceof nn.Linear) nn.init.kaimingNormal_(m.weight);
    });
  }

  /** Shared stem + stage 1. */
  shared(x: Tensor): Tensor {
    return tidy(() => this.layer1.forward(this.bn1.forward(this.conv1.forward(x)).relu()));
  }

  override sharedToOnnx(g: onnx.OnnxGraph, x: string): string {
    const stem = onnx.moduleToOnnx(this.bn1, g, onnx.moduleToOnnx(this.conv1, g, x, 'conv1'), 'bn1');
    return onnx.moduleToOnnx(this.layer1, g, g.node('Relu', [stem]), 'layer1');
  }
}
