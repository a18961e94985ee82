// The ResNet / ResNeXt bottleneck block (torchvision "v1.5": the stride sits on the 3x3 conv) and
// the stage builder shared by the ImageNet-size backbones in resnet-imagenet.ts.
import { Tensor, nn, tidy, onnx } from '../../torch/index.js';

/** Output channels of a bottleneck are planes * EXPANSION. */
export const BOTTLENECK_EXPANSION = 4;

export interface BottleneckShape {
  /** Grouped 3x3 convolution (ResNeXt cardinality); 1 for ResNet. */
  groups: number;
  /** Channels per group at planes = 64; the inner width is floor(planes * widthPerGroup / 64) * groups. */
  widthPerGroup: number;
}

export class Bottleneck extends nn.Module {
  readonly conv1: nn.Conv2d;
  readonly bn1: nn.BatchNorm2d;
  readonly conv2: nn.Conv2d;
  readonly bn2: nn.BatchNorm2d;
  readonly conv3: nn.Conv2d;
  readonly bn3: nn.BatchNorm2d;
  /** 1x1 strided projection + BN when the shape changes (torchvision/SADE name: downsample.0/.1). */
  readonly downsample: nn.Sequential | null;
  readonly outChannels: number;

  constructor(inChannels: number, planes: number, stride: number, shape: BottleneckShape) {
    super();
    const width = Math.floor((planes * shape.widthPerGroup) / 64) * shape.groups;
    this.outChannels = planes * BOTTLENECK_EXPANSION;
    this.conv1 = this.registerModule('conv1', new nn.Conv2d(inChannels, width, 1, { bias: false }));
    this.bn1 = this.registerModule('bn1', new nn.BatchNorm2d(width));
    this.conv2 = this.registerModule(
      'conv2',
      new nn.Conv2d(width, width, 3, { stride, padding: 1, groups: shape.groups, bias: false }),
    );
    this.bn2 = this.registerModule('bn2', new nn.BatchNorm2d(width));
    this.conv3 = this.registerModule('conv3', new nn.Conv2d(width, this.outChannels, 1, { bias: false }));
    this.bn3 = this.registerModule('bn3', new nn.BatchNorm2d(this.outChannels));
    this.downsample =
      stride !== 1 || inChannels !== this.outChannels
        ? this.registerModule(
            'downsample',
            new nn.Sequential(
              new nn.Conv2d(inChannels, this.outChannels, 1, { stride, bias: false }),
              new nn.BatchNorm2d(this.outChannels),
            ),
          )
        : null;
  }

  forward(x: Tensor): Tensor {
    return tidy(() => {
      let out = this.bn1.forward(this.conv1.forward(x)).relu();
      out = this.bn2.forward(this.conv2.forward(out)).relu();
      out = this.bn3.forward(this.conv3.forward(out));
      const identity = this.downsample ? this.downsample.forward(x) : x;
      return out.add(identity).relu();
    });
  }

  /** The ONNX form of forward (evaluation mode). */
  toOnnx(g: onnx.OnnxGraph, x: string, name: string): string {
    const layer = (m: nn.Module, part: string, input: string) =>
      onnx.moduleToOnnx(m, g, input, `${name}.${part}`);
    let out = g.node('Relu', [layer(this.bn1, 'bn1', layer(this.conv1, 'conv1', x))]);
    out = g.node('Relu', [layer(this.bn2, 'bn2', layer(this.conv2, 'conv2', out))]);
    out = layer(this.bn3, 'bn3', layer(this.conv3, 'conv3', out));
    const identity = this.downsample ? layer(this.downsample, 'downsample', x) : x;
    return g.node('Relu', [g.node('Add', [out, identity])]);
  }
}

/** One stage: `blocks` bottlenecks, the first one strided (and projecting). */
export function bottleneckStage(
  inChannels: number,
  planes: number,
  blocks: number,
  stride: number,
  shape: BottleneckShape,
): nn.Sequential {
  const layers: Bottleneck[] = [];
  for (let i = 0; i < blocks; i++) {
    layers.push(
      new Bottleneck(
        i === 0 ? inChannels : planes * BOTTLENECK_EXPANSION,
        planes,
        i === 0 ? stride : 1,
        shape,
      ),
    );
  }
  return new nn.Sequential(...layers);
}
