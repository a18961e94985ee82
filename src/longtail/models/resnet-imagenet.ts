// ImageNet-size backbones (ResNet-50, ResNeXt-50 32x4d, ResNet-152, and RIDE's ResNet-10 of basic
// blocks) in the multi-expert form of RIDE/SADE (fb_resnets/Expert_ResNet.py, Expert_ResNeXt.py): the stem, stage 1 and stage 2 are
// shared, every expert owns stages 3 and 4, global average pooling and a classifier; the model
// output is the mean of the expert logits. With one expert and reduceDimension off it is exactly
// torchvision's resnet50 / resnext50_32x4d / resnet152 (same modules, same parameter count); ResNet-10
// is torchvision's ResNet(BasicBlock, [1, 1, 1, 1]), the ImageNet-LT baseline of RIDE and decoupling.
// The multi-expert forward passes are shared with ResNetCifar (multi-expert.ts).
import { Tensor, nn, tidy, aten, noGrad, onnx } from '../../torch/index.js';
import { NormedLinear } from './heads.js';
import { ExpertBase, MultiExpertModel } from './multi-expert.js';
import { BOTTLENECK_EXPANSION, Bottleneck, bottleneckStage, type BottleneckShape } from './bottleneck.js';
import { BASIC_EXPANSION, BasicBlock, basicStage } from './basic-block.js';

export type ImageNetArch = 'resnet10' | 'resnet50' | 'resnext50_32x4d' | 'resnet152';

interface ArchSpec extends BottleneckShape {
  /** Blocks in stages 1..4. */
  blocks: [number, number, number, number];
  /** Bottleneck blocks (1x1, 3x3, 1x1, 4x wider out) or basic blocks (two 3x3). */
  block: 'bottleneck' | 'basic';
}

export const IMAGENET_ARCHS: Record<ImageNetArch, ArchSpec> = {
  resnet10: { blocks: [1, 1, 1, 1], groups: 1, widthPerGroup: 64, block: 'basic' },
  resnet50: { blocks: [3, 4, 6, 3], groups: 1, widthPerGroup: 64, block: 'bottleneck' },
  resnext50_32x4d: { blocks: [3, 4, 6, 3], groups: 32, widthPerGroup: 4, block: 'bottleneck' },
  resnet152: { blocks: [3, 8, 36, 3], groups: 1, widthPerGroup: 64, block: 'bottleneck' },
};

/** A stage of the arch's blocks: `blocks` of them, the first strided (and projecting). */
function stage(
  spec: ArchSpec,
  inChannels: number,
  planes: number,
  blocks: number,
  stride: number,
): nn.Sequential {
  return spec.block === 'basic'
    ? basicStage(inChannels, planes, blocks, stride)
    : bottleneckStage(inChannels, planes, blocks, stride, spec);
}

const expansionOf = (spec: ArchSpec): number =>
  spec.block === 'basic' ? BASIC_EXPANSION : BOTTLENECK_EXPANSION;

/** The `arch.type` names of the SADE/RIDE/BalPoE configs and the backbone each one builds. */
export const IMAGENET_CONFIG_TYPES: Record<string, ImageNetArch> = {
  ResNet10Model: 'resnet10',
  ResNet50Model: 'resnet50',
  ResNeXt50Model: 'resnext50_32x4d',
  ResNet152Model: 'resnet152',
};

export interface ResNetImageNetOptions {
  arch: ImageNetArch;
  classes: number;
  experts?: number;
  inChannels?: number;
  /**
   * Per-expert stage-3/4 bottleneck planes 192/384 instead of 256/512 (RIDE/SADE
   * reduce_dimension; features 1536-d instead of 2048-d). Default: on when experts > 1, as in
   * ResNetCifar; a config builder should pass the config's value (SADE's default is false).
   */
  reduceDimension?: boolean;
  /** Stage-3 planes per expert (SADE layer3_output_dim); overrides reduceDimension. */
  layer3Planes?: number;
  /** Stage-4 planes per expert (SADE layer4_output_dim); overrides reduceDimension. */
  layer4Planes?: number;
  /** Stage 3 shared too, experts own stage 4 only (SADE share_layer3, ResNet-152 on Places). */
  shareLayer3?: boolean;
  /** 3x3 stride-1 first convolution instead of 7x7 stride 2 (SADE reduce_first_kernel). */
  reduceFirstKernel?: boolean;
  /** Cosine classifier with scale s (default true, s = 30) or a plain linear one (SADE use_norm). */
  normedClassifier?: boolean;
  scale?: number;
  /** Zero-init the last BN of every block so each residual branch starts as identity (Goyal et al.). */
  zeroInitResidual?: boolean;
}

