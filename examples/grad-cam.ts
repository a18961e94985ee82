// Where does a network look? A small residual CNN learns which of four shapes a noisy image holds
// (its residual block trained under activation checkpointing), then Grad-CAM reads the block's
// output gradient with a full backward hook and its output with a forward hook,
// and guided backpropagation runs through a custom autograd.Function. Both maps should peak on
// the shape. Needs the libtorch engine.
import * as torch from 'tailor/torch';
import { autograd, nn, optim, utils, type Tensor } from 'tailor/torch';

torch.manualSeed(0);
const SIZE = 16;

/** The four shapes, as 4x4 masks: a filled square, a frame, a horizontal and a vertical bar. */
const SHAPES = [
  () => true,
  (r: number, c: number) => r === 0 || r === 3 || c === 0 || c === 3,
  (r: number) => r === 1 || r === 2,
  (_r: number, c: number) => c === 1 || c === 2,
];

/** Images of noise with one bright shape at a random place; the label is the shape. */
function batch(n: number, seed: number): { images: Tensor; labels: Tensor; corners: [number, number][] } {
  const pixels = new Float32Array(n * SIZE * SIZE);
  const labels: number[] = [];
  const corners: [number, number][] = [];
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < n; i++) {
    const shape = i % SHAPES.length;
    const [row, col] = [1 + Math.floor(random() * (SIZE - 6)), 1 + Math.floor(random() * (SIZE - 6))];
    for (let p = 0; p < SIZE * SIZE; p++) pixels[i * SIZE * SIZE + p] = (random() - 0.5) * 0.6;
    for (let r = 0; r < 4; r++)
      for (let c = 0; c < 4; c++)
        if (SHAPES[shape]!(r, c)) pixels[i * SIZE * SIZE + (row + r) * SIZE + col + c] += 1.5;
    labels.push(shape);
    corners.push([row, col]);
  }
  return {
    images: torch.tensor(pixels, { shape: [n, 1, SIZE, SIZE] }),
    labels: torch.tensor(labels, { dtype: 'int64' }),
    corners,
  };
}

/** A residual block: conv-ReLU-conv plus its input, then ReLU. */
class Block extends nn.Module {
  readonly conv1 = this.registerModule('conv1', new nn.Conv2d(8, 8, 3, { padding: 1 }));
  readonly conv2 = this.registerModule('conv2', new nn.Conv2d(8, 8, 3, { padding: 1 }));
  forward(x: Tensor): Tensor {
    return this.conv2.forward(this.conv1.forward(x).relu()).add(x).relu();
  }
}

/** A conv stem, the residual block, average pooling and a classifier. */
class ResidualCnn extends nn.Module {
  readonly stem = this.registerModule('stem', new nn.Conv2d(1, 8, 3, { padding: 1 }));
  readonly block = this.registerModule('block', new Block());
  readonly head = this.registerModule('head', new nn.Linear(8, 4));
  checkpointed = false;

  forward(x: Tensor, relu: (t: Tensor) => Tensor = (t) => t.relu()): Tensor {
    return torch.tidy(() => {
      const h = relu(this.stem.forward(x));
      const b = this.checkpointed
        ? utils.checkpoint.checkpoint((t: Tensor) => this.block.forward(t), [h])
        : this.block.forward(h);
      return this.head.forward(b.mean([2, 3]));
    });
  }
}

/** Guided backpropagation's ReLU: only positive gradients pass, and only where the input was positive. */
class GuidedRelu extends autograd.Function {
  static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
    ctx.saveForBackward(x);
    return x.relu();
  }
  static backward(ctx: autograd.FunctionCtx, grad: Tensor | null): Tensor {
    const [x] = ctx.savedTensors;
    return grad!.clamp(0).mul(x!.gt(0));
  }
}

const model = new ResidualCnn();
model.checkpointed = true; // the block keeps no activations; backward recomputes them
const opt = new optim.Adam(model.parameters(), { lr: 0.01 });
const train = batch(256, 1);
for (let step = 0; step < 80; step++) {
  torch.tidy(() => nn.functional.crossEntropy(model.forward(train.images), train.labels).backward());
  opt.step();
  opt.zeroGrad();
}
model.checkpointed = false;

const test = batch(16, 2);
const accuracy = torch.noGrad(() =>
  torch.tidy(() => model.forward(test.images).argmax(1).eq(test.labels).float().mean().item()),
);

// Grad-CAM on the residual block: its output (forward hook) weighted by the mean of its output
// gradient (full backward hook) per channel; its input feeding its own shortcut is no special case.
let activation: Tensor | null = null;
let gradient: Tensor | null = null;
const forwardHook = model.block.registerForwardHook((_m, _args, out) => {
  activation = torch.keep((out as Tensor).detach().clone());
});
const backwardHook = model.block.registerFullBackwardHook((_m, _gradInput, gradOutput) => {
  gradient = torch.keep(gradOutput[0]!.clone());
});
const input = torch.keep(test.images.clone().requiresGrad_());
torch.tidy(() => model.forward(input).gather(1, test.labels.reshape(-1, 1)).sum().backward());
const cam = torch.tidy(() => gradient!.mean([2, 3], true).mul(activation!).sum(1).relu());
forwardHook.remove();
backwardHook.remove();

// Guided backpropagation: the input gradient through GuidedRelu in place of the stem's ReLU.
const guidedInput = torch.keep(test.images.clone().requiresGrad_());
torch.tidy(() =>
  model
    .forward(guidedInput, (t) => GuidedRelu.apply(t))
    .gather(1, test.labels.reshape(-1, 1))
    .sum()
    .backward(),
);
const guided = torch.tidy(() => guidedInput.grad!.abs().sum(1));

/** How many maps peak on their image's shape (its 4x4 box, give or take a pixel: a 3x3 convolution's reach). */
function peaksInside(maps: Tensor): number {
  const values = maps.toFloat32Array();
  let inside = 0;
  test.corners.forEach(([row, col], i) => {
    let best = 0;
    for (let p = 1; p < SIZE * SIZE; p++)
      if (values[i * SIZE * SIZE + p]! > values[i * SIZE * SIZE + best]!) best = p;
    const [r, c] = [Math.floor(best / SIZE), best % SIZE];
    if (r >= row - 1 && r <= row + 4 && c >= col - 1 && c <= col + 4) inside++;
  });
  return inside;
}

console.log(`test accuracy ${(100 * accuracy).toFixed(1)}%`);
console.log(`Grad-CAM peaks on the shape: ${peaksInside(cam)}/${test.corners.length}`);
console.log(`guided backpropagation peaks on the shape: ${peaksInside(guided)}/${test.corners.length}`);
torch.dispose([
  cam,
  guided,
  input,
  guidedInput,
  activation!,
  gradient!,
  train.images,
  train.labels,
  test.images,
  test.labels,
]);
model.dispose();
