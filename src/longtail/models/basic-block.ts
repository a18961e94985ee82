// The ResNet basic block (two 3x3 convolutions, torchvision's BasicBlock and RIDE's) and its stage
// builder: the blocks of RIDE's ImageNet-LT ResNet-10 (one block per stage).
import { Tensor, nn, tidy, onnx } from '../../torch/index.js';

/** Output channels of a basic block equal its planes. */
export const BASIC_EXPANSION = 1;

export class BasicBlock extends nn.Module {
  readonly conv1: nn.Conv2d;
  readonly bn1: nn.BatchNorm2d;
  readonly conv2: nn.Conv2d;
  readonly bn2: nn.BatchNorm2d;
  /** 1x1 strided projection + BN when the shape changes (torchvision/RIDE name: downsample.0/.1). */
  readonly downsample: nn.Sequential | null;
  readonly outChannels: number;

  constructor(inChannels: number, planes: number, stride: number) {
    super();
    this.outChannels = planes * BASIC_EXPANSION;
    this.conv1 = this.registerModule(
      'conv1',
      new nn.Conv2d(inChannels, planes, 3, { stride, padding: 1, bias: false }),
    );
    this.bn1 = this.registerModule('bn1', new nn.BatchNorm2d(planes));
    this.conv2 = this.registerModule('conv2', new nn.Conv2d(planes, planes, 3, { padding: 1, bias: false }));
    this.bn2 = this.registerModule('bn2', new nn.BatchNorm2d(planes));
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
      const out = this.bn2.forward(this.conv2.forward(this.bn1.forward(this.conv1.forward(x)).relu()));
      const identity = this.downsample ? this.downsample.forward(x) : x;
      return out.add(identity).relu();
    });
  }

  /** The ONNX form of forward (evaluation mode). */
  toOnnx(g: onnx.OnnxGraph, x: string, name: string): string {
    const layer = (m: nn.Module, part: string, input: string) =>
      onnx.moduleToOnnx(m, g, input, `${name}.${part}`);
    let out = g.node('Relu', [layer(this.bn1, 'bn1', layer(this.conv1, 'conv1', x))]);
    out = layer(this.bn2, 'bn2', layer(this.conv2, 'conv2', out));
    const identity = this.downsample ? layer(this.downsample, 'downsample', x) : x;
    return g.node('Relu', [g.node('Add', [out, identity])]);
  }
}

/** One stage: `blocks` basic blocks, the first one strided (and projecting). */
export function basicStage(
  inChannels: number,
  planes: number,
  blocks: number,
  stride: number,
): nn.Sequential {
  const layers: BasicBlock[] = [];
  for (let i = 0; i < blocks; i++) {
    layers.push(
      new BasicBlock(i === 0 ? inChannels : planes * BASIC_EXPANSION, planes, i === 0 ? stride : 1),
    );
  }
  return new nn.Sequential(...layers);
}