export class ImageNetExpert extends ExpertBase {
  /** Null when stage 3 is shared (shareLayer3). */
  readonly layer3: nn.Sequential | null;
  readonly layer4: nn.Sequential;
  readonly classifier: NormedLinear | nn.Linear;

  constructor(
    layer3: nn.Sequential | null,
    layer4: nn.Sequential,
    featureDim: number,
    classes: number,
    normed: boolean,
    scale: number,
  ) {
    super();
    this.layer3 = layer3 ? this.registerModule('layer3', layer3) : null;
    this.layer4 = this.registerModule('layer4', layer4);
    this.classifier = this.registerModule(
      'classifier',
      normed ? new NormedLinear(featureDim, classes, scale) : new nn.Linear(featureDim, classes),
    );
  }

  /** Pooled features [N, D] from the shared trunk's output. */
  features(shared: Tensor): Tensor {
    return tidy(() => {
      const x = this.layer3 ? this.layer3.forward(shared) : shared;
      // Adaptive pooling: identical to SADE's AvgPool2d(7) at 224 px, and works at any input size.
      return aten.adaptive_avg_pool2d(this.layer4.forward(x), 1).flatten(1);
    });
  }

  override featuresToOnnx(g: onnx.OnnxGraph, shared: string, name: string): string {
    const x = this.layer3 ? onnx.moduleToOnnx(this.layer3, g, shared, `${name}.layer3`) : shared;
    const pooled = g.node('GlobalAveragePool', [onnx.moduleToOnnx(this.layer4, g, x, `${name}.layer4`)]);
    return g.node('Flatten', [pooled], { axis: { int: 1 } });
  }
}

export class ResNetImageNet extends MultiExpertModel {
  readonly conv1: nn.Conv2d;
  readonly bn1: nn.BatchNorm2d;
  readonly layer1: nn.Sequential;
  readonly layer2: nn.Sequential;
  /** Present only with shareLayer3. */
  readonly layer3: nn.Sequential | null;
  readonly experts: nn.ModuleList<ImageNetExpert>;
  /** Width of each expert's pooled features (layer4 planes x the block expansion: 4, or 1 for basic blocks). */
  readonly featureDim: number;

  constructor(readonly options: ResNetImageNetOptions) {
    super();
    const spec = IMAGENET_ARCHS[options.arch];
    if (!spec) {
      throw new Error(
        `unknown ImageNet backbone '${String(options.arch)}'; expected one of ${Object.keys(IMAGENET_ARCHS).join(', ')}`,
      );
    }
    const experts = options.experts ?? 1;
    if (!(Number.isInteger(experts) && experts >= 1)) {
      throw new Error(`experts must be a positive integer, got ${experts}`);
    }
    if (!(Number.isInteger(options.classes) && options.classes >= 1)) {
      throw new Error(`classes must be a positive integer, got ${options.classes}`);
    }
    const reduce = options.reduceDimension ?? experts > 1;
    const planes3 = options.layer3Planes ?? (reduce ? 192 : 256);
    const planes4 = options.layer4Planes ?? (reduce ? 384 : 512);
    for (const [name, v] of [
      ['layer3Planes', planes3],
      ['layer4Planes', planes4],
    ] as const) {
      if (!(Number.isInteger(v) && v >= 1)) throw new Error(`${name} must be a positive integer, got ${v}`);
      // The grouped 3x3 conv needs at least one channel per group: floor(planes * widthPerGroup / 64) >= 1.
      if (Math.floor((v * spec.widthPerGroup) / 64) < 1) {
        throw new Error(
          `${name} = ${v} leaves no channels per group in ${options.arch}; use at least ${64 / spec.widthPerGroup}`,
        );
      }
    }
    const expansion = expansionOf(spec);
    this.featureDim = planes4 * expansion;

    const inChannels = options.inChannels ?? 3;
    this.conv1 = this.registerModule(
      'conv1',
      options.reduceFirstKernel
        ? new nn.Conv2d(inChannels, 64, 3, { stride: 1, padding: 1, bias: false })
        : new nn.Conv2d(inChannels, 64, 7, { stride: 2, padding: 3, bias: false }),
    );
    this.bn1 = this.registerModule('bn1', new nn.BatchNorm2d(64));
    this.layer1 = this.registerModule('layer1', stage(spec, 64, 64, spec.blocks[0], 1));
    const stage2In = 64 * expansion;
    this.layer2 = this.registerModule('layer2', stage(spec, stage2In, 128, spec.blocks[1], 2));
    const stage3In = 128 * expansion;
    const stage3Out = planes3 * expansion;
    const shareLayer3 = options.shareLayer3 ?? false;
    this.layer3 = shareLayer3
      ? this.registerModule('layer3', stage(spec, stage3In, planes3, spec.blocks[2], 2))
      : null;

    const list: ImageNetExpert[] = [];
    for (let e = 0; e < experts; e++) {
      const layer3 = shareLayer3 ? null : stage(spec, stage3In, planes3, spec.blocks[2], 2);
      const layer4 = stage(spec, stage3Out, planes4, spec.blocks[3], 2);
      list.push(
        new ImageNetExpert(
          layer3,
          layer4,
          this.featureDim,
          options.classes,
          options.normedClassifier ?? true,
          options.scale ?? 30,
        ),
      );
    }
    this.experts = this.registerModule('experts', new nn.ModuleList(list));
    this.initialise(options.zeroInitResidual ?? false);
  }

  /**
   * torchvision's initialisation (also RIDE/SADE's normal(0, sqrt(2 / (k*k*out)))): kaiming
   * normal, fan_out, ReLU gain for every conv; BN weight 1, bias 0 (already so at construction).
   * Linear and cosine classifiers keep their own default initialisation, as in both references.
   */
  private initialise(zeroInitResidual: boolean): void {
    for (const [, m] of this.namedModules()) {
      if (m instanceof nn.Conv2d) nn.init.kaimingNormal_(m.weight, { mode: 'fan_out', nonlinearity: 'relu' });
      if (zeroInitResidual && m instanceof Bottleneck && m.bn3.weight) noGrad(() => m.bn3.weight!.zero_());
      if (zeroInitResidual && m instanceof BasicBlock && m.bn2.weight) noGrad(() => m.bn2.weight!.zero_());
    }
  }

  /** Shared trunk: stem, max pool, stages 1-2 (and 3 with shareLayer3). */
  shared(x: Tensor): Tensor {
    return tidy(() => {
      const stem = aten.max_pool2d(this.bn1.forward(this.conv1.forward(x)).relu(), 3, 2, 1);
      const out = this.layer2.forward(this.layer1.forward(stem));
      return this.layer3 ? this.layer3.forward(out) : out;
    });
  }

  override sharedToOnnx(g: onnx.OnnxGraph, x: string): string {
    const stem = onnx.moduleToOnnx(this.bn1, g, onnx.moduleToOnnx(this.conv1, g, x, 'conv1'), 'bn1');
    const pooled = g.node('MaxPool', [g.node('Relu', [stem])], {
      kernel_shape: { ints: [3, 3] },
      strides: { ints: [2, 2] },
      pads: { ints: [1, 1, 1, 1] },
    });
    const out = onnx.moduleToOnnx(
      this.layer2,
      g,
      onnx.moduleToOnnx(this.layer1, g, pooled, 'layer1'),
      'layer2',
    );
    return this.layer3 ? onnx.moduleToOnnx(this.layer3, g, out, 'layer3') : out;
  }
}
